"""Rotation quantisations of spline-compressed Havok animations, for every dropped component
(x, y, z, w) with either sign: bytes built here to Havok's layouts (tests/raw_hkx_spline.py)
decode to the values those layouts give, quaternions encode to those bytes, a block built here
byte by byte decodes through the whole spline decoder, and the encoder's own files use every
index and sign and read back (by the struct reader) as the animation written. The corpus and the
games' tools only write THREECOMP40 with a dominant w, so these are the tests of the rest."""

import itertools
import struct

import numpy as np
import pytest
from raw_hkx_spline import (
    MASK, POLAR32, STRAIGHT16, THREECOMP24, THREECOMP40, THREECOMP48, UNCOMPRESSED, pack_rotation, read_block,
    smallest_three, unpack_rotation, value_at,
)

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok.animation.quantize import rotations_from, rotations_to, scalars_from
from precombined_nif.core.havok.animation.spline import SplineAnimation
from precombined_nif.core.havok.animation.spline_decode import decode_spline
from precombined_nif.core.havok.animation.spline_encode import encode_spline

THREE_COMPONENTS = (THREECOMP40, THREECOMP48)
SUPPORTED = THREE_COMPONENTS + (UNCOMPRESSED,)
DROPPED = list(itertools.product(range(4), (False, True)))  # every index with either sign


def codes_of(kind):
    """Kept-component codes: the middle, both ends of the encoded range, the field's top value
    (above the range: what a 12-bit or 15-bit mask lets through) and spread values."""
    mask = MASK[kind]
    middle = mask >> 1
    rng = np.random.default_rng(kind)
    fixed = [(middle, middle, middle), (0, 2 * middle, middle + 1), (mask, middle - 1, 0), (1, mask, 2 * middle)]
    spread = [tuple(int(c) for c in row) for row in rng.integers(0, mask + 1, (6, 3))]
    return fixed + spread


def small_codes_of(kind):
    """Codes whose dropped component stays the largest (all kept within +-0.35), so an encoder
    picks that same index: what the encoding tests use."""
    middle = MASK[kind] >> 1
    rng = np.random.default_rng(100 + kind)
    return [(middle, middle, middle)] + [tuple(int(c) for c in row) for row in rng.integers(middle // 2, middle + middle // 2, (5, 3))]


def dominant_quaternion(index, negative, seed=0):
    """A unit quaternion whose component ``index`` is the largest, with that sign."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-0.35, 0.35, 4)
    q[index] = -0.85 if negative else 0.85
    return q / np.linalg.norm(q)


def bytes_array(raws):
    return np.frombuffer(b"".join(raws), np.uint8).reshape(len(raws), -1)


@pytest.mark.parametrize("kind", THREE_COMPONENTS, ids=["THREECOMP40", "THREECOMP48"])
def test_every_dropped_component_decodes_to_the_documented_value(kind):
    cases = [(codes, index, negative) for index, negative in DROPPED for codes in codes_of(kind)]
    decoded = rotations_from(bytes_array([pack_rotation(*case, kind) for case in cases]), kind)
    expected = np.array([smallest_three(*case, kind) for case in cases])
    rows, index = np.arange(len(cases)), np.array([index for _, index, _ in cases])
    kept = np.ones(expected.shape, bool)
    kept[rows, index] = False
    np.testing.assert_allclose(decoded[kept], expected[kept], atol=2e-7, rtol=0)
    # the dropped one is the square root of 1 - (sum of squares), that difference taken in float32
    dropped, expected_dropped = decoded[rows, index], expected[rows, index]
    np.testing.assert_allclose(dropped**2, expected_dropped**2, atol=4e-7, rtol=0)
    assert (np.sign(dropped) == np.sign(expected_dropped))[np.abs(expected_dropped) > 1e-3].all()


@pytest.mark.parametrize("kind", THREE_COMPONENTS, ids=["THREECOMP40", "THREECOMP48"])
def test_every_dropped_component_encodes_to_the_documented_bytes(kind):
    cases = [(codes, index, negative) for index, negative in DROPPED for codes in small_codes_of(kind)]
    quaternions = np.array([smallest_three(*case, kind) for case in cases])
    encoded = rotations_to(quaternions, kind)
    assert [unpack_rotation(bytes(raw), kind) for raw in encoded] == [(list(c), i, n) for c, i, n in cases]
    assert encoded.tobytes() == b"".join(pack_rotation(*case, kind) for case in cases)


def test_threecomp40_ignores_its_unused_top_bit():
    raw = pack_rotation((100, 2047, 4000), 2, True, THREECOMP40)
    flipped = raw[:4] + bytes([raw[4] | 0x80])
    decoded = rotations_from(bytes_array([raw, flipped]), THREECOMP40)
    np.testing.assert_array_equal(decoded[0], decoded[1])


def test_scalar_codes_read_at_any_byte_to_the_last():
    """8- and 16-bit scalar codes at odd and even offsets, an 8-bit one in the data's last byte:
    the value between the minimum and the maximum their little-endian code gives."""
    data = np.array([0x34, 0x12, 0xFF, 0x80], np.uint8)
    at = np.array([0, 1, 2, 3])
    bits16 = np.array([True, True, False, False])
    low, high = np.float32([-1.0, 0.0, 2.0, -4.0]), np.float32([1.0, 10.0, 3.0, 4.0])
    codes = [0x1234, 0xFF12, 0xFF, 0x80]
    top = [65535, 65535, 255, 255]
    expected = [np.float32(lo + (hi - lo) * np.float32(np.float32(c) / np.float32(t))) for lo, hi, c, t in zip(low, high, codes, top)]
    np.testing.assert_array_equal(scalars_from(data, at, bits16, low, high), np.float32(expected))


def test_uncompressed_rotations_keep_their_component_order():
    quaternions = np.array([dominant_quaternion(index, negative, seed=k) for k, (index, negative) in enumerate(DROPPED)])
    raws = [struct.pack("<4f", *q) for q in quaternions]
    np.testing.assert_array_equal(rotations_from(bytes_array(raws), UNCOMPRESSED), quaternions.astype(np.float32))
    assert rotations_to(quaternions, UNCOMPRESSED).tobytes() == b"".join(raws)


# -- a block built here byte by byte, through the whole decoder -----------------------------
def _rotation_payloads(kind):
    """Per (index, sign): (the quaternion's bytes, the value it stands for)."""
    if kind == UNCOMPRESSED:
        quaternions = [dominant_quaternion(index, negative, seed=k) for k, (index, negative) in enumerate(DROPPED)]
        return [(struct.pack("<4f", *q), np.float32(q)) for q in quaternions]
    codes = small_codes_of(kind)
    return [(pack_rotation(codes[k % len(codes)], index, negative, kind), smallest_three(codes[k % len(codes)], index, negative, kind))
            for k, (index, negative) in enumerate(DROPPED)]


def _pad(data, alignment):
    return data + bytes(-len(data) % alignment)


def hand_block(kind):
    """One block: track 0 a linear rotation spline through the eight (index, sign) quaternions,
    one per frame (knots 0 0 1 .. 7 7), tracks 1-8 each one of them static; positions and scales
    identity. Returns (the SplineAnimation, the expected rotations (8 frames, 9 tracks, 4))."""
    size, alignment = {THREECOMP40: (5, 1), THREECOMP48: (6, 2), UNCOMPRESSED: (16, 4)}[kind]
    payloads = _rotation_payloads(kind)
    tracks = 1 + len(payloads)
    data = bytes([kind << 2, 0, 0xF0, 0]) + b"".join(bytes([kind << 2, 0, 0x0F, 0]) for _ in payloads)
    knots = bytes([0, 0, *range(1, 7), 7, 7])
    data += struct.pack("<HB", len(payloads) - 1, 1) + knots
    data = _pad(_pad(data, alignment) + b"".join(raw for raw, _ in payloads), 4)
    for raw, _ in payloads:
        data = _pad(_pad(data, alignment) + raw, 4)
    assert all(len(raw) == size for raw, _ in payloads)
    obj = SplineAnimation()
    obj.transform_track_count, obj.frame_count, obj.block_count, obj.mask_size = tracks, len(payloads), 1, 4 * tracks
    obj.frame_duration = 1 / 30
    obj.block_offsets, obj.float_block_offsets = np.array([0], "<u4"), np.array([len(data)], "<u4")
    obj.data = np.frombuffer(data, np.uint8).copy()
    values = np.array([value for _, value in payloads], np.float64)
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    expected = np.empty((len(payloads), tracks, 4))
    expected[:, 0] = values
    expected[:, 1:] = values[None]
    return obj, expected


@pytest.mark.parametrize("kind", SUPPORTED, ids=["THREECOMP40", "THREECOMP48", "UNCOMPRESSED"])
def test_hand_built_block_decodes_every_dropped_component(kind):
    obj, expected = hand_block(kind)
    translation, rotation, scale, _ = decode_spline(obj)
    np.testing.assert_allclose(rotation, expected, atol=3e-7, rtol=0)
    np.testing.assert_array_equal(translation, 0.0)
    np.testing.assert_array_equal(scale, 1.0)


@pytest.mark.parametrize("kind, name", [(POLAR32, "POLAR32"), (THREECOMP24, "THREECOMP24"), (STRAIGHT16, "STRAIGHT16"),
                                        (6, "type 6"), (15, "type 15")])
def test_unsupported_rotation_quantisations_are_refused(kind, name):
    obj, _ = hand_block(THREECOMP40)
    obj.data[0] = kind << 2
    with pytest.raises(FormatError, match=f"rotation quantisation {name} is not supported"):
        decode_spline(obj)
    frames = np.zeros((3, 1, 4))
    frames[..., 3] = 1
    with pytest.raises(FormatError, match=f"rotation quantisation {kind} cannot be written"):
        encode_spline(np.zeros((3, 1, 3)), frames, np.ones((3, 1, 3)), np.zeros((3, 0)), rotation_quantization=kind)


# -- the encoder's files ----------------------------------------------------------------------
def dropping_every_component(frames=40):
    """Rotations (frames, 16, 4): tracks 0-7 static, 8-15 moving, each pair dropping one
    component (index, sign) of DROPPED."""
    t = np.arange(frames)[:, None] / 30.0
    rotation = np.empty((frames, 2 * len(DROPPED), 4))
    for k, (index, negative) in enumerate(DROPPED):
        rotation[:, k] = dominant_quaternion(index, negative, seed=k)
        wobble = np.zeros((frames, 4))
        wobble[:, (index + 1) % 4] = 0.2 * np.sin(3 * t[:, 0] + k)
        moving = dominant_quaternion(index, negative, seed=20 + k) + wobble
        rotation[:, len(DROPPED) + k] = moving / np.linalg.norm(moving, axis=1, keepdims=True)
    return rotation


@pytest.mark.parametrize("kind", SUPPORTED, ids=["THREECOMP40", "THREECOMP48", "UNCOMPRESSED"])
def test_encoder_writes_every_dropped_component(kind):
    rotation = dropping_every_component()
    frames, tracks = rotation.shape[:2]
    encoded = encode_spline(np.zeros((frames, tracks, 3)), rotation, np.ones((frames, tracks, 3)), np.zeros((frames, 0)),
                            rotation_quantization=kind)
    read = read_block(encoded.data.tobytes(), 0, encoded.mask_size, tracks)
    assert [track.static_rotation for track in read] == [True] * len(DROPPED) + [False] * len(DROPPED)
    assert {track.rotation_quantisation for track in read} == {kind}
    if kind != UNCOMPRESSED:
        for static in (True, False):
            written = {unpack_rotation(raw, kind)[1:] for track in read if track.static_rotation == static
                       for raw in track.rotation_bytes}
            assert written == set(DROPPED), f"static {static}"
    obj = SplineAnimation()
    obj.transform_track_count, obj.frame_count, obj.block_count, obj.mask_size = tracks, frames, 1, encoded.mask_size
    obj.frame_duration = 1 / 30
    obj.block_offsets, obj.float_block_offsets, obj.data = encoded.block_offsets, encoded.float_block_offsets, encoded.data
    decoded = decode_spline(obj)[1]
    step = 1 / ((MASK[kind] >> 1) * 2**0.5) if kind in MASK else 0.0  # one quantisation step
    np.testing.assert_allclose(decoded, rotation, atol=0.001 + step)
    for index, track in enumerate(read):
        expected = np.array([value_at(track.rotation, u) for u in range(frames)])
        np.testing.assert_allclose(decoded[:, index], expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=2e-5)
