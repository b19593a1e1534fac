"""Havok .hkx layouts built here (tests/hkx_writer.py, apart from the product's writer) to the
byte layouts of the games' files and of the converters that wrote the realmods/ ones: the
character, first-person, dragon and horse skeleton files of Skyrim SE (64-bit hk_2010), with and
without a converter's number in front of every object; files whose ``__types__`` section has
fixups; behaviour, character and project files, whose names ``info`` lists. Every value read is
compared with what was written, every file written back byte-identical; damage is refused."""

import json
import random
import struct

import numpy as np
import pytest
from hkx_writer import (
    Members, Obj, animation_container, holder, node, packfile, root_container, skeleton, string_data,
)

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.animation import hkx_from_bytes
from precombined_nif.core.havok.animation.summary import hkx_info


def tree(count, rng, prefix):
    """Bone names, parents (every parent earlier) and a reference pose (n, 12) of float32 values."""
    names = [f"{prefix} Bone{index:03d} [B{index:03d}]" for index in range(count)]
    parents = [-1] + [rng.randrange(0, index) for index in range(1, count)]
    pose = np.zeros((count, 12), np.float32)
    pose[:, :3] = np.array([[rng.uniform(-40, 40) for _ in range(3)] for _ in range(count)], np.float32)
    quaternions = np.array([[rng.gauss(0, 1) for _ in range(4)] for _ in range(count)])
    pose[:, 4:8] = quaternions / np.linalg.norm(quaternions, axis=1)[:, None]
    pose[:, 8:11] = np.array([[rng.choice((1.0, 1.0, 0.5, 1.25))] * 3 for _ in range(count)], np.float32)
    return names, parents, pose


def resource_container(pointer=8):
    """hkMemoryResourceContainer, empty (the typed class reads it)."""
    members = Members(pointer)
    name_at, _parent_at, handles_at, children_at = members.ptr(), members.ptr(), members.array(), members.array()
    obj = Obj("hkMemoryResourceContainer", members.size(), pointer)
    obj.string(name_at, "")
    obj.array(handles_at, 0)
    obj.array(children_at, 0)
    return obj


# The games' skeleton files: (bones, float slots, a ragdoll skeleton, local frames, what else they hold)
LAYOUTS = {
    "character": (99, 8, True, 0, ("physics", "ragdoll", "mappers")),
    "first person": (57, 0, False, 0, ()),
    "dragon": (116, 0, True, 2, ("physics", "ragdoll")),
    "horse": (82, 2, True, 0, ("physics", "mappers")),
}


def skeleton_file(layout, *, version=8, numbered=False, seed=0):
    """(bytes, [(name, bone names, parents, pose, float slots, reference floats)]) of a skeleton
    file of that layout."""
    count, slots, ragdoll, frames, extra = LAYOUTS[layout]
    rng = random.Random(f"{layout}{seed}")
    written = []
    names, parents, pose = tree(count, rng, "NPC")
    float_slots = [f"hkFade:Slot{k}" for k in range(slots)]
    reference_floats = [rng.uniform(0, 1) for _ in range(slots)]
    local_frames = [(Obj("hkSimpleLocalFrame", 0x60), rng.randrange(count)) for _ in range(frames)]
    skeletons = [skeleton("NPC Root [Root]", names, parents, pose, version=version, float_slots=float_slots,
                          reference_floats=reference_floats, local_frames=local_frames)]
    written.append(("NPC Root [Root]", names, parents, pose, float_slots, np.float32(reference_floats)))
    if ragdoll:
        names, parents, pose = tree(18, rng, "Ragdoll_NPC")
        skeletons.append(skeleton("Ragdoll_NPC COM [COM ]", names, parents, pose, version=version))
        written.append(("Ragdoll_NPC COM [COM ]", names, parents, pose, [], np.zeros(0, np.float32)))
    variants = [("Merged Animation Container", "hkaAnimationContainer", animation_container(skeletons)),
                ("Resource Data", "hkMemoryResourceContainer", resource_container())]
    body = holder("hkpRigidBody", [])
    if "physics" in extra:
        variants.append(("Physics Data", "hkpPhysicsData", holder("hkpPhysicsData", [holder("hkpPhysicsSystem", [body])])))
    if "ragdoll" in extra:
        variants.append(("RagdollInstance", "hkaRagdollInstance", holder("hkaRagdollInstance", [body, skeletons[-1]])))
    if "mappers" in extra:
        variants += [("SkeletonMapper", "hkaSkeletonMapper", holder("hkaSkeletonMapper", skeletons[::step]))
                     for step in (1, -1)]
    return packfile(root_container(variants), version=version, numbered=numbered), written


@pytest.mark.parametrize("numbered", [False, True], ids=["as Havok writes it", "numbered objects"])
@pytest.mark.parametrize("version", [8, 11], ids=["hk_2010", "hk_2014"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_skeleton_files_read_and_write_back(layout, version, numbered):
    data, written = skeleton_file(layout, version=version, numbered=numbered)
    hkx = hkx_from_bytes(data)
    assert len(hkx.skeletons) == len(written)
    for read, (name, names, parents, pose, slots, floats) in zip(hkx.skeletons, written):
        assert (read.name, read.bone_names, read.parents.tolist(), read.float_slots) == (name, names, parents, slots)
        np.testing.assert_array_equal(read.translation, pose[:, :3])
        np.testing.assert_array_equal(read.rotation, pose[:, 4:8])
        np.testing.assert_array_equal(read.scale, pose[:, 8:11])
        np.testing.assert_array_equal(read.reference_floats, floats)
    assert hkx.packfile.to_bytes() == data
    assert Packfile.from_bytes(data).to_bytes() == data  # every class, no filter
    frames = hkx.packfile.root.find("hkaAnimationContainer").skeletons[0].local_frames
    assert [frame.frame.class_name for frame in frames] == ["hkSimpleLocalFrame"] * LAYOUTS[layout][3]


def test_numbered_file_changed_is_refused():
    """Changed, a numbered file is not rebuilt: its objects kept as bytes are aligned around
    their numbers."""
    data, _ = skeleton_file("dragon", numbered=True)
    read = Packfile.from_bytes(data)
    read.root.find("hkaAnimationContainer").skeletons[0].bones[3].name = "renamed"
    with pytest.raises(FormatError, match="written back only unchanged"):
        read.to_bytes()


def _put(data, at, value, size=8):
    damaged = bytearray(data)
    damaged[at : at + size] = value.to_bytes(size, "little")
    return bytes(damaged)


def _object_at(data, index):
    """The file offset of the data section's object ``index`` (struct, apart from the product)."""
    at = 0x40 + 2 * 0x30  # hk_2010: the data section's header
    start, local, global_, virtual = struct.unpack_from("<4I", data, at + 20)
    return start + sorted(struct.unpack_from("<I", data, start + virtual + 12 * k)[0] for k in range(index + 1))[index]


def test_stale_value_in_a_pointer_slot_is_refused():
    """A pointer slot no fixup patches holds whatever the loader leaves there: a value in it is
    damage, not a pointer (here the first skeleton's empty local frames array)."""
    data, _ = skeleton_file("first person")
    skeleton_at = _object_at(data, 2)  # root, animation container, skeleton
    frames_at = 16 + 8 + 5 * 16  # hkReferencedObject, name, five arrays before the local frames
    assert struct.unpack_from("<QI", data, skeleton_at + frames_at) == (0, 0)
    with pytest.raises(FormatError, match="pointer slot holds a value instead of a fixup") as caught:
        hkx_from_bytes(_put(data, skeleton_at + frames_at, 0x1234))
    assert caught.value.offset == skeleton_at + frames_at


@pytest.mark.parametrize("index", [0, 1, 2])
def test_numbered_file_missing_a_number_is_refused(index):
    """Numbers are recognised only when every object has one: an object whose number is zero
    leaves the file read as Havok lays it out, where the numbers sit in pointer slots."""
    data, _ = skeleton_file("horse", numbered=True)
    with pytest.raises(FormatError, match="pointer slot holds a value|capacity field"):
        hkx_from_bytes(_put(data, _object_at(data, index), 0))


def test_numbers_repeated_are_refused():
    data, _ = skeleton_file("horse", numbered=True)
    with pytest.raises(FormatError, match="pointer slot holds a value"):
        hkx_from_bytes(_put(data, _object_at(data, 2), 1000))


def test_parents_beyond_the_bones():
    """One parent per bone is read, more are left out (a FO4 mod's skeleton has one extra);
    fewer parents than bones are refused."""
    rng = random.Random(1)
    names, parents, pose = tree(20, rng, "NPC")
    for extra in ([19], [3, 4]):
        obj = skeleton("Root", names, parents, pose, extra_parents=extra)
        data = packfile(root_container([("Merged Animation Container", "hkaAnimationContainer", animation_container([obj]))]))
        read = hkx_from_bytes(data)
        assert read.skeletons[0].parents.tolist() == parents and read.packfile.to_bytes() == data
    obj = skeleton("Root", names, parents[:19], pose)
    data = packfile(root_container([("Merged Animation Container", "hkaAnimationContainer", animation_container([obj]))]))
    with pytest.raises(FormatError, match="20 bones, 19 parents"):
        hkx_from_bytes(data)


def types_section():
    """A __types__ section of two hkClass objects (80 bytes each: a name pointer, a parent
    pointer), the second's parent the first: fixups of all three kinds."""
    raw = bytearray(160)
    raw[16:24] = b"Parent\0\0"
    raw[96:104] = b"Child\0\0\0"
    return bytes(raw), [(0, 16), (80, 96)], [(88, 1, 0)], [(0, 0, "hkClass"), (80, 0, "hkClass")]


def test_types_section_with_fixups_is_kept():
    data, written = skeleton_file("first person")
    with_types = packfile(root_container([("Merged Animation Container", "hkaAnimationContainer",
                                           animation_container([skeleton("NPC Root [Root]", *written[0][1:4])]))]),
                          types=types_section())
    hkx = hkx_from_bytes(with_types)
    assert hkx.skeletons[0].bone_names == written[0][1]
    assert hkx.packfile.to_bytes() == with_types
    hkx.packfile.root.find("hkaAnimationContainer").skeletons[0].name = "changed"
    again = Packfile.from_bytes(hkx.packfile.to_bytes())  # rebuilt: the kept section goes along, tables included
    assert again.raw_sections[1][1] == hkx.packfile.raw_sections[1][1]
    assert again.root.find("hkaAnimationContainer").skeletons[0].name == "changed"


@pytest.mark.parametrize("table, field, value, message", [
    ("local", 0, 0xFFFF, "a fixup's pointer lies outside the section"),
    ("local", 1, 400, "a local fixup leads outside the section"),
    ("global", 1, 2, "a global fixup leads outside the section"),  # into the data section
    ("global", 1, 9, "a global fixup leads outside the section"),  # a section that does not exist
    ("global", 2, 1000, "a global fixup leads outside the section"),
    ("virtual", 0, 4000, "a virtual fixup lies outside the section"),
    ("virtual", 2, 3, "a virtual fixup names no class"),
])
def test_types_section_fixups_checked(table, field, value, message):
    """The loader applies a kept section's fixups too: ones patching or leading outside it, or
    naming no class, are refused."""
    data = packfile(root_container([]), types=types_section())
    start, local, global_, virtual = struct.unpack_from("<4I", data, 0x40 + 0x30 + 20)  # __types__ header
    at = start + {"local": local, "global": global_, "virtual": virtual}[table] + 4 * field
    with pytest.raises(FormatError, match=message):
        Packfile.from_bytes(_put(data, at, value, 4))


# -- behaviour, character and project files ---------------------------------------------------
PROJECT = ([["Animations\\a.hkx"], ["Behaviors\\master.hkx"], ["Characters\\defaultmale.hkx"], ["Jump"]],
           ["Animations", "Behaviors", "Characters", "C:\\source\\project.hkp", None])
CHARACTER = ([[], [], ["Animations\\idle.hkx", "Animations\\walk.hkx"], [], [], [], [], [], []],
             ["DefaultMale", "CharacterAssets\\skeleton.HKX", "CharacterAssets\\skeleton.HKX", "Behaviors\\0_Master.hkx"])


def behavior_file(kind, pointer=8, version=8, numbered=False):
    if kind == "project":
        strings = string_data("hkbProjectStringData", *PROJECT, pointer=pointer)
        top = Obj("hkbProjectData", 0x30, pointer)
        top.pointers[32] = strings
    elif kind == "character":
        strings = string_data("hkbCharacterStringData", *CHARACTER, pointer=pointer)
        top = Obj("hkbCharacterData", 0xA0 if pointer == 8 else 0x80, pointer)
        top.pointers[152 if pointer == 8 else 116] = strings
    else:
        clips = [node("hkbClipGenerator", name, pointer) for name in ("Animations\\idle.hkx", "Animations\\run.hkx",
                                                                      "Animations\\idle.hkx")]
        reference = node("hkbBehaviorReferenceGenerator", "Behaviors\\horse.hkx", pointer)
        machine = holder("hkbStateMachine", [*clips, reference], pointer)
        top = holder("hkbBehaviorGraph", [machine], pointer)
    class_name = {"project": "hkbProjectData", "character": "hkbCharacterData", "behavior graph": "hkbBehaviorGraph"}[kind]
    return packfile(root_container([(class_name, class_name, top)], pointer), version=version, pointer=pointer,
                    numbered=numbered)


EXPECTED_NAMES = {
    "project": {"characters": ["Characters\\defaultmale.hkx"], "skeletons": [], "ragdolls": [],
                "behaviors": ["Behaviors\\master.hkx"], "animations": ["Animations\\a.hkx"]},
    "character": {"characters": [], "skeletons": ["CharacterAssets\\skeleton.HKX"],
                  "ragdolls": ["CharacterAssets\\skeleton.HKX"], "behaviors": ["Behaviors\\0_Master.hkx"],
                  "animations": ["Animations\\idle.hkx", "Animations\\walk.hkx"]},
    "behavior graph": {"characters": [], "skeletons": [], "ragdolls": [], "behaviors": ["Behaviors\\horse.hkx"],
                       "animations": ["Animations\\idle.hkx", "Animations\\run.hkx"]},
}


@pytest.mark.parametrize("numbered", [False, True], ids=["as Havok writes it", "numbered objects"])
@pytest.mark.parametrize("pointer", [4, 8], ids=["32-bit", "64-bit"])
@pytest.mark.parametrize("kind", EXPECTED_NAMES)
def test_behavior_files_list_what_they_name(tmp_path, kind, pointer, numbered):
    data = behavior_file(kind, pointer, numbered=numbered)
    path = tmp_path / "file.hkx"
    path.write_bytes(data)
    info = hkx_info(path)
    assert (info["kind"], info["names"]) == (kind, EXPECTED_NAMES[kind])
    assert info["game"] == ("SSE" if pointer == 8 else "LE")
    with pytest.raises(FormatError, match=f"a {kind} file, not an animation or skeleton"):
        hkx_from_bytes(data)
    assert Packfile.from_bytes(data).to_bytes() == data


def test_hk_2014_behavior_file_names_nothing_read(tmp_path):
    """Fallout 4's behaviour classes have other layouts: their names are not read."""
    path = tmp_path / "graph.hkx"
    path.write_bytes(behavior_file("behavior graph", version=11))
    info = hkx_info(path)
    assert info["kind"] == "behavior graph" and not any(info["names"].values()) and info["game"] == "FO4"


def test_cli_info_lists_a_character_file(tmp_path, capsys):
    import cli

    path = tmp_path / "defaultmale.hkx"
    path.write_bytes(behavior_file("character"))
    assert cli.main(["info", str(path)]) in (0, None)
    out = capsys.readouterr().out
    assert "a character file, naming:" in out and "skeletons (1): 'CharacterAssets\\\\skeleton.HKX'" in out
    assert cli.main(["info", "--json", str(path)]) in (0, None)
    assert json.loads(capsys.readouterr().out)["names"] == EXPECTED_NAMES["character"]
