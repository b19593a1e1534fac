"""A Fallout 3 / New Vegas triangle-mesh collision written anew: the bhkMoppBvTreeShape over a
bhkPackedNiTriStripsShape and its hkPackedNiTriStripsData, with MOPP code built for it.

The packed data gives each sub shape (one per material) a run of the vertices; a triangle
belongs to the sub shape holding its first vertex, so vertices used by several materials are
copied. The MOPP's leaf IDs are the triangles' indices (what a packed strips shape's keys are).
Stored MOPP code is checked by walking it (``damaged_mopps``, also over Skyrim's compressed
meshes): the importer warns about a damaged one and the exporter writes it anew."""

import numpy as np

from ..errors import FormatError
from ..havok import mopp
from .block import block_at
from .blocks.compressed_mesh import bhkCompressedMeshShape, bhkCompressedMeshShapeData
from .blocks.legacy_havok import (
    bhkConvexListShape,
    bhkListShape,
    bhkMoppBvTreeShape,
    bhkPackedNiTriStripsShape,
    bhkTransformShape,
    hkPackedNiTriStripsData,
)

PACKED_RADIUS = 0.1  # the games' packed shapes' convex radius (Havok units)
SUB_SHAPE = np.dtype([("layer", "u1"), ("flags", "u1"), ("group", "<u2"), ("num_vertices", "<u4"), ("material", "<u4")])


def packed_mesh_blocks(vertices, triangles, materials, layer, radius=PACKED_RADIUS):
    """(MOPP tree, packed shape, packed data) blocks for ``triangles`` (m, 3) of ``vertices``
    (n, 3, Havok units) with a Bethesda material (u32) each; the MOPP's ``shape`` and the
    shape's ``data`` are left for the caller to set to the indices it adds them at."""
    vertices = np.asarray(vertices, np.float64).reshape(-1, 3)
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    if not len(triangles):
        raise FormatError("a triangle mesh collision needs triangles")
    groups, group = np.unique(np.asarray(materials, np.uint32), return_inverse=True)
    order = np.argsort(group, kind="stable")
    keys = group[order, None] * len(vertices) + triangles[order]
    used, inverse = np.unique(keys, return_inverse=True)
    if len(used) > 0xFFFF:
        raise FormatError(f"a packed triangle mesh holds at most 65535 vertices, not {len(used)} (one copy per material)")
    packed = vertices[used % len(vertices)].astype(np.float32)
    rows = np.zeros((len(triangles), 4), np.uint16)
    rows[:, :3] = inverse.reshape(-1, 3)
    sub_shapes = np.zeros(len(groups), SUB_SHAPE)
    sub_shapes["layer"] = layer
    sub_shapes["num_vertices"] = np.bincount(used // len(vertices), minlength=len(groups))
    sub_shapes["material"] = groups
    tree = mopp.build(packed, rows[:, :3], np.arange(len(rows), dtype=np.uint32), radius)
    data = hkPackedNiTriStripsData(triangles=rows, vertices=packed, sub_shapes=sub_shapes)
    shape = bhkPackedNiTriStripsShape(radius=radius, radius_copy=radius)
    return bhkMoppBvTreeShape(offset=tree.offset, code=tree.code), shape, data


def damaged_mopps(blocks, index, seen=None):
    """[(block index, why)] of the MOPP trees over triangle meshes in the shape tree at ``index``
    whose stored code cannot be walked, names a triangle the data lacks or names none."""
    seen = set() if seen is None else seen
    block = blocks[index] if 0 <= index < len(blocks) and index not in seen else None
    seen.add(index)
    if isinstance(block, (bhkListShape, bhkConvexListShape)):
        return [found for child in np.asarray(block.sub_shapes).tolist() for found in damaged_mopps(blocks, child, seen)]
    if isinstance(block, bhkTransformShape):
        return damaged_mopps(blocks, block.shape, seen)
    if not isinstance(block, bhkMoppBvTreeShape):
        return []
    keys = _shape_keys(blocks, block.shape)
    if keys is None:
        return []  # not a triangle mesh, or damaged data: the import's shape check says so
    try:
        named = mopp.check_leaves(block.code, keys)
    except FormatError as error:
        return [(index, error.message)]
    return [] if len(named) else [(index, "the MOPP code names no triangle")]


def _shape_keys(blocks, index):
    """The shape keys of the triangle mesh at ``index`` (packed: the triangles' indices;
    compressed: as its data says), or None when it is not one (or its data cannot be decoded)."""
    shape = block_at(blocks, index, bhkPackedNiTriStripsShape, bhkCompressedMeshShape)
    if isinstance(shape, bhkPackedNiTriStripsShape):
        data = block_at(blocks, shape.data, hkPackedNiTriStripsData)
        return np.arange(len(data.triangles)) if data is not None else None
    data = block_at(blocks, shape.data, bhkCompressedMeshShapeData) if shape is not None else None
    if data is None:
        return None
    try:
        return data.mesh()[3]
    except FormatError:
        return None
