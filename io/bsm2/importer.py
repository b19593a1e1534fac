"""A .bsm2 file (a core ``Bsm2File``) as Blender data: a mesh object deformed by an armature
object, one action per animation.

Every file vertex becomes one Blender vertex. Bones without a hierarchy have no rest pose in the
file: each gets one at the weighted centre of its vertices, unrotated, and its keys become the
pose that reproduces the file's skinning matrices. Everything is built into new datablocks,
which the import's rollback removes again if anything fails.
"""

from contextlib import contextmanager

import bpy
import numpy as np
from mathutils import Matrix

from ...core import transforms
from ...core.bsm2 import packing, skinning
from ...core.errors import FormatError
from . import kept_values, mapping
from .. import compat, sampled_keys, schema
from ..datablocks import rolled_back
from ..mesh_build import build_mesh

# Decomposition error above which a key is reported as not holdable by location/rotation/scale.
SHEAR_TOLERANCE = 1e-4
BONE_LENGTH_FRACTION = 0.05  # of the mesh's bounding box diagonal, when nothing better is known
MAX_MATERIAL_SLOTS = 32767  # face material indices are shorts


@rolled_back
def build(context, bsm, name, *, rollback):
    """Add ``bsm`` to the active collection; returns (mesh object, armature object, warnings).
    Everything made goes to ``rollback``, which also puts the selection back if the import fails."""
    rollback.keep_selection(context.view_layer)
    collection = context.collection or context.scene.collection
    warnings = list(bsm.warnings)
    mesh = _mesh(bsm, name, rollback, warnings)
    positions = mapping.vectors_to_blender(bsm.vertices["position"].astype(np.float32))
    armature_object, bone_names = _armature(context, bsm, name, positions, rollback, collection)
    mesh_object = _object(rollback, collection, name, mesh)
    _skin(mesh_object, armature_object, bsm, bone_names)
    _animations(context.scene, bsm, armature_object, bone_names, rollback, warnings)
    for obj in context.view_layer.objects:
        obj.select_set(obj in (mesh_object, armature_object))
    context.view_layer.objects.active = mesh_object
    return mesh_object, armature_object, warnings


def _object(rollback, collection, name, data):
    obj = rollback.add(bpy.data.objects.new(mapping.blender_name(name), data))
    schema.stamp(obj)
    collection.objects.link(obj)
    return obj


# -- mesh ---------------------------------------------------------------------------------------
def _mesh(bsm, name, rollback, warnings):
    if len(bsm.subsets) >= MAX_MATERIAL_SLOTS:
        raise FormatError(f"{len(bsm.subsets)} subsets: a Blender mesh holds at most {MAX_MATERIAL_SLOTS} material slots")
    vertices = bsm.vertices
    triangles = bsm.indices.reshape(-1, 3)
    materials = _face_materials(bsm, len(triangles), warnings)
    # build_mesh leaves out these triangles; their material slots go with them.
    a, b, c = triangles.T
    kept = (a != b) & (b != c) & (a != c)
    if not kept.all():
        warnings.append(f"{np.count_nonzero(~kept)} triangles naming a vertex twice left out (Blender cannot hold them)")

    normal_xyz, _ = packing.unpack_1010102(vertices["normal"])
    tangent_xyz, tangent_sign = packing.unpack_1010102(vertices["tangent"])
    normals = mapping.vectors_to_blender(packing.snorm_decode(normal_xyz))
    tangents = mapping.vectors_to_blender(packing.snorm_decode(tangent_xyz))
    # -512 reads as -1. Unit length, as Blender 4.2 does not normalise custom normals itself; a zero
    # normal leaves Blender's own (custom normals cannot be zero).
    directions = np.maximum(normals, -1.0)
    length = np.linalg.norm(directions, axis=1, keepdims=True)
    mesh = build_mesh(
        mapping.blender_name(name),
        mapping.vectors_to_blender(vertices["position"]),
        triangles,
        uvs=packing.uv_decode(vertices["uv"]),
        normals=directions / np.where(length > 0, length, 1.0),
    )
    rollback.add(mesh)
    mesh.polygons.foreach_set("material_index", materials[kept].astype(np.int32))
    _point_attribute(mesh, schema.BSM2_NORMAL, "FLOAT_VECTOR", "vector", normals)
    _point_attribute(mesh, schema.BSM2_TANGENT, "FLOAT_VECTOR", "vector", tangents)
    _point_attribute(mesh, schema.BSM2_TANGENT_SIGN, "FLOAT", "value", tangent_sign)
    existing = {mapping.file_name(material): material for material in bpy.data.materials}
    for subset in range(max(len(bsm.subsets), materials.max(initial=-1) + 1)):
        mesh.materials.append(_material(bsm, subset, existing, rollback))
    return mesh


def _face_materials(bsm, num_triangles, warnings):
    """Material slot per triangle: the slot of the subset holding it; one more slot for triangles
    no subset holds."""
    slots = np.full(num_triangles, -1, np.int64)
    for index, subset in enumerate(bsm.subsets):
        first = int(subset["first"]) // 3
        span = slots[first : first + int(subset["count"]) // 3]
        if np.any(span >= 0):
            warnings.append(f"subset {index} overlaps an earlier one: the shared triangles go to subset {index}")
        span[:] = index
    missing = slots < 0
    if missing.any():
        warnings.append(f"{np.count_nonzero(missing)} triangles in no subset: they get a material slot of their own")
        slots[missing] = len(bsm.subsets)
    return slots


def _material(bsm, subset, existing, rollback):
    """The material named after the subset's material, reusing one of that name (``existing``, by
    file name); None for the slot of triangles no subset holds."""
    if subset >= len(bsm.subsets):
        return None
    name = bsm.materials[int(bsm.subsets[subset]["material"])]
    if name not in existing:
        existing[name] = rollback.add(bpy.data.materials.new(mapping.blender_name(name)))
        mapping.remember_file_name(existing[name], name)
    return existing[name]


def _point_attribute(mesh, name, kind, field, values):
    attribute = mesh.attributes.new(name, kind, "POINT")
    attribute.data.foreach_set(field, np.asarray(values, np.float32).ravel())


# -- armature -----------------------------------------------------------------------------------
def _file_bone_names(bsm):
    if bsm.hierarchy is not None:
        return list(bsm.hierarchy.names)
    return [mapping.generated_bone_name(index) for index in range(bsm.num_bones)]


def _parents(bsm):
    """Parent index per bone, a root being its own parent."""
    if bsm.hierarchy is not None:
        return bsm.hierarchy.parents.astype(np.int64)
    return np.arange(bsm.num_bones)


def _influences(bsm):
    """(vertex, bone, weight byte sum) triples sorted by bone then weight: the weights the engine
    uses (it stops at the first zero) with a bone named twice in a vertex summed."""
    weights = bsm.vertices["weights"].astype(np.int64)
    weights *= np.cumprod(weights > 0, axis=1)
    vertex, slot = np.nonzero(weights)
    pair = vertex * max(bsm.num_bones, 1) + bsm.vertices["bones"][vertex, slot]
    pairs, inverse = np.unique(pair, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=weights[vertex, slot]).astype(np.int64)
    vertex, bone = np.divmod(pairs, max(bsm.num_bones, 1))
    order = np.lexsort((summed, bone))
    return vertex[order], bone[order], summed[order]


def _rest_targets(bsm, positions):
    """Per bone, the armature-space rest matrix wanted (Blender keeps only its rigid part), and a
    bone length for display."""
    finite = np.asarray(positions, np.float64)[np.isfinite(positions).all(axis=1)]
    extent = np.ptp(finite, axis=0) if len(finite) else np.ones(3)
    length = float(np.clip(BONE_LENGTH_FRACTION * np.linalg.norm(extent), 1e-3, 1e6))  # damaged files: still a bone
    if bsm.hierarchy is not None:
        return mapping.TO_BLENDER @ np.linalg.inv(bsm.hierarchy.inverse_bind_matrices), length
    vertex, bone, weight = _influences(bsm)
    totals = np.bincount(bone, weights=weight, minlength=bsm.num_bones)
    sums = np.stack(
        [np.bincount(bone, weights=weight * positions[vertex, axis], minlength=bsm.num_bones) for axis in range(3)], 1
    )
    centre = positions.mean(axis=0) if len(positions) else np.zeros(3)
    heads = np.where(totals[:, None] > 0, sums / np.where(totals > 0, totals, 1)[:, None], centre)
    # Rounded to what the bone's head stores, so the keys are computed against the real rest.
    return transforms.translation(heads.astype(np.float32)), length


@contextmanager
def _edit_mode(context, obj):
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        yield obj.data.edit_bones
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")


def _armature(context, bsm, name, positions, rollback, collection):
    """The armature object and its bone names in file order."""
    armature = rollback.add(bpy.data.armatures.new(mapping.blender_name(name)))
    obj = _object(rollback, collection, f"{name}_Armature", armature)
    targets, length = _rest_targets(bsm, positions)
    file_names = _file_bone_names(bsm)
    bad = np.flatnonzero(~transforms.invertible(targets))
    if len(bad):  # non-finite vertex positions or bind matrices: no bone can stand there
        raise FormatError(f"bone {bad[0]} ({file_names[bad[0]]!r}): its rest pose cannot be shown as a Blender bone")
    with _edit_mode(context, obj) as edit_bones:
        bones = []
        for file_name, rest in zip(file_names, transforms.rigid(targets)):
            bone = edit_bones.new(mapping.blender_name(file_name))
            bone.tail = (0.0, length, 0.0)
            bone.matrix = Matrix(rest.tolist())  # keeps the length, sets head and roll
            bones.append(bone)
        for index, parent in enumerate(_parents(bsm)):
            if parent != index:
                bones[index].parent = bones[parent]
        names = [bone.name for bone in bones]
    for index, (bone_name, file_name, target) in enumerate(zip(names, file_names, targets)):
        bone = armature.bones.get(bone_name)
        if bone is None or not transforms.invertible(bone.matrix_local):  # Blender could not place it
            raise FormatError(f"bone {index} ({file_name!r}): its rest pose cannot be shown as a Blender bone")
        mapping.remember_file_name(bone, file_name)
        if bsm.hierarchy is not None:
            residual = np.linalg.inv(np.array(bone.matrix_local, np.float64)) @ target
            bone[schema.BSM2_BIND_RESIDUAL] = residual.ravel().tolist()
            kept_values.keep_inverse_bind(bone, bsm.hierarchy.inverse_bind[index])
    for pose_bone in obj.pose.bones:
        pose_bone.rotation_mode = "QUATERNION"
    return obj, names


def _skin(mesh_object, armature_object, bsm, bone_names):
    mesh_object.parent = armature_object
    mesh_object.modifiers.new("Armature", "ARMATURE").object = armature_object
    groups = [mesh_object.vertex_groups.new(name=bone_name) for bone_name in bone_names]
    vertex, bone, weight = _influences(bsm)
    # One call per run of equal (bone, weight): bpy has no bulk weight setter.
    starts = np.flatnonzero(np.diff(bone, prepend=-1) | np.diff(weight, prepend=-1))
    for start, end in zip(starts, np.append(starts[1:], len(vertex))):
        groups[bone[start]].add(vertex[start:end].tolist(), weight[start] / 255.0, "REPLACE")


# -- animations ---------------------------------------------------------------------------------
def _animations(scene, bsm, armature_object, bone_names, rollback, warnings):
    bones = armature_object.data.bones
    rests = np.array([np.array(bones[name].matrix_local, np.float64) for name in bone_names]).reshape(-1, 4, 4)
    parents = _parents(bsm)
    start = scene.frame_start
    for index, animation in enumerate(bsm.animations):
        skin = skinning.skinning_matrices(bsm, animation)
        singular = np.argwhere(~transforms.invertible(skin))
        if len(singular):  # a damaged key: no pose of Blender's reproduces it
            key, bone = singular[0]
            warnings.append(f"animation {animation.name!r} not imported: key {key} of bone {bone} is not an invertible matrix")
            continue
        pose = mapping.TO_BLENDER @ skin @ mapping.FROM_BLENDER @ rests
        location, rotation, scale, error = transforms.decompose(mapping.basis_matrices(pose, rests, parents))
        if error > SHEAR_TOLERANCE * max(1.0, float(np.abs(location).max(initial=0.0))):
            warnings.append(
                f"animation {animation.name!r}: some keys shear a bone, which Blender's location, rotation "
                f"and scale cannot hold (error up to {error:.3g})"
            )
        action, slot = compat.new_action(mapping.blender_name(animation.name))
        rollback.add(action)
        mapping.remember_file_name(action, animation.name)
        action[schema.BSM2_INTERVAL_NS] = float(animation.interval_ns)
        action[schema.BSM2_DURATION_NS] = float(animation.duration_ns)
        frames = start + np.arange(len(skin)) * mapping.frame_step(scene, animation.interval_ns)
        rotation = sampled_keys.continuous(rotation)
        for bone, bone_name in enumerate(bone_names):
            path = f'pose.bones["{bpy.utils.escape_identifier(bone_name)}"]'
            for channel, values in (("location", location), ("rotation_quaternion", rotation), ("scale", scale)):
                for axis in range(values.shape[-1]):
                    fcurve = compat.new_fcurve(action, slot, f"{path}.{channel}", axis, bone_name)
                    sampled_keys.set_keys(fcurve, frames, values[:, bone, axis])
        kept_values.keep_keys(action, slot, animation.keys)
        compat.stash_action(armature_object, action, slot, start)
        if index == 0:
            compat.assign_action(armature_object, action, slot)
