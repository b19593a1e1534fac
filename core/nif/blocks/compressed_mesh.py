"""Skyrim's triangle-mesh collision (hkpCompressedMeshShape, bs >= 83): bhkCompressedMeshShape
and its bhkCompressedMeshShapeData, laid out as nif.xml says, and decoded into triangles.

The data holds "big" triangles (float vertices, for triangles too large for a chunk) and chunks:
u16 vertex offsets in thousandths of a Havok unit from the chunk's translation, moved by one of
the shared chunk transforms (rotation, then translation; none when its index is 0xFFFF); indices that first run as strips (the
``strips`` lengths, winding alternating) and then as a plain triangle list; one material per
chunk (an index into ``chunk_materials``). A big triangle's material is also such an index.

Every triangle has a shape key, the leaf id a MOPP tree names it by: big triangle i is key i;
chunk c's triangle starting at position p of its indices is ``(c + 1) << bits_per_w_index |
winding << bits_per_index | p`` (winding 1 for a strip's odd triangles)."""

import numpy as np

from ...errors import FormatError
from ...transforms import quaternion_to_matrix
from ..block import Block, block_class

CHUNK_UNIT = 0.001  # Havok units per vertex offset step
NO_REFERENCE = 0xFFFF


def material_dtype(s):
    """bhkMeshMaterial: the Skyrim material id and its HavokFilter."""
    return np.dtype([("material", s.dtype("u4")), ("layer", "u1"), ("flags", "u1"), ("group", s.dtype("u2"))])


def big_triangle_dtype(s):
    """bhkCMSBigTri: three indices into the big vertices, the material index, welding."""
    return np.dtype([("triangle", s.dtype("u2"), (3,)), ("material", s.dtype("u4")), ("welding", s.dtype("u2"))])


@block_class("bhkCompressedMeshShape")
class bhkCompressedMeshShape(Block):
    target = -1
    user_data = 0
    radius = 0.005
    unknown_float_1 = 0.0
    scale = (1.0, 1.0, 1.0, 0.0)
    radius_copy = 0.005
    scale_copy = (1.0, 1.0, 1.0, 0.0)
    data = -1

    def sync(self, s):
        self.target = s.ref(self.target)
        self.user_data = s.u32(self.user_data)
        self.radius = s.f32(self.radius)
        self.unknown_float_1 = s.f32(self.unknown_float_1)
        self.scale = s.vec4(self.scale)
        self.radius_copy = s.f32(self.radius_copy)
        self.scale_copy = s.vec4(self.scale_copy)
        self.data = s.ref(self.data)


class Chunk:
    """bhkCMSChunk. ``vertices``: the u16 offsets as stored (three per vertex)."""

    def __init__(self, translation=(0.0, 0.0, 0.0, 0.0), material_index=0, reference=NO_REFERENCE, transform_index=0,
                 vertices=None, indices=None, strips=None, welding=None):
        self.translation = translation
        self.material_index = material_index
        self.reference = reference
        self.transform_index = transform_index
        empty = np.zeros(0, np.uint16)
        self.vertices = empty if vertices is None else vertices
        self.indices = empty if indices is None else indices
        self.strips = empty if strips is None else strips
        self.welding = empty if welding is None else welding

    def sync(self, s):
        self.translation = s.vec4(self.translation)
        self.material_index = s.u32(self.material_index)
        self.reference = s.u16(self.reference)
        self.transform_index = s.u16(self.transform_index)
        for name in ("vertices", "indices", "strips", "welding"):
            setattr(self, name, s.counted_array(getattr(self, name), "u2", what=f"chunk {name}"))


@block_class("bhkCompressedMeshShapeData")
class bhkCompressedMeshShapeData(Block):
    bits_per_index = 17
    bits_per_w_index = 18
    mask_w_index = 0x3FFFF
    mask_index = 0x1FFFF
    error = 0.001
    aabb_min = (0.0, 0.0, 0.0, 0.0)
    aabb_max = (0.0, 0.0, 0.0, 0.0)
    welding_type = 0
    material_type = 1
    materials_32 = np.zeros(0, np.uint32)
    materials_16 = np.zeros(0, np.uint32)
    materials_8 = np.zeros(0, np.uint32)
    chunk_materials = ()
    named_materials = 0
    chunk_transforms = np.zeros((0, 8), np.float32)  # translation xyzw, rotation quaternion xyzw
    big_vertices = np.zeros((0, 4), np.float32)
    big_triangles = ()
    chunks = ()
    convex_pieces = 0

    def sync(self, s):
        self.bits_per_index = s.u32(self.bits_per_index)
        self.bits_per_w_index = s.u32(self.bits_per_w_index)
        self.mask_w_index = s.u32(self.mask_w_index)
        self.mask_index = s.u32(self.mask_index)
        self.error = s.f32(self.error)
        self.aabb_min = s.vec4(self.aabb_min)
        self.aabb_max = s.vec4(self.aabb_max)
        self.welding_type = s.u8(self.welding_type)
        self.material_type = s.u8(self.material_type)
        self.materials_32 = s.counted_array(self.materials_32, "u4", what="materials 32")
        self.materials_16 = s.counted_array(self.materials_16, "u4", what="materials 16")
        self.materials_8 = s.counted_array(self.materials_8, "u4", what="materials 8")
        self.chunk_materials = s.counted_array(self.chunk_materials, material_dtype(s), what="chunk materials")
        self.named_materials = s.u32(self.named_materials)
        vec8 = np.dtype((s.dtype("f4"), (8,)))
        self.chunk_transforms = s.counted_array(self.chunk_transforms, vec8, what="chunk transforms")
        self.big_vertices = s.counted_array(self.big_vertices, np.dtype((s.dtype("f4"), (4,))), what="big vertices")
        self.big_triangles = s.counted_array(self.big_triangles, big_triangle_dtype(s), what="big triangles")
        count = s.count(len(self.chunks), item_size=32, what="chunks")
        self.chunks = s.items(self.chunks, Chunk, count, min_size=32)
        self.convex_pieces = s.u32(self.convex_pieces)

    # -- decoding ----------------------------------------------------------------------
    def mesh(self):
        """The stored triangles: (vertices (n, 3) float64 in Havok units, triangles (m, 3),
        material index per triangle, shape key per triangle). Big triangles first, then each
        chunk's strips and list. A FormatError names the chunk and what is wrong when an index,
        a strip, a transform or a material runs past what the data holds, or a position is not
        a finite number."""
        if not 0 < self.bits_per_index < self.bits_per_w_index < 32:
            raise FormatError(f"its shape keys' bits ({self.bits_per_index}, {self.bits_per_w_index}) do not fit 32 bits")
        big = np.asarray(self.big_vertices, np.float64).reshape(-1, 4)[:, :3]
        tris, big_materials = np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
        if len(self.big_triangles):
            tris = np.asarray(self.big_triangles["triangle"], np.int64).reshape(-1, 3)
            big_materials = np.asarray(self.big_triangles["material"], np.int64)
            if tris.max() >= len(big):
                raise FormatError(f"a big triangle uses vertex {int(tris.max())} of {len(big)}")
            self._check_material(big_materials.max(), "a big triangle")
        vertices, triangles = [big], [tris]
        materials, keys = [big_materials], [np.arange(len(tris), dtype=np.int64)]
        transforms = np.asarray(self.chunk_transforms, np.float64).reshape(-1, 8)
        first = len(big)
        for number, chunk in enumerate(self.chunks):
            where = f"chunk {number}"
            points = self._chunk_vertices(chunk, transforms, where)
            corners, positions, winding = chunk_triangles(chunk, len(points), where)
            self._check_material(chunk.material_index, where)
            vertices.append(points)
            triangles.append(corners + first)
            materials.append(np.full(len(corners), chunk.material_index, np.int64))
            keys.append(((number + 1) << self.bits_per_w_index) | (winding << self.bits_per_index) | positions)
            first += len(points)
        vertices = np.concatenate(vertices)
        if not np.isfinite(vertices).all():
            raise FormatError("a vertex, chunk translation or chunk transform is not a finite number")
        return vertices, np.concatenate(triangles), np.concatenate(materials), np.concatenate(keys)

    def _check_material(self, index, where):
        if index >= len(self.chunk_materials):
            raise FormatError(f"{where} uses material {int(index)} of {len(self.chunk_materials)}")

    @staticmethod
    def _chunk_vertices(chunk, transforms, where):
        offsets = np.asarray(chunk.vertices, np.float64)
        if len(offsets) % 3:
            raise FormatError(f"{where} holds {len(offsets)} vertex values, not three per vertex")
        local = offsets.reshape(-1, 3) * CHUNK_UNIT + np.asarray(chunk.translation[:3], np.float64)
        if chunk.transform_index == NO_REFERENCE:
            return local
        if chunk.transform_index >= len(transforms):
            raise FormatError(f"{where} uses transform {chunk.transform_index} of {len(transforms)}")
        translation, (x, y, z, w) = transforms[chunk.transform_index, :3], transforms[chunk.transform_index, 4:]
        return local @ quaternion_to_matrix((w, x, y, z)).T + translation


def chunk_triangles(chunk, vertex_count, where):
    """(triangles (m, 3) of chunk-local vertex indices, each one's position in the indices,
    each one's winding bit) of a chunk: strips first, then the list."""
    indices = np.asarray(chunk.indices, np.int64)
    lengths = np.asarray(chunk.strips, np.int64)
    in_strips = int(lengths.sum())
    if in_strips > len(indices):
        raise FormatError(f"{where}: its strips need {in_strips} indices, it holds {len(indices)}")
    if len(indices) and indices.max() >= vertex_count:
        raise FormatError(f"{where}: an index names vertex {int(indices.max())} of {vertex_count}")
    counts = np.maximum(lengths - 2, 0)
    starts = np.cumsum(lengths) - lengths
    step = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    strip_positions = np.repeat(starts, counts) + step
    odd = step & 1
    listed = (len(indices) - in_strips) // 3
    positions = np.concatenate([strip_positions, in_strips + 3 * np.arange(listed)])
    winding = np.concatenate([odd, np.zeros(listed, np.int64)])
    corners = indices[positions[:, None] + np.arange(3)]
    corners[winding == 1] = corners[winding == 1][:, ::-1]  # a strip's odd triangles turn the other way
    return corners, positions, winding
