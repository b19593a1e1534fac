"""BSTriShape and its subclasses: Fallout 4 / Skyrim SE / Fallout 76 packed geometry.

Field order (FORMAT-NOTES section 4): NiAVObject, bounding sphere, [FO76: bound box],
skin, shader, alpha, vertex desc, num triangles (u32 from bs 130, u16 for SSE), num vertices,
data size, vertices + triangles (only when data size > 0), [SSE: particle data].
"""

import numpy as np

from ...errors import FormatError
from .. import vertex_format as vf
from .. import versions
from ..block import block_class
from ..packed_vertices import PackedVertices, bounding_sphere
from .objects import NiAVObject

MAX_VERTICES = 0xFFFF


def triangle_dtype(s):
    return np.dtype((s.dtype("u2"), (3,)))


def check_triangles(triangles, vertex_count, s=None):
    """Every index must name a vertex; a damaged file must not reach a consumer."""
    if len(triangles) and int(triangles.max()) >= vertex_count:
        message = f"a triangle uses vertex {int(triangles.max())} of only {vertex_count}"
        raise s.error(message) if s is not None and s.reading else FormatError(message)


def box_centre_and_extents(positions):
    """What Fallout 76 stores as a shape's "bound min max" (nif.xml's name): every shape of its
    files holds the centre of the positions' box, then the box's half size."""
    positions = np.asarray(positions, np.float64)
    if not len(positions):
        return (0.0,) * 6
    low, high = positions.min(axis=0), positions.max(axis=0)
    return tuple(float(v) for v in (*((low + high) / 2), *((high - low) / 2)))


@block_class("BSTriShape")
class BSTriShape(PackedVertices, NiAVObject):
    bound_center = (0.0, 0.0, 0.0)
    bound_radius = 0.0
    bound_min_max = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    skin = -1
    shader_property = -1
    alpha_property = -1
    triangles = None
    # Counts stored for shapes without inline data (SSE skinned shapes keep their vertices in
    # the skin partition; precombined hosts have none).
    num_vertices = 0
    num_triangles = 0
    particle_vertices = None
    particle_normals = None
    particle_triangles = None

    @property
    def skinned(self):
        return self.skin != -1

    @property
    def triangle_count(self):
        return self.num_triangles if self.triangles is None else len(self.triangles)

    def set_triangles(self, triangles):
        self.triangles = np.ascontiguousarray(np.asarray(triangles).reshape(-1, 3), np.uint16)

    def _update_dependent(self, s):
        """Counts, data size and bounds follow the arrays."""
        if self.vertex_data is not None:
            if len(self.vertex_data) > MAX_VERTICES:
                raise FormatError(
                    f"{len(self.vertex_data)} vertices: a BSTriShape holds at most {MAX_VERTICES}; "
                    f"split the mesh before writing"
                )
            if self.triangles is None:
                self.triangles = np.zeros((0, 3), np.uint16)
            check_triangles(self.triangles, len(self.vertex_data))
            self.num_vertices = len(self.vertex_data)
            self.num_triangles = len(self.triangles)
        if self.bounds_dirty and self.vertex_data is not None:
            self.bound_center, self.bound_radius = bounding_sphere(self.positions)
            if versions.fo76_or_later(s.context.bs_version):
                self.bound_min_max = box_centre_and_extents(self.positions)
            self.bounds_dirty = False

    def _data_size(self):
        if self.vertex_data is None:
            return 0
        return vf.stride_of(self.vertex_desc) * len(self.vertex_data) + 6 * len(self.triangles)

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if not s.reading:
            self._update_dependent(s)
        self.bound_center = s.vec3(self.bound_center)
        self.bound_radius = s.f32(self.bound_radius)
        if versions.fo76_or_later(bs):
            self.bound_min_max = s.floats(self.bound_min_max, 6)
        self.skin = s.ref(self.skin)
        self.shader_property = s.ref(self.shader_property)
        self.alpha_property = s.ref(self.alpha_property)
        self.vertex_desc = s.u64(self.vertex_desc)
        self.num_triangles = s.u32(self.num_triangles) if versions.fo4_or_later(bs) else s.u16(self.num_triangles)
        self.num_vertices = s.u16(self.num_vertices)
        at = s.pos
        data_size = s.u32(self._data_size())
        if s.reading:
            self.full_precision = vf.full_precision(self.vertex_desc, bs)
        if data_size:
            dtype = vf.vertex_dtype(self.vertex_desc, self.full_precision, s.big_endian)
            expected = dtype.itemsize * self.num_vertices + 6 * self.num_triangles
            if data_size != expected:
                raise s.error(
                    f"data size {data_size} disagrees with {self.num_vertices} vertices of "
                    f"{dtype.itemsize} bytes and {self.num_triangles} triangles ({expected})",
                    at,
                )
            self.vertex_data = s.array(self.vertex_data, dtype, self.num_vertices)
            self.triangles = s.array(self.triangles, triangle_dtype(s), self.num_triangles)
            if s.reading:
                check_triangles(self.triangles, self.num_vertices, s)
        if versions.sse(bs):
            self._sync_particles(s)

    def _sync_particles(self, s):
        has = self.particle_vertices is not None
        size = s.u32(self.num_vertices * 6 + self.num_triangles * 3 if has else 0)
        if size:
            half3 = np.dtype((s.dtype("f2"), (3,)))
            self.particle_vertices = s.array(self.particle_vertices, half3, self.num_vertices)
            self.particle_normals = s.array(self.particle_normals, half3, self.num_vertices)
            self.particle_triangles = s.array(self.particle_triangles, triangle_dtype(s), self.num_triangles)


@block_class("BSMeshLODTriShape")
class BSMeshLODTriShape(BSTriShape):
    lod_sizes = (0, 0, 0)

    def sync(self, s):
        super().sync(s)
        self.lod_sizes = tuple(s.u32(v) for v in self.lod_sizes)


class SubSegmentDtype:
    """BSGeometrySubSegment: start index, num primitives, parent array index, unused."""

    @staticmethod
    def of(s):
        return np.dtype((s.dtype("u4"), (4,)))


class Segment:
    """BSGeometrySegmentData."""

    flags = 0
    start_index = 0
    num_primitives = 0
    parent_array_index = 0
    sub_segments = ()

    def sync(self, s):
        bs = s.context.bs_version
        if versions.before_fo4(bs):
            self.flags = s.u8(self.flags)
        self.start_index = s.u32(self.start_index)
        self.num_primitives = s.u32(self.num_primitives)
        if versions.fo4_or_later(bs):
            self.parent_array_index = s.u32(self.parent_array_index)
            n = s.count(len(self.sub_segments), item_size=16, what="sub segments")
            self.sub_segments = s.array(self.sub_segments, SubSegmentDtype.of(s), n)


class PerSegmentData:
    """BSGeometryPerSegmentSharedData."""

    user_index = 0
    bone_id = 0xFFFFFFFF
    cut_offsets = ()

    def sync(self, s):
        self.user_index = s.u32(self.user_index)
        self.bone_id = s.u32(self.bone_id)
        self.cut_offsets = s.counted_array(self.cut_offsets, "f4", what="cut offsets")


class SegmentSharedData:
    """BSGeometrySegmentSharedData: the .ssf file and per-segment body part data."""

    num_segments = 0
    segment_starts = ()
    per_segment = ()
    ssf_file = ""

    def sync(self, s):
        self.num_segments = s.u32(self.num_segments)
        total = s.count(len(self.per_segment), item_size=12, what="segment data")
        self.segment_starts = s.array(self.segment_starts, "u4", self.num_segments)
        self.per_segment = s.items(self.per_segment, PerSegmentData, total, min_size=12)
        self.ssf_file = s.sized_string16(self.ssf_file)


@block_class("BSSubIndexTriShape")
class BSSubIndexTriShape(BSTriShape):
    segments = ()
    total_segments = 0
    shared_data = None

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if versions.fo4_or_later(bs):
            if self.vertex_data is None:
                return
            s.u32(len(self.triangles))  # num primitives: always the triangle count
            n = s.count(len(self.segments), item_size=16, what="segments")
            self.total_segments = s.u32(self.total_segments)
            self.segments = s.items(self.segments, Segment, n, min_size=16)
            if n < self.total_segments:
                self.shared_data = s.items([self.shared_data] if self.shared_data else [], SegmentSharedData, 1)[0]
        else:
            n = s.count(len(self.segments), item_size=9, what="segments")
            self.segments = s.items(self.segments, Segment, n, min_size=9)


@block_class("BSDynamicTriShape")
class BSDynamicTriShape(BSTriShape):
    """Skyrim SE: a second, float4 vertex buffer the game updates (facegen, morphs)."""

    dynamic_vertices = None

    def sync(self, s):
        super().sync(s)
        n = 0 if self.dynamic_vertices is None else len(self.dynamic_vertices)
        size = s.u32(n * 16)
        if s.reading and size % 16:
            raise s.error(f"dynamic data size {size} is not a multiple of 16", s.pos - 4)
        self.dynamic_vertices = s.array(self.dynamic_vertices, np.dtype((s.dtype("f4"), (4,))), size // 16)
