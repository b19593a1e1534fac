"""What every hknp shape starts with, and the units shared by the shape modules.

hknpShape (0x30): hkReferencedObject (16 bytes), u16 flags, u8 shape key bits, u8 dispatch type,
f32 convex radius, u64 user data, properties pointer (hkRefCountedProperties), 8 bytes.
hknpCompositeShape (0x60) adds the edge welding map (an hknpSparseCompactMap: u32 secondary key
mask, u32 secondary key bits, two hkArray<u16>) and the u32 shape tag codec info.
"""

import numpy as np

from ...errors import FormatError
from ..objects import HavokObject

GAME_UNITS = 69.99125  # Fallout 4 game units per Havok unit

CONVEX = 1  # dispatch types
COMPOSITE = 2


def int24w(values):
    """Havok's "int24 in w": an integer stored in the mantissa of a float whose exponent bits are
    0x3F000000, as the bit pattern of a float32."""
    return (np.asarray(values, np.uint32) | np.uint32(0x3F000000)).view(np.float32)


def w_int(floats):
    """The integer an int24w float holds."""
    return np.asarray(floats, np.float32).view(np.uint32) & np.uint32(0xFFFFFF)


def spans(starts, lengths):
    """The indices of the ranges [start, start + length), concatenated, and the range each
    index belongs to."""
    lengths = np.asarray(lengths, np.int64)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    offsets = np.cumsum(lengths) - lengths
    return np.asarray(starts, np.int64)[owner] + np.arange(lengths.sum()) - offsets[owner], owner


def proper_triangles(triangles):
    """Which triangles have three distinct corners."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    return (a != b) & (b != c) & (a != c)


def quaternion_of(matrix):
    """The unit quaternion (x, y, z, w), w >= 0, of a rotation matrix."""
    w = np.sqrt(max(0.0, 1 + np.trace(matrix))) / 2
    x = np.copysign(np.sqrt(max(0.0, 1 + matrix[0, 0] - matrix[1, 1] - matrix[2, 2])) / 2, matrix[2, 1] - matrix[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1 - matrix[0, 0] + matrix[1, 1] - matrix[2, 2])) / 2, matrix[0, 2] - matrix[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1 - matrix[0, 0] - matrix[1, 1] + matrix[2, 2])) / 2, matrix[1, 0] - matrix[0, 1])
    quaternion = np.array([x, y, z, w])
    return quaternion / np.linalg.norm(quaternion)


def rotation_of(quaternion):
    """The rotation matrix of a quaternion (x, y, z, w)."""
    x, y, z, w = np.asarray(quaternion, np.float64) / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Shape(HavokObject):
    flags = 0
    shape_key_bits = 0
    dispatch_type = CONVEX

    def __init__(self):
        self.reference = bytes(16)
        self.flags = type(self).flags
        self.shape_key_bits = type(self).shape_key_bits
        self.dispatch_type = type(self).dispatch_type
        self.convex_radius = 0.0
        self.user_data = 0
        self.properties = None
        self.padding = bytes(8)

    def sync_shape(self, s):
        self.reference = s.raw(self.reference, 16)
        self.flags = s.u16(self.flags)
        self.shape_key_bits = s.u8(self.shape_key_bits)
        self.dispatch_type = s.u8(self.dispatch_type)
        self.convex_radius = s.f32(self.convex_radius)
        self.user_data = s.u64(self.user_data)
        self.properties = s.pointer(self.properties)
        self.padding = s.raw(self.padding, 8)

    def sync(self, s):
        self.sync_shape(s)


U16 = np.dtype("<u2")


class CompositeShape(Shape):
    dispatch_type = COMPOSITE

    def __init__(self):
        super().__init__()
        self.secondary_key_mask = 0xFFFFFFFF
        self.secondary_key_bits = 0
        self.primary_key_to_index = np.zeros(0, U16)
        self.value_and_secondary_keys = np.zeros(0, U16)
        self.shape_tag_codec_info = 0xFFFFFFFF
        self.composite_padding = bytes(4)

    def sync_composite(self, s):
        self.sync_shape(s)
        self.secondary_key_mask = s.u32(self.secondary_key_mask)
        self.secondary_key_bits = s.u32(self.secondary_key_bits)
        self.primary_key_to_index = s.hk_array(self.primary_key_to_index, U16, what="edge welding keys")
        self.value_and_secondary_keys = s.hk_array(self.value_and_secondary_keys, U16, what="edge welding values")
        self.shape_tag_codec_info = s.u32(self.shape_tag_codec_info)
        self.composite_padding = s.raw(self.composite_padding, 4)


def summary_of(shape, within=()):
    """The info summary of any shape object; raw or unknown shapes give their class only.
    ``within``: the compound shapes being summarised around this one (a damaged file may make a
    compound contain itself)."""
    if any(shape is outer for outer in within):
        raise FormatError(f"a {shape.class_name} contains itself")
    describe = getattr(shape, "summary", None)
    if describe is None:
        return {"type": getattr(shape, "class_name", None) or "none"}
    return describe(within)
