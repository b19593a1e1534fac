"""The packed numbers of a .bsm2 vertex (FORMAT-NOTES section 9): signed 10:10:10:2 normals
and tangents, u16 texture coordinates, u8 bone weights summing to 255."""

import numpy as np

from ..errors import FormatError

SNORM = 511
UV_SCALE = 65535
WEIGHT_TOTAL = 255
INFLUENCES = 4


def _signed(values, bits):
    values = values.astype(np.int16)
    return np.where(values >= 1 << (bits - 1), values - (1 << bits), values).astype(np.int16)


def unpack_1010102(raw):
    """u32 values -> (xyz (n, 3) int16 in -512..511, w (n,) int8 in -2..1)."""
    raw = np.asarray(raw, np.uint32)
    xyz = np.stack([_signed((raw >> shift) & 0x3FF, 10) for shift in (0, 10, 20)], axis=-1)
    return xyz, _signed(raw >> 30, 2).astype(np.int8)


def pack_1010102(xyz, w):
    """The inverse of ``unpack_1010102`` (two's complement fields)."""
    xyz = np.asarray(xyz, np.int64) & 0x3FF
    w = np.asarray(w, np.int64) & 0x3
    return (xyz[..., 0] | xyz[..., 1] << 10 | xyz[..., 2] << 20 | w << 30).astype(np.uint32)


def snorm_decode(xyz):
    """Components as floats, k / 511. -512 stays -512/511 so that ``snorm_encode`` gives it back;
    use ``np.maximum(v, -1)`` where the value is read as a direction."""
    return np.asarray(xyz, np.float32) / np.float32(SNORM)


def snorm_encode(values):
    """round(c * 511) kept in the 10-bit range: unit vectors quantise as the format says, and
    values from ``snorm_decode`` come back exactly."""
    return np.clip(np.round(np.asarray(values, np.float64) * SNORM), -512, 511).astype(np.int16)


def uv_decode(raw):
    return np.asarray(raw, np.float32) / np.float32(UV_SCALE)


def uv_encode(values):
    return np.round(np.clip(np.asarray(values, np.float64), 0.0, 1.0) * UV_SCALE).astype(np.uint16)


def pack_weights(bones, weights):
    """Per vertex: any number of (bone, weight) pairs -> the four largest as u8 bone indices and
    u8 weights summing to exactly 255, sorted descending, zeros last with bone 0 (the engine
    stops at the first zero weight). Raises FormatError naming the vertices with no weight."""
    bones = np.asarray(bones, np.int64)
    weights = np.clip(np.asarray(weights, np.float64), 0.0, None)
    n = len(weights)
    if weights.shape[1] < INFLUENCES:
        pad = INFLUENCES - weights.shape[1]
        weights = np.pad(weights, ((0, 0), (0, pad)))
        bones = np.pad(bones, ((0, 0), (0, pad)))
    order = np.argsort(-weights, axis=1, kind="stable")[:, :INFLUENCES]
    weights = np.take_along_axis(weights, order, axis=1)
    bones = np.take_along_axis(bones, order, axis=1)
    total = weights.sum(axis=1)
    empty = np.flatnonzero(total <= 0)
    if len(empty):
        listed = ", ".join(map(str, empty[:5])) + (", ..." if len(empty) > 5 else "")
        raise FormatError(f"{len(empty)} vertices have no bone weight (vertex {listed})")
    scaled = weights / total[:, None] * WEIGHT_TOTAL
    quantised = np.floor(scaled)
    # Largest remainders get the units the floors lost, so the sum is exactly 255.
    missing = (WEIGHT_TOTAL - quantised.sum(axis=1)).astype(np.int64)
    by_remainder = np.argsort(-(scaled - quantised), axis=1, kind="stable")
    bonus = np.arange(INFLUENCES)[None, :] < missing[:, None]
    np.add.at(quantised, (np.repeat(np.arange(n), INFLUENCES), by_remainder.ravel()), bonus.ravel())
    order = np.argsort(-quantised, axis=1, kind="stable")
    quantised = np.take_along_axis(quantised, order, axis=1)
    bones = np.where(quantised > 0, np.take_along_axis(bones, order, axis=1), 0)
    return bones.astype(np.uint8), quantised.astype(np.uint8)
