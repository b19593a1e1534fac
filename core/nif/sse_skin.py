"""Skyrim SE (bs 100) skinned shapes written the way the game reads them: the vertex buffer in
the NiSkinPartition (the shape itself holding none, as every vanilla skinned shape), one
partition per body part and bone budget, each partition's triangles in the shape's vertex
numbering (partition_triangles in skinning.py says why). Pure numpy; no bpy."""

import numpy as np

from . import vertex_format as vf
from .skinning import partition_record
from .blocks.tri_shape import BSDynamicTriShape
from .packed_vertices import bounding_sphere

# Bones per partition: nifly's limit for Skyrim SE (vanilla files use up to 35, daedriccuirass_1);
# also used for Skyrim LE, where nifly sets none.
BONE_LIMIT = 80


def sse_desc(flags):
    """The vertex desc vanilla Skyrim SE BSTriShapes hold for these attributes: float positions
    without the FULL_PRECISION bit (BSDynamicTriShapes' partitions have it)."""
    return vf.build_desc(flags, True) & ~(vf.FULL_PRECISION << 44)


DYNAMIC_VERTEX_SIZE = 4 << 4  # desc bits 4-7 (nif.xml): a BSDynamicTriShape's 16-byte dynamic vertices, in 4s
NEW_LAYOUT = (False, False, False)  # a new shape: as vanilla BSTriShapes, no inline data, counts 0


def layout_of(shape):
    """How a template shape keeps its geometry: (inline vertices, vertex count stored, triangle
    count stored). Vanilla BSTriShapes count 0 of each; BSDynamicTriShapes count their vertices."""
    if shape.vertex_data is not None:
        return True, True, True
    return False, bool(shape.num_vertices), bool(shape.num_triangles)


def store_in_partition(shape, partition, layout, bone_indices, bone_weights):
    """Move the shape's freshly encoded vertex buffer (positions, UVs, normals, tangents,
    colours as set on the shape) with the skin's four weights per vertex (``bone_indices``
    number the skin instance's bones) into the partition's buffer; the shape keeps inline data
    only when ``layout`` (layout_of) says it had some. A BSDynamicTriShape's positions (and
    bitangent x) go to its dynamic vertices, its partition's buffer then having none. Updates
    the shape's counts and bounds."""
    flags = (shape.vertex_flags | vf.VERTEX | vf.SKINNED) & ~vf.FULL_PRECISION
    shape.set_vertex_flags(flags, True)
    shape.bone_indices, shape.bone_weights = bone_indices, bone_weights
    positions = shape.positions
    shape.vertex_desc = sse_desc(flags)
    partition.vertex_desc, partition.full_precision = shape.vertex_desc, True
    partition.vertex_data = shape.vertex_data.copy()
    if isinstance(shape, BSDynamicTriShape):  # as vanilla heads: the FULL_PRECISION bit, no positions
        shape.dynamic_vertices = np.c_[positions, shape.vertex_data["position"][:, 3]].astype(np.float32)
        partition.set_vertex_flags(flags & ~vf.VERTEX, True)
        partition.vertex_desc |= DYNAMIC_VERTEX_SIZE
    inline, counts_vertices, counts_triangles = layout
    count, triangles = len(positions), len(shape.triangles)
    if not inline:
        shape.vertex_desc = partition.vertex_desc
        shape.vertex_data, shape.triangles = None, None
        shape.num_vertices = count if counts_vertices else 0
        shape.num_triangles = triangles if counts_triangles else 0
    shape.bound_center, shape.bound_radius = bounding_sphere(positions)
    shape.bounds_dirty = False
    for part in partition.partitions:
        part.vertex_desc = partition.vertex_desc


def sse_partition(built):
    """A SkinPartition record from skinning.build_partitions output, numbered as Skyrim SE
    numbers its triangles (the shape's vertices; the copy the same)."""
    part = partition_record(built)
    part.triangles = np.asarray(built["vertex_map"], np.uint16)[np.asarray(built["triangles"], np.intp)].reshape(-1, 3)
    part.triangles_copy = part.triangles.copy()
    return part
