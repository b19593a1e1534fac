"""Interpolators beyond the keyframe ones of animation.py: the blend interpolators a controller
manager's objects carry (each blending the interpolators of the sequences playing), colours,
path and look-at followers, tank treads. Decoded for their references (core.nif.refs) and
written back as they were; import reads the sequences' own interpolators instead."""

from ..block import Block, block_class
from .animation import FLT_MAX
from .controllers import PathFollowing

MANAGER_CONTROLLED = 0x1  # InterpBlendFlags: the manager keeps the blend array, not the file


class InterpBlendItem:
    interpolator = -1
    weight = 0.0
    normalized_weight = 0.0
    priority = 0
    ease_spinner = 0.0

    def sync(self, s):
        self.interpolator = s.ref(self.interpolator)
        self.weight = s.f32(self.weight)
        self.normalized_weight = s.f32(self.normalized_weight)
        self.priority = s.u8(self.priority)
        self.ease_spinner = s.f32(self.ease_spinner)


class NiBlendInterpolator(Block):
    """Flags, array size and weight threshold; unless the manager controls it, the blend state
    and the array of interpolators blended. The subclass's pose value follows."""

    flags = MANAGER_CONTROLLED
    array_size = 0
    weight_threshold = 0.0
    interp_count = 0
    single_index = 0xFF
    high_priority = -128
    next_high_priority = -128
    single_time = -FLT_MAX
    high_weights_sum = -FLT_MAX
    next_high_weights_sum = -FLT_MAX
    high_ease_spinner = -FLT_MAX
    items = ()

    def sync(self, s):
        self.flags = s.u8(self.flags)
        self.array_size = s.u8(self.array_size)
        self.weight_threshold = s.f32(self.weight_threshold)
        if self.flags & MANAGER_CONTROLLED:
            return
        self.interp_count = s.u8(self.interp_count)
        self.single_index = s.u8(self.single_index)
        self.high_priority = s.i8(self.high_priority)
        self.next_high_priority = s.i8(self.next_high_priority)
        self.single_time = s.f32(self.single_time)
        self.high_weights_sum = s.f32(self.high_weights_sum)
        self.next_high_weights_sum = s.f32(self.next_high_weights_sum)
        self.high_ease_spinner = s.f32(self.high_ease_spinner)
        self.items = s.items(self.items, InterpBlendItem, self.array_size, min_size=17)


@block_class("NiBlendTransformInterpolator", fallback_raw=True)
class NiBlendTransformInterpolator(NiBlendInterpolator):
    pass  # its pose lives in the blended interpolators from 10.1.0.110 on


@block_class("NiBlendFloatInterpolator", fallback_raw=True)
class NiBlendFloatInterpolator(NiBlendInterpolator):
    value = -FLT_MAX

    def sync(self, s):
        super().sync(s)
        self.value = s.f32(self.value)


@block_class("NiBlendBoolInterpolator", fallback_raw=True)
class NiBlendBoolInterpolator(NiBlendInterpolator):
    value = 2  # neither true nor false: unset

    def sync(self, s):
        super().sync(s)
        self.value = s.u8(self.value)


@block_class("NiBlendPoint3Interpolator", fallback_raw=True)
class NiBlendPoint3Interpolator(NiBlendInterpolator):
    value = (-FLT_MAX, -FLT_MAX, -FLT_MAX)

    def sync(self, s):
        super().sync(s)
        self.value = s.vec3(self.value)


@block_class("NiColorInterpolator", fallback_raw=True)
class NiColorInterpolator(Block):
    value = (-FLT_MAX,) * 4
    data = -1

    def sync(self, s):
        self.value = s.vec4(self.value)
        self.data = s.ref(self.data)


@block_class("NiPathInterpolator", fallback_raw=True)
class NiPathInterpolator(PathFollowing):
    pass


def sync_quat_transform(s, value):
    """NiQuatTransform: translation, rotation (w x y z), scale."""
    translation, rotation, scale = value
    return s.vec3(translation), s.vec4(rotation), s.f32(scale)


IDENTITY_TRANSFORM = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), 1.0)


@block_class("NiLookAtInterpolator", fallback_raw=True)
class NiLookAtInterpolator(Block):
    look_at_flags = 0
    look_at = -1
    look_at_name = None
    transform = IDENTITY_TRANSFORM
    translation_interpolator = -1
    roll_interpolator = -1
    scale_interpolator = -1

    def sync(self, s):
        self.look_at_flags = s.u16(self.look_at_flags)
        self.look_at = s.ref(self.look_at)
        self.look_at_name = s.string(self.look_at_name)
        self.transform = sync_quat_transform(s, self.transform)
        self.translation_interpolator = s.ref(self.translation_interpolator)
        self.roll_interpolator = s.ref(self.roll_interpolator)
        self.scale_interpolator = s.ref(self.scale_interpolator)


class TreadTransform:
    name = None
    first = IDENTITY_TRANSFORM
    second = IDENTITY_TRANSFORM

    def sync(self, s):
        self.name = s.string(self.name)
        self.first = sync_quat_transform(s, self.first)
        self.second = sync_quat_transform(s, self.second)


@block_class("BSTreadTransfInterpolator", fallback_raw=True)
class BSTreadTransfInterpolator(Block):
    """A vehicle's tread links (named, two poses each) and the float keys moving them."""

    transforms = ()
    data = -1

    def sync(self, s):
        n = s.count(len(self.transforms), item_size=68, what="tread transforms")
        self.transforms = s.items(self.transforms, TreadTransform, n, min_size=68)
        self.data = s.ref(self.data)
