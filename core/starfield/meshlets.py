"""Meshlets and their culling data for a .mesh, rebuilt after an edit.

What the game's files hold (checked on every corpus .mesh, byte for byte): the triangle list is
ordered meshlet by meshlet, and each meshlet is the longest run of the following triangles that
uses at most 96 distinct vertices and holds at most 128 triangles, so scanning the stored order
with those limits gives the game's meshlets again. A meshlet's vertex offset counts the
vertices of the meshlets before it; its triangle offset counts their triangle indices, each
meshlet's rounded up to a multiple of four (meshoptimizer's packing of a meshlet's local
triangles). Version 2 culling data is the box of a meshlet's vertices, computed in float32:
position = stored value * (scale / 32767), centre = (min + max) * 0.5, extent = centre - min.

The tool that ordered the game's triangles is not known: triangles kept in their stored order
give back the stored meshlets exactly; new meshes are ordered along a Morton curve through
their triangles' centres first (``spatial_order``), which gives valid meshlets of nearby
triangles, not the game tool's.
"""

import numpy as np

from .mesh import CULL_BOX, MESHLET

MAX_VERTICES = 96
MAX_TRIANGLES = 128
MORTON_BITS = 10


def scan_meshlets(triangles, max_vertices=MAX_VERTICES, max_triangles=MAX_TRIANGLES):
    """The meshlets of ``triangles`` (n, 3) in their order: runs filled up to the limits."""
    triangles = np.asarray(triangles).reshape(-1, 3)
    counts = []  # (vertex count, triangle count) per meshlet
    start = 0
    while start < len(triangles):
        window = triangles[start:start + max_triangles].reshape(-1)
        _, first = np.unique(window, return_index=True)
        new = np.zeros(len(window), np.int64)
        new[first] = 1
        distinct = np.cumsum(new)[2::3]  # distinct vertices after each triangle of the window
        taken = max(1, int(np.searchsorted(distinct, max_vertices, side="right")))
        counts.append((int(distinct[taken - 1]), taken))
        start += taken
    meshlets = np.zeros(len(counts), MESHLET)
    if counts:
        vertices, taken = np.array(counts, np.int64).T
        meshlets["vertex_count"], meshlets["triangle_count"] = vertices, taken
        meshlets["vertex_offset"] = np.concatenate([[0], np.cumsum(vertices)[:-1]])
        packed = (3 * taken + 3) & ~3  # each meshlet's local triangle bytes, padded to four
        meshlets["triangle_offset"] = np.concatenate([[0], np.cumsum(packed)[:-1]])
    return meshlets


def culling_boxes(mesh, meshlets):
    """Version 2 culling data: each meshlet's box over the vertices of its triangles."""
    boxes = np.zeros(len(meshlets), CULL_BOX)
    if len(meshlets) == 0:
        return boxes
    corners = mesh.vertices[np.asarray(mesh.triangles).reshape(-1)]  # float32, three per triangle
    starts = 3 * np.concatenate([[0], np.cumsum(meshlets["triangle_count"].astype(np.int64))[:-1]])
    low = np.minimum.reduceat(corners, starts, axis=0)
    high = np.maximum.reduceat(corners, starts, axis=0)
    center = (low + high) * np.float32(0.5)
    boxes["center"] = center
    boxes["extent"] = center - low
    return boxes


def spatial_order(triangles, vertices):
    """An order of the triangles along a Morton (Z-order) curve through their centres."""
    triangles = np.asarray(triangles).reshape(-1, 3)
    if len(triangles) == 0:
        return np.zeros(0, np.int64)
    centres = np.asarray(vertices, np.float64)[triangles].mean(axis=1)
    low, high = centres.min(axis=0), centres.max(axis=0)
    cells = np.rint((centres - low) / np.maximum(high - low, 1e-12) * ((1 << MORTON_BITS) - 1)).astype(np.uint64)
    code = np.zeros(len(triangles), np.uint64)
    for bit in range(MORTON_BITS):
        for axis in range(3):
            code |= ((cells[:, axis] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(3 * bit + axis)
    return np.argsort(code, kind="stable")


def rebuild_meshlets(mesh, reorder=False):
    """Give ``mesh`` (a MeshData) the meshlets and version 2 culling data of its triangles;
    ``reorder``: first order its triangles along ``spatial_order`` (new meshes). Version 0 and 1
    culling data (spheres and normal cones) is not rebuilt: the mesh becomes version 2."""
    if reorder:
        mesh.triangles = np.ascontiguousarray(mesh.triangles[spatial_order(mesh.triangles, mesh.vertices)])
    mesh.version = 2
    mesh.meshlets = scan_meshlets(mesh.triangles)
    mesh.culling = culling_boxes(mesh, mesh.meshlets)
    return mesh
