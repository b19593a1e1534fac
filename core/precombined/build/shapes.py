"""What the Creation Kit takes from a base model to combine it: per kept shape (not below a
marker node, ck_rules.meshes) a geometry record and the material it is drawn with.

A record holds the shape's vertices as the model stores them (the half-precision layouts the
CK's records keep, CSG-NOTES: 0x1B00000430205 without colour, 0x3B00005430206 with), then its
three LOD triangle lists: a BSTriShape's triangles are LOD0, LOD1 and LOD2 left empty (79 of the
corpus cell's 86 records in its 11 files: (n, 0, 0)); a BSMeshLODTriShape's triangles are its LODs
one after the other, ``lod_sizes`` long each (the CK's records of such shapes: (0, 0, 198),
(16, 0, 96), (0, 12, 0): a LOD may be empty, and the combined shape it makes is a
BSMeshLODTriShape whose sizes add its records' LODs up, instance by instance). The shape's transform below the model's root is not
applied to the vertices: it goes into each instance (``placements``), so the bytes are the
model's own and the same record serves every reference and group.
"""

import numpy as np

from ...nif.blocks.tri_shape import BSMeshLODTriShape
from ...nif.scene_graph import parents
from ...transforms import transform_matrix
from ..ck_rules.meshes import Model
from ..csg import record_bytes


class ShapeRecord:
    """One kept shape of a model: ``matrix`` (4x4, the shape in the model's root space, the root's
    own transform left out), ``vertex_desc``, ``vertex_count``, ``lod_counts``, ``data`` (the
    record's bytes: vertices, then the LODs' indices), ``bound`` (centre, radius in shape space),
    ``material`` (a key), ``shader``, ``textures``, ``alpha`` (the model's blocks, or None) and
    ``distinct_positions`` (n, 3)."""

    def __init__(self, nif, index, matrix):
        shape = nif.blocks[index]
        self.matrix = matrix
        self.vertex_desc = int(shape.vertex_desc)
        self.vertex_count = len(shape.vertex_data)
        triangles = np.asarray(shape.triangles, np.uint16).reshape(-1, 3)
        if isinstance(shape, BSMeshLODTriShape):
            ends = np.minimum(np.cumsum([int(size) for size in shape.lod_sizes]), len(triangles))
            lods = [triangles[start:end] for start, end in zip([0, *ends[:2]], ends)]
        else:
            lods = [triangles, triangles[:0], triangles[:0]]
        self.lod_counts = tuple(len(lod) for lod in lods)
        self.data = record_bytes(shape.vertex_data, np.concatenate(lods))
        # The distinct vertex positions: all a bound needs.
        self.distinct_positions = np.unique(shape.vertex_data["position"][:, :3].astype(np.float32), axis=0)
        self.bound = (np.asarray(shape.bound_center, np.float64), float(shape.bound_radius))
        blocks = nif.blocks
        self.shader = blocks[shape.shader_property]
        textures = getattr(self.shader, "texture_set", -1)
        self.textures = blocks[textures] if 0 <= textures < len(blocks) else None
        self.alpha = blocks[shape.alpha_property] if 0 <= shape.alpha_property < len(blocks) else None
        self.material = material_key(self.shader, self.textures, self.alpha, self.vertex_desc)


def material_key(shader, textures, alpha, vertex_desc):
    """Shapes drawn alike share one combined shape: same shader (its name and flags), textures,
    alpha and vertex layout."""
    return (shader.type_name, (getattr(shader, "name", "") or "").lower(), getattr(shader, "shader_flags_1", 0),
            getattr(shader, "shader_flags_2", 0), tuple(t.lower() for t in textures.textures) if textures else (),
            (alpha.flags, alpha.threshold) if alpha is not None else None, vertex_desc)


def model_records(nif):
    """The ShapeRecords of a model that ck_rules.meshes judged combinable, in the order of its
    blocks."""
    model = Model(nif)
    root = nif.roots[0] if nif.roots else None
    parent_of = parents(nif)
    records = []
    for index, _ in model.kept:
        records.append(ShapeRecord(nif, index, below_root(nif, index, parent_of, root)))
    return records


def below_root(nif, index, parent_of, root):
    """A block's 4x4 in the model's root space, the root's own transform left out."""
    matrix, at = np.eye(4), index
    while at is not None and at != root:
        node = nif.blocks[at]
        matrix = transform_matrix(node.rotation, node.translation, node.scale) @ matrix
        at = parent_of.get(at)
    return matrix
