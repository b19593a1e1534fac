"""Meshes cut into pieces a Bethesda shape can hold (at most 65535 vertices each)."""

import numpy as np

MAX_SHAPE_VERTICES = 0xFFFF


def _prefix_vertex_counts(triangles):
    """For each k, how many distinct vertices the first k triangles use (vectorised: a vertex
    counts from the triangle that first uses it)."""
    flat = triangles.ravel()
    _, first = np.unique(flat, return_index=True)
    new_at = np.zeros(len(triangles) + 1, np.int64)
    np.add.at(new_at, first // 3 + 1, 1)
    return np.cumsum(new_at)


def split_triangles(triangles, limit=MAX_SHAPE_VERTICES):
    """Consecutive runs of ``triangles`` (n, 3) each using at most ``limit`` vertices. Returns
    [(vertex indices used, triangles renumbered into them), ...]; a single piece when it fits."""
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    if not len(triangles):
        return [(np.zeros(0, np.int64), triangles)]
    pieces, start = [], 0
    while start < len(triangles):
        counts = _prefix_vertex_counts(triangles[start:])
        # The longest run whose vertex count stays within the limit (one triangle always fits).
        end = start + max(int(np.searchsorted(counts, limit, side="right")) - 1, 1)
        used, local = np.unique(triangles[start:end], return_inverse=True)
        pieces.append((used, local.reshape(-1, 3)))
        start = end
    return pieces
