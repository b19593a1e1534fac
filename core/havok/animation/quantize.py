"""The quantisations of spline-compressed animation, both directions, on whole arrays.

Scalars (positions, scales, floats): 8 or 16 bits between a per-spline minimum and maximum.
Rotations keep the three smallest components of the unit quaternion ("smallest three"): the
largest is rebuilt from the unit length, its index and sign stored beside them.

- THREECOMP40 (5 bytes, 1-aligned): three 12-bit fields, bits 36-37 the dropped index, bit 38
  its sign.
- THREECOMP48 (6 bytes, 2-aligned): three u16 of 15 bits; the dropped index is bit 15 of the
  first (low) and of the second (high); bit 15 of the third is the sign.
- UNCOMPRESSED (16 bytes, 4-aligned): x y z w f32.
Components lie in [-1/sqrt2, 1/sqrt2] once the largest is dropped, mapped onto the field's
range around its middle value.
"""

import numpy as np

from ...errors import FormatError

THREECOMP40, THREECOMP48, UNCOMPRESSED = 1, 2, 5
ROTATION_NAMES = {0: "POLAR32", 1: "THREECOMP40", 2: "THREECOMP48", 3: "THREECOMP24", 4: "STRAIGHT16", 5: "UNCOMPRESSED"}
ROTATION_SIZE = {THREECOMP40: 5, THREECOMP48: 6, UNCOMPRESSED: 16}
ROTATION_ALIGN = {THREECOMP40: 1, THREECOMP48: 2, UNCOMPRESSED: 4}
SCALAR_SIZE = {0: 1, 1: 2}  # BITS8, BITS16
_TOP = np.array([255.0, 65535.0], np.float32)  # the largest 8- and 16-bit codes
_MIDDLE = {THREECOMP40: 2047, THREECOMP48: 16383}  # (field mask) >> 1


def check_rotation(kind, where):
    if kind not in ROTATION_SIZE:
        name = ROTATION_NAMES.get(kind, f"type {kind}")
        raise FormatError(f"{where}: rotation quantisation {name} is not supported (THREECOMP40, THREECOMP48 and UNCOMPRESSED are)")


def check_scalar(kind, where):
    if kind not in SCALAR_SIZE:
        raise FormatError(f"{where}: scalar quantisation {kind} is not 8 or 16 bits")


def scalars_from(data, at, bits16, low, high):
    """Values from the codes at byte offsets ``at`` of ``data`` (u8): little-endian u16 where
    ``bits16``, else u8."""
    words = np.ndarray((max(len(data) - 1, 0),), "<u2", data, 0, (1,))  # the u16 at every byte offset
    # an 8-bit code in the last byte has no u16: its index clipped, the u16 unused
    codes = np.where(bits16, words.take(at, mode="clip"), data.take(at))
    return scalars_from_codes(codes, bits16, low, high)


def scalars_from_codes(codes, bits16, low, high):
    top = _TOP.take(bits16)
    return (low + (high - low) * (codes.astype(np.float32) / top)).astype(np.float32)


def scalars_to(values, bits16, low, high):
    """The integers encoding ``values`` (rounded to nearest) between ``low`` and ``high``."""
    top = 65535.0 if bits16 else 255.0
    span = np.where(high > low, high - low, 1.0)
    return np.clip(np.rint((values - low) / span * top), 0, top).astype(np.uint32)


def _field_values(kind):
    """The component each field value stands for (float32, indexed by the field)."""
    middle = _MIDDLE[kind]
    scale = np.float32(1.0 / (middle * np.sqrt(2.0)))
    return ((np.arange(2 * middle + 2, dtype=np.int32) - middle) * scale).astype(np.float32)


_FIELD_VALUES = {kind: _field_values(kind) for kind in _MIDDLE}
# per dropped index, where each column comes from: a kept component (0-2) or the dropped one (3)
_COLUMNS = np.array([[c if c < dropped else 3 if c == dropped else c - 1 for c in range(4)] for dropped in range(4)])


def _u16(raw, at):
    """The little-endian u16 at byte ``at`` of every row of ``raw`` (n, size), as a view."""
    return np.ndarray((len(raw),), "<u2", raw, at, (raw.shape[1],))


def rotations_from(raw, kind):
    """Quaternions x y z w (n, 4) float32 from the bytes (n, size) of one quantisation."""
    raw = np.ascontiguousarray(raw)
    if kind == UNCOMPRESSED:
        return raw.view("<f4").reshape(-1, 4).astype(np.float32)
    fields = np.empty((len(raw), 3), np.uint16)
    if kind == THREECOMP40:
        np.bitwise_and(_u16(raw, 0), 0xFFF, out=fields[:, 0])
        np.right_shift(_u16(raw, 1), 4, out=fields[:, 1])
        np.bitwise_and(_u16(raw, 3), 0xFFF, out=fields[:, 2])
        index = raw[:, 4] >> 4 & 3
        negative = raw[:, 4] & 0x40 != 0
    else:
        words = raw.view("<u2")
        np.bitwise_and(words, 0x7FFF, out=fields)
        index = (words[:, 1] >> 14 & 2) | (words[:, 0] >> 15)
        negative = words[:, 2] >= 0x8000
    # the kept components, then the dropped one rebuilt from the unit length
    three = _FIELD_VALUES[kind].take(fields)
    largest = np.sqrt(np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", three, three)))
    stored = np.empty((len(raw), 4), np.float32)  # the kept components, then the dropped one
    stored[:, :3] = three
    stored[:, 3] = np.where(negative, -largest, largest)
    # each row's components put in place: after a dropped x, y or z the others move right
    return stored.ravel().take(_COLUMNS.take(index, axis=0) + 4 * np.arange(len(raw))[:, None])


def rotations_to(quaternions, kind):
    """Bytes (n, size) encoding unit quaternions x y z w (n, 4)."""
    q = np.asarray(quaternions, np.float64).reshape(-1, 4)
    if kind == UNCOMPRESSED:
        return q.astype("<f4").view(np.uint8).reshape(-1, 16)
    n = len(q)
    index = np.argmax(np.abs(q), axis=1)
    negative = q[np.arange(n), index] < 0
    keep = np.ones((n, 4), bool)
    keep[np.arange(n), index] = False
    three = q[keep].reshape(n, 3)
    middle = _MIDDLE[kind]
    fields = np.clip(np.rint(three * (middle * np.sqrt(2.0)) + middle), 0, 2 * middle).astype(np.uint64)
    if kind == THREECOMP40:
        bits = fields[:, 0] | (fields[:, 1] << np.uint64(12)) | (fields[:, 2] << np.uint64(24))
        bits |= index.astype(np.uint64) << np.uint64(36)
        bits |= negative.astype(np.uint64) << np.uint64(38)
        return bits.astype("<u8").view(np.uint8).reshape(n, 8)[:, :5]
    words = fields.astype(np.uint16)
    words[:, 0] |= ((index & 1) << 15).astype(np.uint16)
    words[:, 1] |= ((index >> 1) << 15).astype(np.uint16)
    words[:, 2] |= (negative.astype(np.uint16) << 15)
    return words.astype("<u2").view(np.uint8).reshape(n, 6)
