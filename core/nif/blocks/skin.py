"""Skinning blocks: FO4 BSSkin::Instance / BoneData and FO3/FNV/SSE NiSkinInstance,
BSDismemberSkinInstance, NiSkinData and NiSkinPartition."""

import numpy as np

from .. import vertex_format as vf
from .. import versions
from ..block import Block, block_class
from .extra_data import NiExtraData
from ..packed_vertices import PackedVertices
from .geometry import strips_to_triangles
from .tri_shape import triangle_dtype

IDENTITY_TRANSFORM = ((1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 1.0)


def bone_transform_dtype(s):
    """BSSkinBoneTrans (68 bytes): bounding sphere, rotation rows, translation, scale."""
    f4 = s.dtype("f4")
    return np.dtype(
        [("bound_center", f4, 3), ("bound_radius", f4), ("rotation", f4, (3, 3)), ("translation", f4, 3), ("scale", f4)]
    )


@block_class("BSSkin::Instance")
class BSSkinInstance(Block):
    skeleton_root = -1
    data = -1
    bones = ()
    scales = ()

    def sync(self, s):
        self.skeleton_root = s.ref(self.skeleton_root)
        self.data = s.ref(self.data)
        self.bones = s.ref_list(self.bones)
        n = s.count(len(self.scales), item_size=12, what="scales")
        self.scales = s.array(self.scales, np.dtype((s.dtype("f4"), (3,))), n)


@block_class("BSSkin::BoneData")
class BSSkinBoneData(Block):
    """Per bone: the bind transform from skin to bone space and its bounding sphere."""

    bones = ()

    def sync(self, s):
        dtype = bone_transform_dtype(s)
        n = s.count(len(self.bones), item_size=dtype.itemsize, what="bones")
        self.bones = s.array(self.bones, dtype, n)


@block_class("SkinAttach")
class SkinAttach(NiExtraData):
    """Starfield: the names of the bones of a shape's skin, in the skin's bone order (its
    BSSkin::Instance names no bone nodes)."""

    bones = ()

    def sync(self, s):
        super().sync(s)
        count = s.count(len(self.bones), item_size=4, what="bone names")
        self.bones = s.repeat(self.bones, count, s.sized_string)


def sync_transform(s, value):
    """NiTransform: rotation rows, translation, scale."""
    rotation, translation, scale = value
    return (s.mat33(rotation), s.vec3(translation), s.f32(scale))


@block_class("NiSkinInstance")
class NiSkinInstance(Block):
    data = -1
    skin_partition = -1
    skeleton_root = -1
    bones = ()

    def sync(self, s):
        self.data = s.ref(self.data)
        self.skin_partition = s.ref(self.skin_partition)
        self.skeleton_root = s.ref(self.skeleton_root)
        self.bones = s.ref_list(self.bones)


def body_part_dtype(s):
    """Xbox 360 files store the part flags in PC byte order (FORMAT-NOTES section 7)."""
    return np.dtype([("part_flag", "<u2"), ("body_part", s.dtype("u2"))])


@block_class("BSDismemberSkinInstance")
class BSDismemberSkinInstance(NiSkinInstance):
    partitions = ()

    def sync(self, s):
        super().sync(s)
        self.partitions = s.counted_array(self.partitions, body_part_dtype(s), what="partitions")


class SkinBone:
    """NiSkinData::BoneData: bind transform, bounding sphere, (vertex, weight) pairs."""

    transform = IDENTITY_TRANSFORM
    bound_center = (0.0, 0.0, 0.0)
    bound_radius = 0.0
    weights = ()
    has_weights = 1

    def sync(self, s):
        self.transform = sync_transform(s, self.transform)
        self.bound_center = s.vec3(self.bound_center)
        self.bound_radius = s.f32(self.bound_radius)
        dtype = np.dtype([("index", s.dtype("u2")), ("weight", s.dtype("f4"))])
        n = s.count(len(self.weights), kind="u16", item_size=dtype.itemsize if self.has_weights else 0, what="weights")
        if self.has_weights:
            self.weights = s.array(self.weights, dtype, n)
        elif s.reading:
            self.weights = np.zeros(0, dtype)
            self.unweighted_count = n


@block_class("NiSkinData")
class NiSkinData(Block):
    skin_transform = IDENTITY_TRANSFORM
    has_vertex_weights = 1
    bones = ()

    def sync(self, s):
        self.skin_transform = sync_transform(s, self.skin_transform)
        n = s.count(len(self.bones), item_size=70, what="bones")
        self.has_vertex_weights = s.bool8(self.has_vertex_weights)

        def bone():
            item = SkinBone()
            item.has_weights = self.has_vertex_weights
            return item

        self.bones = s.items(self.bones, bone, n, min_size=70)


class SkinPartition:
    """One hardware partition: its bones, vertex map, weights, strips or triangles."""

    num_vertices = 0
    num_triangles = 0
    weights_per_vertex = 4
    bones = ()
    vertex_map = None
    vertex_weights = None
    strips = ()
    has_faces = 1
    triangles = None
    bone_indices = None
    lod_level = 0
    global_vb = 0
    vertex_desc = 0
    triangles_copy = None

    def sync(self, s):
        bs = s.context.bs_version
        nv = self.num_vertices = s.u16(self.num_vertices)
        nt = self.num_triangles = s.u16(self.num_triangles)
        nb = s.u16(len(self.bones))
        ns = s.u16(len(self.strips))
        per = self.weights_per_vertex = s.u16(self.weights_per_vertex)
        if s.reading and per == 0 and nv:
            raise s.error("a partition with vertices has 0 weights per vertex", s.pos - 2)
        self.bones = s.array(self.bones, "u2", nb)
        if s.bool8(self.vertex_map is not None):
            self.vertex_map = s.array(self.vertex_map, "u2", nv)
        if s.bool8(self.vertex_weights is not None):
            self.vertex_weights = s.array(self.vertex_weights, np.dtype((s.dtype("f4"), (per,))), nv)
        lengths = [int(v) for v in s.array([len(strip) for strip in self.strips], "u2", ns)]
        self.has_faces = s.bool8(self.has_faces)
        if self.has_faces and ns:
            if s.reading:
                s.need(2 * sum(lengths), "strip points")
                s.charge(ns)
            self.strips = [s.array(strip, "u2", n) for strip, n in zip(self.strips if not s.reading else lengths, lengths)]
        elif self.has_faces:
            self.triangles = s.array(self.triangles, triangle_dtype(s), nt)
        if s.bool8(self.bone_indices is not None):
            self.bone_indices = s.array(self.bone_indices, np.dtype(("u1", (per,))), nv)
        if versions.after_fo3(bs):
            self.lod_level = s.u8(self.lod_level)
            self.global_vb = s.bool8(self.global_vb)
        if versions.sse(bs):
            self.vertex_desc = s.u64(self.vertex_desc)
            self.triangles_copy = s.array(self.triangles_copy, triangle_dtype(s), nt)

    @property
    def faces(self):
        """Partition-local triangles, from the strips (Xbox 360 files always use strips) or the
        triangle list."""
        if len(self.strips):
            return strips_to_triangles(self.strips)
        if self.triangles is None:
            return np.zeros((0, 3), np.uint16)
        return np.asarray(self.triangles).reshape(-1, 3)


@block_class("NiSkinPartition")
class NiSkinPartition(PackedVertices, Block):
    """Skyrim SE also keeps the shape's packed vertices here (full precision)."""

    partitions = ()
    full_precision = True

    def sync(self, s):
        n = s.count(len(self.partitions), item_size=10, what="partitions")
        if versions.sse(s.context.bs_version):
            self._sync_sse_vertices(s)
        self.partitions = s.items(self.partitions, SkinPartition, n, min_size=10)

    def _sync_sse_vertices(self, s):
        stride = vf.stride_of(self.vertex_desc)
        count = 0 if self.vertex_data is None else len(self.vertex_data)
        data_size = s.u32(stride * count)
        stride = s.u32(stride)
        self.vertex_desc = s.u64(self.vertex_desc)
        if data_size:
            if s.reading and (stride != vf.stride_of(self.vertex_desc) or data_size % stride):
                raise s.error(f"vertex size {stride} does not match data size {data_size} and the vertex desc")
            dtype = vf.vertex_dtype(self.vertex_desc, True, s.big_endian)
            self.vertex_data = s.array(self.vertex_data, dtype, data_size // stride)
