"""hkaSplineCompressedAnimation data read with struct, key by key, apart from the product's
decoder (core/havok/animation/spline_*): what the Havok animation tests compare it with.

Rotation quantisations as Havok lays them out (hkaSplineCompressedAnimation's
RotationQuantization; the public readers HavokLib's hka_spline_decompressor and PyNifly's
anim_fo4 agree on the bits). "Smallest three": the largest of the unit quaternion's x y z w is
dropped, rebuilt from the unit length; the other three are kept in order, each mapped from
[-1/sqrt2, 1/sqrt2] onto an unsigned field around its middle code ``mask >> 1``.
- 1 THREECOMP40, 5 bytes, 1-aligned: a 40-bit little-endian integer, bits 0-11, 12-23, 24-35
  the kept components, bits 36-37 the dropped one's index, bit 38 its sign (1: negative).
- 2 THREECOMP48, 6 bytes, 2-aligned: three u16 holding 15-bit kept components; bit 15 of the
  first is bit 0 of the dropped index, bit 15 of the second its bit 1, bit 15 of the third the
  sign.
- 5 UNCOMPRESSED, 16 bytes, 4-aligned: x y z w as f32.
- 0 POLAR32, 3 THREECOMP24 and 4 STRAIGHT16 exist too; the games' files do not use them.

B-splines are evaluated by the recursive Cox-de Boor definition."""

import struct
from typing import NamedTuple

import numpy as np

POLAR32, THREECOMP40, THREECOMP48, THREECOMP24, STRAIGHT16, UNCOMPRESSED = range(6)
MASK = {THREECOMP40: 0xFFF, THREECOMP48: 0x7FFF}


def _align(pos, n):
    return (pos + n - 1) // n * n


# -- rotations, both ways ----------------------------------------------------------------------
def smallest_three(codes, index, negative, kind):
    """The quaternion (x, y, z, w) that kept-component ``codes``, a dropped ``index`` and its sign
    stand for."""
    middle = MASK[kind] >> 1
    three = [(code - middle) / (middle * 2**0.5) for code in codes]
    dropped = max(0.0, 1 - sum(c * c for c in three)) ** 0.5
    return three[:index] + [-dropped if negative else dropped] + three[index:]


def pack_rotation(codes, index, negative, kind):
    """The bytes of kept-component ``codes``, dropped ``index`` and sign in layout ``kind``."""
    if kind == THREECOMP40:
        bits = codes[0] | codes[1] << 12 | codes[2] << 24 | index << 36 | int(negative) << 38
        return bits.to_bytes(5, "little")
    return struct.pack("<3H", codes[0] | (index & 1) << 15, codes[1] | (index >> 1) << 15, codes[2] | int(negative) << 15)


def unpack_rotation(raw, kind):
    """(codes, dropped index, negative) of a THREECOMP40 or THREECOMP48 quaternion's bytes."""
    if kind == THREECOMP40:
        bits = int.from_bytes(raw, "little")
        return [(bits >> (12 * k)) & 0xFFF for k in range(3)], (bits >> 36) & 3, bool(bits >> 38 & 1)
    x, y, z = struct.unpack("<3H", raw)
    return [x & 0x7FFF, y & 0x7FFF, z & 0x7FFF], (x >> 15) | (y >> 15) << 1, bool(z >> 15)


def read_rotation(raw, kind):
    if kind == UNCOMPRESSED:
        return list(struct.unpack("<4f", raw))
    return smallest_three(*unpack_rotation(raw, kind), kind)


ROTATION_BYTES = {THREECOMP40: (5, 1), THREECOMP48: (6, 2), UNCOMPRESSED: (16, 4)}  # size, alignment


# -- splines -----------------------------------------------------------------------------------
def _basis(i, p, u, knots):
    """N_{i,p}(u) by the recursive definition (0/0 = 0)."""
    if p == 0:
        return 1.0 if knots[i] <= u < knots[i + 1] else 0.0
    total = 0.0
    if knots[i + p] != knots[i]:
        total += (u - knots[i]) / (knots[i + p] - knots[i]) * _basis(i, p - 1, u, knots)
    if knots[i + p + 1] != knots[i + 1]:
        total += (knots[i + p + 1] - u) / (knots[i + p + 1] - knots[i + 1]) * _basis(i + 1, p - 1, u, knots)
    return total


def value_at(value, u):
    """A spline's (degree, knots, points) value at local frame ``u``, or a static value."""
    if not isinstance(value, tuple):
        return np.array(value, float)
    degree, knots, points = value
    n = len(points) - 1
    if u >= knots[n + 1]:
        return np.array(points[n], float)
    value = np.zeros(len(points[0]))
    for i in range(n + 1):
        if knots[i] <= u < knots[i + degree + 1]:
            value += _basis(i, degree, u, knots) * np.array(points[i])
    return value


def _read_vector(data, pos, flags, quant, identity):
    assert quant == 1, "the corpus and the writer use 16-bit positions and scales"
    if flags & 0x70:
        n, degree = struct.unpack_from("<HB", data, pos)
        knots = list(data[pos + 3 : pos + 3 + n + degree + 2])
        pos = _align(pos + 3 + n + degree + 2, 4)
        axes = []
        for axis in range(3):
            if flags >> (4 + axis) & 1:
                axes.append(("spline", *struct.unpack_from("<2f", data, pos)))
                pos += 8
            elif flags >> axis & 1:
                axes.append(("static", struct.unpack_from("<f", data, pos)[0]))
                pos += 4
            else:
                axes.append(("static", identity))
        points = []
        for _ in range(n + 1):
            point = []
            for axis in axes:
                if axis[0] == "spline":
                    point.append(axis[1] + (axis[2] - axis[1]) * struct.unpack_from("<H", data, pos)[0] / 65535)
                    pos += 2
                else:
                    point.append(axis[1])
            points.append(point)
        return _align(pos, 4), (degree, knots, points)
    value = []
    for axis in range(3):
        if flags >> axis & 1:
            value.append(struct.unpack_from("<f", data, pos)[0])
            pos += 4
        else:
            value.append(identity)
    return pos, value


def _read_rotation(data, pos, flags, quant):
    """(next position, spline (degree, knots, points) or static value, the quaternions' bytes)."""
    size, alignment = ROTATION_BYTES[quant]
    if flags & 0xF0:
        n, degree = struct.unpack_from("<HB", data, pos)
        knots = list(data[pos + 3 : pos + 3 + n + degree + 2])
        pos = _align(pos + 3 + n + degree + 2, alignment)
        raw = [bytes(data[pos + size * i : pos + size * i + size]) for i in range(n + 1)]
        return _align(pos + size * (n + 1), 4), (degree, knots, [read_rotation(r, quant) for r in raw]), raw
    if flags & 0x0F:
        pos = _align(pos, alignment)
        raw = bytes(data[pos : pos + size])
        return _align(pos + size, 4), read_rotation(raw, quant), [raw]
    return pos, [0.0, 0.0, 0.0, 1.0], []


class Track(NamedTuple):
    """One track of a block: position, rotation and scale, each a spline (degree, knots, points)
    or a static value; the rotation's quantisation, its quaternions' bytes, and whether it is static."""

    position: object
    rotation: object
    scale: object
    rotation_quantisation: int
    rotation_bytes: list
    static_rotation: bool


def read_block(data, start, mask_size, tracks):
    """The block at ``start``: a Track per track."""
    pos = _align(start + mask_size, 4)
    found = []
    for track in range(tracks):
        quant, position_flags, rotation_flags, scale_flags = data[start + 4 * track : start + 4 * track + 4]
        pos, position = _read_vector(data, pos, position_flags, quant & 3, 0.0)
        pos = _align(pos, 4)
        rotation_quant = (quant >> 2) & 15
        pos, rotation, raw = _read_rotation(data, pos, rotation_flags, rotation_quant)
        pos, scale = _read_vector(data, pos, scale_flags, quant >> 6, 1.0)
        found.append(Track(position, rotation, scale, rotation_quant, raw, not rotation_flags & 0xF0))
    return found


def spline_fields(obj_bytes, data_at):
    """(track count, frame count, block count, frames per block, mask size, block offsets, data)
    of an hkaSplineCompressedAnimation's bytes (64-bit, as stored in the file); ``data_at``: where
    its block offsets ("blocks") and data ("data") are."""
    tracks, _floats = struct.unpack_from("<ii", obj_bytes, 0x18)
    frame_count, blocks, per_block, mask_size = struct.unpack_from("<4i", obj_bytes, 0x38)
    data_size, = struct.unpack_from("<I", obj_bytes, 0x98 + 8)
    data = obj_bytes[data_at["data"] : data_at["data"] + data_size]
    block_offsets = struct.unpack_from(f"<{blocks}I", obj_bytes, data_at["blocks"])
    return tracks, frame_count, blocks, per_block, mask_size, block_offsets, data


def independent_frames(obj_bytes, data_at, frames_wanted):
    """{frame: (translations, rotations, scales)} read from the object's bytes."""
    tracks, _, blocks, per_block, mask_size, block_offsets, data = spline_fields(obj_bytes, data_at)
    result = {}
    for frame in frames_wanted:
        block = min(frame // (per_block - 1), blocks - 1)
        u = frame - block * (per_block - 1)
        translations, rotations, scales = [], [], []
        for track in read_block(data, block_offsets[block], mask_size, tracks):
            translations.append(value_at(track.position, u))
            q = value_at(track.rotation, u)
            rotations.append(q / np.linalg.norm(q))
            scales.append(value_at(track.scale, u))
        result[frame] = (np.array(translations), np.array(rotations), np.array(scales))
    return result
