"""Fallout 4 Havok collision as Blender objects under the object of the node owning it.

A bhkNPCollisionObject selects one body (its body id) of a bhkPhysicsSystem. That body becomes
one object parented to the owner, at the owner's origin: the shape's geometry is in the owner's
space (game units). The body's stored position and rotation are where the owner stood in the file
when it was written (the game moves the body with the node), so applying them again would place
the collision twice on any node away from the origin; every corpus file agrees. Shapes: convex polytopes, capsules and compressed meshes as wire meshes, spheres as sphere
empties, compounds as an empty holding one such object per instance. They stay out of renders.

What the body holds is kept as custom properties (so it survives save and reload and needs no
registration): ``havok_shape`` (convex, capsule, sphere, compressed_mesh, compound) on every
collision object; on the body object also ``havok_motion``, ``havok_mass``, ``havok_friction``,
``havok_restitution`` and ``havok_layer``; ``havok_material`` (the shape's Bethesda material
id as hex text) and ``havok_radius`` (convex radius, game units) per shape; per-triangle
Bethesda materials of a compressed mesh in the int face attribute ``havok_material`` (the u32
ids as int32 bit patterns). A polytope's mesh is its core: the game adds the convex radius around it.
``nif_collision`` and the ``havok_source`` fingerprint of what was built let the exporter
write an untouched collision back unchanged. An owner whose collision the import did not show
(a body it cannot build) keeps that collision block's index in ``nif_collision_left_out`` (on
the owner's object or bone), so the exporter keeps it as stored instead of taking it for
deleted.

Ragdoll systems (skeletons' bhkRagdollSystem) are kept in the file but not built.
"""

import functools
import hashlib

import bpy
import numpy as np
from mathutils import Matrix

from ...core.errors import FormatError
from ...core.havok import (
    CapsuleShape,
    CompressedMeshShape,
    ConvexPolytopeShape,
    DynamicCompoundShape,
    Packfile,
    PhysicsSystemData,
    SphereShape,
    StaticCompoundShape,
)
from ...core.havok.tagfile import describe, is_tagfile
from ...core.nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from ...core.transforms import axis_frame
from ..mesh_build import build_mesh
from .. import schema

BODY_FIELDS = (schema.HAVOK_MOTION, schema.HAVOK_MASS, schema.HAVOK_FRICTION, schema.HAVOK_RESTITUTION, schema.HAVOK_LAYER)
CAPSULE_SEGMENTS = 16  # around the axis
CAPSULE_RINGS = 4  # per half sphere


# what the properties' fields accept in Blender's UI
RANGES = {schema.HAVOK_MASS: (0.0, 1e9), schema.HAVOK_FRICTION: (0.0, 10.0), schema.HAVOK_RESTITUTION: (0.0, 1.0),
          schema.HAVOK_RADIUS: (0.0, 1e6)}


def material_text(value):
    return f"0x{int(value):08X}"


def parse_material(text):
    """A Bethesda material id written as hex (0x...) or decimal; None when it is neither."""
    try:
        value = int(str(text).strip(), 0)
    except ValueError:
        return None
    return value if 0 <= value <= 0xFFFFFFFF else None


def set_ranges(obj):
    for name, (low, high) in RANGES.items():
        if name in obj:
            obj.id_properties_ui(name).update(min=low, max=high)
    if schema.HAVOK_LAYER in obj:
        obj.id_properties_ui(schema.HAVOK_LAYER).update(min=0, max=255)


@functools.lru_cache(maxsize=4)
def decoded_system(packfile):
    """The physics system data of packfile bytes (systems are shared by several owners); a
    Havok tagfile (Starfield's) is refused saying it is kept unchanged."""
    if is_tagfile(packfile):
        raise FormatError(describe(packfile))
    return Packfile.from_bytes(packfile).root


def build_collision(builder, owner_index, owner_block, owner):
    """``owner`` is the owner's object, or (armature, bone name) when the owner is a bone."""
    blocks = builder.nif.blocks
    label = owner_block.name or f"{owner_block.type_name}:{owner_index}"
    index = owner_block.collision_object
    collision = blocks[index] if index < len(blocks) else None
    if not isinstance(collision, bhkNPCollisionObject):
        leave_out(owner, index)
        builder.warn(f"{label}: collision block {index} is not a bhkNPCollisionObject; its collision is left out")
        return
    system_block = blocks[collision.data] if 0 <= collision.data < len(blocks) else None
    if not isinstance(system_block, bhkSystem):
        leave_out(owner, index)
        builder.warn(f"{label}: its collision object has no physics system; left out")
        return
    if system_block.kind == "ragdoll":
        leave_out(owner, index)
        builder.warn("ragdoll collision (bhkRagdollSystem) is kept in the file but not shown")
        return
    try:
        system = decoded_system(system_block.packfile)
        if not isinstance(system, PhysicsSystemData):
            raise FormatError(f"the packfile holds a {system.class_name}, not physics system data")
        if collision.body_id >= len(system.bodies):
            raise FormatError(f"body {collision.body_id} of {len(system.bodies)}")
        body = system.bodies[collision.body_id]
        obj, offset = _body_object(builder, system, body, f"{label} collision")
    except FormatError as error:
        leave_out(owner, index)
        builder.warn(f"{label}: collision not shown ({error})")
        return
    place_body(builder, obj, owner, offset, index)


def _holder(owner):
    """Where an owner's properties live: its object, or its bone for (armature, bone name)."""
    return owner[0].data.bones[owner[1]] if isinstance(owner, tuple) else owner


def leave_out(owner, index):
    """Remember that the import did not show the owner's collision block ``index``."""
    _holder(owner)[schema.NIF_COLLISION_LEFT_OUT] = index


def left_out(owner):
    """The owner's collision block index the import did not show, or None."""
    return _holder(owner).get(schema.NIF_COLLISION_LEFT_OUT)


def place_body(builder, obj, owner, offset, index):
    """A body's object under its owner (a node's object, or an (armature, bone name) pair) at
    ``offset``, remembered as imported (block index and fingerprint) so export can tell edits."""
    obj[schema.NIF_COLLISION] = index
    if isinstance(owner, tuple):
        builder.skins.place_under_bone(obj, owner, offset)
    else:
        obj.parent = owner
        obj.matrix_basis = offset
    obj[schema.HAVOK_SOURCE] = fingerprint(obj)


def _body_object(builder, system, body, name):
    obj, offset = _shape_object(builder, body.shape, name)
    material = system.material_of(body)
    obj[schema.HAVOK_MOTION] = system.motion_type(body)
    obj[schema.HAVOK_MASS] = system.mass(body)
    obj[schema.HAVOK_FRICTION] = round(material.friction, 4)  # hkHalf keeps 8 significant bits
    obj[schema.HAVOK_RESTITUTION] = round(material.bounciness, 4)
    obj[schema.HAVOK_LAYER] = body.layer
    set_ranges(obj)
    return obj, offset


def _shape_object(builder, shape, name, within=()):
    """The object of one shape (with its children for a compound), and where the caller should
    place it relative to the shape's space (only a sphere's centre moves it)."""
    if any(shape is outer for outer in within):
        raise FormatError(f"a {shape.class_name} contains itself")
    if isinstance(shape, (DynamicCompoundShape, StaticCompoundShape)):
        obj = new_collision_object(builder, name, None, "compound" if isinstance(shape, DynamicCompoundShape) else "static_compound")
        obj.empty_display_type = "PLAIN_AXES"
        for number, instance in enumerate(shape.instances):
            child, offset = _shape_object(builder, instance.shape, f"{name} {number}", (*within, shape))
            child.parent = obj
            child.matrix_basis = Matrix(instance.matrix.tolist()) @ offset
    elif isinstance(shape, SphereShape):
        obj = new_collision_object(builder, name, None, "sphere")
        obj.empty_display_type = "SPHERE"
        obj.empty_display_size = shape.radius
        obj[schema.HAVOK_MATERIAL] = material_text(shape.user_data)
        # the centre goes into the placement: a sphere is centred on its object
        return obj, Matrix.Translation(shape.center.tolist())
    elif isinstance(shape, CapsuleShape):
        vertices, triangles = capsule_mesh(*shape.segment, shape.radius)
        obj = new_collision_object(builder, name, build_mesh(name, vertices, triangles), "capsule")
    elif isinstance(shape, ConvexPolytopeShape):
        obj = new_collision_object(builder, name, build_mesh(name, *shape.mesh()), "convex")
        obj[schema.HAVOK_RADIUS] = shape.radius
    elif isinstance(shape, CompressedMeshShape):
        vertices, triangles = shape.mesh()
        used, corners = np.unique(triangles, return_inverse=True)
        mesh = build_mesh(name, vertices[used], corners.reshape(-1, 3))
        attribute = mesh.attributes.new(schema.HAVOK_MATERIAL, "INT", "FACE")
        attribute.data.foreach_set("value", shape.triangle_materials().view(np.int32))
        obj = new_collision_object(builder, name, mesh, "compressed_mesh")
    else:
        raise FormatError(f"{getattr(shape, 'class_name', None) or 'no'} shape cannot be shown")
    obj[schema.HAVOK_MATERIAL] = material_text(shape.user_data)
    set_ranges(obj)
    return obj, Matrix.Identity(4)


def new_collision_object(builder, name, mesh, kind):
    if mesh is not None:
        builder.rollback.add(mesh)
    obj = builder.link(bpy.data.objects.new(name, mesh))
    obj[schema.HAVOK_SHAPE] = kind
    obj.hide_render = True
    if mesh is not None:
        obj.display_type = "WIRE"
    return obj


def capsule_mesh(a, b, radius):
    """A closed capsule around the segment a-b (game units): two half spheres joined by a
    cylinder; its equator vertices lie exactly ``radius`` from the axis and its poles ``radius``
    beyond the ends, so the exporter can measure it back."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    length = np.linalg.norm(b - a)
    direction, side, up = axis_frame(b - a)
    quarter = np.linspace(np.pi / 2, 0, CAPSULE_RINGS + 1)[1:]
    latitudes = np.concatenate([quarter, -quarter[::-1]])  # the equator twice: top and bottom ends
    ends = np.where(np.arange(len(latitudes)) < CAPSULE_RINGS, length / 2, -length / 2)
    angles = np.arange(CAPSULE_SEGMENTS) * 2 * np.pi / CAPSULE_SEGMENTS
    around = np.cos(angles)[:, None] * side + np.sin(angles)[:, None] * up
    centre = (a + b) / 2
    rings = (
        centre
        + (ends + radius * np.sin(latitudes))[:, None, None] * direction
        + radius * np.cos(latitudes)[:, None, None] * around
    ).reshape(-1, 3)
    poles = centre + np.outer([length / 2 + radius, -(length / 2 + radius)], direction)
    vertices = np.concatenate([poles[:1], rings, poles[1:]])
    count, rows = CAPSULE_SEGMENTS, len(latitudes)
    column = np.arange(count)
    following = (column + 1) % count
    top = np.stack([np.zeros(count, np.int64), 1 + following, 1 + column], axis=1)
    bottom_pole = len(vertices) - 1
    last = 1 + (rows - 1) * count
    bottom = np.stack([np.full(count, bottom_pole), last + column, last + following], axis=1)
    row = np.arange(rows - 1)[:, None] * count + 1
    upper, lower = row + column, row + count + column
    upper_next, lower_next = row + following, row + count + following
    sides = np.concatenate([np.stack([upper, upper_next, lower_next], -1), np.stack([upper, lower_next, lower], -1)])
    triangles = np.concatenate([top, sides.reshape(-1, 3), bottom])
    corners = vertices[triangles] - centre
    if np.einsum("ij,ij->", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])) < 0:
        triangles = triangles[:, ::-1]  # faces outward
    return vertices, triangles


def collision_children(obj):
    """The collision objects parented to ``obj`` (an object, or (armature, bone name))."""
    if isinstance(obj, tuple):
        armature, bone = obj
        children = [child for child in armature.children if child.parent_type == "BONE" and child.parent_bone == bone]
    else:  # an armature's bone-parented children belong to its bones
        children = [child for child in obj.children if child.parent_type != "BONE"]
    return sorted((child for child in children if schema.HAVOK_SHAPE in child), key=lambda child: child.name)


def fingerprint(obj):
    """A digest of everything the exporter reads from a collision object and its children:
    equal digests mean the collision is as imported."""
    digest = hashlib.sha1()
    _digest(digest, obj)
    return digest.hexdigest()


def shape_fingerprint(obj):
    """``fingerprint`` of one shape object of a body (the body's own fields left out), with
    where it sits in the body (its collision ancestors' placements): equal digests mean the
    shape is as imported, in place."""
    digest = hashlib.sha1()
    parent = obj.parent
    while parent is not None and schema.HAVOK_SHAPE in parent:
        digest.update(np.array(parent.matrix_parent_inverse @ parent.matrix_basis, np.float32).tobytes())
        parent = parent.parent
    _digest(digest, obj, body=False)
    return digest.hexdigest()


def _digest(digest, obj, body=True):
    keys = (schema.HAVOK_SHAPE, schema.HAVOK_MATERIAL, schema.HAVOK_RADIUS, schema.HAVOK_MOPP, *(BODY_FIELDS if body else ()))
    values = {key: obj[key] for key in keys if key in obj}
    digest.update(repr(sorted(values.items())).encode())
    local = obj.matrix_parent_inverse @ obj.matrix_basis
    digest.update(np.array(local, np.float32).tobytes())
    digest.update(np.float32(obj.empty_display_size).tobytes())
    mesh = obj.data if obj.type == "MESH" else None
    if mesh is not None:
        co = np.empty(3 * len(mesh.vertices), np.float32)
        mesh.vertices.foreach_get("co", co)
        corners = np.empty(len(mesh.loops), np.int32)
        mesh.loops.foreach_get("vertex_index", corners)
        sizes = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
        digest.update(co.tobytes() + corners.tobytes() + sizes.tobytes())
        attribute = mesh.attributes.get(schema.HAVOK_MATERIAL)
        if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT":
            values = np.empty(len(attribute.data), np.int32)
            attribute.data.foreach_get("value", values)
            digest.update(values.tobytes())
    for child in collision_children(obj):
        digest.update(child.name.encode())
        _digest(digest, child, body)
