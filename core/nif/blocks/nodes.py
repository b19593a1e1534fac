"""NiNode and its Bethesda subclasses."""

from ..block import block_class
from .objects import NiAVObject


@block_class("NiNode", "BSFadeNode", "BSLeafAnimNode", "RootCollisionNode")
class NiNode(NiAVObject):
    children = ()
    effects = ()

    def sync(self, s):
        super().sync(s)
        self.children = s.ref_list(self.children)
        if s.context.bs_version < 130:
            self.effects = s.ref_list(self.effects)


@block_class("BSValueNode")
class BSValueNode(NiNode):
    value = 0
    value_flags = 0

    def sync(self, s):
        super().sync(s)
        self.value = s.u32(self.value)
        self.value_flags = s.u8(self.value_flags)


@block_class("BSOrderedNode")
class BSOrderedNode(NiNode):
    alpha_sort_bound = (0.0, 0.0, 0.0, 0.0)
    static_bound = 1

    def sync(self, s):
        super().sync(s)
        self.alpha_sort_bound = s.vec4(self.alpha_sort_bound)
        self.static_bound = s.bool8(self.static_bound)


@block_class("BSMultiBoundNode")
class BSMultiBoundNode(NiNode):
    multi_bound = -1
    culling_mode = 0

    def sync(self, s):
        super().sync(s)
        self.multi_bound = s.ref(self.multi_bound)
        if s.context.bs_version >= 83:
            self.culling_mode = s.u32(self.culling_mode)


@block_class("BSRangeNode", "BSBlastNode", "BSDamageStage", "BSDebrisNode")
class BSRangeNode(NiNode):
    min = 0
    max = 0
    current = 0

    def sync(self, s):
        super().sync(s)
        self.min = s.u8(self.min)
        self.max = s.u8(self.max)
        self.current = s.u8(self.current)


@block_class("BSTreeNode")
class BSTreeNode(NiNode):
    bones_1 = ()
    bones_2 = ()

    def sync(self, s):
        super().sync(s)
        self.bones_1 = s.ref_list(self.bones_1)
        self.bones_2 = s.ref_list(self.bones_2)
