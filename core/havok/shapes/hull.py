"""3D convex hull of a point set, with coplanar triangles merged into polygon faces.

Incremental construction: a starting tetrahedron, then each point outside the current hull
replaces the faces it sees by a fan from the horizon. Which faces a point sees is decided
exactly, in integers: the points are put on a grid of GRID_STEPS steps across their extent
(float32 vertices are finer than that by 64 times, so only points closer than a grid step
become one), where the orientation tests fit int64 without rounding. With exact tests the faces
a point sees always join along one horizon, so the hull always closes, whatever coplanar or
clustered points a shape holds (float tests on the games' packed meshes can see a face from
one side and its neighbour from the other, and leave holes). The faces' planes take their
directions from the grid and their places from the float points. Visibility is tested for all faces at once with numpy; hull sizes here are small
(a polytope holds at most 256 vertices).

``spanned_hull`` gives what points span whatever their dimension (for showing a game's shape
whose points are flat): a hull's faces, a flat set's polygon, or no face.
"""

import numpy as np

from ...errors import FormatError

GRID_STEPS = 1 << 18  # differences need 19 bits, plane normals 39, plane tests under 60
MERGE_COS = 1 - 1e-6  # neighbouring faces this parallel, their far corners within MERGE_HEIGHT, are one
MERGE_HEIGHT = 1e-6  # of the points' extent


def convex_hull(points):
    """(vertices (n, 3), faces [index arrays, counter-clockwise seen from outside], planes
    (f, 4): outward unit normal and d with n.x + d = 0 on the face)."""
    points = _distinct(points)
    if len(points) < 4:
        raise FormatError("a convex hull needs at least four distinct finite points")
    grid = _on_grid(points)
    corners = _frame(grid)
    if len(corners) < 4:
        raise FormatError("the points are flat: a convex polytope needs volume")
    polygons, planes = _merge_coplanar(points, grid, _triangles(grid, corners))
    used, inverse = np.unique(np.concatenate(polygons), return_inverse=True)
    sizes = np.cumsum([len(polygon) for polygon in polygons])[:-1]
    return points[used], np.split(inverse, sizes), planes


def hull_planes(points):
    """(vertices, planes (f, 4)) of the hull the points span: a polytope's; for points in one
    plane, the polygon round them with its two sides and its edges as planes (a flat convex
    shape, which the games' files hold too)."""
    points = _distinct(points)
    grid = _on_grid(points)
    corners = _frame(grid) if len(points) else ()
    if len(corners) == 4:
        vertices, _, planes = convex_hull(points)
        return vertices, planes
    if len(corners) < 3:
        raise FormatError("the points lie on a line: a convex shape needs them to span a plane at least")
    loop = _polygon(grid, corners)
    normal = np.cross(grid[corners[1]] - grid[corners[0]], grid[corners[2]] - grid[corners[0]]).astype(np.float64)
    normal /= np.linalg.norm(normal)
    vertices = points[loop]
    outward = np.cross(np.roll(vertices, -1, axis=0) - vertices, normal)  # counter-clockwise round the normal
    outward /= np.linalg.norm(outward, axis=1, keepdims=True)
    sides = np.array([normal, -normal])
    planes = np.c_[np.vstack([sides, outward]), -np.r_[sides @ vertices[0], np.einsum("ij,ij->i", outward, vertices)]]
    return vertices, planes


def spanned_hull(points):
    """(points (n, 3): every distinct finite point, faces [index arrays]): the convex hull's
    faces; for points in one plane, the polygon around them; none for points on a line."""
    points = _distinct(points)
    if not len(points):
        return points, []
    grid = _on_grid(points)
    corners = _frame(grid)
    if len(corners) == 4:
        return points, _merge_coplanar(points, grid, _triangles(grid, corners))[0]
    if len(corners) == 3:
        return points, [_polygon(grid, corners)]
    return points, []


def _distinct(points):
    points = np.asarray(points, np.float64).reshape(-1, 3)
    return np.unique(points[np.isfinite(points).all(axis=1)], axis=0)


def _on_grid(points):
    extent = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
    if extent == 0:
        return np.zeros(points.shape, np.int64)
    return np.rint((points - points.min(axis=0)) * (GRID_STEPS / extent)).astype(np.int64)


def _normals(grid, a, b, c):
    """Exact normals (cross products) and offsets of the planes through grid points a, b, c."""
    normals = np.cross(grid[b] - grid[a], grid[c] - grid[a])
    return normals, -np.einsum("ij,ij->i", normals, grid[a])


def _frame(grid):
    """Up to four points spanning the set: one, a second apart from it, a third off their line,
    a fourth off their plane (as many as the set's dimension allows, plus one)."""
    first = int(np.lexsort(grid.T[::-1])[0])
    offsets = grid - grid[first]
    second = int(np.argmax(np.einsum("ij,ij->i", offsets, offsets)))
    if second == first or not offsets[second].any():
        return (first,)
    off_line = np.cross(offsets, offsets[second])
    third = int(np.argmax(np.einsum("ij,ij->i", off_line.astype(np.float64), off_line.astype(np.float64))))
    if not off_line[third].any():
        return first, second
    heights = offsets @ np.cross(offsets[second], offsets[third])
    fourth = int(np.argmax(np.abs(heights)))
    if heights[fourth] == 0:
        return first, second, third
    return first, second, third, fourth


def _triangles(grid, corners):
    """The hull's triangles (index triples, counter-clockwise from outside) from a tetrahedron
    of ``corners``."""
    faces = []
    for opposite in range(4):
        face = [c for k, c in enumerate(corners) if k != opposite]
        normal, offset = _normals(grid, *([i] for i in face))
        if normal[0] @ grid[corners[opposite]] + offset[0] > 0:  # face the opposite corner away
            face = face[::-1]
        faces.append(tuple(face))
    normals, offsets = _normals(grid, *np.array(faces).T)
    alive = np.ones(4, bool)
    order = np.argsort(-np.abs(grid @ normals[0] + offsets[0]), kind="stable")
    for index in order.tolist():
        visible = alive & (normals @ grid[index] + offsets > 0)
        if not visible.any():
            continue
        seen = {(faces[f][k], faces[f][(k + 1) % 3]) for f in np.flatnonzero(visible) for k in range(3)}
        horizon = np.array([edge for edge in seen if (edge[1], edge[0]) not in seen], np.int64)
        added = np.c_[horizon, np.full(len(horizon), index)]
        faces += [tuple(face) for face in added.tolist()]
        new_normals, new_offsets = _normals(grid, *added.T)
        normals, offsets = np.vstack([normals, new_normals]), np.append(offsets, new_offsets)
        alive = np.append(alive & ~visible, np.ones(len(added), bool))
    return [faces[f] for f in np.flatnonzero(alive)], normals[alive], offsets[alive]


def _merge_coplanar(points, grid, triangles):
    """Polygons of the triangles that share a plane (exactly on the grid, or within MERGE_COS
    and MERGE_HEIGHT on the float points), and their planes. A group whose outline is not one
    loop (transitively merged faces curling round) stays as its triangles."""
    faces, normals, offsets = triangles
    # directions from the grid, where every triangle is exact (from the float points, one
    # joining two points a grid step apart would point anywhere)
    unit = normals / np.linalg.norm(normals.astype(np.float64), axis=1, keepdims=True)
    unit_offsets = -np.einsum("ij,ij->i", unit, points[[face[0] for face in faces]])
    height = MERGE_HEIGHT * float(np.ptp(points, axis=0).max())
    parent = list(range(len(faces)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edge_face = {(face[k], face[(k + 1) % 3]): f for f, face in enumerate(faces) for k in range(3)}
    for (a, b), f in edge_face.items():
        g = edge_face[(b, a)]
        apex = next(v for v in faces[g] if v not in (a, b))
        exact = normals[f] @ grid[apex] + offsets[f] == 0
        near = abs(points[apex] @ unit[f] + unit_offsets[f]) <= height and unit[f] @ unit[g] > MERGE_COS
        if exact or near:
            parent[root(f)] = root(g)
    groups = {}
    for f in range(len(faces)):
        groups.setdefault(root(f), []).append(f)
    polygons = []
    for members in groups.values():
        loop = _outline([faces[f] for f in members])
        polygons += [np.array(faces[f], np.int64) for f in members] if loop is None else [_corners(grid, loop)]
    planes = []
    for polygon in polygons:
        corners = grid[polygon].astype(np.float64)
        area_normal = np.cross(corners[1:-1] - corners[0], corners[2:] - corners[0]).sum(axis=0)
        normal = area_normal / np.linalg.norm(area_normal)
        planes.append((*normal, -float(np.mean(points[polygon] @ normal))))
    return polygons, np.array(planes, np.float64)


def _outline(faces):
    """The outline of triangles as one counter-clockwise loop of vertices, or None when it is
    not one simple loop."""
    edges = {(face[k], face[(k + 1) % 3]) for face in faces for k in range(3)}
    outer = [(a, b) for a, b in edges if (b, a) not in edges]
    following = dict(outer)
    if len(following) != len(outer):
        return None  # a vertex the outline passes twice
    loop = [outer[0][0]]
    while following[loop[-1]] != loop[0]:
        loop.append(following[loop[-1]])
        if len(loop) > len(outer):
            return None
    return np.array(loop, np.int64) if len(loop) == len(outer) else None


def _corners(grid, loop):
    """A loop without the points lying on the straight edge between its neighbours."""
    here = grid[loop]
    bent = np.cross(np.roll(here, 1, axis=0) - here, np.roll(here, -1, axis=0) - here).any(axis=1)
    return loop[bent]


def _polygon(grid, corners):
    """The convex polygon around points lying in one plane (the plane of ``corners``), as
    indices in order round it (Andrew's monotone chain, exact on the grid)."""
    normal = np.cross(grid[corners[1]] - grid[corners[0]], grid[corners[2]] - grid[corners[0]])
    drop = int(np.argmax(np.abs(normal)))
    flat = np.delete(grid, drop, axis=1)
    order = np.lexsort(flat.T[::-1])
    unique = np.unique(flat[order], axis=0, return_index=True)[1]
    order = order[np.sort(unique)]

    def half(indices):
        chain = []
        for i in indices:
            while len(chain) >= 2:
                a, b = flat[chain[-2]], flat[chain[-1]]
                if (b[0] - a[0]) * (flat[i][1] - a[1]) - (b[1] - a[1]) * (flat[i][0] - a[0]) > 0:
                    break
                chain.pop()
            chain.append(int(i))
        return chain[:-1]

    loop = half(order) + half(order[::-1])  # counter-clockwise in the kept axes' plane
    turns_with_normal = (normal[drop] > 0) == (drop != 1)  # (x, z) with y dropped is left-handed
    return np.array(loop if turns_with_normal else loop[::-1], np.int64)
