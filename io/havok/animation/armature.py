"""A skeleton (a Havok hkaSkeleton, or a skeleton NIF's node tree) as a Blender armature.

A ``Skeleton`` is what both sources say: bone names, parent indices (-1: a root) and each bone's
reference pose relative to its parent (4x4, game units). The armature object stands for the
skeleton's root space; each bone's rest is its reference pose in that space, with the node's own
axes (the bone points along the node's +Y), as NIF skinning imports place bones
(io/nif/skin_import.py): so a skeleton .hkx and the game's skeleton.nif give the same bones
where the NIF puts them. A rest holds no scale (Blender bones cannot): a scaled reference pose
keeps its rotation and translation.

An animation file names no bones: its tracks drive bones by their index in the Havok skeleton.
So an armature made from a skeleton .hkx keeps that skeleton's bone names in order
(``hkx_bones``, JSON), its name (``hkx_skeleton``) and game (``hkx_game``); an armature made
otherwise (a skeleton NIF, a skinned mesh) finds them in the skeleton .hkx beside the
animation (``havok_skeleton_near``).
"""

import json
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix

from ....core import transforms
from ....core.errors import FormatError
from ....core.nif import NifFile
from ....core.nif.blocks.nodes import NiNode
from ... import armature_edit, schema
from ...nif.node_transform import local_matrix

SKELETON_FILE = "skeleton.hkx"
SKELETON_FOLDERS = ("", "character assets", "characterassets")  # where the games keep it, beside animations' folders
BONE_LENGTH_FRACTION = 0.02  # of the skeleton's extent: small enough not to hide fingers


class Skeleton:
    """Names, parents (int array, -1 for roots, every parent before its children) and local
    reference pose matrices (n, 4, 4) of a skeleton; ``game`` "FO4"/"SSE" for Havok ones."""

    def __init__(self, name, names, parents, local, game=None, havok=False):
        self.name = name
        self.names = [str(n) for n in names]
        self.parents = np.asarray(parents, np.int64)
        self.local = np.asarray(local, np.float64).reshape(-1, 4, 4)
        self.game = game
        self.havok = havok
        n = len(self.names)
        if len(self.parents) != n or len(self.local) != n:
            raise FormatError(f"skeleton {name!r}: {n} bones, {len(self.parents)} parents, {len(self.local)} poses")
        bad = np.flatnonzero((self.parents >= np.arange(n)) | (self.parents < -1))
        if len(bad):
            raise FormatError(f"skeleton {name!r}: bone {bad[0]} ({self.names[bad[0]]!r}) has parent {self.parents[bad[0]]}, "
                              "not an earlier bone")
        if len(set(self.names)) != n:
            raise FormatError(f"skeleton {name!r}: two bones share a name")

    def world(self):
        """(n, 4, 4) reference pose of every bone in the skeleton's root space."""
        out = self.local.copy()
        for index, parent in enumerate(self.parents.tolist()):  # one product per bone, parents first
            if parent >= 0:
                out[index] = out[parent] @ self.local[index]
        return out


def havok_skeleton(skeleton, game):
    """A Skeleton of a core Havok skeleton (hkQsTransform reference pose: translation,
    quaternion x y z w, scale)."""
    rotations = np.asarray(skeleton.rotation, np.float64)[:, [3, 0, 1, 2]]
    local = transforms.compose(skeleton.translation, transforms.quaternion_to_matrix(rotations), skeleton.scale)
    return Skeleton(skeleton.name, skeleton.bone_names, skeleton.parents, local, game=game, havok=True)


def havok_skeleton_near(path):
    """The skeleton .hkx of an animation file's folder or the folders above it (or their
    "character assets" folder, where the games keep it), any case; None when there is none."""
    for folder in list(Path(path).resolve().parents)[:5]:
        for sub in SKELETON_FOLDERS:
            place = folder
            if sub:
                place = next((p for p in _entries(folder) if p.name.lower() == sub and p.is_dir()), None)
                if place is None:
                    continue
            found = next((p for p in _entries(place) if p.name.lower() == SKELETON_FILE and p.is_file()), None)
            if found is not None:
                return found
    return None


def _entries(folder):
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def nif_skeleton(path):
    """A Skeleton of a NIF's node tree: every node under the first root node, in depth-first
    order; the root node is the armature object."""
    nif = NifFile.read(path)
    blocks = nif.blocks
    root = next((r for r in nif.roots if 0 <= r < len(blocks) and isinstance(blocks[r], NiNode)), None)
    if root is None:
        raise FormatError("no root node: not a skeleton", path=path)
    names, parents, local = [], [], []
    stack, seen = [(child, -1) for child in reversed(np.asarray(blocks[root].children).tolist())], {root}
    while stack:
        index, parent = stack.pop()
        block = blocks[index] if 0 <= index < len(blocks) else None
        if not isinstance(block, NiNode) or index in seen:
            continue
        seen.add(index)
        names.append(str(block.name) if block.name is not None else f"NiNode:{index}")
        parents.append(parent)
        local.append(np.array(local_matrix(block), np.float64))
        number = len(names) - 1
        stack += [(child, number) for child in reversed(np.asarray(block.children).tolist())]
    if not names:
        raise FormatError("its root node has no child nodes: not a skeleton", path=path)
    try:
        return Skeleton(str(blocks[root].name or Path(path).stem), names, parents, local)
    except FormatError as error:
        raise error.located(path=path) from None


def build_armature(skeleton, collection, rollback):
    """A new armature object for ``skeleton`` linked into ``collection``, what it makes added to
    ``rollback``."""
    world = skeleton.world()
    bad = np.flatnonzero(~transforms.invertible(world))
    if len(bad):
        raise FormatError(f"bone {skeleton.names[bad[0]]!r}: its reference pose is singular")
    rests = transforms.rigid(world)
    extent = float(np.ptp(rests[:, :3, 3], axis=0).max()) if len(rests) else 1.0
    length = max(extent * BONE_LENGTH_FRACTION, 0.01)
    data = rollback.add(bpy.data.armatures.new(skeleton.name))
    obj = rollback.add(bpy.data.objects.new(skeleton.name, data))
    schema.stamp(obj)
    with armature_edit.edit_bones(data):
        bones = []
        for name, rest in zip(skeleton.names, rests):
            bone = data.edit_bones.new(name)
            bone.tail = (0.0, length, 0.0)
            bone.matrix = Matrix(rest.tolist())  # keeps the length, sets head and roll
            bones.append(bone)
        for bone, parent in zip(bones, skeleton.parents.tolist()):
            if parent >= 0:
                bone.parent = bones[parent]
        made = [bone.name for bone in bones]
    for name, wanted in zip(made, skeleton.names):
        if name != wanted or data.bones.get(name) is None:  # a name Blender cut, or a rest it dropped
            raise FormatError(f"bone {wanted!r} cannot be held by a Blender armature (name or rest pose)")
    if skeleton.havok:
        obj[schema.HKX_BONES] = json.dumps(skeleton.names)
        obj[schema.HKX_SKELETON] = skeleton.name
        obj[schema.HKX_GAME] = skeleton.game
    collection.objects.link(obj)
    return obj
