"""Extra data blocks: named values hung on objects (BSX flags, strings, integers, bounds)."""

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


@block_class("NiIntegerExtraData", "BSXFlags")
class NiIntegerExtraData(NiExtraData):
    """BSXFlags bits: 0 havok, 1 collision, 2 skeleton/ragdoll, 3 animated, 4 flame nodes,
    5 editor marker, 6 dynamic, 7 articulated..."""

    integer_data = 0

    def sync(self, s):
        super().sync(s)
        self.integer_data = s.u32(self.integer_data)


@block_class("NiIntegersExtraData")
class NiIntegersExtraData(NiExtraData):
    """Starfield's AnimationFlagExtra on shapes, among others."""

    integers = ()

    def sync(self, s):
        super().sync(s)
        self.integers = s.counted_array(self.integers, "u4", what="integers")


@block_class("BSBound")
class BSBound(NiExtraData):
    center = (0.0, 0.0, 0.0)
    dimensions = (0.0, 0.0, 0.0)

    def sync(self, s):
        super().sync(s)
        self.center = s.vec3(self.center)
        self.dimensions = s.vec3(self.dimensions)
