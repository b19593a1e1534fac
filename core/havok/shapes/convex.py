"""Convex shapes: hknpConvexPolytopeShape, hknpCapsuleShape, hknpSphereShape, hknpScaledConvexShape.

hknpConvexShape (0x40) is the shape header and an hkRelArray of vertices (xyz f32 + w holding
the vertex index as int24w), its items stored inside the object after the struct. The polytope
(0x50) adds hkRelArrays of planes (normal, distance; count padded to a multiple of 4, the padding
planes holding leftover bytes that are kept), faces (u16 first index, u8 index count, u8
quantised minimum half angle to the neighbouring faces) and u8 face-vertex indices. The
vertices are padded to a multiple of 4 by repeating the last one. Inline arrays follow the
struct in that order, each 16-aligned.

The vertices are the shrunk core: the surface lies ``convex_radius`` further out. A sphere is a
convex shape whose four vertices are its centre; a capsule is a polytope (a thin box around the
segment) plus the segment's end points a (+0x50) and b (+0x60).
"""

import numpy as np

from ...errors import FormatError
from ...transforms import axis_frame
from ..objects import havok_class, padded
from .base import GAME_UNITS, Shape, int24w, spans
from .hull import convex_hull
from .mass import mass_properties

VERTEX = np.dtype(("<f4", (4,)))
PLANE = VERTEX
FACE = np.dtype([("first", "<u2"), ("count", "u1"), ("min_half_angle", "u1")])
INDEX = np.dtype("u1")
UNUSED_PLANE = (0.0, 0.0, 0.0, -float(np.finfo(np.float32).max))


def _vertices(points):
    """Stored vertices from core points (Havok units): w holds the index; padded to a multiple
    of four by repeating the last."""
    count = len(points)
    if not 0 < count <= 256:
        raise FormatError(f"a convex shape holds 1 to 256 vertices, not {count}")
    stored = np.empty((padded(count, 4), 4), np.float32)
    stored[:count, :3] = points
    stored[:count, 3] = int24w(np.arange(count))
    stored[count:] = stored[count - 1]
    return stored


class ConvexShape(Shape):
    STRUCT_SIZE = 0x40
    INLINE = (("vertices", VERTEX),)

    def __init__(self):
        super().__init__()
        self.vertices = np.zeros((0, 4), np.float32)
        self.convex_padding = bytes(12)

    def _targets(self, s):
        """Where the inline arrays go when writing: after the struct, in order, 16-aligned."""
        if s.reading:
            return {}
        targets = {}
        position = self.STRUCT_SIZE
        for name, dtype in self.INLINE:
            targets[name] = position
            position = padded(position + len(getattr(self, name)) * dtype.itemsize)
        return targets

    def _rel(self, s, name, dtype, targets):
        at = s.pos
        items, _ = s.rel_array((getattr(self, name), targets.get(name, at) - at), dtype, what=name)
        return items

    def _inline(self, s, targets):
        if not s.reading:
            for name, dtype in self.INLINE:
                s.end_at(targets[name])
                s.array(getattr(self, name), dtype, len(getattr(self, name)))

    def sync_convex(self, s, targets):
        self.sync_shape(s)
        self.vertices = self._rel(s, "vertices", VERTEX, targets)
        self.convex_padding = s.raw(self.convex_padding, 12)

    @property
    def radius(self):
        """The convex radius in game units."""
        return float(self.convex_radius) * GAME_UNITS


@havok_class("hknpSphereShape")
class SphereShape(ConvexShape):
    flags = 0x0111

    @classmethod
    def build(cls, radius, center=(0.0, 0.0, 0.0)):
        """A sphere of ``radius`` game units around ``center`` (game units, shape space)."""
        shape = cls()
        shape.convex_radius = float(radius) / GAME_UNITS
        shape.vertices = _vertices(np.asarray(center, np.float64).reshape(1, 3) / GAME_UNITS)
        return shape

    @property
    def center(self):
        if not len(self.vertices):
            return np.zeros(3)
        return self.vertices[0, :3].astype(np.float64) * GAME_UNITS

    def mesh(self):
        """The centre as the only vertex (game units), no triangles: the surface is the radius."""
        return self.center.reshape(1, 3), np.zeros((0, 3), np.int64)

    def sync(self, s):
        targets = self._targets(s)
        self.sync_convex(s, targets)
        self._inline(s, targets)

    def summary(self, within=()):
        return {"type": "sphere", "vertices": 0, "triangles": 0, "radius": round(self.radius, 4)}


@havok_class("hknpConvexPolytopeShape")
class ConvexPolytopeShape(ConvexShape):
    flags = 0x0143
    STRUCT_SIZE = 0x50
    INLINE = (("vertices", VERTEX), ("planes", PLANE), ("faces", FACE), ("indices", INDEX))

    def __init__(self):
        super().__init__()
        self.planes = np.zeros((0, 4), np.float32)
        self.faces = np.zeros(0, FACE)
        self.indices = np.zeros(0, INDEX)
        self.polytope_padding = bytes(4)

    def sync(self, s):
        targets = self._targets(s)
        self.sync_convex(s, targets)
        planes_at = s.pos
        self.planes = self._rel(s, "planes", PLANE, targets)
        self.faces = self._rel(s, "faces", FACE, targets)
        self.indices = self._rel(s, "indices", INDEX, targets)
        self.polytope_padding = s.raw(self.polytope_padding, 4)
        if s.reading:
            self._check(s, planes_at)
        self.sync_extra(s)
        self._inline(s, targets)

    def sync_extra(self, s):
        pass

    def _check(self, s, at):
        """Every face lies inside the index array and every index names a vertex."""
        if len(self.faces) > len(self.planes):
            raise s.error(f"{len(self.faces)} faces but only {len(self.planes)} planes", at)
        ends = self.faces["first"].astype(np.int64) + self.faces["count"]
        if len(ends) and ends.max() > len(self.indices):
            raise s.error(f"a face runs past the {len(self.indices)} face-vertex indices", at + 4)
        if len(self.indices) and self.indices.max() >= len(self.vertices):
            raise s.error(f"a face-vertex index reaches past the {len(self.vertices)} vertices", at + 8)

    # -- geometry --------------------------------------------------------------------------
    def mesh(self):
        """The core polytope: (vertices (n, 3) in game units, triangles (m, 3)), each face
        fanned into triangles, only the vertices the faces use."""
        used, triangles = np.unique(self.face_triangles(), return_inverse=True)
        vertices = self.vertices[used, :3].astype(np.float64) * GAME_UNITS
        return vertices, triangles.reshape(-1, 3)

    @classmethod
    def build(cls, points, convex_radius=0.0):
        """A polytope from the points of a convex mesh (game units): their convex hull, faces
        merged where coplanar, with planes and face angles computed. ``convex_radius`` (game
        units) is added around the hull by the game."""
        shape = cls()
        shape.set_hull(np.asarray(points, np.float64) / GAME_UNITS)
        shape.convex_radius = float(convex_radius) / GAME_UNITS
        shape.properties = mass_properties(shape.surface_vertices(), shape.face_triangles())
        return shape

    def set_hull(self, points):
        """Vertices, planes, faces and indices from points in Havok units."""
        hull_points, polygons, planes = convex_hull(points)
        if len(polygons) > 0xFFFF or any(len(polygon) > 255 for polygon in polygons):
            raise FormatError("the convex hull has too many faces or a face with over 255 corners")
        self.vertices = _vertices(hull_points)
        stored_planes = np.empty((padded(len(planes), 4), 4), np.float32)
        stored_planes[:] = UNUSED_PLANE
        stored_planes[: len(planes)] = planes
        self.planes = stored_planes
        counts = np.array([len(polygon) for polygon in polygons], np.int64)
        self.faces = np.zeros(len(polygons), FACE)
        self.faces["first"] = np.cumsum(counts) - counts
        self.faces["count"] = counts
        self.faces["min_half_angle"] = _min_half_angles(polygons, planes[:, :3])
        self.indices = np.concatenate(polygons).astype(np.uint8)

    def face_triangles(self):
        """The faces fanned into triangles of indices into ``vertices``."""
        first = self.faces["first"].astype(np.int64)
        step, face = spans(np.ones(len(first)), np.maximum(self.faces["count"].astype(np.int64) - 2, 0))
        start = first[face]
        return self.indices[np.stack([start, start + step, start + step + 1], axis=1)].astype(np.int64)

    def surface_vertices(self):
        """The vertices moved out by the convex radius along their faces' planes (Havok units):
        the corners of the polytope the game collides with, edges taken sharp."""
        vertices = self.vertices[:, :3].astype(np.float64)
        normals = self.planes[: len(self.faces), :3].astype(np.float64)
        position, face_of = spans(self.faces["first"], self.faces["count"])
        corner = self.indices[position].astype(np.int64)
        for vertex in np.unique(corner):
            touching = normals[face_of[corner == vertex]]
            offset = np.linalg.lstsq(touching, np.full(len(touching), self.convex_radius), rcond=None)[0]
            vertices[vertex] += offset
        return vertices

    def summary(self, within=()):
        vertices, triangles = self.mesh()
        radius = round(self.radius, 4)
        return {"type": "convex", "vertices": len(vertices), "triangles": len(triangles), "radius": radius}


def _min_half_angles(polygons, normals):
    """Per face: half the smallest angle between its normal and an edge neighbour's, quantised
    so that 255 is a right angle (a box's faces give 127 or 128, as in the game's files)."""
    owner = {}
    for face, polygon in enumerate(polygons):
        for a, b in zip(polygon, np.roll(polygon, -1)):
            owner[(int(a), int(b))] = face
    smallest = np.full(len(polygons), np.pi)
    for (a, b), face in owner.items():
        other = owner.get((b, a))
        if other is not None:
            angle = np.arccos(np.clip(normals[face] @ normals[other], -1.0, 1.0))
            smallest[face] = min(smallest[face], angle)
    return np.clip(np.round(smallest / 2 / (np.pi / 2) * 255), 0, 255).astype(np.uint8)


@havok_class("hknpCapsuleShape")
class CapsuleShape(ConvexPolytopeShape):
    flags = 0x01C3
    STRUCT_SIZE = 0x70

    def __init__(self):
        super().__init__()
        self.a = (0.0, 0.0, 0.0, 1.0)
        self.b = (0.0, 0.0, 0.0, 1.0)

    def sync_extra(self, s):
        self.a = s.vec4(self.a)
        self.b = s.vec4(self.b)

    @property
    def segment(self):
        """The end points a and b in game units."""
        return np.array([self.a[:3], self.b[:3]], np.float64) * GAME_UNITS

    @classmethod
    def build(cls, a, b, radius):
        """A capsule around the segment a-b (game units) of ``radius`` game units. Its core is a
        thin box around the segment, as in the game's files (half-width 1% of the radius)."""
        shape = cls()
        a = np.asarray(a, np.float64) / GAME_UNITS
        b = np.asarray(b, np.float64) / GAME_UNITS
        radius = float(radius) / GAME_UNITS
        length = np.linalg.norm(b - a)
        axis, side, up = axis_frame(b - a)
        half = radius * 0.01
        corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], np.float64)
        ends = np.where(corners[:, 2:] < 0, a - axis * half, b + axis * half)
        shape.set_hull(ends + half * (corners[:, :1] * side + corners[:, 1:2] * up))
        shape.convex_radius = radius
        shape.a = (*a, 1.0)
        shape.b = (*b, 1.0)
        return shape

    def summary(self, within=()):
        vertices, triangles = self.mesh()
        a, b = self.segment
        return {
            "type": "capsule",
            "vertices": len(vertices),
            "triangles": len(triangles),
            "radius": round(self.radius, 4),
            "length": round(float(np.linalg.norm(a - b)), 4),
        }


@havok_class("hknpScaledConvexShape")
class ScaledConvexShape(Shape):
    """A convex child shape scaled and moved (hknpScaledConvexShapeBase layout of the hk_2014
    readers: child pointer, u32 child size, 4 bytes, scale and translation vec4s, 16 bytes)."""

    def __init__(self):
        super().__init__()
        self.child = None
        self.child_size = 0
        self.scale = (1.0, 1.0, 1.0, 0.0)
        self.translation = (0.0, 0.0, 0.0, 0.0)
        self.scaled_padding = bytes(20)

    def sync(self, s):
        self.sync_shape(s)
        self.child = s.pointer(self.child)
        self.child_size = s.u32(self.child_size)
        pad = s.raw(self.scaled_padding[:4], 4)
        self.scale = s.vec4(self.scale)
        self.translation = s.vec4(self.translation)
        self.scaled_padding = pad + s.raw(self.scaled_padding[4:], 16)

    def mesh(self):
        if not isinstance(self.child, ConvexPolytopeShape):
            return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
        vertices, triangles = self.child.mesh()
        return vertices * self.scale[:3] + np.asarray(self.translation[:3]) * GAME_UNITS, triangles

    def summary(self, within=()):
        vertices, triangles = self.mesh()
        return {"type": "scaled_convex", "vertices": len(vertices), "triangles": len(triangles)}
