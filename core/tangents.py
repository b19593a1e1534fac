"""Per-vertex tangents from positions, normals, texture coordinates and triangles: each
triangle's dP/du and dP/dv summed over its corners, then made perpendicular to the normal.
For meshes that carry no tangents of their own."""

import numpy as np


def vertex_tangents(positions, normals, uvs, triangles):
    """(n, 3) unit tangents along +u and (n,) signs w with bitangent = w * cross(normal, tangent)
    pointing along +v, v measured upwards (Blender's UVs; the .bsm2 corpus tangents agree).
    Vertices without a usable triangle get a vector perpendicular to their normal and w = 1."""
    positions = np.asarray(positions, np.float64)
    normals = np.asarray(normals, np.float64)
    uvs = np.asarray(uvs, np.float64)
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    p0, p1, p2 = (positions[triangles[:, i]] for i in range(3))
    t0, t1, t2 = (uvs[triangles[:, i]] for i in range(3))
    e1, e2 = p1 - p0, p2 - p0
    d1, d2 = t1 - t0, t2 - t0
    det = d1[:, 0] * d2[:, 1] - d2[:, 0] * d1[:, 1]
    inverse = np.where(np.abs(det) > 1e-20, 1.0 / np.where(det == 0, 1.0, det), 0.0)[:, None]
    along_u = (e1 * d2[:, 1:2] - e2 * d1[:, 1:2]) * inverse
    along_v = (e2 * d1[:, 0:1] - e1 * d2[:, 0:1]) * inverse
    sum_u = np.zeros_like(positions)
    sum_v = np.zeros_like(positions)
    for corner in range(3):
        np.add.at(sum_u, triangles[:, corner], along_u)
        np.add.at(sum_v, triangles[:, corner], along_v)
    tangents = sum_u - normals * np.einsum("ij,ij->i", normals, sum_u)[:, None]
    length = np.linalg.norm(tangents, axis=1)
    # Fallback: the axis least aligned with the normal, made perpendicular to it.
    axis = np.eye(3)[np.argmin(np.abs(normals), axis=1)]
    fallback = np.cross(normals, axis)
    fallback /= np.maximum(np.linalg.norm(fallback, axis=1), 1e-30)[:, None]
    usable = length > 1e-12
    tangents = np.where(usable[:, None], tangents / np.where(usable, length, 1.0)[:, None], fallback)
    signs = np.where(np.einsum("ij,ij->i", np.cross(normals, tangents), sum_v) < 0, -1, 1).astype(np.int8)
    return tangents, signs
