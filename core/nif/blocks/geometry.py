"""Fallout 3 / New Vegas and Skyrim LE geometry: NiTriShape, NiTriStrips, the LOD and segmented
shapes built on them (BSLODTriShape, BSSegmentedTriShape), and their data blocks."""

import numpy as np

from ...errors import FormatError
from .. import versions
from ..block import Block, block_class
from ..packed_vertices import bounding_sphere
from .objects import NiAVObject
from .tri_shape import check_triangles, triangle_dtype

HAS_TANGENTS = 0x1000


@block_class("NiTriShape", "NiTriStrips")
class NiTriBasedGeom(NiAVObject):
    data = -1
    skin_instance = -1
    material_names = ()
    material_extra_data = ()
    active_material = -1
    material_needs_update = 0
    shader_property = -1
    alpha_property = -1

    @property
    def skinned(self):
        return self.skin_instance != -1

    def sync(self, s):
        super().sync(s)
        self.data = s.ref(self.data)
        self.skin_instance = s.ref(self.skin_instance)
        n = s.count(len(self.material_names), item_size=8, what="materials")
        self.material_names = s.repeat(self.material_names, n, s.string)
        self.material_extra_data = s.array(self.material_extra_data, "i4", n)
        self.active_material = s.i32(self.active_material)
        self.material_needs_update = s.bool8(self.material_needs_update)
        if versions.after_fo3(s.context.bs_version):
            self.shader_property = s.ref(self.shader_property)
            self.alpha_property = s.ref(self.alpha_property)


@block_class("BSLODTriShape", fallback_raw=True)
class BSLODTriShape(NiTriBasedGeom):
    """Skyrim: a NiTriShape whose triangles are three consecutive groups the game shows or hides
    by distance; ``lod_sizes``: the triangles in each group, in order."""

    lod_sizes = (0, 0, 0)

    def sync(self, s):
        super().sync(s)
        self.lod_sizes = tuple(s.u32(size) for size in self.lod_sizes)


def segment_dtype(s):
    """BSGeometrySegmentData before FO4: flags, first index (3 per triangle), triangle count."""
    return np.dtype([("flags", "u1"), ("start_index", s.dtype("u4")), ("num_triangles", s.dtype("u4"))])


@block_class("BSSegmentedTriShape", fallback_raw=True)
class BSSegmentedTriShape(NiTriBasedGeom):
    """FO3 / New Vegas landscape LOD: a NiTriShape whose triangles are split into segments (a
    square grid of them, each a consecutive run the game culls on its own)."""

    segments = np.zeros(0, [("flags", "u1"), ("start_index", "<u4"), ("num_triangles", "<u4")])

    def sync(self, s):
        super().sync(s)
        if versions.fo4_or_later(s.context.bs_version):
            raise s.error("its Fallout 4 segment layout is not decoded")
        self.segments = s.counted_array(self.segments, segment_dtype(s), what="segments")


def _vec3_array(s, value, n):
    return s.array(value, np.dtype((s.dtype("f4"), (3,))), n)


class NiTriBasedGeomData(Block):
    """NiGeometryData + triangle count. Arrays are float32 (n, 3) / (n, 4) / (n, 2); an absent
    array is None. Setting ``vertices`` marks the bounding sphere for recomputation."""

    group_id = 0
    keep_flags = 0
    compress_flags = 0
    vertices = None
    bs_data_flags = 0
    material_crc = 0
    normals = None
    tangents = None
    bitangents = None
    bound_center = (0.0, 0.0, 0.0)
    bound_radius = 0.0
    vertex_colors = None
    uv_sets = ()
    consistency_flags = 0
    additional_data = -1
    num_vertices = 0
    bounds_dirty = False
    # Xbox 360: (has vertices, has normals, has colours) as stored while the per-vertex arrays
    # live in the BSPackedAdditionalGeometryData the additional data points at; None on PC.
    packed_flags = None

    PACKED_TYPE = "BSPackedAdditionalGeometryData"

    def __setattr__(self, name, value):
        if name == "vertices" and value is not None and getattr(self, "vertices", None) is not value:
            object.__setattr__(self, "bounds_dirty", True)
        object.__setattr__(self, name, value)

    def _update_dependent(self, s):
        if self.packed_flags is not None:  # the flags describe the packed arrays: keep them
            return
        arrays = [a for a in (self.vertices, self.normals, self.vertex_colors, *self.uv_sets) if a is not None]
        counts = {len(a) for a in arrays}
        if len(counts) > 1:
            raise FormatError(f"vertex arrays of different lengths {sorted(counts)}")
        if counts:
            self.num_vertices = counts.pop()
        if self.num_vertices > 0xFFFF:
            raise FormatError(f"{self.num_vertices} vertices: a NiGeometryData holds at most 65535")
        if len(self.uv_sets) > 1:
            raise FormatError("Bethesda geometry data holds at most one UV set")
        self.bs_data_flags = (self.bs_data_flags & ~1) | len(self.uv_sets)
        if (self.tangents is None) != (self.bitangents is None):
            raise FormatError("tangents and bitangents go together")
        # Tangents are stored only after normals: without normals the bit says nothing and is
        # written back as read (BodySlide leaves it set on shapes it strips the normals from).
        if self.normals is not None:
            if self.tangents is not None:
                self.bs_data_flags |= HAS_TANGENTS
            else:
                self.bs_data_flags &= ~HAS_TANGENTS
        elif self.tangents is not None:
            raise FormatError("tangents are stored only with normals")
        if self.bounds_dirty and self.vertices is not None:
            self.bound_center, self.bound_radius = bounding_sphere(self.vertices)
            object.__setattr__(self, "bounds_dirty", False)

    def sync(self, s):
        if not s.reading:
            self._update_dependent(s)
        self.group_id = s.i32(self.group_id)
        n = self.num_vertices = s.u16(self.num_vertices)
        self.keep_flags = s.u8(self.keep_flags)
        self.compress_flags = s.u8(self.compress_flags)
        if s.reading:
            self.packed_flags = (0, 0, 0) if self._arrays_packed(s, n) else None
        packed = self.packed_flags is not None
        flags = self.packed_flags or (0, 0, 0)
        has_vertices = s.bool8(flags[0] if packed else self.vertices is not None)
        if has_vertices and not packed:
            self.vertices = _vec3_array(s, self.vertices, n)
        self.bs_data_flags = s.u16(self.bs_data_flags)
        if versions.after_fo3(s.context.bs_version):
            self.material_crc = s.u32(self.material_crc)
        has_normals = s.bool8(flags[1] if packed else self.normals is not None)
        if has_normals and not packed:
            self.normals = _vec3_array(s, self.normals, n)
            if self.bs_data_flags & HAS_TANGENTS:
                self.tangents = _vec3_array(s, self.tangents, n)
                self.bitangents = _vec3_array(s, self.bitangents, n)
        self.bound_center = s.vec3(self.bound_center)
        self.bound_radius = s.f32(self.bound_radius)
        has_colors = s.bool8(flags[2] if packed else self.vertex_colors is not None)
        if has_colors and not packed:
            self.vertex_colors = s.array(self.vertex_colors, np.dtype((s.dtype("f4"), (4,))), n)
        if packed:
            self.packed_flags = (has_vertices, has_normals, has_colors)
        else:
            uv = np.dtype((s.dtype("f4"), (2,)))
            self.uv_sets = s.repeat(self.uv_sets, self.bs_data_flags & 1, lambda v: s.array(v, uv, n))
        self.consistency_flags = s.u16(self.consistency_flags)
        self.additional_data = s.ref(self.additional_data)
        if s.reading:
            object.__setattr__(self, "bounds_dirty", False)

    def _arrays_packed(self, s, n):
        """Xbox 360 files keep the has-vertices/normals flags while the arrays are absent and the
        additional data ref names a BSPackedAdditionalGeometryData. Where that ref would be without
        the arrays is fixed, so look there; inline vertex data naming such a block is not credible."""
        header = s.context
        if n == 0 or self.PACKED_TYPE not in header.block_types:
            return False
        # has vertices, flags, [material CRC], has normals, bound sphere, has colours, consistency
        at = s.pos + 1 + 2 + (4 if versions.after_fo3(header.bs_version) else 0) + 1 + 16 + 1 + 2
        if at + 4 > len(s.data):
            return False
        (ref,) = s.structs.i32.unpack_from(s.data, at)
        if not 0 <= ref < len(header.block_type_indices):
            return False
        slot = int(header.block_type_indices[ref]) & 0x7FFF
        return slot < len(header.block_types) and header.block_types[slot] == self.PACKED_TYPE

    def set_arrays(self, vertices=None, normals=None, tangents=None, bitangents=None, vertex_colors=None, uv_sets=()):
        """Inline arrays in place of packed ones, keeping the stored bounding sphere."""
        self.packed_flags = None
        self.vertices, self.normals, self.vertex_colors, self.uv_sets = vertices, normals, vertex_colors, list(uv_sets)
        self.tangents, self.bitangents = tangents, bitangents
        object.__setattr__(self, "bounds_dirty", False)


@block_class("NiTriShapeData")
class NiTriShapeData(NiTriBasedGeomData):
    triangles = None
    match_groups = ()
    # Counts stored beside absent triangles (Xbox 360 skinned shapes keep theirs in the partitions).
    stored_counts = (0, 0)

    def sync(self, s):
        if not s.reading and self.triangles is not None:
            check_triangles(self.triangles, len(self.vertices) if self.vertices is not None else self.num_vertices)
        super().sync(s)
        counts = self.stored_counts if self.triangles is None else (len(self.triangles), 3 * len(self.triangles))
        count = s.u16(counts[0])
        self.stored_counts = (count, s.u32(counts[1]))  # num triangle points
        if s.bool8(self.triangles is not None):
            self.triangles = s.array(self.triangles, triangle_dtype(s), count)
            if s.reading and self.vertices is not None:
                check_triangles(self.triangles, self.num_vertices, s)
        n = s.count(len(self.match_groups), kind="u16", item_size=2, what="match groups")
        self.match_groups = s.repeat(
            self.match_groups, n, lambda group: s.counted_array(() if group is None else group, "u2", kind="u16")
        )

    @property
    def triangle_count(self):
        return self.stored_counts[0] if self.triangles is None else len(self.triangles)


@block_class("NiTriStripsData")
class NiTriStripsData(NiTriBasedGeomData):
    strips = ()
    has_points = 1

    def sync(self, s):
        super().sync(s)
        s.u16(sum(max(len(strip) - 2, 0) for strip in self.strips))  # num triangles
        n = s.count(len(self.strips), kind="u16", item_size=2, what="strips")
        lengths = [int(v) for v in s.array([len(strip) for strip in self.strips], "u2", n)]
        self.has_points = s.bool8(self.has_points)
        if self.has_points:
            if s.reading:
                s.need(2 * sum(lengths), "strip points")
                s.charge(n)
            self.strips = [s.array(strip, "u2", length) for strip, length in zip(self.strips if not s.reading else lengths, lengths)]
            top = max((int(strip.max()) for strip in self.strips if len(strip)), default=-1)
            if top >= self.num_vertices:  # a damaged file must not reach a consumer
                message = f"a strip uses vertex {top} of only {self.num_vertices}"
                raise s.error(message) if s.reading else FormatError(message)

    @property
    def triangles(self):
        """The strips as triangles: alternating winding, degenerate triangles dropped."""
        return strips_to_triangles(self.strips)

    @property
    def triangle_count(self):
        return len(self.triangles)


def strips_to_triangles(strips):
    parts = []
    for strip in strips:
        strip = np.asarray(strip, np.int64)
        if len(strip) < 3:
            continue
        a, b, c = strip[:-2], strip[1:-1], strip[2:]
        odd = np.arange(len(a)) % 2 == 1
        tris = np.stack([np.where(odd, b, a), np.where(odd, a, b), c], axis=1)
        keep = (a != b) & (b != c) & (a != c)
        parts.append(tris[keep])
    if not parts:
        return np.zeros((0, 3), np.uint16)
    return np.concatenate(parts).astype(np.uint16)
