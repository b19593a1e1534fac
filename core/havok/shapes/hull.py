"""3D convex hull of a point set, with coplanar triangles merged into polygon faces.

Incremental construction: a starting tetrahedron, then each point outside the current hull
replaces the faces it sees by a fan from the horizon. Visibility is tested for all faces at
once with numpy; hull sizes here are small (a polytope holds at most 256 vertices).
"""

import numpy as np

from ...errors import FormatError


def convex_hull(points):
    """(vertices (n, 3), faces [index arrays, counter-clockwise seen from outside], planes
    (f, 4): outward unit normal and d with n.x + d = 0 on the face)."""
    points = np.unique(np.asarray(points, np.float64).reshape(-1, 3), axis=0)
    if len(points) < 4 or not np.isfinite(points).all():
        raise FormatError("a convex hull needs at least four distinct finite points")
    extent = float(np.ptp(points, axis=0).max())
    epsilon = extent * 1e-7
    triangles = _triangles(points, epsilon)
    polygons, planes = _merge_coplanar(points, triangles, epsilon)
    used, inverse = np.unique(np.concatenate(polygons), return_inverse=True)
    sizes = np.cumsum([len(polygon) for polygon in polygons])[:-1]
    return points[used], np.split(inverse, sizes), planes


def _plane(points, a, b, c):
    normal = np.cross(points[b] - points[a], points[c] - points[a])
    length = np.linalg.norm(normal)
    normal = normal / length if length > 0 else normal
    return normal, -normal @ points[a]


def _triangles(points, epsilon):
    first = int(np.argmin(points[:, 0]))
    second = int(np.argmax(np.linalg.norm(points - points[first], axis=1)))
    line = points[second] - points[first]
    off_line = np.linalg.norm(np.cross(points - points[first], line), axis=1)
    third = int(np.argmax(off_line))
    normal, d = _plane(points, first, second, third)
    heights = points @ normal + d
    fourth = int(np.argmax(np.abs(heights)))
    if off_line[third] <= epsilon * np.linalg.norm(line) or abs(heights[fourth]) <= epsilon:
        raise FormatError("the points are flat: a convex polytope needs volume")
    corners = (first, second, third, fourth)
    faces, normals, offsets = [], [], []
    for opposite in range(4):
        face = tuple(c for k, c in enumerate(corners) if k != opposite)
        normal, d = _plane(points, *face)
        if normal @ points[corners[opposite]] + d > 0:  # face the opposite corner away
            face, normal, d = face[::-1], -normal, -d
        faces.append(face)
        normals.append(normal)
        offsets.append(d)
    normals, offsets = np.array(normals), np.array(offsets)
    alive = np.ones(4, bool)
    for index in np.argsort(-np.abs(points @ normals[0] + offsets[0]), kind="stable"):
        point = points[index]
        visible = alive & (normals @ point + offsets > epsilon)
        if not visible.any():
            continue
        seen = {(faces[f][k], faces[f][(k + 1) % 3]) for f in np.flatnonzero(visible) for k in range(3)}
        horizon = [edge for edge in seen if (edge[1], edge[0]) not in seen]
        alive &= ~visible
        added = [(a, b, int(index)) for a, b in horizon]
        faces += added
        new_planes = [_plane(points, *face) for face in added]
        normals = np.vstack([normals, [plane[0] for plane in new_planes]])
        offsets = np.append(offsets, [plane[1] for plane in new_planes])
        alive = np.append(alive, np.ones(len(added), bool))
    return [faces[f] for f in np.flatnonzero(alive)], normals[alive], offsets[alive]


def _merge_coplanar(points, triangles, epsilon):
    """Polygons of the triangles that share a plane, and their planes."""
    faces, normals, offsets = triangles
    parent = list(range(len(faces)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edge_face = {(face[k], face[(k + 1) % 3]): f for f, face in enumerate(faces) for k in range(3)}
    for (a, b), f in edge_face.items():
        g = edge_face.get((b, a))
        if g is None:
            raise FormatError("the convex hull is not closed (degenerate points)")
        apex = next(v for v in faces[g] if v not in (a, b))
        if abs(points[apex] @ normals[f] + offsets[f]) <= epsilon * 10 and normals[f] @ normals[g] > 1 - 1e-6:
            parent[root(f)] = root(g)

    groups = {}
    for f in range(len(faces)):
        groups.setdefault(root(f), []).append(f)
    polygons, planes = [], []
    for members in groups.values():
        edges = {(faces[f][k], faces[f][(k + 1) % 3]) for f in members for k in range(3)}
        following = {a: b for a, b in edges if (b, a) not in edges}
        start = next(iter(following))
        loop = [start]
        while following[loop[-1]] != start:
            loop.append(following[loop[-1]])
            if len(loop) > len(following):
                raise FormatError("the convex hull has a face that is not a simple polygon")
        corners = points[[faces[f] for f in members]]
        area_normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]).sum(axis=0)
        normal = area_normal / np.linalg.norm(area_normal)
        polygons.append(np.array(loop, np.int64))
        planes.append((*normal, -float(np.mean(points[loop] @ normal))))
    return polygons, np.array(planes, np.float64)
