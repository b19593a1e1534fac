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
from ..classes.properties import BS_MATERIAL_KEY, BSMaterialProperties, RefCountedProperties
from ..objects import HavokObject, havok_class
from .base import GAME_UNITS, CompositeShape, proper_triangles, spans

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
        section and primitive key), in key order. The packed vertices of each section come
        first, then the shared vertices. Primitives that are not triangles (fewer than three
        distinct corners) are left out; every lookup is checked."""
        table = self.section_table()
        packed, packed_start = self._packed_vertices(table)
        dmin = self.domain[0, :3].astype(np.float64)
        dmax = self.domain[1, :3].astype(np.float64)
        words = self.shared_vertices.astype(np.uint64)
        fields = [words & 0x1FFFFF, (words >> np.uint64(21)) & 0x1FFFFF, words >> np.uint64(42)]
        shared = dmin + np.stack(fields, axis=1).astype(np.float64) / SHARED_MAX * (dmax - dmin)

        primitive_index, section_of = spans(table["primitives"] >> 8, table["primitives"] & 0xFF)
        if len(primitive_index) and primitive_index.max() >= len(self.primitives):
            raise FormatError(f"a section's primitives run past the {len(self.primitives)} stored")
        section_start = np.cumsum(table["primitives"] & 0xFF) - (table["primitives"] & 0xFF)
        local = np.arange(len(section_of)) - section_start[section_of]
        values = self._run_values(table, section_start)
        corners = self.primitives[primitive_index].astype(np.int64)
        # (a, b, b, b) and other primitives with fewer than three distinct corners are not
        # triangles: their indices need not name real vertices, so they are dropped unread
        keep = (np.diff(np.sort(corners, axis=1), axis=1) != 0).sum(axis=1) >= 2
        section_of, local, values, corners = section_of[keep], local[keep], values[keep], corners[keep]

        num_packed = table["num_packed"][section_of][:, None]
        is_packed = corners < num_packed
        if not (corners < num_packed + table["num_shared"][section_of][:, None]).all():
            raise FormatError("a primitive names a vertex its section does not hold")
        slot = ((table["shared"][section_of] >> 8)[:, None] + corners - num_packed)[~is_packed]
        if len(slot) and slot.max() >= len(self.shared_indices):
            raise FormatError(f"a section's shared vertex indices run past the {len(self.shared_indices)} stored")
        index = packed_start[section_of][:, None] + corners
        index[~is_packed] = len(packed) + self.shared_indices[slot].astype(np.int64)
        if index.max(initial=0) >= len(packed) + len(shared):
            raise FormatError(f"a shared vertex index reaches past the {len(shared)} shared vertices")

        quad = corners[:, 2] != corners[:, 3]
        triangles = np.concatenate([index[:, [0, 1, 2]], index[quad][:, [0, 2, 3]]])
        keys = (section_of << 8) | (local << 1)
        keys = np.concatenate([keys, keys[quad] | 1])
        proper = proper_triangles(triangles)
        order = np.argsort(keys[proper], kind="stable")
        values = np.concatenate([values, values[quad]])[proper][order]
        sections = np.concatenate([section_of, section_of[quad]])[proper][order]
        return np.concatenate([packed, shared]), triangles[proper][order], values, sections, keys[proper][order]

    def vertex_steps(self):
        """Per vertex of ``decode()`` (Havok units, per axis) the step of its quantisation: its
        section's packed scale, or the domain over the shared vertices' 21/21/22 bits."""
        table = self.section_table()
        _, owner = spans(table["first_packed"], table["num_packed"])
        domain = (self.domain[1, :3].astype(np.float64) - self.domain[0, :3]) / SHARED_MAX
        return np.concatenate([table["scale"][owner], np.broadcast_to(domain, (len(self.shared_vertices), 3))])

    def _packed_vertices(self, table):
        """Each section's packed vertices decoded with its base and scale, one run per section,
        and where each section's run starts."""
        index, owner = spans(table["first_packed"], table["num_packed"])
        if len(index) and index.max() >= len(self.packed_vertices):
            raise FormatError(f"a section's packed vertices run past the {len(self.packed_vertices)} stored")
        words = self.packed_vertices[index].astype(np.int64)
        steps = np.stack([words & 0x7FF, (words >> 11) & 0x7FF, (words >> 22) & 0x3FF], axis=1)
        start = np.cumsum(table["num_packed"]) - table["num_packed"]
        return table["base"][owner] + steps * table["scale"][owner], start

    def _run_values(self, table, section_start):
        """The data run value of each primitive of the sections (0 where no run covers it)."""
        values = np.zeros(int((table["primitives"] & 0xFF).sum()), np.int64)
        run_index, section = spans(table["data_runs"] >> 8, table["data_runs"] & 0xFF)
        if len(run_index) and run_index.max() >= len(self.data_runs):
            raise FormatError(f"a section's data runs run past the {len(self.data_runs)} stored")
        runs = self.data_runs[run_index]
        first = runs["first"].astype(np.int64)
        length = np.clip(np.minimum(runs["count"], (table["primitives"][section] & 0xFF) - first), 0, None)
        covered, run = spans(section_start[section] + first, length)
        values[covered] = runs["value"][run]
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

    def triangle_materials(self):
        """The Bethesda material id of each triangle of ``mesh()``: its data run value looked up
        in the shape's hknpBSMaterialProperties (0 where the value has no entry)."""
        if not isinstance(self.data, CompressedMeshShapeData):
            return np.zeros(0, np.uint32)
        values = self.data.decode()[2]
        table = self.properties.find(BS_MATERIAL_KEY) if isinstance(self.properties, RefCountedProperties) else None
        ids = table.materials["material"] if isinstance(table, BSMaterialProperties) else np.zeros(0, np.uint32)
        return np.append(ids, 0).astype(np.uint32)[np.minimum(values, len(ids))]

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
