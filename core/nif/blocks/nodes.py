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


@block_class("NiBillboardNode")
class NiBillboardNode(NiNode):
    """Turned to face the camera (``billboard_mode``: 0 always face camera, 1 rotate about up,
    2 rigid face camera, 3 always face centre, ...)."""

    billboard_mode = 0

    def sync(self, s):
        super().sync(s)
        self.billboard_mode = s.u16(self.billboard_mode)


@block_class("NiSwitchNode", "NiLODNode")
class NiSwitchNode(NiNode):
    """Draws one child (``index``); NiLODNode picks it by distance through its LOD data."""

    switch_flags = 3
    index = 0
    lod_level_data = -1

    def sync(self, s):
        super().sync(s)
        self.switch_flags = s.u16(self.switch_flags)
        self.index = s.u32(self.index)
        if self.type_name == "NiLODNode":
            self.lod_level_data = s.ref(self.lod_level_data)


@block_class("NiSortAdjustNode")
class NiSortAdjustNode(NiNode):
    sorting_mode = 0

    def sync(self, s):
        super().sync(s)
        self.sorting_mode = s.u32(self.sorting_mode)


@block_class("BSMasterParticleSystem")
class BSMasterParticleSystem(NiNode):
    max_emitter_objects = 20
    particle_systems = ()

    def sync(self, s):
        super().sync(s)
        self.max_emitter_objects = s.u16(self.max_emitter_objects)
        self.particle_systems = s.ref_list(self.particle_systems)
