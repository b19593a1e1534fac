"""The animation packfile's object classes, hk_2010 (Skyrim SE) and hk_2014 (Fallout 4), both
with 8-byte pointers. Every hkReferencedObject starts with 16 bytes (vtable, memory size and
reference count) that packfiles leave zero; they are kept as read.

- hkRootLevelContainer (not referenced-counted): hkArray of named variants (name, class name,
  object pointer), 24 bytes each.
- hkaAnimationContainer: +0x10 skeletons, +0x20 animations, +0x30 bindings, +0x40 attachments,
  +0x50 skins: hkArrays of object pointers.
- hkaAnimationBinding: +0x10 original skeleton name, +0x18 animation pointer, +0x20 transform
  track to bone indices (i16; empty = track i drives bone i), +0x30 float track to float slot
  indices (i16); hk_2014 adds +0x40 partition indices (i16); then the blend hint (i8: 0 normal,
  1 additive).
- hkaDefaultAnimatedReferenceFrame (root motion): hk_2014 has a frame type byte (+0x10, padded to
  16); then up and forward vectors, duration and an hkArray of samples (xyz translation, w yaw
  angle), one per frame. 32-bit (hk_2010): up at +0x10, samples at +0x34.
- hkMemoryResourceContainer: +0x10 name, +0x18 parent pointer, +0x20 resource handles, +0x30
  children (object pointers).
"""

import numpy as np

from ...errors import FormatError
from ..header import HK_2010, HK_2014
from ..objects import POINTER, HavokObject, havok_class

BOTH = (HK_2010, HK_2014)
POINTER_SIZES = (4, 8)  # 32-bit Skyrim LE files share the hk_2010 classes
VEC4 = np.dtype(("<f4", (4,)))


class NamedVariant:
    size = 24

    def __init__(self, name="", class_name="", obj=None):
        self.name = name
        self.class_name = class_name
        self.object = obj

    def sync(self, s):
        self.name = s.string_ptr(self.name)
        self.class_name = s.string_ptr(self.class_name)
        self.object = s.pointer(self.object)


@havok_class("hkRootLevelContainer")
class RootLevelContainer(HavokObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self, variants=()):
        self.variants = list(variants)

    def sync(self, s):
        self.variants = s.hk_array(self.variants, NamedVariant, what="named variants")

    def find(self, class_name):
        """The first variant object of that class, or None."""
        return next((v.object for v in self.variants if v.object is not None and v.object.class_name == class_name), None)


@havok_class("hkaAnimationContainer")
class AnimationContainer(HavokObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self, skeletons=(), animations=(), bindings=()):
        self.reference = bytes(16)
        self.skeletons = list(skeletons)
        self.animations = list(animations)
        self.bindings = list(bindings)
        self.attachments = []
        self.skins = []

    def sync(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        self.skeletons = s.hk_array(self.skeletons, POINTER, what="skeletons")
        self.animations = s.hk_array(self.animations, POINTER, what="animations")
        self.bindings = s.hk_array(self.bindings, POINTER, what="bindings")
        self.attachments = s.hk_array(self.attachments, POINTER, what="attachments")
        self.skins = s.hk_array(self.skins, POINTER, what="skins")


@havok_class("hkaAnimationBinding")
class AnimationBinding(HavokObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self, animation=None, skeleton_name=None, track_bones=(), float_slots=(), blend_hint=0):
        self.reference = bytes(16)
        self.skeleton_name = skeleton_name
        self.animation = animation
        self.track_bones = np.asarray(track_bones, "<i2")
        self.float_slots = np.asarray(float_slots, "<i2")
        self.partitions = np.zeros(0, "<i2")
        self.blend_hint = blend_hint
        self.padding = bytes(7)

    def sync(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        self.skeleton_name = s.string_ptr(self.skeleton_name)
        self.animation = s.pointer(self.animation)
        self.track_bones = s.hk_array(self.track_bones, np.dtype("<i2"), what="track to bone indices")
        self.float_slots = s.hk_array(self.float_slots, np.dtype("<i2"), what="float track to slot indices")
        if s.version >= HK_2014:
            self.partitions = s.hk_array(self.partitions, np.dtype("<i2"), what="partition indices")
        self.blend_hint = s.i8(self.blend_hint)
        self.padding = s.raw(self.padding, s.pointer_size - 1)


@havok_class("hkaDefaultAnimatedReferenceFrame")
class AnimatedReferenceFrame(HavokObject):
    """With 32-bit pointers (hk_2010 only) the 8 bytes of hkReferencedObject are padded to 16
    for the first vector, and the samples' hkArray follows the duration at once (+0x34)."""

    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self, samples=None, duration=0.0):
        self.reference = bytes(16)
        self.frame_type = bytes(16)  # hk_2014 only: u8 frame type (0 default) and padding
        self.up = (0.0, 0.0, 1.0, 0.0)
        self.forward = (0.0, 1.0, 0.0, 0.0)
        self.duration = duration
        self.padding = bytes(4)
        self.samples = np.zeros((0, 4), "<f4") if samples is None else np.asarray(samples, "<f4")

    def sync(self, s):
        if s.pointer_size == 4 and s.version >= HK_2014:
            raise FormatError("a 32-bit hk_2014 reference frame is not supported")
        self.reference = s.raw(self.reference, 16)  # 32-bit: hkReferencedObject's 8 bytes and 8 of padding
        if s.version >= HK_2014:
            self.frame_type = s.raw(self.frame_type, 16)
        self.up = s.vec4(self.up)
        self.forward = s.vec4(self.forward)
        self.duration = s.f32(self.duration)
        self.padding = s.raw(self.padding, s.pointer_size - 4)
        self.samples = s.hk_array(self.samples, VEC4, what="reference frame samples")


@havok_class("hkMemoryResourceContainer")
class MemoryResourceContainer(HavokObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self, name=""):
        self.reference = bytes(16)
        self.name = name
        self.parent = None
        self.handles = []
        self.children = []

    def sync(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        self.name = s.string_ptr(self.name)
        self.parent = s.pointer(self.parent)
        self.handles = s.hk_array(self.handles, POINTER, what="resource handles")
        self.children = s.hk_array(self.children, POINTER, what="resource containers")
