"""hknpCompressedMeshShape and hknpCompressedMeshShapeData: triangle meshes in quantised sections.

Shape (0xA0): composite shape header (0x60), data pointer, then two hkBitFields (hkArray<u32>
words + i32 bit count + 4 bytes): quad-is-flat, one bit per primitive at (section << 7 | index),
and triangle-is-interior, one bit per primitive key; 8 bytes.

Data (0xD0): hkReferencedObject; the section tree (hkcdStaticTree, 5-byte nodes); the domain
box (two vec4); u32 primitive key count, bits per key, largest key, 4 bytes; hkArrays of
sections (0x60), primitives (4 x u8 vertex indices), shared vertex indices (u16), packed
vertices (u32: 11/11/10 bits in the section's box), shared vertices (u64: 21/21/22 bits in the
domain), data runs (u16 value, u8 first primitive, u8 count); 8 bytes, the SIMD tree's node
array (0x70 nodes), 8 bytes.

Section (0x60): its primitive tree (hkArray of 4-byte nodes), its AABB, the packed vertex base
and scale (6 f32), first packed vertex, (first shared index << 8) | packed count, (first
primitive << 8) | count, (first data run << 8) | count, u8 packed vertex count, u8 shared index
count, u16 leaf index in the section tree, page, flags, layer data, one unused byte.

A primitive (a, b, c, d) is the triangle (a, b, c) when c == d, else the quad (a, b, c) +
(a, c, d). Vertex index i < packed count: packed[first packed + i]; otherwise
shared[shared index[first shared + i - packed count]]. A primitive key is
(section << 8) | (primitive << 1) | second triangle of a quad.
"""

import numpy as np

from ...errors import FormatError
from ..objects import HavokObject, havok_class
from .base import GAME_UNITS, CompositeShape

VEC4 = np.dtype(("<f4", (4,)))
TREE5 = np.dtype(("u1", (5,)))
TREE4 = np.dtype(("u1", (4,)))
PRIMITIVE = np.dtype(("u1", (4,)))
DATA_RUN = np.dtype([("value", "<u2"), ("first", "u1"), ("count", "u1")])
SIMD_NODE = np.dtype([("bounds", "<f4", (6, 4)), ("data", "<u4", 4)])
WORD = np.dtype("<u4")
PACKED_MAX = np.array([0x7FF, 0x7FF, 0x3FF], np.float64)
SHARED_MAX = np.array([(1 << 21) - 1, (1 << 21) - 1, (1 << 22) - 1], np.float64)


class Section:
    size = 0x60

    def __init__(self):
        self.nodes = np.zeros(0, TREE4)
        self.aabb = np.zeros((2, 4), np.float32)
        self.base = (0.0, 0.0, 0.0)
        self.scale = (0.0, 0.0, 0.0)
        self.first_packed = 0
        self.shared = 0  # (first shared index << 8) | packed vertex count
        self.primitives = 0  # (first primitive << 8) | count
        self.data_runs = 0  # (first data run << 8) | count
        self.num_packed = 0
        self.num_shared = 0
        self.leaf_index = 0
        self.page = 0
        self.flags = 0
        self.layer_data = 0
        self.unused = 0

    def sync(self, s):
        self.nodes = s.hk_array(self.nodes, TREE4, what="section tree")
        self.aabb = s.array(self.aabb, VEC4, 2)
        self.base = s.vec3(self.base)
        self.scale = s.vec3(self.scale)
        self.first_packed = s.u32(self.first_packed)
        self.shared = s.u32(self.shared)
        self.primitives = s.u32(self.primitives)
        self.data_runs = s.u32(self.data_runs)
        self.num_packed = s.u8(self.num_packed)
        self.num_shared = s.u8(self.num_shared)
        self.leaf_index = s.u16(self.leaf_index)
        self.page = s.u8(self.page)
        self.flags = s.u8(self.flags)
        self.layer_data = s.u8(self.layer_data)
        self.unused = s.u8(self.unused)


@havok_class("hknpCompressedMeshShapeData")
class CompressedMeshShapeData(HavokObject):
    def __init__(self):
        self.reference = bytes(16)
        self.tree = np.zeros(0, TREE5)
        self.domain = np.zeros((2, 4), np.float32)
        self.num_primitive_keys = 0
        self.bits_per_key = 0
        self.max_key_value = 0
        self.key_padding = bytes(4)
        self.sections = []
        self.primitives = np.zeros(0, PRIMITIVE)
        self.shared_indices = np.zeros(0, "<u2")
        self.packed_vertices = np.zeros(0, WORD)
        self.shared_vertices = np.zeros(0, "<u8")
        self.data_runs = np.zeros(0, DATA_RUN)
        self.simd_head = bytes(8)
        self.simd_nodes = np.zeros(0, SIMD_NODE)
        self.simd_tail = bytes(8)

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.tree = s.hk_array(self.tree, TREE5, what="section tree")
        self.domain = s.array(self.domain, VEC4, 2)
        self.num_primitive_keys = s.u32(self.num_primitive_keys)
        self.bits_per_key = s.u32(self.bits_per_key)
        self.max_key_value = s.u32(self.max_key_value)
        self.key_padding = s.raw(self.key_padding, 4)
        self.sections = s.hk_array(self.sections, Section, what="sections")
        self.primitives = s.hk_array(self.primitives, PRIMITIVE, what="primitives")
        self.shared_indices = s.hk_array(self.shared_indices, np.dtype("<u2"), what="shared vertex indices")
        self.packed_vertices = s.hk_array(self.packed_vertices, WORD, what="packed vertices")
        self.shared_vertices = s.hk_array(self.shared_vertices, np.dtype("<u8"), what="shared vertices")
        self.data_runs = s.hk_array(self.data_runs, DATA_RUN, what="data runs")
        self.simd_head = s.raw(self.simd_head, 8)
        self.simd_nodes = s.hk_array(self.simd_nodes, SIMD_NODE, what="SIMD tree")
        self.simd_tail = s.raw(self.simd_tail, 8)
        if s.reading:
            try:
                self.decode()
            except FormatError as error:
                raise s.error(f"compressed mesh data: {error.message}", 0) from None

    # -- decoding ----------------------------------------------------------------------------
    def section_table(self):
        """The sections' fields as arrays (one row per section)."""
        sections = self.sections
        table = {
            "base": np.array([section.base for section in sections], np.float64).reshape(-1, 3),
            "scale": np.array([section.scale for section in sections], np.float64).reshape(-1, 3),
        }
        for name in ("first_packed", "shared", "primitives", "data_runs", "num_packed", "num_shared", "flags"):
            table[name] = np.array([getattr(section, name) for section in sections], np.int64)
        return table

    def decode(self):
        """(vertices (n, 3) in Havok units, triangles (m, 3), per triangle: data run value,
        section and primitive key). Packed vertices come first, one run per section, then the
        shared vertices. Primitives that are not triangles (two or more equal corners) are left
        out; every lookup is checked."""
        table = self.section_table()
        count = len(self.sections)
        dmin = self.domain[0, :3].astype(np.float64)
        dmax = self.domain[1, :3].astype(np.float64)

        # packed vertices, decoded with their section's base and scale
        num_packed = table["num_packed"]
        owner = np.repeat(np.arange(count), num_packed)
        packed_start = np.cumsum(num_packed) - num_packed  # of each section's run in ``vertices``
        packed_index = table["first_packed"][owner] + np.arange(num_packed.sum()) - packed_start[owner]
        if len(packed_index) and packed_index.max() >= len(self.packed_vertices):
            raise FormatError(f"a section's packed vertices run past the {len(self.packed_vertices)} stored")
        words = self.packed_vertices[packed_index].astype(np.int64)
        quantised = np.stack([words & 0x7FF, (words >> 11) & 0x7FF, (words >> 22) & 0x3FF], axis=1)
        packed = table["base"][owner] + quantised * table["scale"][owner]

        words = self.shared_vertices.astype(np.uint64)
        quantised = np.stack(
            [words & 0x1FFFFF, (words >> np.uint64(21)) & 0x1FFFFF, words >> np.uint64(42)], axis=1
        ).astype(np.float64)
        shared = dmin + quantised / SHARED_MAX * (dmax - dmin)
        vertices = np.concatenate([packed, shared])

        # primitives of each section
        first = table["primitives"] >> 8
        per_section = table["primitives"] & 0xFF
        section_of = np.repeat(np.arange(count), per_section)
        start = np.cumsum(per_section) - per_section
        local = np.arange(per_section.sum()) - start[section_of]
        primitive_index = first[section_of] + local
        if len(primitive_index) and primitive_index.max() >= len(self.primitives):
            raise FormatError(f"a section's primitives run past the {len(self.primitives)} stored")
        corners = self.primitives[primitive_index].astype(np.int64)

        # (a, b, b, b) and other primitives with fewer than three distinct corners are not
        # triangles: their indices need not name real vertices, so they are dropped unread
        ordered = np.sort(corners, axis=1)
        distinct = 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)
        keep = distinct >= 3
        section_of, local, corners = section_of[keep], local[keep], corners[keep]

        packed_count = num_packed[section_of][:, None]
        is_packed = corners < packed_count
        shared_slot = (table["shared"][section_of] >> 8)[:, None] + corners - packed_count
        if not (corners < packed_count + table["num_shared"][section_of][:, None]).all():
            raise FormatError("a primitive names a vertex its section does not hold")
        if (~is_packed).any() and shared_slot[~is_packed].max() >= len(self.shared_indices):
            raise FormatError(f"a section's shared vertex indices run past the {len(self.shared_indices)} stored")
        shared_index = np.zeros_like(corners)
        shared_index[~is_packed] = self.shared_indices[shared_slot[~is_packed]]
        if (shared_index[~is_packed] >= len(shared)).any():
            raise FormatError(f"a shared vertex index reaches past the {len(shared)} shared vertices")
        global_index = np.where(is_packed, packed_start[section_of][:, None] + corners, len(packed) + shared_index)

        values = self._run_values(table, start)[start[section_of] + local]
        keys = (section_of << 8) | (local << 1)
        quad = corners[:, 2] != corners[:, 3]
        triangles = np.concatenate([global_index[:, [0, 1, 2]], global_index[quad][:, [0, 2, 3]]])
        run_value = np.concatenate([values, values[quad]])
        sections = np.concatenate([section_of, section_of[quad]])
        keys = np.concatenate([keys, keys[quad] | 1])
        proper = (
            (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])
        )
        order = np.argsort(keys[proper], kind="stable")
        return vertices, triangles[proper][order], run_value[proper][order], sections[proper][order], keys[proper][order]

    def _run_values(self, table, section_start):
        """The data run value of each primitive (0 where no run covers it)."""
        values = np.zeros(int((table["primitives"] & 0xFF).sum()), np.int64)
        first_run = table["data_runs"] >> 8
        run_count = table["data_runs"] & 0xFF
        if len(run_count) and (first_run + run_count).max() > len(self.data_runs):
            raise FormatError(f"a section's data runs run past the {len(self.data_runs)} stored")
        section = np.repeat(np.arange(len(run_count)), run_count)
        runs = self.data_runs[first_run[section] + np.arange(len(section)) - (np.cumsum(run_count) - run_count)[section]]
        first = runs["first"].astype(np.int64)
        length = np.clip(np.minimum(runs["count"], (table["primitives"][section] & 0xFF) - first), 0, None)
        begin = np.repeat(section_start[section] + first, length)
        values[begin + np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length)] = np.repeat(
            runs["value"], length
        )
        return values


@havok_class("hknpCompressedMeshShape")
class CompressedMeshShape(CompositeShape):
    flags = 0x0204
    MEMORY_SIZE = 0x90  # what a compound instance records as this shape's size

    def __init__(self):
        super().__init__()
        self.data = None
        self.quad_is_flat = np.zeros(0, WORD)
        self.quad_bits = 0
        self.quad_padding = bytes(4)
        self.triangle_is_interior = np.zeros(0, WORD)
        self.triangle_bits = 0
        self.triangle_padding = bytes(4)
        self.tail = bytes(8)

    def sync(self, s):
        self.sync_composite(s)
        self.data = s.pointer(self.data)
        self.quad_is_flat = s.hk_array(self.quad_is_flat, WORD, what="quad-is-flat bits")
        self.quad_bits = s.i32(self.quad_bits)
        self.quad_padding = s.raw(self.quad_padding, 4)
        self.triangle_is_interior = s.hk_array(self.triangle_is_interior, WORD, what="triangle-is-interior bits")
        self.triangle_bits = s.i32(self.triangle_bits)
        self.triangle_padding = s.raw(self.triangle_padding, 4)
        self.tail = s.raw(self.tail, 8)

    def mesh(self):
        """(vertices (n, 3) in game units, triangles (m, 3))."""
        if not isinstance(self.data, CompressedMeshShapeData):
            return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
        vertices, triangles = self.data.decode()[:2]
        return vertices * GAME_UNITS, triangles

    def summary(self, within=()):
        if not isinstance(self.data, CompressedMeshShapeData):
            return {"type": "compressed_mesh", "data": getattr(self.data, "class_name", None)}
        vertices, triangles = self.mesh()
        return {
            "type": "compressed_mesh",
            "vertices": int(len(np.unique(triangles))),
            "triangles": len(triangles),
            "sections": len(self.data.sections),
        }
