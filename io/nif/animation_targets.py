"""What a NIF animation's keys animate in Blender: a node's object, or its bone in each armature
showing it, with the map (A, s_b) from the node's local transform to Blender's channels (see
animation_import.py); a .kf's node names found among the scene's objects and bones; a shader
value's input on a shape material's Principled BSDF."""

import numpy as np

from ...core import transforms
from ...core.nif.blocks.objects import NiAVObject
from ..names import unsuffixed
from .node_transform import local_matrix
from .source import source_of, template_collection
from .. import schema

SIMILARITY = 1e-4  # what A may stray from a rotation times a uniform scale


def similarity(matrix):
    """(scale, rotation quaternion w x y z, translation) of a 4x4 matrix, or None when it is not
    a rotation times a uniform scale."""
    from mathutils import Matrix

    m = np.array(matrix, np.float64)
    linear = m[:3, :3]
    det = np.linalg.det(linear)
    if det <= 0:
        return None
    scale = float(np.cbrt(det))
    rotation = linear / scale
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=SIMILARITY):
        return None
    quaternion = tuple(Matrix(rotation.tolist()).to_quaternion())
    return scale, quaternion, tuple(m[:3, 3])


class Target:
    """What a node's keys animate: an object, or a bone of an armature object, and the map
    (A, s_b) from the node's local transform to Blender's channels."""

    id_type = "OBJECT"

    def __init__(self, obj, bone_name, a, scale_b):
        self.obj = obj
        self.bone_name = bone_name
        self.scale_a, self.rotation_a, self.translation_a = a
        self.scale_b = scale_b
        self.prefix = f'pose.bones["{bone_name}"].' if bone_name else ""

    @property
    def euler_exact(self):
        """Whether A leaves rotations as they are (q and -q alike), so Euler keys map one to one."""
        return abs(abs(self.rotation_a[0]) - 1.0) < 1e-6

    def set_rotation_mode(self, mode):
        owner = self.obj.pose.bones[self.bone_name] if self.bone_name else self.obj
        owner.rotation_mode = mode


def node_targets(builder, index, node):
    """The Targets of the node at ``index``: its object, or its bone in every armature showing
    it (skins with different bind poses get armatures of their own); None for one whose
    placement is sheared or singular."""
    made = builder.objects.get(index)
    if made is None:
        return []
    local = np.array(local_matrix(node), np.float64)
    if not transforms.invertible(local):  # a node scaled to nothing (or damaged): no keys map onto it
        return [None]
    if not isinstance(made, tuple):
        return [_object_target(made, local)]
    found = [made] + [
        (armature.object, armature.names[index])
        for armature in builder.skins.armatures
        if index in armature.names and armature.object is not None and (armature.object, armature.names[index]) != made
    ]
    return [_bone_target(obj, bone_name, local) for obj, bone_name in found]


def _object_target(obj, local):
    return _similar_target(obj, None, np.array(obj.matrix_basis, np.float64) @ np.linalg.inv(local), 1.0)


def _bone_target(obj, bone_name, local):
    bone = obj.data.bones[bone_name]
    rest = np.asarray(bone[schema.NIF_REST], np.float64).reshape(4, 4)
    if not transforms.invertible(rest):
        return None
    b = np.linalg.inv(rest) @ np.array(bone.matrix_local, np.float64)
    if not transforms.invertible(b):  # a rest Blender could not hold
        return None
    basis = np.array(obj.pose.bones[bone_name].matrix_basis, np.float64)
    a = basis @ np.linalg.inv(b) @ np.linalg.inv(local)
    return _similar_target(obj, bone_name, a, float(np.cbrt(np.linalg.det(b[:3, :3]))))


def _similar_target(obj, bone_name, a, scale_b):
    parts = similarity(a)
    return None if parts is None else Target(obj, bone_name, parts, scale_b)


class ShaderTarget:
    """A shader value's socket on the Principled BSDF of a shape's material (the material's node
    tree holds its F-curves)."""

    id_type = "NODETREE"
    bone_name = None
    scale_a, rotation_a, translation_a, scale_b = 1.0, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0  # values as stored

    def __init__(self, tree, node):
        self.obj = tree
        self.node = node
        self.prefix = f'nodes["{node.name}"].'


# Shader controller variables Blender shows (the controller ID is the variable's number):
# (controller type, variable) -> Principled BSDF input.
SHADER_SOCKETS = {
    ("BSEffectShaderPropertyFloatController", 0): "Emission Strength",  # emissive multiple
    ("BSEffectShaderPropertyFloatController", 5): "Alpha",  # alpha transparency
    ("BSLightingShaderPropertyFloatController", 11): "Emission Strength",
    ("BSLightingShaderPropertyFloatController", 12): "Alpha",
    ("BSEffectShaderPropertyColorController", 0): "Emission Color",  # emissive colour (r g b)
    ("BSLightingShaderPropertyColorController", 1): "Emission Color",
}


def shader_socket(controlled):
    try:
        variable = int(str(controlled.controller_id))
    except ValueError:
        return None
    return SHADER_SOCKETS.get((str(controlled.controller_type), variable))


def shader_target(obj):
    """The ShaderTarget of a shape object's first material, or None."""
    material = obj.data.materials[0] if obj.type == "MESH" and len(obj.data.materials) and obj.data.materials[0] else None
    tree = material.node_tree if material is not None else None
    node = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) if tree is not None else None
    return None if node is None else ShaderTarget(tree, node)


class SceneTargets:
    """Where a .kf's node names point: objects of the scene named so (or so with Blender's
    '.001' suffix), else bones of its armatures; each node's own local transform comes from the
    file the object was imported from, else from what Blender shows."""

    def __init__(self, scene, skip):
        self.objects, self.bones = {}, {}
        for obj in scene.objects:
            if skip in obj.users_collection:
                continue
            self.objects.setdefault(unsuffixed(obj.name), obj)
            if obj.type == "ARMATURE":
                for bone in obj.data.bones:
                    self.bones.setdefault(bone.name, []).append((obj, bone.name))
        self.sources = {}

    def find(self, name):
        obj = self.objects.get(name)
        if obj is not None:
            return [_object_target(obj, self._local(obj, obj.get(schema.NIF_BLOCK), np.array(obj.matrix_basis, np.float64)))]
        targets = []
        for armature, bone_name in self.bones.get(name, []):
            bone = armature.data.bones[bone_name]
            if schema.NIF_REST not in bone:
                continue
            rest = np.asarray(bone[schema.NIF_REST], np.float64).reshape(4, 4)
            parent = bone.parent[schema.NIF_REST] if bone.parent and schema.NIF_REST in bone.parent else np.eye(4)
            parent = np.asarray(parent, np.float64).reshape(4, 4)
            targets.append(_bone_target(armature, bone_name, self._local(armature, bone.get(schema.NIF_BLOCK), np.linalg.inv(parent) @ rest)))
        return targets

    def _local(self, obj, index, fallback):
        """The node's stored local transform in the file ``obj`` came from, else ``fallback``."""
        collection = template_collection([obj])
        if collection is None or not isinstance(index, int):
            return fallback
        if collection.name not in self.sources:
            self.sources[collection.name] = source_of(collection)
        nif = self.sources[collection.name]
        block = nif.blocks[index] if 0 <= index < len(nif.blocks) else None
        return np.array(local_matrix(block), np.float64) if isinstance(block, NiAVObject) else fallback
