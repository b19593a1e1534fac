"""Shapes whose triangles come in consecutive groups: a Skyrim BSLODTriShape's three LOD levels
(their sizes, in order) and a FO3 / New Vegas BSSegmentedTriShape's segments (each a first index,
3 per triangle, and a triangle count). The per-triangle group numbers the importer shows, and the
table written back from edited numbers. Pure numpy; no bpy."""

import numpy as np

from .blocks.geometry import BSLODTriShape, BSSegmentedTriShape

GROUPED = (BSLODTriShape, BSSegmentedTriShape)
NO_GROUP = -1


def group_ranges(shape):
    """(first triangle, triangle count) of each group, as int64 rows."""
    if isinstance(shape, BSLODTriShape):
        sizes = np.asarray(shape.lod_sizes, np.int64)
        return np.stack([np.cumsum(sizes) - sizes, sizes], axis=1)
    segments = shape.segments
    return np.stack([segments["start_index"].astype(np.int64) // 3, segments["num_triangles"].astype(np.int64)], axis=1)


def triangle_groups(shape, count):
    """Each of ``count`` triangles' group number, -1 where no group covers it."""
    groups = np.full(count, NO_GROUP, np.int32)
    for number, (start, size) in enumerate(group_ranges(shape).tolist()):
        groups[start : start + size] = number
    return groups


def table_holds(shape, groups, as_stored=None):
    """Whether the shape's table already says ``groups`` (one per triangle) and covers every
    triangle once (then it is kept as stored). ``as_stored``: a mask of triangles the file holds
    as they were (degenerate ones the import made no face of), which may lie in no group, as a
    New Vegas LOD chunk's lone degenerate triangle does in its empty segments."""
    groups = np.asarray(groups)
    stored = triangle_groups(shape, len(groups))
    outside = stored == NO_GROUP
    covered = len(groups) - int(outside.sum())
    if as_stored is not None:
        outside &= ~np.asarray(as_stored, bool)
    return int(group_ranges(shape)[:, 1].sum()) == covered and not outside.any() and np.array_equal(stored, groups)


def group_order(shape, groups, layout=None):
    """Triangle order putting each group's triangles together in group order, and the table of
    ``layout`` (a shape of the same type: its group count and segment flags; default ``shape``)
    set on ``shape`` for it. A triangle of no group of the layout (-1, out of range) joins the
    layout's first group holding triangles (0 when none does): where a new face belongs is
    unknown, and there it is at least drawn with others."""
    layout = shape if layout is None else layout
    ranges = group_ranges(layout)
    if not len(ranges):  # a segmented shape without segments: nothing to order by
        return np.arange(len(groups))
    filled = np.flatnonzero(ranges[:, 1])
    fallback = int(filled[0]) if len(filled) else 0
    groups = np.asarray(groups, np.int64)
    groups = np.where((groups >= 0) & (groups < len(ranges)), groups, fallback)
    order = np.argsort(groups, kind="stable")
    sizes = np.bincount(groups, minlength=len(ranges))
    if isinstance(shape, BSLODTriShape):
        shape.lod_sizes = tuple(int(size) for size in sizes)
    else:
        segments = np.array(layout.segments, copy=True)
        segments["start_index"] = 3 * (np.cumsum(sizes) - sizes)  # the running index, empty segments too
        segments["num_triangles"] = sizes
        shape.segments = segments
    return order
