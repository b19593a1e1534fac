"""A built cell's ``<cell>_Physics.nif``: the static collision of the references combined into
its precombined meshes, merged into one compressed mesh in cell coordinates, as the Creation Kit
writes it (corpus ``ck-precombined/Meshes/PreCombined/00001E58_Physics.NIF``; Bryant-21/bacup
``previs/src/combined_physics.rs`` and ``havok_mesh.rs``, reverse engineered from the CK's
``CombinedData::GenerateCombinedShape``).

The file: a NiNode root named ``%08X_Physics`` (flags 14) with a BSXFlags extra data of 2 and a
bhkNPCollisionObject (flags 0x80) on a bhkPhysicsSystem of one static body (layer 1, the default
hknpMaterial) holding one hknpCompressedMeshShape. The root's translation is the centre of the
merged collision's bounds; the mesh's vertices are relative to it (the corpus cell's domain is
symmetric about 0 to within a float's last digit).

Which collision is merged: per collision object of a reference's model, its body placed at its
collision node by the node's world matrix, the body's own position and orientation ignored (as
the CK does). A physics system is merged only when every one of its bodies is static on layer 1,
and none of its convex shapes has more vertices than ``CanAddToCombinedShape`` takes. A system
with a body not static on layer 1 the CK clones (kept as its own body) into the reference's
combined mesh (``clones`` writes it); a convex shape past the limit is named and left out.
Compressed meshes give their
triangles, compound shapes their children placed by their instances. The CK keeps a convex
shape (polytope, capsule) as a custom primitive of the compressed mesh (the corpus cell's 43
boxes: tests/test_precombine_physics_build.py decodes them);
the project's encoder writes triangles only, so here a polytope becomes its faces moved out by its
convex radius (the surface the game collides with, edges sharp); a sphere, and a scaled convex
shape (which no corpus FO4 file holds to test against), are left out and named.
Vertices at the same place are welded and degenerate triangles dropped (the CK's tolerance: a
squared cross product of 1e-7 Havok units), and triangles of one material sharing an edge become
quads (``compressed_mesh_encode``).

Material per triangle: the shape's hknpBSMaterialProperties entry for its data run value, the
shape's user data where the entry's material is 0 or the shape has no table (convex shapes). A
compound child keeps its own: the CK would take the compound's table entry for the instance's
shape tag, but no corpus compound has a table to check that against. The merged table lists the
materials in order of first use.

XPRI is not these references: it is previs's "PreVis Reference Index" (see ``previs.py``), so
``cell_physics`` returns no XPRI FormIDs: a build without a new previs writes none.
"""

import numpy as np

from ...errors import FormatError
from ...havok import GAME_UNITS, Packfile, PhysicsSystemData
from ...havok.bodies import add_body
from ...havok.shapes.compound import CompoundShape
from ...havok.shapes.compressed_mesh import CompressedMeshShape
from ...havok.shapes.compressed_mesh_encode import build_compressed_mesh
from ...havok.shapes.convex import ConvexPolytopeShape, SphereShape
from ...nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from ...nif.blocks.extra_data import NiIntegerExtraData
from ...nif.blocks.nodes import NiNode
from ...nif.file import NifFile
from ...nif.header import Header
from ...nif.scene_graph import parents, world_matrix
from ..physics import placed

STATIC_MOTION = 0x7FFFFFFF
MERGED_LAYER = 1
CONVEX_SIZE_LIMIT = 0x800  # CanAddToCombinedShape: a convex shape's calcSize(), ((vertices >> 2) + 1) << 6
DEGENERATE = 1e-7  # squared cross product (Havok units) at or below which the CK drops a triangle
ROOT_FLAGS = 14
BSX_FLAGS = 2
COLLISION_FLAGS = 0x80


class Unmerged(Exception):
    """Why a model's collision is not merged (the message names it)."""


def shape_triangles(shape, matrix):
    """(triangles (k, 3, 3) placed by ``matrix``, game units; material per triangle) of a shape.
    Unmerged for a shape the CK clones or this writer cannot store."""
    if isinstance(shape, CompressedMeshShape):
        vertices, triangles = shape.mesh()
        materials = shape.triangle_materials().astype(np.int64)
        materials[materials == 0] = shape.user_data
        return placed(matrix, vertices)[triangles], materials
    if isinstance(shape, CompoundShape):
        found = [(np.zeros((0, 3, 3)), np.zeros(0, np.int64))]
        for instance in shape.instances:
            found.append(shape_triangles(instance.shape, matrix @ instance.matrix))
        return np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found])
    if isinstance(shape, SphereShape):
        raise Unmerged("a sphere shape: the Creation Kit keeps it as a custom primitive, which this writer cannot store")
    if isinstance(shape, ConvexPolytopeShape):
        count = len(shape.vertices)
        if (((count >> 2) + 1) << 6) > CONVEX_SIZE_LIMIT:
            raise Unmerged(f"a convex shape of {count} vertices: the Creation Kit clones collision past "
                           f"CanAddToCombinedShape's limit")
        corners = placed(matrix, shape.surface_vertices() * GAME_UNITS)[shape.face_triangles()]
        return corners, np.full(len(corners), shape.user_data, np.int64)
    raise Unmerged(f"a {type(shape).__name__} ({getattr(shape, 'class_name', '?')}) shape, which is not merged")


def physics_systems(model):
    """(collision object index, block, system) per collision object of a model on a physics
    system (ragdolls and broken links are not static collision). FormatError when a system
    cannot be read or the object selects no body of it."""
    for index, collision in model.blocks_of(bhkNPCollisionObject):
        block = model.blocks[collision.data] if 0 <= collision.data < len(model.blocks) else None
        if not isinstance(block, bhkSystem) or block.kind != "physics":
            continue
        try:
            system = Packfile.from_bytes(block.packfile).root
        except FormatError as error:
            raise FormatError(f"collision block {collision.data}: {error.message}") from None
        if type(system) is not PhysicsSystemData or not 0 <= collision.body_id < len(system.bodies):
            raise FormatError(f"collision object {index} selects body {collision.body_id} of a system of "
                              f"{len(getattr(system, 'bodies', []))}")
        yield index, collision, system


def is_cloned(system):
    """Whether the CK clones a physics system rather than merging it: a body not static on layer 1."""
    return any(body.motion_id != STATIC_MOTION or body.layer != MERGED_LAYER for body in system.bodies)


def cloned_systems(model):
    """The block indices of a model's physics systems the CK clones, in block order."""
    return sorted({collision.data for _, collision, system in physics_systems(model) if is_cloned(system)})


def model_collision(model):
    """(triangles (k, 3, 3) in model space, game units; material per triangle; notes naming each
    collision object left out and why) of the collision the CK merges from a model. FormatError
    when a physics system cannot be read."""
    parent_of = parents(model)
    found, notes, cloned = [(np.zeros((0, 3, 3)), np.zeros(0, np.int64))], [], set()
    for index, collision, system in physics_systems(model):
        if is_cloned(system):
            if collision.data not in cloned:  # one note per system, however many objects select its bodies
                cloned.add(collision.data)
                notes.append(f"collision block {collision.data} is not all static on layer {MERGED_LAYER}: the Creation "
                             f"Kit clones such a system into the reference's combined mesh (build.clones)")
            continue
        owner = collision.target if 0 <= collision.target < len(model.blocks) else None
        matrix = world_matrix(model, owner, parent_of) if owner is not None else np.eye(4)
        try:
            found.append(shape_triangles(system.bodies[collision.body_id].shape, matrix))
        except Unmerged as why:
            notes.append(f"collision block {collision.data}: {why}")
    return np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found]), notes


def merged_mesh(parts):
    """(vertices (n, 3) game units, triangles (m, 3), material per triangle) of placed triangles
    (k, 3, 3) and materials: vertices at one place welded, degenerate triangles dropped."""
    corners = np.concatenate([p[0] for p in parts]).reshape(-1, 3)
    materials = np.concatenate([p[1] for p in parts])
    vertices, triangles = np.unique(corners.astype(np.float32), axis=0, return_inverse=True)
    triangles = triangles.reshape(-1, 3)
    havok = vertices.astype(np.float64) / GAME_UNITS
    a, b, c = (havok[triangles[:, i]] for i in range(3))
    cross = np.cross(b - a, c - a)
    keep = np.einsum("ij,ij->i", cross, cross) > DEGENERATE
    return vertices.astype(np.float64), triangles[keep], materials[keep]


def physics_nif(vertices, triangles, materials, cell_id=None):
    """The physics NIF (NifFile) holding these cell-space triangles."""
    low, high = vertices[np.unique(triangles)].min(axis=0), vertices[np.unique(triangles)].max(axis=0)
    centre = ((low + high) / 2).astype(np.float32).astype(np.float64)
    first = np.unique(materials, return_index=True)[1]
    ids = materials[np.sort(first)]  # in order of first use, as the CK's table
    order = np.argsort(ids)
    index = order[np.searchsorted(ids[order], materials)]
    shape = build_compressed_mesh(vertices - centre, triangles, index, ids.tolist())
    system = PhysicsSystemData()
    add_body(system, shape, layer=MERGED_LAYER)
    name = "" if cell_id is None else f"{cell_id & 0xFFFFFF:08X}_Physics"
    blocks = [
        NiNode("NiNode", name=name, extra_data=np.array([1], np.int32), flags=ROOT_FLAGS,
               translation=tuple(float(x) for x in centre), collision_object=2),
        NiIntegerExtraData("BSXFlags", name="BSX", integer_data=BSX_FLAGS),
        bhkNPCollisionObject(target=0, flags=COLLISION_FLAGS, data=3, body_id=0),
        bhkSystem("bhkPhysicsSystem", packfile=Packfile(system).to_bytes()),
    ]
    return NifFile(Header(user_version=12, bs_version=130), blocks, roots=[0])


def cell_physics(placed_models, cell_id=None, messages=None):
    """(physics NIF bytes, XPRI FormIDs) of a cell from ``placed_models``: (reference FormID,
    model NifFile, 4x4 matrix placing the model's root in the cell) of the references the CK
    combined; (None, []) when none has collision to merge. ``cell_id`` names the root node as the
    CK does. A model whose collision cannot be read, or that the CK would clone, is left out and
    named in ``messages`` (a list, when given). XPRI is previs's, never the physics': always []."""
    parts, known = [], {}  # each model's collision decoded once, however many references place it
    for form_id, model, matrix in placed_models:
        where = f"{form_id:08X}" + (f" ({model.path})" if getattr(model, "path", None) else "")
        if id(model) not in known:
            try:
                known[id(model)] = model, model_collision(model)
            except FormatError as error:
                known[id(model)] = model, (np.zeros((0, 3, 3)), np.zeros(0, np.int64), [error.message])
        triangles, materials, notes = known[id(model)][1]
        if messages is not None:
            messages += [f"{where}: collision left out: {note}" for note in notes]
        if len(triangles):
            parts.append((placed(np.asarray(matrix, np.float64), triangles.reshape(-1, 3)).reshape(-1, 3, 3), materials))
    if not parts:
        return None, []
    vertices, triangles, materials = merged_mesh(parts)
    if not len(triangles):
        return None, []
    try:
        return physics_nif(vertices, triangles, materials, cell_id).to_bytes(), []
    except FormatError as error:
        raise FormatError(f"the cell's merged collision: {error.message}") from None
