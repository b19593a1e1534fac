"""hkaSplineCompressedAnimation: the object; decoding is in spline_decode, encoding in
spline_encode.

After hkaAnimation: +0x38 frame count, block count, frames per block (i32), +0x44 mask and
quantisation size (bytes of masks at the start of each block: 4 per transform track, 1 per float
track), +0x48 block duration, its inverse and the frame duration (f32), 4 padding bytes, +0x58
block offsets (u32, into the data), +0x68 float block offsets (u32, from the block's start to its
float tracks), +0x78 transform offsets and +0x88 float offsets (u32, empty in the games' files),
+0x98 data (u8), +0xA8 endian (i32, 0 little).
"""

import numpy as np

from ..objects import havok_class
from .base import AnimationObject
from .classes import BOTH, POINTER_SIZES

U32 = np.dtype("<u4")


@havok_class("hkaSplineCompressedAnimation")
class SplineAnimation(AnimationObject):
    versions = BOTH
    pointer_sizes = POINTER_SIZES

    def __init__(self):
        super().__init__()
        self.frame_count = 0
        self.block_count = 0
        self.frames_per_block = 256
        self.mask_size = 0
        self.block_duration = 0.0
        self.block_inverse_duration = 0.0
        self.frame_duration = 0.0
        self.padding = bytes(4)
        self.block_offsets = np.zeros(0, U32)
        self.float_block_offsets = np.zeros(0, U32)
        self.transform_offsets = np.zeros(0, U32)
        self.float_offsets = np.zeros(0, U32)
        self.data = np.zeros(0, "u1")
        self.endian = 0
        self.tail = bytes(4)

    def sync(self, s):
        self.sync_base(s)
        self.frame_count = s.i32(self.frame_count)
        self.block_count = s.i32(self.block_count)
        self.frames_per_block = s.i32(self.frames_per_block)
        self.mask_size = s.i32(self.mask_size)
        self.block_duration = s.f32(self.block_duration)
        self.block_inverse_duration = s.f32(self.block_inverse_duration)
        self.frame_duration = s.f32(self.frame_duration)
        self.padding = s.raw(self.padding, s.pointer_size - 4)
        self.block_offsets = s.hk_array(self.block_offsets, U32, what="block offsets")
        self.float_block_offsets = s.hk_array(self.float_block_offsets, U32, what="float block offsets")
        self.transform_offsets = s.hk_array(self.transform_offsets, U32, what="transform offsets")
        self.float_offsets = s.hk_array(self.float_offsets, U32, what="float offsets")
        self.data = s.hk_array(self.data, np.dtype("u1"), what="spline data")
        self.endian = s.i32(self.endian)
        self.tail = s.raw(self.tail, s.pointer_size - 4)
