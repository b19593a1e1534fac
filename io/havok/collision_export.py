"""Collision objects (see collision_import) back into Fallout 4 Havok physics systems.

An owner's collision is written the cheapest way that is right: kept as stored when it is as
imported (same collision block, same fingerprint), its body re-encoded into the existing
bhkPhysicsSystem when edited (the system's other bodies kept), a new bhkNPCollisionObject and
bhkPhysicsSystem when the owner had none, dropped when its collision objects were deleted.
Collision the import did not show (ragdolls, packfiles it could not read, bodies it could not
build: the owner's ``collision_import.left_out``) is kept as it is.

Geometry is taken in the owner's space (each object's local matrix baked into the shape), which
is game units whatever the export scale: the scale applies at the root. As in the game's files, a
body's stored position and rotation are the owner's place in the file (its world transform).
"""

import numpy as np
from mathutils import Matrix

from ...core.errors import FormatError
from ...core.havok import (
    CapsuleShape,
    ConvexPolytopeShape,
    DynamicCompoundShape,
    Packfile,
    PhysicsSystemData,
    SphereShape,
    StaticCompoundShape,
    add_body,
    build_compressed_mesh,
    replace_body,
)
from ...core.nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from ...core.nif.scene_graph import world_matrix
from ..nif.skin_export import bone_node_world
from .collision_import import collision_children, fingerprint, left_out, parse_material
from .. import schema

COLLISION_FLAGS = 0x80  # every bhkNPCollisionObject of the game's files
MOTIONS = ("static", "dynamic", "keyframed")
# Fallout 3 / New Vegas kinds (legacy_collision_import) as the Fallout 4 shape that holds them
FO4_KIND = {"box": "convex", "list": "compound", "convex_list": "compound", "packed_mesh": "compressed_mesh",
            "strips_mesh": "compressed_mesh"}


def is_collision(obj):
    """Collision objects are written as Havok shapes, never as NIF shapes or nodes."""
    return schema.HAVOK_SHAPE in obj


def write_collision(exporter, owner, owner_index):
    """Make ``blocks[owner_index].collision_object`` right for the collision objects parented to
    ``owner``."""
    block = exporter.nif.blocks[owner_index]
    if not hasattr(block, "collision_object"):
        return
    bodies = collision_children(owner)
    if exporter.game != "FO4":
        if bodies:
            exporter.warn("collision objects are only written for Fallout 4: left out")
        return
    if exporter.template and left_out(owner) == block.collision_object:
        if not bodies:
            return  # the import did not show it: kept as stored
        existing = None  # a collision made in Blender replaces it
    else:
        existing = _shown_collision(exporter, block.collision_object)
    if not bodies:
        if existing is not None:
            block.collision_object = -1  # its blocks become unreferenced and are dropped
        return
    obj = bodies[0]
    if len(bodies) > 1:
        label = owner[1] if isinstance(owner, tuple) else owner.name
        exporter.warn(f"{label}: a node holds one collision body; only {obj.name!r} is written")
    if (existing is not None and obj.get(schema.NIF_COLLISION) == block.collision_object
            and obj.get(schema.HAVOK_SOURCE) == fingerprint(obj)):
        return
    shape, options = body_of(obj, world_matrix(exporter.nif, owner_index))
    if existing is not None:
        system_block = exporter.nif.blocks[existing.data]
        packfile = Packfile.from_bytes(system_block.packfile)
        packfile.root = replace_body(packfile.root, existing.body_id, shape, **options)
        system_block.packfile = packfile.to_bytes()
        return
    system = PhysicsSystemData()
    add_body(system, shape, **options)
    system_index = exporter.add(bhkSystem("bhkPhysicsSystem", packfile=Packfile(system).to_bytes()))
    collision = bhkNPCollisionObject(target=owner_index, flags=COLLISION_FLAGS, data=system_index, body_id=0)
    block.collision_object = exporter.add(collision)


def _shown_collision(exporter, index):
    """The template's collision object at ``index`` when it selects a readable physics system
    body (one the import showed: the caller checked ``left_out``), else None."""
    blocks = exporter.nif.blocks
    if not exporter.template or not 0 <= index < len(blocks):
        return None
    collision = blocks[index]
    if not isinstance(collision, bhkNPCollisionObject) or not 0 <= collision.data < len(blocks):
        return None
    system_block = blocks[collision.data]
    if not isinstance(system_block, bhkSystem) or system_block.kind != "physics":
        return None
    try:
        system = Packfile.from_bytes(system_block.packfile).root
    except FormatError:
        return None
    if not isinstance(system, PhysicsSystemData) or collision.body_id >= len(system.bodies):
        return None
    return collision


def body_of(obj, owner_world):
    """(shape, add_body options) of a body object; ``owner_world``: its owner's 4x4 world matrix
    in the file."""
    location, rotation, _ = Matrix(owner_world.tolist()).decompose()
    motion = obj.get(schema.HAVOK_MOTION, "static")
    if motion not in MOTIONS:
        raise FormatError(f"collision {obj.name!r}: motion {motion!r} is not one of {', '.join(MOTIONS)}")
    options = {
        "motion": motion,
        "mass": float(obj.get(schema.HAVOK_MASS, 0.0)),
        "layer": int(obj.get(schema.HAVOK_LAYER, 1)),
        "friction": float(obj.get(schema.HAVOK_FRICTION, 0.5)),
        "restitution": float(obj.get(schema.HAVOK_RESTITUTION, 0.4)),
        "position": tuple(location),
        "rotation": (rotation.x, rotation.y, rotation.z, rotation.w),
    }
    if motion == "dynamic" and not options["mass"] > 0:
        raise FormatError(f"collision {obj.name!r} is dynamic: give it a mass above 0")
    return shape_of(obj, np.array(owner_matrix(obj), np.float64)), options


def local_matrix(obj):
    """The object's matrix in its parent's space."""
    return obj.matrix_parent_inverse @ obj.matrix_basis


def owner_matrix(obj):
    """A body object's matrix in its owner node's space. Under a bone that is the node the bone
    stands for (where the import placed it), not the bone's tail Blender parents to: their
    difference, the bone's head-to-tail vector, would move the collision on every export."""
    parent = obj.parent
    if parent is not None and obj.parent_type == "BONE" and parent.type == "ARMATURE" and obj.parent_bone in parent.data.bones:
        return (parent.matrix_world @ bone_node_world(parent, obj.parent_bone)).inverted() @ obj.matrix_world
    return local_matrix(obj)


def shape_of(obj, matrix=np.eye(4)):
    """The Havok shape of a collision object, its geometry placed by ``matrix`` (owner space)."""
    kind = FO4_KIND.get(obj[schema.HAVOK_SHAPE], obj[schema.HAVOK_SHAPE])
    try:
        if kind in ("compound", "static_compound"):
            shape = _compound(obj, matrix, StaticCompoundShape if kind == "static_compound" else DynamicCompoundShape)
        elif kind == "sphere":
            if obj.type != "EMPTY":
                raise FormatError("a sphere is an empty (its display size is the radius)")
            radius = obj.empty_display_size * float(np.linalg.norm(matrix[:3, :3], axis=0).max())
            shape = SphereShape.build(radius, center=matrix[:3, 3])
        elif kind in ("convex", "capsule", "compressed_mesh"):
            shape = _mesh_shape(obj, kind, matrix)
        else:
            raise FormatError(f"unknown collision shape {kind!r}")
    except FormatError as error:
        raise FormatError(f"collision {obj.name!r}: {error.message}") from None
    shape.user_data = material_of(obj)
    return shape


def material_of(obj):
    """The object's Bethesda material id (``havok_material``, hex or decimal text)."""
    value = parse_material(obj.get(schema.HAVOK_MATERIAL, 0))
    if value is None:
        raise FormatError(f"collision {obj.name!r}: material {obj.get(schema.HAVOK_MATERIAL)!r} is not a number up to 0xFFFFFFFF")
    return value


def _compound(obj, matrix, kind):
    children = collision_children(obj)
    if not children:
        raise FormatError("a compound needs collision objects parented to it")
    placed = []
    for child in children:
        if FO4_KIND.get(child[schema.HAVOK_SHAPE], child[schema.HAVOK_SHAPE]) in ("compound", "static_compound"):
            raise FormatError(f"compound child {child.name!r} is itself a compound")
        placed.append((shape_of(child), matrix @ np.array(local_matrix(child), np.float64)))
    return kind.build(placed)


def _mesh_shape(obj, kind, matrix):
    if obj.type != "MESH":
        raise FormatError(f"a {kind} collision must be a mesh")
    mesh = obj.data
    vertices = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", vertices)
    vertices = vertices.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]
    if kind == "convex":
        return ConvexPolytopeShape.build(vertices, convex_radius=float(obj.get(schema.HAVOK_RADIUS, 0.0)))
    if kind == "capsule":
        return CapsuleShape.build(*fit_capsule(vertices))
    ids, materials = np.unique(triangle_materials(obj, mesh), return_inverse=True)
    return build_compressed_mesh(vertices, mesh_triangles(mesh, matrix), materials, material_ids=ids)


def mesh_triangles(mesh, matrix):
    """The loop triangles (m, 3) of a mesh placed by ``matrix``, turned round when it mirrors
    (so the faces stay outward)."""
    mesh.calc_loop_triangles()
    triangles = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    triangles = triangles.reshape(-1, 3)
    return triangles[:, ::-1] if np.linalg.det(matrix[:3, :3]) < 0 else triangles


def triangle_materials(obj, mesh):
    """The Bethesda material (u32) of each loop triangle: its face's ``havok_material``
    attribute, or the object's material when the mesh has none."""
    polygons = np.empty(len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("polygon_index", polygons)
    attribute = mesh.attributes.get(schema.HAVOK_MATERIAL)
    if attribute is None or attribute.domain != "FACE" or attribute.data_type != "INT":
        return np.full(len(polygons), material_of(obj), np.uint32)
    values = np.empty(len(mesh.polygons), np.int32)
    attribute.data.foreach_get("value", values)
    return values.view(np.uint32)[polygons]


def fit_capsule(vertices):
    """(a, b, radius) of the capsule a mesh shapes: its longest principal axis, the largest
    distance from it as the radius, the ends a radius short of the extremes."""
    if len(vertices) < 2:
        raise FormatError("a capsule mesh needs vertices")
    centre = vertices.mean(axis=0)
    offsets = vertices - centre
    axis = np.linalg.eigh(offsets.T @ offsets)[1][:, -1]
    along = offsets @ axis
    radius = float(np.linalg.norm(offsets - np.outer(along, axis), axis=1).max())
    if radius <= 0:
        raise FormatError("a capsule mesh needs thickness")
    low, high = along.min() + radius, along.max() - radius
    if high < low:
        low = high = (low + high) / 2
    return centre + low * axis, centre + high * axis, radius
