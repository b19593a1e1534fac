"""Behaviour, character and project files (Havok Behavior, hk_2010: Skyrim LE and SE): the
skeleton, animations, behaviour and character files they name. Layouts, 32-bit / 64-bit:

- hkbProjectStringData: hkReferencedObject, then hkArray<hkStringPtr> of the animation,
  behaviour and character file names and of the event names, then hkStringPtr animation path,
  behaviour path, character path, full path to the source and root path.
- hkbCharacterStringData: hkReferencedObject, then hkArray<hkStringPtr> of the deformable and
  rigid skin names, animation names, animation file names, character property names,
  retargeting skeleton mapper file names, LOD names and the mirrored sync point substrings A
  and B, then hkStringPtr name, rig (the skeleton file), ragdoll file and behaviour file.
- hkbClipGenerator names its animation and hkbBehaviorReferenceGenerator a behaviour file in an
  hkStringPtr at +40 / +72; those large classes are kept as bytes, the one string read from them.
"""

from ..objects import STRING, HavokObject, ObjectReader, havok_class
from .classes import HK_2010, POINTER_SIZES, RootLevelContainer

FILE_CLASSES = {"hkbProjectData": "project", "hkbCharacterData": "character", "hkbBehaviorGraph": "behavior graph"}
NAMED_BY_NODES = {"hkbClipGenerator": "animations", "hkbBehaviorReferenceGenerator": "behaviors"}
NODE_STRING_AT = {4: 40, 8: 72}  # the hkStringPtr of those nodes, per pointer size
NODE_MEMBERS = {"hkbClipGenerator": "animationName", "hkbBehaviorReferenceGenerator": "behaviorName"}  # in XML


class StringData(HavokObject):
    """hkReferencedObject, hkArray<hkStringPtr> members, then hkStringPtr members."""

    versions = (HK_2010,)
    pointer_sizes = POINTER_SIZES
    ARRAYS = ()
    STRINGS = ()

    def __init__(self):
        self.reference = bytes(16)
        for name in self.ARRAYS:
            setattr(self, name, [])
        for name in self.STRINGS:
            setattr(self, name, None)

    def sync(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        for name in self.ARRAYS:
            setattr(self, name, s.hk_array(getattr(self, name), STRING, what=name.replace("_", " ")))
        for name in self.STRINGS:
            setattr(self, name, s.string_ptr(getattr(self, name)))


@havok_class("hkbProjectStringData")
class ProjectStringData(StringData):
    ARRAYS = ("animation_files", "behavior_files", "character_files", "event_names")
    STRINGS = ("animation_path", "behavior_path", "character_path", "full_path_to_source", "root_path")


@havok_class("hkbCharacterStringData")
class CharacterStringData(StringData):
    ARRAYS = (
        "deformable_skin_names", "rigid_skin_names", "animation_names", "animation_files", "character_property_names",
        "retargeting_skeleton_mapper_files", "lod_names", "mirrored_sync_point_substrings_a",
        "mirrored_sync_point_substrings_b",
    )  # fmt: skip
    STRINGS = ("name", "rig_name", "ragdoll_name", "behavior_file")


def behavior_file_kind(packfile):
    """"project", "character" or "behavior graph" when the root container holds one, else None."""
    root = packfile.root
    if not isinstance(root, RootLevelContainer):
        return None
    held = [variant.object.class_name for variant in root.variants if variant.object is not None]
    return next((FILE_CLASSES[name] for name in held if name in FILE_CLASSES), None)


def behavior_names(packfile):
    """What a behaviour, character or project file names, each list in file order without
    repeats: {characters, skeletons, ragdolls, behaviors, animations}. Only hk_2010 files'
    names are read: other versions give empty lists."""
    header = packfile.header
    found = {key: [] for key in ("characters", "skeletons", "ragdolls", "behaviors", "animations")}
    for obj, _ in packfile.objects():
        if isinstance(obj, ProjectStringData):
            found["characters"] += obj.character_files
            found["behaviors"] += obj.behavior_files
            found["animations"] += obj.animation_files
        elif isinstance(obj, CharacterStringData):
            found["skeletons"].append(obj.rig_name)
            found["ragdolls"].append(obj.ragdoll_name)
            found["behaviors"].append(obj.behavior_file)
            found["animations"] += obj.animation_names + obj.animation_files
        elif obj.class_name in NAMED_BY_NODES and hasattr(obj, "text"):  # read from XML (xml.reader.XmlObject)
            found[NAMED_BY_NODES[obj.class_name]].append(obj.text(NODE_MEMBERS[obj.class_name]))
        elif obj.class_name in NAMED_BY_NODES and header.file_version == HK_2010:
            found[NAMED_BY_NODES[obj.class_name]].append(_node_string(obj, header))
    return {key: list(dict.fromkeys(name for name in names if name)) for key, names in found.items()}


def _node_string(obj, header):
    """The hkStringPtr a kept node's bytes hold at NODE_STRING_AT."""
    reader = ObjectReader(obj.data, 0, dict(obj.local_fixups), {}, header.file_version, header.pointer_size)
    return reader.at(NODE_STRING_AT[header.pointer_size]).string_ptr()
