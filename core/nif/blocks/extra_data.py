"""Extra data blocks: named values hung on objects (BSX flags, strings, numbers, bounds, bytes,
behaviour graphs, bone LOD distances, decal placements). None holds a block reference."""

import numpy as np

from ..block import Block, block_class


class NiExtraData(Block):
    name = None

    def sync(self, s):
        self.name = s.string(self.name)


@block_class("NiStringExtraData")
class NiStringExtraData(NiExtraData):
    string_data = None

    def sync(self, s):
        super().sync(s)
        self.string_data = s.string(self.string_data)


BSX_HAVOK = 0x2  # BSXFlags bit 1: collision (Skyrim's bHavok)
BSX_ARTICULATED = 0x80  # BSXFlags bit 7 (Skyrim's bArticulated)


@block_class("NiIntegerExtraData", "BSXFlags")
class NiIntegerExtraData(NiExtraData):
    """BSXFlags bits: 0 havok (Skyrim: animated), 1 collision, 2 skeleton/ragdoll, 3 animated
    (Skyrim: complex), 4 flame nodes, 5 editor marker, 6 dynamic, 7 articulated..."""

    integer_data = 0

    def sync(self, s):
        super().sync(s)
        self.integer_data = s.u32(self.integer_data)


@block_class("BSBound")
class BSBound(NiExtraData):
    center = (0.0, 0.0, 0.0)
    dimensions = (0.0, 0.0, 0.0)

    def sync(self, s):
        super().sync(s)
        self.center = s.vec3(self.center)
        self.dimensions = s.vec3(self.dimensions)


@block_class("NiFloatExtraData", fallback_raw=True)
class NiFloatExtraData(NiExtraData):
    float_data = 0.0

    def sync(self, s):
        super().sync(s)
        self.float_data = s.f32(self.float_data)


@block_class("NiBooleanExtraData", "BSDistantObjectLargeRefExtraData", fallback_raw=True)
class NiBooleanExtraData(NiExtraData):
    """A byte: NiBooleanExtraData's value, or whether a BSDistantObjectLargeRefExtraData's object
    is a large reference."""

    boolean_data = 0

    def sync(self, s):
        super().sync(s)
        self.boolean_data = s.u8(self.boolean_data)


def sync_bytes(s, value):
    """ByteArray: u32 count + bytes."""
    return s.raw(value, s.count(len(value), what="binary data"))


@block_class("NiBinaryExtraData", fallback_raw=True)
class NiBinaryExtraData(NiExtraData):
    binary_data = b""

    def sync(self, s):
        super().sync(s)
        self.binary_data = sync_bytes(s, self.binary_data)


@block_class("BSClothExtraData", fallback_raw=True)
class BSClothExtraData(Block):
    """FO4 cloth: a Havok packfile, kept as its bytes. A BSExtraData: no name."""

    binary_data = b""

    def sync(self, s):
        self.binary_data = sync_bytes(s, self.binary_data)


@block_class("NiIntegersExtraData", fallback_raw=True)
class NiIntegersExtraData(NiExtraData):
    """Starfield's AnimationFlagExtra on shapes, among others."""

    integers = ()
    code = "u4"

    def sync(self, s):
        super().sync(s)
        self.integers = s.counted_array(self.integers, self.code, what="integers")


@block_class("BSWArray", fallback_raw=True)
class BSWArray(NiIntegersExtraData):
    code = "i4"


@block_class("NiFloatsExtraData", "BSEyeCenterExtraData", fallback_raw=True)
class NiFloatsExtraData(NiExtraData):
    floats = ()

    def sync(self, s):
        super().sync(s)
        self.floats = s.counted_array(self.floats, "f4", what="floats")


@block_class("NiStringsExtraData", fallback_raw=True)
class NiStringsExtraData(NiExtraData):
    strings = ()

    def sync(self, s):
        super().sync(s)
        n = s.count(len(self.strings), item_size=4, what="strings")
        self.strings = s.repeat(self.strings, n, s.sized_string)


@block_class("BSBehaviorGraphExtraData", fallback_raw=True)
class BSBehaviorGraphExtraData(NiExtraData):
    """The Havok behaviour graph (.hkx) an actor or animated object runs."""

    behavior_graph_file = None
    controls_base_skeleton = 0

    def sync(self, s):
        super().sync(s)
        self.behavior_graph_file = s.string(self.behavior_graph_file)
        self.controls_base_skeleton = s.bool8(self.controls_base_skeleton)


class BoneLOD:
    distance = 0
    bone_name = None

    def __init__(self, distance=0, bone_name=None):
        self.distance, self.bone_name = distance, bone_name

    def sync(self, s):
        self.distance = s.u32(self.distance)
        self.bone_name = s.string(self.bone_name)


@block_class("BSBoneLODExtraData", fallback_raw=True)
class BSBoneLODExtraData(NiExtraData):
    """Bones (by name) and the distances from which they stop being animated."""

    bone_lods = ()

    def sync(self, s):
        super().sync(s)
        n = s.count(len(self.bone_lods), item_size=8, what="bone LODs")
        self.bone_lods = s.items(self.bone_lods, BoneLOD, n, min_size=8)


class DecalVectors:
    """Points on a mesh where decals may go, and their normals (both (n, 3))."""

    points = ()
    normals = ()

    def sync(self, s):
        vec3 = np.dtype((s.dtype("f4"), (3,)))
        n = s.count(len(self.points), kind="u16", item_size=24, what="decal vectors")
        self.points = s.array(self.points, vec3, n)
        self.normals = s.array(self.normals, vec3, n)


@block_class("BSDecalPlacementVectorExtraData", fallback_raw=True)
class BSDecalPlacementVectorExtraData(NiFloatExtraData):
    vector_blocks = ()

    def sync(self, s):
        super().sync(s)
        n = s.count(len(self.vector_blocks), kind="u16", item_size=2, what="decal vector blocks")
        self.vector_blocks = s.items(self.vector_blocks, DecalVectors, n, min_size=2)
