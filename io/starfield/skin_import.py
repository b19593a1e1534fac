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
from ..nif.skin_import import SkinImport, _Armature, _set_weights, _uniformly_scaled_rotation, make_bones, pose_bones
from .. import schema


def skin_names(nif, shape):
    """The bone names of a BSGeometry's skin (its SkinAttach), or None."""
    found = (nif.block_at(ref, SkinAttach) for ref in np.asarray(shape.extra_data).tolist())
    attach = next((block for block in found if block is not None), None)
    return None if attach is None else list(attach.bones)


class _Skin:
    """One skinned shape: its bone names (``bones``, each once) and their rests, in order."""

    def __init__(self, nif, index, shape, where):
        instance, data, _ = skinning.skin_blocks(nif, shape.skin_instance)
        names = skin_names(nif, shape)
        if names is None:
            raise FormatError("it has no SkinAttach naming its bones")
        if len(names) != len(data.bones):
            raise FormatError(f"its SkinAttach names {len(names)} bones for {len(data.bones)} bind poses")
        self.names = names
        rests = {}
        for name, bind in zip(names, skinning.bind_matrices(instance, data)):
            if not _uniformly_scaled_rotation(bind[:3, :3]):
                raise FormatError(f"the bind pose of bone {name!r} is not a rotation and scale")
            rests.setdefault(name, where @ np.linalg.inv(bind))
        self.bones, self.rests = list(rests), list(rests.values())
        self.armature = None


class StarfieldSkinImport(SkinImport):
    """io.nif.skin_import.SkinImport for Starfield shapes, whose bones are names, not nodes;
    ``skeleton``: a core.starfield.skeleton.Skeleton posing the bones, or None."""

    skin_class = _Skin

    def __init__(self, builder, skeleton=None):
        super().__init__(builder)
        self.skeleton = skeleton

    def skinned_shapes(self):
        return [(index, shape) for index, shape in self.builder.nif.blocks_of(BSGeometry) if shape.skinned]

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

    def bind_weights(self, shape_index, obj, bones, weights):
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
        obj.modifiers.new("Armature", "ARMATURE").object = self._object(armature)
        self._parent_armature(armature)
