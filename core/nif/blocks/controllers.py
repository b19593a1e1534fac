"""Time controllers beyond the keyframe ones of animation.py: colours, texture transforms and
flip books, extra data values, geometry morphs (and their NiMorphData), bones' lag and LOD,
look-at and path followers, the skeletons' bhkBlendController. Import shows none of them; they
are decoded so their references are known and can be renumbered when blocks are dropped
(core.nif.refs), and written back as they were."""

import numpy as np

from ..block import Block, block_class
from .animation import KeyGroup, NiSingleInterpController, NiTimeController


@block_class("NiMaterialColorController", "NiLightColorController", fallback_raw=True)
class NiPoint3InterpController(NiSingleInterpController):
    """A material's or light's colour (``target_color``: which one) from a point3 interpolator."""

    target_color = 0

    def sync(self, s):
        super().sync(s)
        self.target_color = s.u16(self.target_color)


@block_class("NiTextureTransformController", fallback_raw=True)
class NiTextureTransformController(NiSingleInterpController):
    shader_map = 0
    texture_slot = 0
    operation = 0  # TransformMember: translate u / v, rotate, scale u / v

    def sync(self, s):
        super().sync(s)
        self.shader_map = s.bool8(self.shader_map)
        self.texture_slot = s.u32(self.texture_slot)
        self.operation = s.u32(self.operation)


@block_class("NiFlipController", fallback_raw=True)
class NiFlipController(NiSingleInterpController):
    """Swaps a texture slot's image through ``sources`` (NiSourceTexture blocks)."""

    texture_slot = 0
    sources = ()

    def sync(self, s):
        super().sync(s)
        self.texture_slot = s.u32(self.texture_slot)
        self.sources = s.ref_list(self.sources)


@block_class("NiFloatExtraDataController", "NiColorExtraDataController", fallback_raw=True)
class NiExtraDataController(NiSingleInterpController):
    """Animates the extra data of its target named ``extra_data_name``."""

    extra_data_name = None

    def sync(self, s):
        super().sync(s)
        self.extra_data_name = s.string(self.extra_data_name)


@block_class("NiFloatsExtraDataController", "NiFloatsExtraDataPoint3Controller", fallback_raw=True)
class NiFloatsExtraDataController(NiExtraDataController):
    """One value (or point) of a NiFloatsExtraData's array."""

    floats_extra_data_index = 0

    def sync(self, s):
        super().sync(s)
        self.floats_extra_data_index = s.i32(self.floats_extra_data_index)


@block_class("BSKeyframeController", fallback_raw=True)
class BSKeyframeController(NiSingleInterpController):
    data_2 = -1

    def sync(self, s):
        super().sync(s)
        self.data_2 = s.ref(self.data_2)


class MorphWeight:
    interpolator = -1
    weight = 0.0

    def sync(self, s):
        self.interpolator = s.ref(self.interpolator)
        self.weight = s.f32(self.weight)


@block_class("NiGeomMorpherController", fallback_raw=True)
class NiGeomMorpherController(NiTimeController):
    """Blends the morph targets of its NiMorphData, one interpolator (and weight) each."""

    morpher_flags = 0
    data = -1
    always_update = 0
    weights = ()

    def sync(self, s):
        super().sync(s)
        self.morpher_flags = s.u16(self.morpher_flags)
        self.data = s.ref(self.data)
        self.always_update = s.u8(self.always_update)
        n = s.count(len(self.weights), item_size=8, what="morph weights")
        self.weights = s.items(self.weights, MorphWeight, n, min_size=8)


class Morph:
    """A named morph target: one offset (or position) per vertex."""

    frame_name = None
    vectors = ()

    def __init__(self, num_vertices=0):
        self.num_vertices = num_vertices

    def sync(self, s):
        self.frame_name = s.string(self.frame_name)
        self.vectors = s.array(self.vectors, np.dtype((s.dtype("f4"), (3,))), self.num_vertices)


@block_class("NiMorphData", fallback_raw=True)
class NiMorphData(Block):
    num_vertices = 0
    relative_targets = 1
    morphs = ()

    def sync(self, s):
        n = s.count(len(self.morphs), item_size=4, what="morphs")
        self.num_vertices = s.u32(self.num_vertices)
        self.relative_targets = s.u8(self.relative_targets)
        self.morphs = s.items(self.morphs, lambda: Morph(self.num_vertices), n, min_size=4 + 12 * self.num_vertices)


@block_class("NiUVController", fallback_raw=True)
class NiUVController(NiTimeController):
    texture_set = 0
    data = -1

    def sync(self, s):
        super().sync(s)
        self.texture_set = s.u16(self.texture_set)
        self.data = s.ref(self.data)


@block_class("NiUVData", fallback_raw=True)
class NiUVData(Block):
    """U and V translation, U and V tiling keys."""

    groups = None

    def sync(self, s):
        if s.reading or self.groups is None:
            self.groups = [KeyGroup(1) for _ in range(4)]
        for group in self.groups:
            group.sync(s)


@block_class("bhkBlendController", fallback_raw=True)
class bhkBlendController(NiTimeController):
    """Blends a skeleton's ragdoll with its animation (bhkBlendCollisionObject)."""

    keys = 0

    def sync(self, s):
        super().sync(s)
        self.keys = s.u32(self.keys)


@block_class("BSLagBoneController", fallback_raw=True)
class BSLagBoneController(NiTimeController):
    linear_velocity = 0.0
    linear_rotation = 0.0
    maximum_distance = 0.0

    def sync(self, s):
        super().sync(s)
        self.linear_velocity = s.f32(self.linear_velocity)
        self.linear_rotation = s.f32(self.linear_rotation)
        self.maximum_distance = s.f32(self.maximum_distance)


@block_class("NiLookAtController", fallback_raw=True)
class NiLookAtController(NiTimeController):
    look_at_flags = 0
    look_at = -1

    def sync(self, s):
        super().sync(s)
        self.look_at_flags = s.u16(self.look_at_flags)
        self.look_at = s.ref(self.look_at)


class PathFollowing(Block):
    """What a path follower (NiPathController, NiPathInterpolator) holds: flags, banking, the
    axis that follows the path, the path's points and the percentage keys along it."""

    path_flags = 3
    bank_dir = 1
    max_bank_angle = 0.0
    smoothing = 0.0
    follow_axis = 0
    path_data = -1
    percent_data = -1

    def sync(self, s):
        self.path_flags = s.u16(self.path_flags)
        self.bank_dir = s.i32(self.bank_dir)
        self.max_bank_angle = s.f32(self.max_bank_angle)
        self.smoothing = s.f32(self.smoothing)
        self.follow_axis = s.i16(self.follow_axis)
        self.path_data = s.ref(self.path_data)
        self.percent_data = s.ref(self.percent_data)


@block_class("NiPathController", fallback_raw=True)
class NiPathController(NiTimeController, PathFollowing):
    def sync(self, s):
        NiTimeController.sync(self, s)
        PathFollowing.sync(self, s)


class NodeSet:
    nodes = ()

    def sync(self, s):
        self.nodes = s.ref_list(self.nodes)


@block_class("NiBSBoneLODController", fallback_raw=True)
class NiBSBoneLODController(NiTimeController):
    """The bones (node sets, one per LOD level) a skeleton animates at each distance."""

    lod = 0
    num_node_groups = 0
    node_groups = ()

    def sync(self, s):
        super().sync(s)
        self.lod = s.u32(self.lod)
        n = s.count(len(self.node_groups), item_size=4, what="LOD node groups")
        self.num_node_groups = s.u32(self.num_node_groups)
        self.node_groups = s.items(self.node_groups, NodeSet, n, min_size=4)
