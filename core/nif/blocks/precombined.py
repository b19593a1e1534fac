"""Fallout 4 precombined geometry (FORMAT-NOTES section 5, seed 000).

Two block types share one record structure:

- BSPackedCombinedGeomDataExtra ("baked"): records with inline geometry, no objects array.
- BSPackedCombinedSharedGeomDataExtra ("shared"): an objects array (filename hash of the .csg,
  data offset in its geometry space), then records that either end at their vertex desc
  (vanilla: "external", geometry in the .csg) or carry inline geometry as seed 000 reads
  them ("inline", written by nifly-based tools). The layouts are told apart by the block's
  declared size.
"""

import numpy as np

from ...errors import FormatError
from .. import vertex_format as vf
from ..block import block_class
from ..packed_vertices import PackedVertices
from .extra_data import NiExtraData
from .tri_shape import triangle_dtype

INLINE, EXTERNAL, BAKED = "inline", "external", "baked"
RECORD_HEADER_SIZE = 36 + 8  # counts + LOD pairs + num combined, then the vertex desc
INSTANCE_SIZE = 72


def instance_dtype(s):
    """BSPackedGeomDataCombined: rotation rows come BEFORE translation here."""
    f4 = s.dtype("f4")
    return np.dtype(
        [
            ("grayscale_scale", f4),
            ("rotation", f4, (3, 3)),
            ("translation", f4, 3),
            ("scale", f4),
            ("bound_center", f4, 3),
            ("bound_radius", f4),
        ]
    )


def instance_matrices(instances):
    """4x4 world matrices, world = T + R * s * v, for an instance array."""
    count = len(instances)
    matrices = np.zeros((count, 4, 4), np.float64)
    matrices[:, :3, :3] = instances["rotation"] * instances["scale"][:, None, None]
    matrices[:, :3, 3] = instances["translation"]
    matrices[:, 3, 3] = 1.0
    return matrices


class PackedGeomRecord(PackedVertices):
    """One source mesh: its LOD triangle ranges, its placed instances and, in the inline and
    baked layouts, its vertices and triangles (LOD0, LOD1 and LOD2 one after the other)."""

    num_vertices = 0
    lod_levels = 3
    lod_counts = (0, 0, 0)
    lod_offsets = (0, 0, 0)  # in index units (3 per triangle)
    instances = ()
    triangles = None
    full_precision = False

    def __init__(self, inline):
        self.inline = inline

    def lod_triangles(self, lod):
        """The triangles of LOD 0, 1 or 2 (alternative triangulations of the same vertices)."""
        start = self.lod_offsets[lod] // 3
        return self.triangles[start : start + self.lod_counts[lod]]

    def nearest_lod(self, lod):
        """``lod`` when it has triangles, else the nearest LOD that has (the more detailed of two
        as near); ``lod`` when none has. Creation Kit records often fill LOD 0 only, some LOD 1 only."""
        order = sorted(range(3), key=lambda k: (abs(k - lod), k))
        return next((k for k in order if self.lod_counts[k]), lod)

    def geometry_size(self):
        return vf.stride_of(self.vertex_desc) * self.num_vertices + 6 * sum(self.lod_counts)

    def _update_dependent(self):
        if self.vertex_data is not None:
            self.num_vertices = len(self.vertex_data)
        if self.triangles is not None and len(self.triangles) != sum(self.lod_counts):
            raise FormatError(f"{len(self.triangles)} triangles where the LOD counts add up to {sum(self.lod_counts)}")

    def sync(self, s):
        if not s.reading:
            self._update_dependent()
        self.num_vertices = s.u32(self.num_vertices)
        self.lod_levels = s.u32(self.lod_levels)
        counts, offsets = [], []
        for lod in range(3):
            counts.append(s.u32(self.lod_counts[lod]))
            offsets.append(s.u32(self.lod_offsets[lod]))
        self.lod_counts, self.lod_offsets = tuple(counts), tuple(offsets)
        n = s.count(len(self.instances), item_size=INSTANCE_SIZE, what="instances")
        self.instances = s.array(self.instances, instance_dtype(s), n)
        self.vertex_desc = s.u64(self.vertex_desc)
        if s.reading:
            self.full_precision = vf.full_precision(self.vertex_desc, s.context.bs_version)
            self._check_lods(s)
        if self.inline:
            dtype = vf.vertex_dtype(self.vertex_desc, self.full_precision, s.big_endian)
            if dtype.itemsize == 0 and self.num_vertices:
                raise s.error(f"vertex desc 0x{self.vertex_desc:016X} has a stride of 0")
            self.vertex_data = s.array(self.vertex_data, dtype, self.num_vertices)
            self.triangles = s.array(self.triangles, triangle_dtype(s), sum(self.lod_counts))
            if s.reading and len(self.triangles) and int(self.triangles.max()) >= self.num_vertices:
                raise s.error(f"a triangle uses vertex {int(self.triangles.max())} of only {self.num_vertices}")

    def _check_lods(self, s):
        total = sum(self.lod_counts)
        for lod, (count, offset) in enumerate(zip(self.lod_counts, self.lod_offsets)):
            if offset % 3 or offset // 3 + count > total:
                raise s.error(f"LOD{lod} (offset {offset}, {count} triangles) lies outside the {total} triangles")


class _Layout(Exception):
    """This layout does not describe the block's bytes (internal to layout detection)."""


@block_class("BSPackedCombinedSharedGeomDataExtra", "BSPackedCombinedGeomDataExtra")
class BSPackedCombinedGeomDataExtra(NiExtraData):
    vertex_desc = 0
    num_vertices = 0
    num_triangles = 0
    unknown_flags_1 = 0
    unknown_flags_2 = 0
    objects = ()  # shared only: (filename_hash, data_offset) per record
    records = ()
    layout = INLINE

    @property
    def shared(self):
        return self.type_name == "BSPackedCombinedSharedGeomDataExtra"

    def sync(self, s):
        super().sync(s)
        self.vertex_desc = s.u64(self.vertex_desc)
        self.num_vertices = s.u32(self.num_vertices)
        self.num_triangles = s.u32(self.num_triangles)
        self.unknown_flags_1 = s.u32(self.unknown_flags_1)
        self.unknown_flags_2 = s.u32(self.unknown_flags_2)
        record_size = RECORD_HEADER_SIZE + (8 if self.shared else 0)
        n = s.count(len(self.records), item_size=record_size, what="records")
        if self.shared:
            dtype = np.dtype([("filename_hash", s.dtype("u4")), ("data_offset", s.dtype("u4"))])
            self.objects = s.array(self.objects, dtype, n)
        if not self.shared:
            self.layout = BAKED
        elif s.reading:
            self.layout = self._detect_layout(s, n)
        inline = self.layout != EXTERNAL
        self.records = s.items(self.records, lambda: PackedGeomRecord(inline), n, min_size=RECORD_HEADER_SIZE)

    @staticmethod
    def _detect_layout(s, count):
        """External when the record headers alone fill the block exactly, else inline."""
        start = s.pos
        try:
            for _ in range(count):
                s.pos += 32  # counts and LOD pairs, up to the instance count
                instances = s.u32()
                s.pos += INSTANCE_SIZE * instances + 8
                if s.pos > len(s.data):
                    raise _Layout
            if s.pos != len(s.data):
                raise _Layout
            return EXTERNAL
        except (_Layout, FormatError):
            return INLINE
        finally:
            s.pos = start


def cell_totals(nif):
    """(records, placed instances) of a cell's precombined blocks: what an export reports."""
    records = [r for b in nif.blocks if isinstance(b, BSPackedCombinedGeomDataExtra) for r in b.records]
    return len(records), sum(len(r.instances) for r in records)
