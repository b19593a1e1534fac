"""Blender keeps integers (custom properties, int attributes) as int32; the files' u32 values
(flags, offsets, material ids) go in and come out through these, bit for bit."""

import numpy as np


def to_int32(value):
    """A u32 as the int32 holding its bits."""
    return int(np.array(value, np.uint32).view(np.int32))


def to_uint32(value):
    """The u32 whose bits an int32 holds (a value already in u32 range is returned as it is)."""
    return int(value) & 0xFFFFFFFF
