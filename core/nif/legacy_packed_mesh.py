"""A Fallout 3 / New Vegas triangle-mesh collision written anew: the bhkMoppBvTreeShape over a
bhkPackedNiTriStripsShape and its hkPackedNiTriStripsData, with MOPP code built for it.

The packed data gives each sub shape (one per material) a run of the vertices; a triangle
belongs to the sub shape holding its first vertex, so vertices used by several materials are
copied. The MOPP's leaf IDs are the triangles' keys (legacy_mopp.packed_keys: the index, the
sub shape holding the triangle in the top byte, as the games' files have them)."""

import numpy as np

from ..errors import FormatError
from ..havok import mopp
from .blocks.legacy_havok import bhkMoppBvTreeShape, bhkPackedNiTriStripsShape, hkPackedNiTriStripsData
from .legacy_mopp import packed_keys

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
    data = hkPackedNiTriStripsData(triangles=rows, vertices=packed, sub_shapes=sub_shapes)
    tree = mopp.build(packed, rows[:, :3], packed_keys(data), radius)
    shape = bhkPackedNiTriStripsShape(radius=radius, radius_copy=radius)
    return bhkMoppBvTreeShape(offset=tree.offset, code=tree.code), shape, data
