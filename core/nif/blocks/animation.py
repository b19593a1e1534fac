"""Keyframe animation: time controllers, the interpolators they drive and the keys those hold
(NiTransformData, NiFloatData, NiBoolData, NiPosData, NiColorData, B-spline control points).
Sequences and their manager are in sequences.py."""

import numpy as np

from ..block import Block, block_class

FLT_MAX = 3.4028234663852886e38

# Key types (KeyType): how the keys of a group are interpolated.
LINEAR, QUADRATIC, TBC, XYZ_ROTATION, CONSTANT = 1, 2, 3, 4, 5


class NiTimeController(Block):
    """Timing every controller shares. ``target`` points back at the animated object."""

    next_controller = -1
    flags = 76
    frequency = 1.0
    phase = 0.0
    start_time = FLT_MAX
    stop_time = -FLT_MAX
    target = -1

    def sync(self, s):
        self.next_controller = s.ref(self.next_controller)
        self.flags = s.u16(self.flags)
        self.frequency = s.f32(self.frequency)
        self.phase = s.f32(self.phase)
        self.start_time = s.f32(self.start_time)
        self.stop_time = s.f32(self.stop_time)
        self.target = s.ref(self.target)


@block_class(
    "NiTransformController",
    "NiKeyframeController",
    "NiVisController",
    "BSNiAlphaPropertyTestRefController",
    "NiAlphaController",
    "NiLightDimmerController",
    "NiLightIntensityController",
    "NiLightRadiusController",
    "BSMaterialEmittanceMultController",
    "BSRefractionStrengthController",
    "BSRefractionFirePeriodController",
    "BSFrustumFOVController",
)
class NiSingleInterpController(NiTimeController):
    """A controller driven by one interpolator (transform, visibility, alpha and alpha test
    reference, light dimmer / intensity / radius, emittance, refraction, field of view)."""

    interpolator = -1

    def sync(self, s):
        super().sync(s)
        self.interpolator = s.ref(self.interpolator)


@block_class(
    "BSEffectShaderPropertyFloatController",
    "BSEffectShaderPropertyColorController",
    "BSLightingShaderPropertyFloatController",
    "BSLightingShaderPropertyUShortController",
    "BSLightingShaderPropertyColorController",
)
class BSShaderPropertyController(NiSingleInterpController):
    """A shader value driven by an interpolator; ``controlled_variable`` says which one (the
    EffectShaderControlledVariable / LightingShaderControlledFloat... enums of nif.xml)."""

    controlled_variable = 0

    def sync(self, s):
        super().sync(s)
        self.controlled_variable = s.u32(self.controlled_variable)


@block_class("NiMultiTargetTransformController")
class NiMultiTargetTransformController(NiTimeController):
    """The transform controller of a NiControllerManager's objects: every node its sequences
    move (each sequence's controlled blocks carry their own interpolators)."""

    extra_targets = ()

    def sync(self, s):
        super().sync(s)
        n = s.count(len(self.extra_targets), kind="u16", item_size=4, what="extra targets")
        self.extra_targets = s.repeat(self.extra_targets, n, s.ref)


# -- interpolators ---------------------------------------------------------------------------
@block_class("NiTransformInterpolator", "BSRotAccumTransfInterpolator")
class NiTransformInterpolator(Block):
    """The pose (NiQuatTransform: translation, quaternion w x y z, scale) and its key data. A
    pose component of FLT_MAX is unset (the keys, or the node's own transform, give it)."""

    translation = (0.0, 0.0, 0.0)
    rotation = (1.0, 0.0, 0.0, 0.0)
    scale = 1.0
    data = -1

    def sync(self, s):
        self.translation = s.vec3(self.translation)
        self.rotation = s.vec4(self.rotation)
        self.scale = s.f32(self.scale)
        self.data = s.ref(self.data)


@block_class("NiFloatInterpolator")
class NiFloatInterpolator(Block):
    value = -FLT_MAX
    data = -1

    def sync(self, s):
        self.value = s.f32(self.value)
        self.data = s.ref(self.data)


@block_class("NiBoolInterpolator", "NiBoolTimelineInterpolator")
class NiBoolInterpolator(Block):
    value = 2  # neither true nor false: unset
    data = -1

    def sync(self, s):
        self.value = s.bool8(self.value)
        self.data = s.ref(self.data)


@block_class("NiPoint3Interpolator")
class NiPoint3Interpolator(Block):
    value = (-FLT_MAX, -FLT_MAX, -FLT_MAX)
    data = -1

    def sync(self, s):
        self.value = s.vec3(self.value)
        self.data = s.ref(self.data)


@block_class("NiBSplineCompTransformInterpolator")
class NiBSplineCompTransformInterpolator(Block):
    """Transform channels as open uniform cubic B-splines whose control points are shorts in
    ``spline_data``, each channel mapped from [-1, 1] by its offset and half range. A handle
    of 0xFFFF leaves the channel to the pose."""

    start_time = FLT_MAX
    stop_time = -FLT_MAX
    spline_data = -1
    basis_data = -1
    translation = (0.0, 0.0, 0.0)
    rotation = (1.0, 0.0, 0.0, 0.0)
    scale = 1.0
    handles = (0xFFFF, 0xFFFF, 0xFFFF)  # translation, rotation, scale
    ranges = (0.0,) * 6  # (offset, half range) of translation, rotation, scale

    def sync(self, s):
        self.start_time = s.f32(self.start_time)
        self.stop_time = s.f32(self.stop_time)
        self.spline_data = s.ref(self.spline_data)
        self.basis_data = s.ref(self.basis_data)
        self.translation = s.vec3(self.translation)
        self.rotation = s.vec4(self.rotation)
        self.scale = s.f32(self.scale)
        self.handles = tuple(s.u32(handle) for handle in self.handles)
        self.ranges = s.floats(self.ranges, 6)


@block_class("NiBSplineData")
class NiBSplineData(Block):
    float_points = ()
    compact_points = ()

    def sync(self, s):
        self.float_points = s.counted_array(self.float_points, "f4", what="float control points")
        self.compact_points = s.counted_array(self.compact_points, "i2", what="compact control points")


@block_class("NiBSplineBasisData")
class NiBSplineBasisData(Block):
    num_control_points = 0

    def sync(self, s):
        self.num_control_points = s.u32(self.num_control_points)


# -- keys ------------------------------------------------------------------------------------
def key_dtype(s, width, interpolation, quaternion=False, code="f4"):
    """One key: time, value, then forward/backward tangents (quadratic) or tension, bias and
    continuity (TBC). Quaternion keys never carry tangents."""
    f4, value = s.dtype("f4"), s.dtype(code)
    fields = [("time", f4), ("value", value, (width,))]
    if interpolation == QUADRATIC and not quaternion:
        fields += [("forward", value, (width,)), ("backward", value, (width,))]
    elif interpolation == TBC:
        fields.append(("tbc", f4, (3,)))
    return np.dtype(fields)


class KeyGroup:
    """KeyGroup<T>: u32 count, the interpolation type when there are keys, the keys (values of
    ``width`` items of numpy type ``code``)."""

    interpolation = LINEAR
    keys = ()

    def __init__(self, width, code="f4"):
        self.width = width
        self.code = code

    def sync(self, s):
        item_size = 4 + self.width * np.dtype(self.code).itemsize
        n = s.count(len(self.keys), item_size=item_size, what="keys")
        if n:
            self.interpolation = s.u32(self.interpolation)
        self.keys = s.array(self.keys, key_dtype(s, self.width, self.interpolation, code=self.code), n)


@block_class("NiTransformData", "NiKeyframeData")
class NiTransformData(Block):
    """Rotation keys (quaternions w x y z, or three float key groups when the type is XYZ),
    translation keys and scale keys."""

    rotation_type = LINEAR
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


class _KeyData(Block):
    """One key group of ``width`` values of type ``code``."""

    width, code = 1, "f4"
    keys = None

    def sync(self, s):
        if s.reading or self.keys is None:
            self.keys = KeyGroup(self.width, self.code)
        self.keys.sync(s)


@block_class("NiFloatData")
class NiFloatData(_KeyData):
    pass


@block_class("NiPosData")
class NiPosData(_KeyData):
    width = 3


@block_class("NiColorData")
class NiColorData(_KeyData):
    width = 4


@block_class("NiBoolData")
class NiBoolData(_KeyData):
    code = "u1"
