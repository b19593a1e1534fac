"""Collision objects (see legacy_collision_import) back into Fallout 3 / New Vegas and Skyrim
Havok blocks.

An owner's collision is kept as stored when it is as imported (same collision block, same
fingerprint), and so is one the import did not show (collision_import.left_out); stored MOPP
code that is damaged is built anew over the shape it holds, nothing else changed. An edited body
gets its fields set from the properties (the rest of the rigid body kept) and its shape tree
written again, where each shape object that is as imported and in its place (its
``havok_shape_source`` fingerprint) stays the block it was and the others become new blocks
(the old ones, unreferenced, are dropped); an owner without collision gets a new
bhkCollisionObject and bhkRigidBody; deleting the objects drops it.

Shapes are taken in the body's space (a bhkRigidBodyT's translation and rotation taken out) and
written in Havok units (the file's havok_scale): a box mesh as a bhkBoxShape of its bounds (in a
bhkConvexTransformShape when its centre or axes are not the body's), a sphere empty as a
bhkSphereShape, a capsule mesh as the bhkCapsuleShape around it, a convex mesh as the
bhkConvexVerticesShape of its hull (of a flat mesh, its polygon), lists as bhkListShape /
bhkConvexListShape (one marked ``havok_mopp`` under a MOPP tree whose code is built over its
children's boxes), a triangle mesh (packed, strips or compressed) as a MOPP tree
(bhkMoppBvTreeShape, its code built by core.havok.mopp) over: in FO3/FNV a
bhkPackedNiTriStripsShape (core/nif/legacy_packed_mesh; its face ``havok_material`` values
become sub shapes), in Skyrim a bhkCompressedMeshShape whose data is built anew
(core/nif/compressed_mesh_build: a material per triangle, the filters of the data it replaces).
A dynamic body's centre of mass and inertia are computed from its convex pieces (solid, the mass
spread evenly, a sphere as a 26-point hull, flat pieces weightless).
"""

import numpy as np
from mathutils import Matrix

from ...core.errors import FormatError
from ...core.havok.shapes.hull import hull_planes
from ...core.havok.shapes.inertia import combine_parts
from ...core.havok.shapes.mass import solid_properties
from ...core.nif.blocks.compressed_mesh import bhkCompressedMeshShape
from ...core.nif.blocks.legacy_havok import (
    bhkBoxShape,
    bhkCapsuleShape,
    bhkCollisionObject,
    bhkConvexListShape,
    bhkConvexVerticesShape,
    bhkListShape,
    bhkMoppBvTreeShape,
    bhkRigidBody,
    bhkSphereShape,
    bhkTransformShape,
    havok_scale,
    transform_values,
)
from ...core.nif.compressed_mesh_build import build_compressed_data, build_mopp
from ...core.nif.legacy_mopp import build_over, damaged_mopps
from ...core.nif.legacy_packed_mesh import PACKED_RADIUS, packed_mesh_blocks
from ...core.nif import versions
from .collision_export import MOTIONS, fit_capsule, local_matrix, material_of, mesh_triangles, owner_matrix, triangle_materials
from .collision_import import collision_children, fingerprint, left_out, shape_fingerprint
from .legacy_collision_import import (
    body_matrix,
    compressed_data_in,
    hull_mesh,
    motion_codes,
    motion_name,
    template_body,
)
from .. import schema

MESH_KINDS = ("packed_mesh", "strips_mesh", "compressed_mesh")
LIST_KINDS = ("list", "convex_list")
FILTER = np.dtype([("layer", "u1"), ("flags", "u1"), ("group", "<u2")])  # a list's per-shape filters (zeroed)


def write_collision(exporter, owner, owner_index):
    """Make ``blocks[owner_index].collision_object`` right for the collision objects parented to
    ``owner``."""
    blocks = exporter.nif.blocks
    block = blocks[owner_index]
    if not hasattr(block, "collision_object"):
        return
    bodies = collision_children(owner)
    index = block.collision_object
    body = None
    if exporter.template:
        if left_out(owner) == index:
            if not bodies:
                return  # the import did not show it: kept as stored
        else:
            body = template_body(blocks, index)
    if not bodies:
        if body is not None:
            block.collision_object = -1  # its blocks become unreferenced and are dropped
        return
    obj = bodies[0]
    label = owner[1] if isinstance(owner, tuple) else owner.name
    if len(bodies) > 1:
        exporter.warn(f"{label}: a node holds one collision body; only {obj.name!r} is written")
    imported = body is not None and obj.get(schema.NIF_COLLISION) == index
    if imported and obj.get(schema.HAVOK_SOURCE) == fingerprint(obj):
        _repair_mopps(exporter, obj, body.shape)
        return
    bs_version = exporter.nif.header.bs_version
    frame = body_matrix(body, havok_scale(bs_version)) if body is not None else Matrix.Identity(4)
    placed = np.array(frame.inverted() @ owner_matrix(obj), np.float64)
    # a new compressed mesh keeps the fields and material filters of the one it replaces
    replaced = compressed_data_in(blocks, body.shape) if body is not None else None
    shape = write_shape(exporter, obj, placed, replaced, imported)
    _repair_mopps(exporter, obj, shape)
    if body is None:
        body = bhkRigidBody()
        motion, quality = motion_codes(bs_version)[_motion(obj)]
        body.motion_system, body.quality_type = motion, quality
        flags = 1  # FO3/FNV: active
        if versions.skyrim_or_later(bs_version):  # as every corpus Skyrim body (keyframed ones also synced on update)
            flags = 0x89 if _motion(obj) == "keyframed" else 0x81
        block.collision_object = exporter.add(bhkCollisionObject(target=owner_index, flags=flags, body=exporter.add(body)))
    _set_body(body, obj, shape, placed, exporter.nif.header.bs_version)


def _repair_mopps(exporter, obj, shape):
    """Stored MOPP code in the shape tree at ``shape`` that is damaged, built anew over the
    shape it holds (the rest of the blocks as they are)."""
    blocks = exporter.nif.blocks
    for index, why in damaged_mopps(blocks, shape):
        exporter.warn(f"collision {obj.name!r}: the MOPP code of block {index} is damaged ({why}); built anew")
        tree = blocks[index]
        built = build_over(blocks, tree.shape)
        tree.code, tree.offset, tree.build_type = built.code, built.offset, built.build_type


def _motion(obj):
    motion = obj.get(schema.HAVOK_MOTION, "static")
    if motion not in MOTIONS:
        raise FormatError(f"collision {obj.name!r}: motion {motion!r} is not one of {', '.join(MOTIONS)}")
    return motion


def _set_body(body, obj, shape, placed, bs_version):
    motion = _motion(obj)
    if motion_name(body.motion_system, bs_version) != motion:
        body.motion_system, body.quality_type = motion_codes(bs_version)[motion]
    layer = int(obj.get(schema.HAVOK_LAYER, 1))
    if not 0 <= layer <= 255:
        raise FormatError(f"collision {obj.name!r}: layer {layer} is not 0 to 255")
    body.shape = shape
    body.havok_filter = (layer, *body.havok_filter[1:])
    body.body_filter = (layer, *body.body_filter[1:])
    body.friction = float(obj.get(schema.HAVOK_FRICTION, 0.5))
    body.restitution = float(obj.get(schema.HAVOK_RESTITUTION, 0.4))
    body.mass = float(obj.get(schema.HAVOK_MASS, 0.0))
    if motion != "dynamic":
        return  # only a moving body's centre of mass and inertia matter: the stored ones are kept
    if not body.mass > 0:
        raise FormatError(f"collision {obj.name!r} is dynamic: give it a mass above 0")
    pieces = _pieces(obj, placed, havok_scale(bs_version))
    volume, centre, inertia = combine_parts([solid_properties(*piece) for piece in pieces])
    if volume > 0:
        body.center = (*centre.tolist(), 0.0)
        rows = np.zeros((3, 4))
        rows[:, :3] = inertia * (body.mass / volume)
        body.inertia = tuple(rows.reshape(-1).tolist())


def _pieces(obj, matrix, units):
    """The convex pieces (vertices in Havok units, outward triangles) of the shapes of ``obj``
    placed by ``matrix`` (body space, game units): a box, its bounds; a sphere, a 26-point hull;
    other meshes, their hull (flat ones have none)."""
    kind = obj[schema.HAVOK_SHAPE]
    if kind in LIST_KINDS:
        return [piece for child in collision_children(obj)
                for piece in _pieces(child, matrix @ np.array(local_matrix(child), np.float64), units)]
    if kind == "sphere":
        points = _sphere_points(obj.empty_display_size * float(np.linalg.norm(matrix[:3, :3], axis=0).max()))
        return [hull_mesh((points + matrix[:3, 3]) / units)]
    vertices = _mesh_vertices(obj)
    if kind == "box":
        low, high = vertices.min(axis=0), vertices.max(axis=0)
        vertices = low + np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]) * (high - low)
    try:
        return [hull_mesh((vertices @ matrix[:3, :3].T + matrix[:3, 3]) / units)]
    except FormatError:
        return []  # flat: no volume


def write_shape(exporter, obj, matrix, replaced=None, imported=False):
    """The block index of the shape of ``obj`` placed by ``matrix`` (body space, game units);
    ``replaced``: the (bhkCompressedMeshShape, data) of the body's stored collision, or None;
    ``imported``: the body is the one the import showed, so its untouched shapes are kept."""
    kind = obj[schema.HAVOK_SHAPE]
    units = havok_scale(exporter.nif.header.bs_version)
    if imported and schema.NIF_SHAPE in obj and obj.get(schema.HAVOK_SHAPE_SOURCE) == shape_fingerprint(obj):
        return obj[schema.NIF_SHAPE]
    try:
        if kind in LIST_KINDS:
            return _list(exporter, obj, matrix, replaced, imported)
        if kind in MESH_KINDS:
            return _triangle_mesh(exporter, obj, matrix, units, replaced)
        if kind == "sphere":
            if obj.type != "EMPTY":
                raise FormatError("a sphere is an empty (its display size is the radius)")
            radius = obj.empty_display_size * float(np.linalg.norm(matrix[:3, :3], axis=0).max())
            shape = exporter.add(bhkSphereShape(material=material_of(obj), radius=radius / units))
            return _placed(exporter, obj, shape, _translation(matrix[:3, 3]))
        vertices = _mesh_vertices(obj)
        if kind == "box":
            return _box(exporter, obj, vertices, matrix)
        placed = vertices @ matrix[:3, :3].T + matrix[:3, 3]
        if kind == "capsule":
            first, second, radius = fit_capsule(placed)
            return exporter.add(bhkCapsuleShape(material=material_of(obj), radius=radius / units,
                                                first=tuple(first / units), first_radius=radius / units,
                                                second=tuple(second / units), second_radius=radius / units))
        if kind == "convex":
            points, planes = hull_planes(placed / units)
            planes = planes[np.lexsort(planes.T[::-1])]  # sorted as the game's files keep them
            return exporter.add(bhkConvexVerticesShape(
                material=material_of(obj), radius=float(obj.get(schema.HAVOK_RADIUS, 0.0)) / units,
                vertices=np.c_[points, np.zeros(len(points))].astype(np.float32), normals=planes.astype(np.float32)))
        raise FormatError(f"unknown collision shape {kind!r}")
    except FormatError as error:
        raise FormatError(f"collision {obj.name!r}: {error.message}") from None


def _list(exporter, obj, matrix, replaced, imported):
    """A bhkListShape or bhkConvexListShape of the objects parented to ``obj``; under a MOPP
    tree built over its children when ``obj`` is marked so."""
    children = collision_children(obj)
    if not children:
        raise FormatError("a list needs collision objects parented to it")
    kind = obj[schema.HAVOK_SHAPE]
    if kind == "convex_list" and any(child.get(schema.HAVOK_SHAPE) in MESH_KINDS for child in children):
        raise FormatError("a convex list holds convex shapes, not triangle meshes")
    sub_shapes = [write_shape(exporter, child, matrix @ np.array(local_matrix(child), np.float64), replaced, imported)
                  for child in children]
    if kind == "list":
        filters = np.zeros(len(sub_shapes), FILTER)
        shape = exporter.add(bhkListShape(sub_shapes=sub_shapes, material=material_of(obj), filters=filters))
    else:
        radius = exporter.nif.blocks[sub_shapes[0]].radius
        shape = exporter.add(bhkConvexListShape(sub_shapes=sub_shapes, material=material_of(obj), radius=radius))
    if not obj.get(schema.HAVOK_MOPP):
        return shape
    tree = build_over(exporter.nif.blocks, shape)
    return exporter.add(bhkMoppBvTreeShape(shape=shape, offset=tree.offset, build_type=tree.build_type, code=tree.code))


def _mesh_vertices(obj):
    if obj.type != "MESH" or not len(obj.data.vertices):
        raise FormatError(f"a {obj[schema.HAVOK_SHAPE]} collision must be a mesh with vertices")
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def _triangle_mesh(exporter, obj, matrix, units, replaced):
    """A MOPP tree over the object's faces: a packed triangle mesh in FO3/FNV, a compressed
    mesh in Skyrim (Havok units)."""
    if obj.type != "MESH" or not len(obj.data.polygons):
        raise FormatError("a triangle mesh collision must be a mesh with faces")
    vertices = (_mesh_vertices(obj) @ matrix[:3, :3].T + matrix[:3, 3]) / units
    triangles = mesh_triangles(obj.data, matrix)  # first: it makes the loop triangles the materials read
    materials = triangle_materials(obj, obj.data)
    if versions.skyrim_or_later(exporter.nif.header.bs_version):
        return _compressed_mesh(exporter, obj, vertices, triangles, materials, replaced)
    radius = float(obj.get(schema.HAVOK_RADIUS, PACKED_RADIUS * units)) / units
    tree, shape, data = packed_mesh_blocks(vertices, triangles, materials, int(obj.get(schema.HAVOK_LAYER, 1)), radius)
    shape.data = exporter.add(data)
    tree.shape = exporter.add(shape)
    return exporter.add(tree)


def _sphere_points(radius):
    directions = np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)], np.float64)
    return directions / np.linalg.norm(directions, axis=1)[:, None] * radius


def _translation(offset):
    matrix = np.eye(4)
    matrix[:3, 3] = offset
    return matrix


def _box(exporter, obj, vertices, matrix):
    units = havok_scale(exporter.nif.header.bs_version)
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    placed = matrix @ _translation((low + high) / 2)
    scale = np.linalg.norm(placed[:3, :3], axis=0)
    if not (scale > 0).all():
        raise FormatError("a box needs size along every axis")
    rotation = placed[:3, :3] / scale
    if np.linalg.det(rotation) < 0:
        raise FormatError("a box cannot be mirrored")
    half = (high - low) / 2 * scale
    frame = np.eye(4)
    frame[:3, :3] = rotation
    frame[:3, 3] = placed[:3, 3]
    shape = exporter.add(bhkBoxShape(material=material_of(obj), radius=float(obj.get(schema.HAVOK_RADIUS, 0.0)) / units,
                                     dimensions=tuple(half / units)))
    return _placed(exporter, obj, shape, frame)


def _placed(exporter, obj, shape, frame):
    """``shape`` in a bhkConvexTransformShape when ``frame`` is not the identity."""
    if np.allclose(frame, np.eye(4), atol=1e-6):
        return shape
    havok = frame.copy()
    havok[:3, 3] /= havok_scale(exporter.nif.header.bs_version)
    child = exporter.nif.blocks[shape]
    transform = bhkTransformShape("bhkConvexTransformShape", shape=shape, material=material_of(obj), radius=child.radius,
                                  transform=transform_values(havok, (0.0,) * 15 + (1.0,)))
    return exporter.add(transform)


def _compressed_mesh(exporter, obj, vertices, triangles, materials, replaced):
    """A MOPP tree over a new compressed mesh shape and its data; the shape's fields and the
    materials' filters kept from ``replaced`` (the body's stored one) when there is one."""
    layer = int(obj.get(schema.HAVOK_LAYER, 1))
    filters = {int(value): (layer, 0, 0) for value in np.unique(materials).tolist()}
    shape = bhkCompressedMeshShape(target=exporter.nif.roots[0] if exporter.nif.roots else -1)
    template = None
    if replaced is not None:
        old, template = replaced
        filters.update({int(row["material"]): (int(row["layer"]), int(row["flags"]), int(row["group"]))
                        for row in template.chunk_materials})
        for name in ("target", "user_data", "radius", "radius_copy"):
            setattr(shape, name, getattr(old, name))
    data = build_compressed_data(vertices, triangles, materials, filters, template)
    tree = build_mopp(data, shape.radius)
    shape.data = exporter.add(data)
    return exporter.add(bhkMoppBvTreeShape(shape=exporter.add(shape), offset=tree.offset, build_type=tree.build_type,
                                           code=tree.code))
