"""A precombined cell's merged collision, ``<cell>_Physics.nif``, following its copies.

How the Creation Kit builds it (Bryant-21/bacup ``previs/src/combined_physics.rs``, after the
CK's ``CombinedData::GenerateCombinedShape``): every static collision of the cell's combined
references, placed where its reference stands, becomes one hknpCompressedMeshShape in the one
body of a bhkPhysicsSystem under the file's root node, whose translation is the centre of their
bounds (the corpus cell: 9480 triangles around (1396.2, 226.0, 367.5)). Vertices are welded,
degenerate triangles dropped and triangles of neighbouring sources paired into quads, and no
triangle records its source: the file alone never tells which reference a triangle came from.
XPRI is not the list of those references: it is xEdit's "PreVis Reference Index", previs
participants (the corpus cell's 15: 14 moveable statics and a container, none in XCRI).

So a copy's collision is found by its source: the collision of its base's model, placed at the
copy's stored placement, must find every triangle in the merged mesh (within the compressed
mesh's quantisation), each triangle found once and by no other edited copy. Where that holds the
copy's triangles move with it (Δ = new placement x old placement⁻¹, as new unwelded vertices) or
go with it; where it does not, the copy is named with the reason and its collision stays. A new
copy (duplicated from one whose model is known) adds its model's collision where it stands.
"""

import copy as shallow

import numpy as np

from ..errors import FormatError
from ..havok import GAME_UNITS, Packfile, PhysicsSystemData
from ..havok.shapes.compressed_mesh import CompressedMeshShape, CompressedMeshShapeData
from ..havok.shapes.compressed_mesh_encode import build_compressed_mesh
from ..nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from ..nif.scene_graph import parents, world_matrix

SLACK = 0.01  # game units beyond half a quantisation step: float rounding of the placements


def placed(matrix, points):
    return np.asarray(points, np.float64) @ matrix[:3, :3].T + matrix[:3, 3]


def mesh_bodies(nif):
    """[(block index of the bhkPhysicsSystem, body index, owner world matrix, CompressedMeshShape
    or another shape)] of every body a NIF's collision objects select."""
    parent_of = parents(nif)
    out = []
    for index, collision in nif.blocks_of(bhkNPCollisionObject):
        system_block = nif.blocks[collision.data] if 0 <= collision.data < len(nif.blocks) else None
        if not isinstance(system_block, bhkSystem) or system_block.kind != "physics":
            continue
        system = Packfile.from_bytes(system_block.packfile).root
        if not isinstance(system, PhysicsSystemData) or collision.body_id >= len(system.bodies):
            continue
        owner = collision.target if 0 <= collision.target < len(nif.blocks) else None
        matrix = world_matrix(nif, owner, parent_of) if owner is not None else np.eye(4)
        out.append((collision.data, collision.body_id, matrix, system.bodies[collision.body_id].shape))
    return out


class Source:
    """A base model's collision in model space: ``triangles`` (k, 3, 3) and their Bethesda
    ``materials``."""

    def __init__(self, triangles, materials):
        self.triangles, self.materials = triangles, materials


def source_triangles(model):
    """The Source of a base model's collision, or a reason why it is not known."""
    found, materials = [], []
    for _, _, matrix, shape in mesh_bodies(model):
        if not isinstance(shape, CompressedMeshShape):
            return f"its model's collision holds a {type(shape).__name__}, not only triangle meshes"
        vertices, triangles = shape.mesh()
        found.append(placed(matrix, vertices)[triangles])
        materials.append(shape.triangle_materials())
    if not found:
        return "its model has no collision"
    triangles = np.concatenate(found)
    area = np.linalg.norm(np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]), axis=1)
    return Source(triangles[area > 1e-6], np.concatenate(materials)[area > 1e-6])  # the CK drops degenerate triangles


class MergedMesh:
    """The physics file's one compressed mesh, decoded into cell space."""

    def __init__(self, nif):
        bodies = [b for b in mesh_bodies(nif) if isinstance(b[3], CompressedMeshShape)]
        if len(bodies) != 1:
            raise FormatError(f"holds {len(bodies)} compressed mesh bodies, not the one merged mesh the Creation Kit "
                              f"writes")
        self.nif = nif
        self.system_block, self.body, self.matrix, self.shape = bodies[0]
        if not isinstance(self.shape.data, CompressedMeshShapeData):
            raise FormatError("its compressed mesh has no data to decode")
        vertices, self.triangles = self.shape.mesh()
        self.vertices = placed(self.matrix, vertices)
        self.materials = self.shape.triangle_materials()
        # How far a stored corner may lie from the exact one: half its quantisation step, turned
        # and scaled by the root's matrix.
        steps = self.shape.data.vertex_steps() * GAME_UNITS * np.linalg.norm(self.matrix[:3, :3], axis=0).max()
        self.slack = 0.5 * np.linalg.norm(steps, axis=1) + SLACK
        self.cell = 4 * max(float(self.slack.max(initial=SLACK)), 1.0)
        self.buckets = {}
        centres = self.vertices[self.triangles].mean(axis=1)
        for index, key in enumerate(map(tuple, np.floor(centres / self.cell).astype(np.int64))):
            self.buckets.setdefault(key, []).append(index)

    def find(self, triangles):
        """Per triangle (k, 3, 3) the merged triangle holding the same corners in the same turn,
        -1 where none does, -2 where several do."""
        out = np.full(len(triangles), -1, np.int64)
        corners, slack = self.vertices[self.triangles], self.slack[self.triangles]
        for number, triangle in enumerate(triangles):
            base = np.floor(triangle.mean(axis=0) / self.cell).astype(np.int64)
            candidates = [i for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)
                          for i in self.buckets.get((base[0] + dx, base[1] + dy, base[2] + dz), ())]
            hits = [i for i in candidates
                    if any((np.linalg.norm(np.roll(corners[i], turn, axis=0) - triangle, axis=1)
                            <= np.roll(slack[i], turn)).all() for turn in range(3))]
            out[number] = hits[0] if len(hits) == 1 else -2 if hits else -1
        return out


class PhysicsEdit:
    """A copy's collision to move (``after`` its new 4x4 placement), remove (``after`` None) or
    add (``before`` None): ``name``, ``before`` (its stored placement), ``source`` (its model's
    Source, or the reason it is not known)."""

    def __init__(self, name, before, after, source):
        self.name, self.before, self.after, self.source = name, before, after, source


def edit_physics(nif, edits):
    """(the physics NIF with the certain edits made, or None when none is; messages naming each
    copy whose collision stays and why)."""
    merged = MergedMesh(nif)
    messages, claims, added = [], {}, []
    for edit in edits:
        if isinstance(edit.source, str):
            messages.append(f"{edit.name}: collision {'not added' if edit.before is None else 'left where it was'}: "
                            f"{edit.source}")
            continue
        if edit.before is None:
            added.append(edit)
            continue
        found = merged.find(placed(edit.before, edit.source.triangles.reshape(-1, 3)).reshape(-1, 3, 3))
        if (found == -2).any() or (found == -1).any():
            missing, shared = int((found == -1).sum()), int((found == -2).sum())
            why = f"{missing} of its {len(found)} collision triangles are not in the cell's merged mesh" if missing else \
                f"{shared} of its {len(found)} collision triangles match several of the merged mesh's"
            messages.append(f"{edit.name}: collision left where it was: {why}")
            continue
        claims[id(edit)] = (edit, found)
    owners = {}
    for edit, found in claims.values():
        for index in found.tolist():
            owners.setdefault(index, []).append(edit)
    certain = [(edit, found) for edit, found in claims.values() if all(len(owners[i]) == 1 for i in found.tolist())]
    for edit, _ in claims.values():
        if all(edit is not kept for kept, _ in certain):
            messages.append(f"{edit.name}: collision left where it was: another edited copy's collision takes the same "
                            f"triangles")
    if not certain and not added:
        return None, messages
    keep = np.ones(len(merged.triangles), bool)
    vertices, triangles, materials = [merged.vertices], [], []
    count = len(merged.vertices)

    def append(corners, kinds):
        nonlocal count
        vertices.append(corners)
        triangles.append(count + np.arange(len(corners)).reshape(-1, 3))
        materials.append(kinds)
        count += len(corners)

    for edit, found in certain:
        keep[found] = False
        if edit.after is not None:
            delta = edit.after @ np.linalg.inv(edit.before)
            append(placed(delta, merged.vertices[merged.triangles[found]].reshape(-1, 3)), merged.materials[found])
    for edit in added:
        append(placed(edit.after, edit.source.triangles.reshape(-1, 3)), edit.source.materials)
    triangles = np.concatenate([merged.triangles[keep], *triangles])
    materials = np.concatenate([merged.materials[keep], *materials])
    return rebuilt(merged, np.concatenate(vertices), triangles, materials), messages


def rebuilt(merged, vertices, triangles, materials):
    """The physics NIF with the merged body's shape built from cell-space triangles."""
    ids, index = np.unique(materials, return_inverse=True)
    local = placed(np.linalg.inv(merged.matrix), vertices)
    shape = build_compressed_mesh(local, triangles, index, ids.tolist(), user_data=merged.shape.user_data)
    block = merged.nif.blocks[merged.system_block]
    packfile = Packfile.from_bytes(block.packfile)
    system = packfile.root
    old = system.bodies[merged.body].shape
    body = shallow.copy(system.bodies[merged.body])
    body.shape = shape
    system.bodies[merged.body] = body
    system.referenced_objects = [shape if obj is old else obj for obj in system.referenced_objects]
    block.packfile = packfile.to_bytes()
    return merged.nif
