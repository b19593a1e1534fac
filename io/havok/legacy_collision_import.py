"""Fallout 3 / New Vegas and Skyrim LE / SE Havok collision (bhkCollisionObject or a skeleton's
bhkBlendCollisionObject, bhkRigidBody(T) and its shape blocks) as Blender objects under the
object of the node owning it, with the same properties and panel as Fallout 4 collision (see
collision_import).

A body's shapes are in its owner node's space, in Havok units (times the file's ``havok_scale``:
6.999125 in FO3/FNV, 69.99125 in Skyrim); a bhkRigidBodyT also moves them by its translation and
rotation, a bhkRigidBody does not.
Transform shapes are folded into their child's placement (the exporter writes one back when a
shape is not at its body's origin); lists become empties holding one object per sub shape; a
MOPP tree is not shown, the triangle mesh or list it holds is (a list under one is marked
``havok_mopp``; damaged code is warned about). Shapes: ``box`` and ``capsule`` meshes that
measure back to their dimensions, ``sphere`` empties, ``convex`` meshes of the stored points
and the hull they span (core, without the convex radius; flat points span a polygon, points on
a line no face), ``packed_mesh`` (bhkPackedNiTriStripsShape, per-triangle
materials from its sub shapes in the ``havok_material`` face attribute) and ``strips_mesh``
(bhkNiTriStripsShape: its NiTriStripsData hold game units, as pynifly's files show),
``compressed_mesh`` (Skyrim's bhkCompressedMeshShape: big triangles and chunks, per-triangle
materials as for packed meshes), ``list`` and ``convex_list``. The body's motion system is shown
as static (fixed), keyframed or dynamic (the others; Skyrim's codes are Havok 2010's, see
MOTION_CODES).

Each shape object keeps the index of the block it shows (``nif_shape``: the outermost, a
transform or MOPP tree around it included) and a fingerprint of itself in its place
(``havok_shape_source``): the exporter writes an edited body's untouched shapes as the blocks
they were."""

import numpy as np
from mathutils import Matrix, Quaternion

from ...core.errors import FormatError
from ...core.havok.shapes.hull import convex_hull, spanned_hull
from ...core.nif.block import block_at
from ...core.nif.blocks.compressed_mesh import bhkCompressedMeshShape, bhkCompressedMeshShapeData
from ...core.nif.blocks.geometry import NiTriStripsData
from ...core.nif.blocks.legacy_havok import (
    GAME_UNITS,
    bhkBoxShape,
    bhkCapsuleShape,
    bhkCollisionObject,
    bhkConvexListShape,
    bhkConvexVerticesShape,
    bhkListShape,
    bhkMoppBvTreeShape,
    bhkNiTriStripsShape,
    bhkPackedNiTriStripsShape,
    bhkRigidBody,
    bhkSphereShape,
    bhkTransformShape,
    havok_scale,
    hkPackedNiTriStripsData,
)
from ...core.nif.legacy_mopp import LISTS, damaged_mopps
from ...core.nif import versions
from ..mesh_build import build_mesh, drop_degenerate
from .collision_import import (
    capsule_mesh,
    leave_out,
    material_text,
    new_collision_object,
    place_body,
    set_ranges,
    shape_fingerprint,
)
from .. import schema

# hkMotionType and hkQualityType of a body by motion, in FO3/FNV and in Skyrim, whose Havok (2010)
# dropped the two "stabilized" motion types (every corpus Skyrim body: static 5 with quality 0,
# keyframed 4 with 1, loose items 3 with 4)
MOTION_CODES = {False: {"static": (7, 1), "keyframed": (6, 2), "dynamic": (4, 4)},
                True: {"static": (5, 0), "keyframed": (4, 1), "dynamic": (3, 4)}}
MAX_SHAPES = 4096  # per body: far beyond what the game's files hold
SHOWN = (bhkMoppBvTreeShape, bhkTransformShape, bhkListShape, bhkConvexListShape, bhkSphereShape, bhkBoxShape,
         bhkCapsuleShape, bhkConvexVerticesShape, bhkPackedNiTriStripsShape, bhkNiTriStripsShape, bhkCompressedMeshShape)
MOPP_CHILDREN = (bhkPackedNiTriStripsShape, bhkCompressedMeshShape, *LISTS)


def motion_codes(bs_version):
    """{motion: (hkMotionType, hkQualityType)} of a file of this bs version."""
    return MOTION_CODES[versions.skyrim_or_later(bs_version)]


def motion_name(motion_system, bs_version):
    codes = motion_codes(bs_version)
    return {codes["static"][0]: "static", codes["keyframed"][0]: "keyframed"}.get(motion_system, "dynamic")


def body_matrix(body, units=GAME_UNITS):
    """Where a body puts its shapes in its owner's space (game units, ``units`` per Havok unit)."""
    if body.type_name != "bhkRigidBodyT":
        return Matrix.Identity(4)
    x, y, z, w = body.rotation
    rotation = Quaternion((w, x, y, z))
    if rotation.magnitude == 0:
        raise FormatError("its rotation is a zero quaternion")
    rotation.normalize()
    return Matrix.Translation([v * units for v in body.translation[:3]]) @ rotation.to_matrix().to_4x4()


def build_collision(builder, owner_index, owner_block, owner):
    """``owner`` is the owner's object, or (armature, bone name) when the owner is a bone."""
    blocks = builder.nif.blocks
    label = owner_block.name or f"{owner_block.type_name}:{owner_index}"
    index = owner_block.collision_object
    collision = block_at(blocks, index, bhkCollisionObject)
    body = block_at(blocks, collision.body, bhkRigidBody) if collision is not None else None
    if body is None or body.later_info:
        leave_out(owner, index)
        builder.warn(f"{label}: collision block {index} is not a bhkCollisionObject with a rigid body; its collision is left out")
        return
    start = builder.rollback.savepoint()
    units = havok_scale(builder.nif.header.bs_version)
    try:
        check_shape(blocks, body.shape)
        obj, offset = shape_object(builder, blocks, body.shape, f"{label} collision", units)
        offset = body_matrix(body, units) @ offset
    except FormatError as error:
        builder.rollback.undo(start)
        leave_out(owner, index)
        builder.warn(f"{label}: collision not shown ({error.message})")
        return
    for mopp_index, why in damaged_mopps(blocks, body.shape):
        builder.warn(f"{label}: the MOPP code of block {mopp_index} is damaged ({why}); exporting builds it anew")
    obj[schema.HAVOK_MOTION] = motion_name(body.motion_system, builder.nif.header.bs_version)
    obj[schema.HAVOK_MASS] = float(body.mass)
    obj[schema.HAVOK_FRICTION] = float(body.friction)
    obj[schema.HAVOK_RESTITUTION] = float(body.restitution)
    obj[schema.HAVOK_LAYER] = body.havok_filter[0]
    set_ranges(obj)
    place_body(builder, obj, owner, offset, index)
    for shape in (obj, *(child for child in obj.children_recursive if schema.HAVOK_SHAPE in child)):
        shape[schema.HAVOK_SHAPE_SOURCE] = shape_fingerprint(shape)


def template_body(blocks, index):
    """The rigid body of the bhkCollisionObject at ``index``, or None when there is none the
    import could show (whether it did: collision_import.left_out)."""
    collision = block_at(blocks, index, bhkCollisionObject)
    body = block_at(blocks, collision.body, bhkRigidBody) if collision is not None else None
    return None if body is None or body.later_info else body


def check_shape(blocks, index, within=()):
    """How many shapes the tree at ``index`` holds (counting each use of a shared one); a
    FormatError saying why when it holds a block the import does not show, a missing data
    block, a cycle, or more shapes than MAX_SHAPES (lists naming lists twice over grow
    exponentially)."""
    if index in within:
        raise FormatError(f"shape block {index} contains itself")
    block = blocks[index] if 0 <= index < len(blocks) else None
    if not isinstance(block, SHOWN):
        raise FormatError(f"block {index} ({getattr(block, 'type_name', 'none')}) is not a shape that can be shown")
    if isinstance(block, bhkMoppBvTreeShape) and block_at(blocks, block.shape, *MOPP_CHILDREN) is None:
        raise FormatError(f"the MOPP tree of block {index} holds no triangle mesh or list of shapes")
    if isinstance(block, bhkPackedNiTriStripsShape):
        _check_packed(block_at(blocks, block.data, hkPackedNiTriStripsData), block.data)
    if isinstance(block, bhkCompressedMeshShape):
        data = block_at(blocks, block.data, bhkCompressedMeshShapeData)
        if data is None:
            raise FormatError(f"its bhkCompressedMeshShape has no bhkCompressedMeshShapeData (block {block.data})")
        try:
            data.mesh()
        except FormatError as error:
            raise FormatError(f"its compressed mesh (block {block.data}): {error.message}") from None
    if isinstance(block, bhkConvexVerticesShape) and not np.isfinite(np.asarray(block.vertices, np.float64)).all(axis=-1).any():
        raise FormatError(f"its convex shape (block {index}) holds no finite point")
    if isinstance(block, bhkNiTriStripsShape):
        strips = np.asarray(block.strips_data).tolist()
        if not strips:
            raise FormatError("its bhkNiTriStripsShape holds no strips data")
        for data in strips:
            if getattr(block_at(blocks, data, NiTriStripsData), "vertices", None) is None:
                raise FormatError(f"its strips data block {data} is not NiTriStripsData with vertices")
    if isinstance(block, (bhkMoppBvTreeShape, bhkTransformShape)):
        children = [block.shape]
    elif isinstance(block, (bhkListShape, bhkConvexListShape)):
        children = np.asarray(block.sub_shapes).tolist()
    else:
        children = []
    count = 1
    for child in children:
        count += check_shape(blocks, child, (*within, index))
        if count > MAX_SHAPES:
            raise FormatError(f"its shape tree holds more than {MAX_SHAPES} shapes")
    return count


def compressed_data_in(blocks, index):
    """(bhkCompressedMeshShape, its data) of the MOPP tree at ``index``, or None."""
    tree = block_at(blocks, index, bhkMoppBvTreeShape)
    shape = block_at(blocks, tree.shape, bhkCompressedMeshShape) if tree is not None else None
    data = block_at(blocks, shape.data, bhkCompressedMeshShapeData) if shape is not None else None
    return (shape, data) if data is not None else None


def _check_packed(data, index):
    if data is None:
        raise FormatError(f"its bhkPackedNiTriStripsShape has no hkPackedNiTriStripsData (block {index})")
    count = len(data.vertices)
    triangles = np.asarray(data.triangles)[:, :3]
    if len(triangles) and triangles.max() >= count:
        raise FormatError(f"a packed triangle uses vertex {int(triangles.max())} of {count}")
    held = int(np.asarray(data.sub_shapes["num_vertices"], np.int64).sum()) if len(data.sub_shapes) else count
    if held != count:
        raise FormatError(f"its sub shapes hold {held} vertices of {count}")


def shape_object(builder, blocks, index, name, units=GAME_UNITS):
    """(object, its placement in the shape's space) of the shape block at ``index`` (a tree
    check_shape accepted); ``units``: game units per Havok unit."""
    block = blocks[index]
    if isinstance(block, bhkMoppBvTreeShape):
        obj, offset = shape_object(builder, blocks, block.shape, name, units)
        if isinstance(blocks[block.shape], LISTS):
            obj[schema.HAVOK_MOPP] = True
        obj[schema.NIF_SHAPE] = index
        return obj, offset
    if isinstance(block, bhkTransformShape):
        obj, offset = shape_object(builder, blocks, block.shape, name, units)
        matrix = block.matrix
        matrix[:3, 3] *= units
        obj[schema.NIF_SHAPE] = index
        return obj, Matrix(matrix.tolist()) @ offset
    if isinstance(block, (bhkListShape, bhkConvexListShape)):
        obj = new_collision_object(builder, name, None, "list" if isinstance(block, bhkListShape) else "convex_list")
        obj.empty_display_type = "PLAIN_AXES"
        for number, child in enumerate(np.asarray(block.sub_shapes).tolist()):
            child_obj, offset = shape_object(builder, blocks, child, f"{name} {number}", units)
            child_obj.parent = obj
            child_obj.matrix_basis = offset
    elif isinstance(block, bhkSphereShape):
        obj = new_collision_object(builder, name, None, "sphere")
        obj.empty_display_type = "SPHERE"
        obj.empty_display_size = block.radius * units
    elif isinstance(block, bhkBoxShape):
        half = np.array(block.dimensions, np.float64) * units
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float64) * half
        obj = new_collision_object(builder, name, build_mesh(name, *box_mesh(corners)), "box")
        obj[schema.HAVOK_RADIUS] = block.radius * units
    elif isinstance(block, bhkCapsuleShape):
        first, second = (np.array(p, np.float64) * units for p in (block.first, block.second))
        obj = new_collision_object(builder, name, build_mesh(name, *capsule_mesh(first, second, block.radius * units)), "capsule")
    elif isinstance(block, bhkConvexVerticesShape):
        points, faces = spanned_hull(np.asarray(block.vertices, np.float64)[:, :3] * units)
        obj = new_collision_object(builder, name, build_mesh(name, points, fan_triangles(faces)), "convex")
        obj[schema.HAVOK_RADIUS] = block.radius * units
    elif isinstance(block, bhkPackedNiTriStripsShape):
        obj = _packed_object(builder, blocks, block, name, units)
    elif isinstance(block, bhkCompressedMeshShape):
        obj = _compressed_object(builder, blocks, block, name, units)
    else:
        obj = _strips_object(builder, blocks, block, name)
    if not isinstance(block, (bhkPackedNiTriStripsShape, bhkCompressedMeshShape)):
        obj[schema.HAVOK_MATERIAL] = material_text(block.material)
    obj[schema.NIF_SHAPE] = index
    set_ranges(obj)
    return obj, Matrix.Identity(4)


def box_mesh(corners):
    """The 8 corners (x, y, z each -/+ in binary order) and 12 outward triangles of a box."""
    quads = np.array([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
    return corners, np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])


def hull_mesh(vertices):
    """The convex hull of points as vertices and fan-triangulated faces."""
    points, faces, _ = convex_hull(vertices)
    return points, fan_triangles(faces)


def fan_triangles(faces):
    """Convex polygons (index arrays) as triangle fans."""
    triangles = [(face[0], face[i], face[i + 1]) for face in faces for i in range(1, len(face) - 1)]
    return np.array(triangles, np.int64).reshape(-1, 3)


def _packed_object(builder, blocks, block, name, units):
    data = blocks[block.data]
    vertices = np.asarray(data.vertices, np.float64) * np.array(block.scale[:3]) * units
    triangles = drop_degenerate(np.asarray(data.triangles, np.int64)[:, :3])
    sub_shapes = data.sub_shapes
    ends = np.cumsum(np.asarray(sub_shapes["num_vertices"], np.int64)) if len(sub_shapes) else np.zeros(0, np.int64)
    mesh = build_mesh(name, vertices, triangles)
    obj = new_collision_object(builder, name, mesh, "packed_mesh")
    if len(sub_shapes):
        materials = np.asarray(sub_shapes["material"], np.uint32)
        per_face = materials[np.searchsorted(ends, triangles[:, 0], side="right")]
        attribute = mesh.attributes.new(schema.HAVOK_MATERIAL, "INT", "FACE")
        attribute.data.foreach_set("value", per_face.view(np.int32))
        obj[schema.HAVOK_MATERIAL] = material_text(materials[0])
    else:
        obj[schema.HAVOK_MATERIAL] = material_text(0)
    return obj


def _compressed_object(builder, blocks, block, name, units):
    """A compressed mesh with its triangles' Bethesda materials in the face attribute; the
    object's material is the most used one (what a new face gets)."""
    data = blocks[block.data]
    vertices, triangles, material_indices, _ = data.mesh()
    keep = (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])
    triangles, material_indices = triangles[keep], material_indices[keep]
    used, corners = np.unique(triangles, return_inverse=True)
    mesh = build_mesh(name, vertices[used] * np.array(block.scale[:3]) * units, corners.reshape(-1, 3))
    obj = new_collision_object(builder, name, mesh, "compressed_mesh")
    materials = np.asarray(data.chunk_materials["material"], np.uint32)[material_indices]
    attribute = mesh.attributes.new(schema.HAVOK_MATERIAL, "INT", "FACE")
    attribute.data.foreach_set("value", materials.view(np.int32))
    values, counts = np.unique(materials, return_counts=True)
    obj[schema.HAVOK_MATERIAL] = material_text(values[np.argmax(counts)] if len(values) else 0)
    return obj


def _strips_object(builder, blocks, block, name):
    vertices, triangles = [], []
    count = 0
    for index in np.asarray(block.strips_data).tolist():
        data = blocks[index]
        vertices.append(np.asarray(data.vertices, np.float64))
        triangles.append(np.asarray(data.triangles, np.int64).reshape(-1, 3) + count)
        count += len(data.vertices)
    scaled = np.concatenate(vertices) * np.array(block.scale[:3])
    return new_collision_object(builder, name, build_mesh(name, scaled, np.concatenate(triangles)), "strips_mesh")
