"""Starfield skins in Blender: the bones a skin names (SkinAttach: Starfield NIFs hold no bone
nodes) as armature bones, every weight of a vertex as vertex groups.

As for the other games (io/nif/skin_import), a bone's rest is its bind pose exactly as the
skin stores it, ``shape placement @ inv(bind)``, and the armature object is the skin's skeleton
root node. Its pose is where a skeleton NIF (``core.starfield.skeleton``) puts the bone's node:
then the armature deforms the mesh as the game draws it (``node @ bind @ position``), and bones
take the skeleton's hierarchy. Without a skeleton the bones stay in their bind pose, unparented,
and the mesh shows where the NIF alone places it. Shapes whose binds agree (within
io.nif.skin_import.AGREE) share one armature per root; others get further armatures under it."""

import bpy
import numpy as np

from ...core.errors import FormatError
from ...core.nif import skinning
from ...core.nif.blocks.bs_geometry import BSGeometry
from ...core.nif.blocks.skin import SkinAttach
from ..nif.skin_import import AGREE, _set_weights, make_bones, node_parents, placement, pose_bones
from .. import schema


def skin_names(nif, shape):
    """The bone names of a BSGeometry's skin (its SkinAttach), or None."""
    found = (nif.block_at(ref, SkinAttach) for ref in np.asarray(shape.extra_data).tolist())
    attach = next((block for block in found if block is not None), None)
    return None if attach is None else list(attach.bones)


class _Skin:
    def __init__(self, nif, index, shape, where):
        instance, data, _ = skinning.skin_blocks(nif, shape.skin_instance)
        self.names = skin_names(nif, shape)
        if self.names is None:
            raise FormatError("it has no SkinAttach naming its bones")
        if len(self.names) != len(data.bones):
            raise FormatError(f"its SkinAttach names {len(self.names)} bones for {len(data.bones)} bind poses")
        self.rests = {}
        for name, bind in zip(self.names, skinning.bind_matrices(instance, data)):
            if not np.isfinite(bind).all() or abs(np.linalg.det(bind[:3, :3])) < 1e-12:
                raise FormatError(f"the bind pose of bone {name!r} cannot be inverted")
            self.rests.setdefault(name, where @ np.linalg.inv(bind))
        self.armature = None


class _Armature:
    def __init__(self, root):
        self.root = root
        self.rests = {}  # bone name -> bind-pose placement in root space
        self.object = None
        self.data = None

    def agrees(self, skin):
        return all(np.abs(self.rests[name] - rest).max() <= AGREE for name, rest in skin.rests.items() if name in self.rests)


class StarfieldSkinImport:
    """What io/nif/importer.SceneBuilder asks of a skin import, for Starfield shapes;
    ``skeleton``: a core.starfield.skeleton.Skeleton posing the bones, or None."""

    def __init__(self, builder, skeleton=None):
        self.builder = builder
        self.skeleton = skeleton
        self.skins = {}  # shape index -> _Skin
        self.armatures = []
        self.root_armatures = {}  # root node index -> its first _Armature

    def prepare(self):
        nif = self.builder.nif
        parents = node_parents(nif)
        for index, shape in nif.blocks_of(BSGeometry):
            if not shape.skinned:
                continue
            root, where = placement(nif.blocks, parents, index)
            try:
                skin = _Skin(nif, index, shape, where)
            except FormatError as error:
                self.builder.warn(f"{shape.name or index}: skin not imported ({error.message})")
                continue
            skin.armature = next((a for a in self.armatures if a.root == root and a.agrees(skin)), None)
            if skin.armature is None:
                skin.armature = _Armature(root)
                self.armatures.append(skin.armature)
            for name, rest in skin.rests.items():
                skin.armature.rests.setdefault(name, rest)
            self.skins[index] = skin
        for number, armature in enumerate(self.armatures):
            self._make_armature(armature, number)

    def _make_armature(self, armature, number):
        builder = self.builder
        root = builder.nif.blocks[armature.root]
        name = f"{root.name or f'{root.type_name}:{armature.root}'} skeleton" + (f" {number}" if number else "")
        armature.data = builder.rollback.add(bpy.data.armatures.new(name))
        if armature.root in self.root_armatures:  # a further bind pose of the root: its own object
            armature.object = builder.link(bpy.data.objects.new(name, armature.data))
            armature.object[schema.NIF_ROOT] = armature.root
        else:  # the root node's object, made by the SceneBuilder (armature_data)
            self.root_armatures[armature.root] = armature
        bones = set(armature.rests)
        parents = {name: self.skeleton.bone_parent(name, bones) if self.skeleton else None for name in bones}
        made = make_bones(armature.data, armature.rests, {name: name for name in bones}, parents,
                          lambda name: FormatError(f"bone {name!r}: its bind pose cannot be shown as a Blender bone"))
        if any(made[name] != name for name in bones):  # Blender shortens names past 63 bytes
            long = next(name for name in bones if made[name] != name)
            raise FormatError(f"bone {long!r}: its name is longer than Blender's bone names can be")

    # -- what the scene builder asks -----------------------------------------------------------
    def armature_data(self, node_index):
        armature = self.root_armatures.get(node_index)
        return None if armature is None else armature.data

    def bone_of(self, node_index):
        return None  # no node of a Starfield NIF is a bone

    def _object(self, armature):
        if armature.object is None:
            armature.object = self.builder.objects.get(armature.root)
        return armature.object

    def pose(self):
        """Pose the bones where the skeleton puts their nodes (those it lacks stay in their bind
        pose); without a skeleton, the bind pose."""
        if self.skeleton is None:
            return
        for armature in self.armatures:
            obj = self._object(armature)
            if obj is None:
                continue
            missing = self.skeleton.missing(armature.rests)
            if missing:
                self.builder.warn(f"{armature.data.name}: the skeleton {self.skeleton.path} has no node for bone(s) "
                                  f"{', '.join(sorted(missing)[:5])}: shown in their bind pose")
            placements = {name: self.skeleton.placements.get(name, rest) for name, rest in armature.rests.items()}
            singular = pose_bones(obj, placements)
            if singular:
                self.builder.warn(f"{armature.data.name}: shown in its bind pose; the skeleton's node {singular!r} "
                                  f"cannot be posed (its transform is singular)")

    def bind(self, shape_index, obj, bones, weights):
        """Vertex groups and an armature modifier for a LOD object of the skinned shape
        ``shape_index``: ``bones`` and ``weights`` ((vertices, per vertex) arrays, as
        MeshData.bone_weights gives them) hold every weight of each vertex of ``obj``."""
        skin = self.skins.get(shape_index)
        if skin is None:
            return
        armature = skin.armature
        dense = skinning.dense_weights(bones, weights, len(skin.names))
        groups = [obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name) for name in skin.names]
        _set_weights(obj.data, [group.index for group in groups], dense)
        modifier = obj.modifiers.new("Armature", "ARMATURE")
        modifier.object = self._object(armature)
        root = self.builder.objects.get(armature.root)
        if armature.object is not root and armature.object.parent is None and root is not None:
            armature.object.parent = root
