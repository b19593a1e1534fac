"""Keyframe animation of FO3/FNV files (skeletons, animated objects): NiTransformController,
NiTransformInterpolator and NiTransformData."""

import numpy as np

from ..block import Block, block_class

FLT_MAX = 3.4028234663852886e38
XYZ_ROTATION = 4


@block_class("NiTransformController")
class NiTransformController(Block):
    """NiTimeController + the single interpolator. ``target`` points back at the animated object."""

    next_controller = -1
    flags = 76
    frequency = 1.0
    phase = 0.0
    start_time = FLT_MAX
    stop_time = -FLT_MAX
    target = -1
    interpolator = -1

    def sync(self, s):
        self.next_controller = s.ref(self.next_controller)
        self.flags = s.u16(self.flags)
        self.frequency = s.f32(self.frequency)
        self.phase = s.f32(self.phase)
        self.start_time = s.f32(self.start_time)
        self.stop_time = s.f32(self.stop_time)
        self.target = s.ref(self.target)
        self.interpolator = s.ref(self.interpolator)


@block_class("NiTransformInterpolator")
class NiTransformInterpolator(Block):
    """The pose (NiQuatTransform: translation, quaternion w x y z, scale) and its key data."""

    translation = (0.0, 0.0, 0.0)
    rotation = (1.0, 0.0, 0.0, 0.0)
    scale = 1.0
    data = -1

    def sync(self, s):
        self.translation = s.vec3(self.translation)
        self.rotation = s.vec4(self.rotation)
        self.scale = s.f32(self.scale)
        self.data = s.ref(self.data)


def key_dtype(s, width, interpolation, quaternion=False):
    """One key: time, value, then forward/backward tangents (quadratic) or tension, bias and
    continuity (TBC). Quaternion keys never carry tangents."""
    f4 = s.dtype("f4")
    fields = [("time", f4), ("value", f4, (width,))]
    if interpolation == 2 and not quaternion:
        fields += [("forward", f4, (width,)), ("backward", f4, (width,))]
    elif interpolation == 3:
        fields.append(("tbc", f4, (3,)))
    return np.dtype(fields)


class KeyGroup:
    """KeyGroup<T>: u32 count, the interpolation type when there are keys, the keys."""

    interpolation = 1
    keys = ()

    def __init__(self, width):
        self.width = width

    def sync(self, s):
        n = s.count(len(self.keys), item_size=4 * (1 + self.width), what="keys")
        if n:
            self.interpolation = s.u32(self.interpolation)
        self.keys = s.array(self.keys, key_dtype(s, self.width, self.interpolation), n)


@block_class("NiTransformData")
class NiTransformData(Block):
    """Rotation keys (quaternions, or three float key groups when the type is XYZ), translation
    keys and scale keys."""

    rotation_type = 1
    rotation_keys = ()
    num_rotation_keys = 0
    xyz_rotations = ()
    translations = None
    scales = None

    def sync(self, s):
        quaternions = self.rotation_type != XYZ_ROTATION
        n = self.num_rotation_keys = s.count(
            len(self.rotation_keys) if quaternions else self.num_rotation_keys, item_size=4, what="rotation keys"
        )
        if n:
            self.rotation_type = s.u32(self.rotation_type)
        if self.rotation_type != XYZ_ROTATION:
            self.rotation_keys = s.array(self.rotation_keys, key_dtype(s, 4, self.rotation_type, quaternion=True), n)
        else:
            if s.reading or not self.xyz_rotations:
                self.xyz_rotations = [KeyGroup(1) for _ in range(3)]
            for group in self.xyz_rotations:
                group.sync(s)
        if s.reading or self.translations is None:
            self.translations, self.scales = KeyGroup(3), KeyGroup(1)
        self.translations.sync(s)
        self.scales.sync(s)
