"""hkaSkeleton: bones, parents, reference pose and float slots.

+0x10 name, +0x18 parent indices (i16, -1 = root), +0x28 bones (name pointer, u8 lock
translation, 7 padding bytes), +0x38 reference pose (hkQsTransform: translation xyz_, rotation
quaternion xyzw, scale xyz_; 48 bytes), +0x48 reference floats (f32), +0x58 float slot names,
+0x68 local frames (object pointer + i16 bone, 16 bytes); hk_2014 adds +0x78 partitions (name,
i16 first bone, i16 bone count, 16 bytes).
"""

import numpy as np

from ..objects import STRING, HavokObject, havok_class
from .classes import BOTH, HK_2014, POINTER_SIZES

QS_TRANSFORM = np.dtype([("translation", "<f4", (4,)), ("rotation", "<f4", (4,)), ("scale", "<f4", (4,))])


class Bone:
    size = 16

    def __init__(self, name="", lock_translation=0):
        self.name = name
        self.lock_translation = lock_translation
        self.padding = bytes(7)

    def sync(self, s):
        self.name = s.string_ptr(self.name)
        self.lock_translation = s.bool8(self.lock_translation)
        self.padding = s.raw(self.padding, s.pointer_size - 1)


class LocalFrameOnBone:
    size = 16

    def __init__(self):
        self.frame = None
        self.bone = 0
        self.padding = bytes(6)

    def sync(self, s):
        self.frame = s.pointer(self.frame)
        self.bone = s.i16(self.bone)
        self.padding = s.raw(self.padding, s.pointer_size - 2)


class Partition:
    size = 16

    def __init__(self):
        self.name = None
        self.first_bone = 0
        self.bone_count = 0
        self.padding = bytes(4)

    def sync(self, s):
        self.name = s.string_ptr(self.name)
        self.first_bone = s.i16(self.first_bone)
        self.bone_count = s.i16(self.bone_count)
        self.padding = s.raw(self.padding, 4)


@havok_class("hkaSkeleton")
class SkeletonObject(HavokObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self):
        self.reference = bytes(16)
        self.name = None
        self.parents = np.zeros(0, "<i2")
        self.bones = []
        self.reference_pose = np.zeros(0, QS_TRANSFORM)
        self.reference_floats = np.zeros(0, "<f4")
        self.float_slots = []
        self.local_frames = []
        self.partitions = []

    def sync(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        self.name = s.string_ptr(self.name)
        self.parents = s.hk_array(self.parents, np.dtype("<i2"), what="parent indices")
        self.bones = s.hk_array(self.bones, Bone, what="bones")
        self.reference_pose = s.hk_array(self.reference_pose, QS_TRANSFORM, what="reference pose")
        self.reference_floats = s.hk_array(self.reference_floats, np.dtype("<f4"), what="reference floats")
        self.float_slots = s.hk_array(self.float_slots, STRING, what="float slots")
        self.local_frames = s.hk_array(self.local_frames, LocalFrameOnBone, what="local frames")
        if s.version >= HK_2014:
            self.partitions = s.hk_array(self.partitions, Partition, what="partitions")
