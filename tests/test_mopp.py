"""MOPP code: every corpus program (Skyrim LE/SE compressed meshes; read with struct in
tests/raw_mopp.py, not by the product's decoders) names exactly its shape's leaf IDs and finds
each triangle at its centre; the builder's programs over every corpus mesh, rebuilt from
scratch, find each triangle at its corners, its centre and points inside it, and name nothing
else; hostile programs fail with FormatError in bounded work."""

import re

import numpy as np
import pytest
from raw_havok import HAND_MOPP
from raw_mopp import mopp_blocks, shape_triangles
from support import CORPUS, corpus_bytes, corpus_files_holding

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import mopp
from precombined_nif.core.nif.blocks.legacy_havok import (
    bhkListShape,
    bhkMoppBvTreeShape,
    bhkPackedNiTriStripsShape,
    bhkTransformShape,
    hkPackedNiTriStripsData,
)
from precombined_nif.core.nif.legacy_packed_mesh import damaged_mopps

MOPP_FILES = corpus_files_holding("**/*.nif", b"bhkMoppBvTreeShape")
CASES = [(path, index) for path in MOPP_FILES for index, *_ in mopp_blocks(corpus_bytes(path))]


def _case(path, index):
    found = {i: rest for i, *rest in mopp_blocks(corpus_bytes(path))}
    code, origin, scale, type_name, payload, raw = found[index]
    vertices, triangles, keys, radius = shape_triangles(type_name, payload, raw)
    return code, origin, scale, vertices, triangles, keys, radius


def _ids(case):
    return f"{case[0].relative_to(CORPUS).as_posix()}:{case[1]}"


def test_the_corpus_has_programs_of_both_games():
    names = {p.parent.name for p in MOPP_FILES}
    assert {"Skyrim", "SkyrimSE"} <= names and len(CASES) >= 12


def _inside_points(vertices, triangles):
    """Each triangle's centre, three corners and three points near its corners (m, 7, 3)."""
    corners = vertices[triangles]
    centre = corners.mean(axis=1, keepdims=True)
    near = corners * 0.8 + centre * 0.2
    return np.concatenate([centre, corners, near], axis=1)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_game_programs_find_every_triangle_at_its_centre(case):
    code, origin, scale, vertices, triangles, keys, _ = _case(*case)
    assert np.array_equal(mopp.program_leaves(code), np.unique(keys))  # no ID out of range, none missing
    mopp.check_leaves(code, keys)
    for centre, key in zip(vertices[triangles].mean(axis=1), keys):
        assert key in mopp.leaves_at_point(code, origin, scale, centre)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_rebuilt_programs_find_every_triangle(case):
    _, origin, scale, vertices, triangles, keys, radius = _case(*case)
    built = mopp.build(vertices.astype(np.float32), triangles, keys, radius)
    # the games' space: origin and scale as stored (the scale within float32 rounding)
    np.testing.assert_allclose(built.origin, origin, atol=1e-5)
    assert built.scale == pytest.approx(scale, rel=1e-6)
    assert np.array_equal(mopp.program_leaves(built.code), np.unique(keys))
    for points, key in zip(_inside_points(vertices.astype(np.float32).astype(np.float64), triangles), keys):
        for point in points:
            assert key in mopp.leaves_at_point(built.code, built.origin, built.scale, point)


def test_boxes_find_what_they_overlap_and_far_boxes_find_nothing():
    vertices, triangles = _grid(20)
    built = mopp.build(vertices, triangles, np.arange(len(triangles)))
    corners = vertices[triangles]
    low, high = np.array([0.3, 0.3, -1.0]), np.array([0.55, 0.42, 1.0])
    overlapping = np.flatnonzero(((corners.min(axis=1) <= high) & (corners.max(axis=1) >= low)).all(axis=1))
    got = mopp.leaves_in_box(built.code, built.origin, built.scale, low, high)
    assert set(overlapping) <= set(got.tolist()) and len(got) < len(triangles) / 4
    assert not len(mopp.leaves_at_point(built.code, built.origin, built.scale, (5.0, 5.0, 5.0)))


def test_returned_leaves_lie_near_the_point():
    """Tightness: 400 tiny scattered triangles; every leaf returned for a random point has a box
    within one 8-bit step of the whole shape (1/254 of its size) of the point on every axis
    (the leaves' own cuts, not only the splits above them, bound what is returned)."""
    rng = np.random.default_rng(5)
    centres = rng.uniform(0, 1, (400, 1, 3))
    vertices = (centres + rng.uniform(-0.004, 0.004, (400, 3, 3))).reshape(-1, 3)
    triangles = np.arange(len(vertices)).reshape(-1, 3)
    built = mopp.build(vertices, triangles, np.arange(400))
    corners = vertices[triangles]
    low, high = corners.min(axis=1), corners.max(axis=1)
    step = np.ptp(vertices, axis=0).max() / 254
    returned = 0
    for point in rng.uniform(0, 1, (500, 3)):
        found = mopp.leaves_at_point(built.code, built.origin, built.scale, point)
        returned += len(found)
        assert ((low[found] - step <= point) & (point <= high[found] + step)).all()
    assert returned < 50  # the triangles fill a few parts in a million of the cube


def _grid(n, *, bumps=0.05):
    """A bumpy n x n square of 2 n^2 triangles over the unit square."""
    x, y = np.meshgrid(np.linspace(0, 1, n + 1), np.linspace(0, 1, n + 1), indexing="ij")
    z = bumps * np.sin(7 * x) * np.cos(5 * y)
    vertices = np.stack([x, y, z], axis=-1).reshape(-1, 3).astype(np.float32)
    a = (np.arange(n)[:, None] * (n + 1) + np.arange(n)).ravel()
    triangles = np.concatenate([np.stack([a, a + n + 1, a + 1], 1), np.stack([a + 1, a + n + 1, a + n + 2], 1)])
    return vertices, triangles


def test_big_meshes_chain_branches_past_16_bit_jumps():
    vertices, triangles = _grid(100)  # 20000 triangles: over 64 KiB of code
    keys = np.arange(len(triangles), dtype=np.uint32) * 7 + (1 << 20)  # 24-bit leaf IDs
    built = mopp.build(vertices, triangles, keys)
    assert len(built.code) > 0x10000
    assert np.array_equal(mopp.program_leaves(built.code), keys)
    sample = np.arange(0, len(triangles), 37)
    for points, key in zip(_inside_points(vertices.astype(np.float64), triangles[sample]), keys[sample]):
        for point in points:
            assert key in mopp.leaves_at_point(built.code, built.origin, built.scale, point)


def test_leaf_ids_of_every_width():
    vertices, triangles = _grid(2)
    keys = np.array([3, 200, 60000, 1 << 23, 0xFFFFFFFF, 40, 41, 42], np.uint32)  # 1 to 4 bytes
    built = mopp.build(vertices, triangles, keys)
    assert np.array_equal(mopp.program_leaves(built.code), np.unique(keys))


def test_builder_refuses_impossible_input():
    vertices, triangles = _grid(1)
    with pytest.raises(FormatError, match="at least one triangle"):
        mopp.build(vertices, triangles[:0], [])
    with pytest.raises(FormatError, match="past the"):
        mopp.build(vertices, triangles + 10, [0, 1])
    with pytest.raises(FormatError, match="leaf IDs for"):
        mopp.build(vertices, triangles, [0])
    with pytest.raises(FormatError, match="finite"):
        mopp.build(np.full_like(vertices, np.nan), triangles, [0, 1])


ORIGIN, SCALE = np.zeros(3), 254 * 65536.0


@pytest.mark.parametrize("code, message", [
    (bytes.fromhex("05 40 31"), "goes past the end"),  # jump outside the program
    (bytes.fromhex("10 80 70 20 31 32"), "goes past the end"),  # split whose right side is outside
    (bytes.fromhex("23 80 70 00 00 ff ff 31"), "goes past the end"),
    (bytes.fromhex("26 00"), "ends inside the instruction"),  # truncated
    (bytes.fromhex("52 00 01"), "ends inside the instruction"),
    (bytes.fromhex("26 00 ff 27 00 ff"), "without a terminal"),  # runs off the end
    (bytes.fromhex("7f"), "unknown MOPP instruction 0x7F"),
    (bytes.fromhex("04 00 00 00 04 00 00 00 04 00 00 00 04 00 00 00 04 00 00 00 31"), "past 24 bits"),
])
def test_hostile_programs_fail_cleanly(code, message):
    with pytest.raises(FormatError, match=message):
        mopp.leaves_at_point(code, ORIGIN, SCALE, (0.5, 0.5, 0.5))


def test_shared_branches_cannot_make_the_walk_explode():
    # 60 splits whose both sides lead to the next one: 2^60 paths through 240 bytes (jumps only
    # go forward, so this, not a loop, is how a program can make a walk unbounded)
    code = b"".join(bytes((0x10, 0xFF, 0x00, 0x00)) for _ in range(60)) + b"\x31"
    with pytest.raises(FormatError, match="too many steps"):
        mopp.leaves_in_box(code, ORIGIN, SCALE, (0, 0, 0), (1, 1, 1))
    assert mopp.program_leaves(code).tolist() == [1]  # listing the leaves visits each state once


def test_programs_naming_leaves_the_shape_lacks_fail():
    vertices, triangles = _grid(2)
    built = mopp.build(vertices, triangles, np.arange(len(triangles)) + 5)
    with pytest.raises(FormatError, match=r"names 5 leaves the shape does not have \(first: 8\)"):
        mopp.check_leaves(built.code, np.arange(len(triangles)))


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf")])
def test_a_bad_space_fails_cleanly(scale):
    with pytest.raises(FormatError, match="positive scale"):
        mopp.leaves_at_point(b"\x31", ORIGIN, scale, (0, 0, 0))


@pytest.mark.parametrize("code, why", [
    (HAND_MOPP, None),
    (b"", "names no triangle"),
    (bytes.fromhex("0540 31"), "goes past the end"),
    (bytes.fromhex("10ff000130" "36"), r"names 1 leaves the shape does not have \(first: 6\)"),
])
def test_damaged_stored_code_is_found_in_a_shape_tree(code, why):
    """A list holding a transform holding the MOPP tree over five packed triangles."""
    data = hkPackedNiTriStripsData(triangles=np.zeros((5, 4), np.uint16), vertices=np.zeros((3, 3), np.float32))
    blocks = [bhkListShape(sub_shapes=[1]), bhkTransformShape(shape=2), bhkMoppBvTreeShape(shape=3, code=code),
              bhkPackedNiTriStripsShape(data=4), data]
    found = damaged_mopps(blocks, 0)
    if why is None:
        assert found == []
    else:
        ((index, message),) = found
        assert index == 2 and re.search(why, message)


def test_random_programs_end_or_fail_cleanly():
    """Random bytes (half of them mutations of a real program): every walk returns IDs or raises
    FormatError, never another exception, and stays within its budget."""
    rng = np.random.default_rng(26)
    vertices, triangles = _grid(6)
    real = mopp.build(vertices, triangles, np.arange(len(triangles))).code
    outcomes = set()
    for trial in range(1500):
        if trial % 2:
            code = bytearray(real)
            for at in rng.integers(0, len(code), rng.integers(1, 6)):
                code[at] = rng.integers(0, 256)
        else:
            code = rng.integers(0, 256, rng.integers(0, 40), dtype=np.uint8).tobytes()
        try:
            mopp.leaves_in_box(bytes(code), ORIGIN, SCALE, (0.2, 0.2, 0.0), (0.6, 0.5, 1.0))
            mopp.program_leaves(bytes(code))
            outcomes.add("walked")
        except FormatError:
            outcomes.add("refused")
    assert outcomes == {"walked", "refused"}
