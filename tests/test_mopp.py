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
from precombined_nif.core.nif.legacy_mopp import damaged_mopps

MOPP_FILES = corpus_files_holding("**/*.nif", b"bhkMoppBvTreeShape") + corpus_files_holding("**/*.NIF", b"bhkMoppBvTreeShape")
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
    if "realmods" not in case[0].parts:  # mods' tools grow the box by other margins
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
    (b"", "names no shape key"),
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


# -- the rest of Havok's instruction set -------------------------------------------------------

@pytest.mark.parametrize("code, leaves", [
    (bytes.fromhex("07 000001 ff 31"), [1]),  # 24-bit jump over one byte
    (bytes.fromhex("08 00000001 ff 32"), [2]),  # 32-bit jump
    (bytes.fromhex("0d 00 00000000 33"), [3]),  # data offset: the path goes on
    (bytes.fromhex("60 05 64 0005 68 00000005 34"), [4]),  # properties of 8, 16 and 32 bits
    (bytes.fromhex("54 03 01 02 09"), [1, 2, 9]),  # a list of three 8-bit terminals
    (bytes.fromhex("09 10 55 0002 0100 0200"), [0x110, 0x210]),  # 16-bit terminals over a leaf base
    (bytes.fromhex("56 000001 000300"), [0x300]),
    (bytes.fromhex("57 00000001 01000000"), [0x01000000]),
    (bytes.fromhex("70 00000007 cdcd 35"), [5]),  # chunk jump to byte 7, over the chunk's padding
    (bytes.fromhex("05 01 36 70 00000002"), [6]),  # a chunk jump back to byte 2
], ids=["jump24", "jump32", "data-offset", "properties", "terminals8", "terminals16", "terminals24", "terminals32",
        "chunk-jump", "chunk-jump-back"])
def test_every_instruction_is_walked(code, leaves):
    assert mopp.leaves_at_point(code, ORIGIN, SCALE, (0.5, 0.5, 0.5)).tolist() == leaves
    assert mopp.program_leaves(code).tolist() == leaves


@pytest.mark.parametrize("code, message", [
    (bytes.fromhex("70 00000100 31"), "chunk jump at byte 0 goes past the end"),
    (bytes.fromhex("70 00000000"), "too many steps"),  # a chunk jump to itself
    (bytes.fromhex("54 05 01 02"), "ends inside the instruction"),  # five terminals, two bytes
    (bytes.fromhex("68 0000"), "ends inside the instruction"),
    (bytes.fromhex("0d 00 00 00"), "ends inside the instruction"),
])
def test_damaged_uses_of_the_other_instructions_fail_cleanly(code, message):
    with pytest.raises(FormatError, match=message):
        mopp.leaves_at_point(code, ORIGIN, SCALE, (0.5, 0.5, 0.5))


@pytest.mark.parametrize("code", [bytes.fromhex("0c 0010 31"), bytes.fromhex("10 ff 00 01 30 58 31")], ids=["0C", "58"])
def test_unknown_instructions_are_unfamiliar_not_damage(code):
    """A 16-bit chunk jump (0C, which Havok replaced by 70) or an unused byte: UnknownInstruction,
    and stored code holding one is not reported as damaged (it is kept as stored)."""
    with pytest.raises(mopp.UnknownInstruction, match="unknown MOPP instruction"):
        mopp.program_leaves(code)
    data = hkPackedNiTriStripsData(triangles=np.zeros((5, 4), np.uint16), vertices=np.zeros((3, 3), np.float32))
    blocks = [bhkMoppBvTreeShape(shape=1, code=code), bhkPackedNiTriStripsShape(data=2), data]
    assert damaged_mopps(blocks, 0) == []


def test_chunked_game_program_names_its_compressed_mesh_keys(corpus):
    """wheels-of-lull's console static (Skyrim SE): code in chunks ending in 0xCD padding, joined
    by 70 jumps (at bytes 13 and 803, to bytes 480 and 176): it names each of its 90 keys and
    finds every triangle at its centre (the keys and triangles read with struct)."""
    path = corpus / "realmods/wheels-of-lull/meshes/lull/dwemertech/architecture/mainquest_static_console.nif"
    ((_, code, origin, scale, type_name, payload, raw),) = mopp_blocks(path.read_bytes())
    assert [at for at in (13, 803) if code[at] == 0x70] == [13, 803]
    assert int.from_bytes(code[14:18], "big") == 480 and set(code[465:480]) == {0xCD}
    vertices, triangles, keys, _ = shape_triangles(type_name, payload, raw)
    assert len(keys) == 90 and np.array_equal(mopp.program_leaves(code), np.unique(keys))
    for centre, key in zip(vertices[triangles].mean(axis=1), keys):
        assert key in mopp.leaves_at_point(code, origin, scale, centre)


# -- MOPP trees over other shapes ---------------------------------------------------------------

def test_packed_keys_carry_their_sub_shape():
    """Five triangles over two sub shapes (4 and 3 vertices): the last, whose first vertex is
    the second sub shape's, is 0x01000004; stored code naming either form is sound."""
    from raw_havok import PACKED_SUB_SHAPES, PACKED_TRIANGLES, PACKED_VERTICES

    from precombined_nif.core.nif.legacy_mopp import packed_keys

    sub_shapes = np.zeros(2, [("layer", "u1"), ("flags", "u1"), ("group", "<u2"), ("num_vertices", "<u4"), ("material", "<u4")])
    sub_shapes["num_vertices"] = [count for _, count, _ in PACKED_SUB_SHAPES]
    rows = np.zeros((5, 4), np.uint16)
    rows[:, :3] = PACKED_TRIANGLES
    data = hkPackedNiTriStripsData(triangles=rows, vertices=PACKED_VERTICES.astype(np.float32), sub_shapes=sub_shapes)
    assert packed_keys(data).tolist() == [0, 1, 2, 3, 0x01000004]
    for code in (HAND_MOPP, HAND_MOPP[:-1] + bytes.fromhex("53 01000004")):
        blocks = [bhkMoppBvTreeShape(shape=1, code=code), bhkPackedNiTriStripsShape(data=2), data]
        assert damaged_mopps(blocks, 0) == []


def _list_blocks():
    """A list of a sphere (r 0.5 at the origin), a box (half 1, 2, 3 and radius 0.1) moved to
    (10, 0, 0) and a convex tetrahedron at (0, 20, 0), as blocks; the MOPP tree over it is block 0."""
    from precombined_nif.core.nif.blocks.legacy_havok import (
        bhkBoxShape,
        bhkConvexVerticesShape,
        bhkSphereShape,
        transform_values,
    )

    moved = np.eye(4)
    moved[:3, 3] = (10, 0, 0)
    tetra = np.array([[0, 20, 0, 0], [1, 20, 0, 0], [0, 21, 0, 0], [0, 20, 1, 0]], np.float32)
    return [bhkMoppBvTreeShape(shape=1), bhkListShape(sub_shapes=[2, 3, 5]), bhkSphereShape(radius=0.5),
            bhkTransformShape("bhkConvexTransformShape", shape=4, transform=transform_values(moved)),
            bhkBoxShape(dimensions=(1.0, 2.0, 3.0), radius=0.1), bhkConvexVerticesShape(vertices=tetra, radius=0.0)]


def test_code_over_a_list_finds_each_child_in_its_box():
    from precombined_nif.core.nif.legacy_mopp import build_over, shape_box

    blocks = _list_blocks()
    np.testing.assert_allclose(shape_box(blocks, 2), [[-0.5] * 3, [0.5] * 3])
    np.testing.assert_allclose(shape_box(blocks, 3), [[8.9, -2.1, -3.1], [11.1, 2.1, 3.1]], atol=1e-6)
    np.testing.assert_allclose(shape_box(blocks, 5), [[0, 20, 0], [1, 21, 1]])
    built = build_over(blocks, 1)
    assert mopp.program_leaves(built.code).tolist() == [0, 1, 2]
    for point, child in [((0.4, -0.4, 0), 0), ((10.9, 2, -3), 1), ((0.2, 20.2, 0.2), 2)]:
        assert mopp.leaves_at_point(built.code, built.origin, built.scale, point).tolist() == [child]
    assert not len(mopp.leaves_at_point(built.code, built.origin, built.scale, (5, 10, 0)))
    blocks[0].code = built.code
    assert damaged_mopps(blocks, 0) == []
    blocks[0].code = bytes.fromhex("33")  # a fourth child of three
    ((index, why),) = damaged_mopps(blocks, 0)
    assert index == 0 and "names 1 leaves the shape does not have (first: 3)" in why
