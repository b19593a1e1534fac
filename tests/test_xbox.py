"""Xbox 360 FO3/FNV files (issue 6): made from the corpus PC files by the independent test-side
writer (tests/xbox_writer.py), read by the codec and converted back to PC files."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from precombined_nif.core.errors import FormatError
from precombined_nif.commands.info import nif_info
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.geometry import NiTriBasedGeomData
from precombined_nif.core.nif.blocks.packed_geometry import (
    BSPackedAdditionalGeometryData,
    decode_streams,
    fix_weight_sentinel,
)
from precombined_nif.core.nif.blocks.skin import NiSkinPartition
from precombined_nif.core.nif.xbox import to_pc
from precombined_nif.core.stream import WriteStream
from support import ROOT
from xbox_writer import make_xbox, stripify

FONV = "pynifly/tests/tests/FONV/"
SKINNED = FONV + "outfitf_simple.nif"
FILES = [
    "niftools/history/test/nif/base_vertex_color0.nif",
    "niftools/history/test/nif/base_vertex_alpha0.nif",
    "niftools/todo/old_nifs/fo3/test_emit.nif",
    FONV + "22smg.nif",
    FONV + "9mmscp.nif",
    SKINNED,
    "pynifly/io_scene_nifly/skeletons/FONV/skeleton.nif",
]
HALF = dict(rtol=2e-3, atol=2e-3)  # half precision: 11 significant bits


def block_bytes(nif, block):
    s = WriteStream(nif.header, big_endian=nif.header.big_endian)
    block.sync(s)
    return bytes(s.out)


def canonical(triangles):
    """Triangles as a sorted list, each rotated to start at its smallest index (winding kept)."""
    tris = np.asarray(triangles, np.int64).reshape(-1, 3)
    first = np.argmin(tris, axis=1)
    rolled = np.stack([tris[np.arange(len(tris)), (first + k) % 3] for k in range(3)], axis=1)
    return sorted(map(tuple, rolled.tolist()))


def assert_same_as_original(original, converted, *, cross_bitangents=False):
    assert [b.type_name for b in converted.blocks] == [b.type_name for b in original.blocks]
    assert converted.roots == original.roots and not converted.header.big_endian
    for index, (old, new) in enumerate(zip(original.blocks, converted.blocks)):
        if isinstance(old, NiTriBasedGeomData):
            assert_same_geometry(old, new, cross_bitangents)
        elif isinstance(old, NiSkinPartition):
            assert_same_partitions(old, new)
        else:
            assert block_bytes(converted, new) == block_bytes(original, old), f"block {index} {old.type_name}"


def assert_same_geometry(old, new, cross_bitangents):
    for name in ("group_id", "num_vertices", "bs_data_flags", "bound_center", "bound_radius", "consistency_flags"):
        assert getattr(new, name) == getattr(old, name), name
    assert new.additional_data == -1 and new.packed_flags is None
    for name in ("vertices", "normals", "tangents", "vertex_colors"):
        if getattr(old, name) is None:
            assert getattr(new, name) is None, name
        else:
            np.testing.assert_allclose(getattr(new, name), getattr(old, name), err_msg=name, **HALF)
    if old.bitangents is not None:
        expected = np.cross(old.normals, old.tangents) if cross_bitangents else old.bitangents
        np.testing.assert_allclose(new.bitangents, expected, **HALF)
    assert len(new.uv_sets) == len(old.uv_sets)
    for a, b in zip(new.uv_sets, old.uv_sets):
        np.testing.assert_allclose(a, b, **HALF)
    assert canonical(new.triangles) == canonical(old.triangles)


def assert_same_partitions(old, new):
    assert len(new.partitions) == len(old.partitions)
    for a, b in zip(new.partitions, old.partitions):
        np.testing.assert_array_equal(a.vertex_map, b.vertex_map)
        np.testing.assert_array_equal(a.bones, b.bones)
        np.testing.assert_array_equal(a.bone_indices, b.bone_indices)
        np.testing.assert_allclose(a.vertex_weights, b.vertex_weights, rtol=0, atol=1e-3)
        assert canonical(a.faces) == canonical(b.faces)
        assert a.num_triangles == len(b.faces)


def convert(xbox_bytes):
    nif = NifFile.from_bytes(xbox_bytes)
    assert nif.header.big_endian and not nif.warnings
    to_pc(nif)
    return NifFile.from_bytes(nif.to_bytes())  # the PC file reads back


@pytest.mark.parametrize("name", FILES)
def test_xbox_file_converts_back_to_the_original(corpus, name):
    original = NifFile.read(corpus / name)
    xbox = make_xbox((corpus / name).read_bytes())
    converted = convert(xbox)
    assert not converted.warnings
    assert_same_as_original(original, converted)


@pytest.mark.parametrize("stride", [36, 40])
def test_every_static_stride(corpus, stride):
    """Stride 40 carries a colour stream even where the flags say the shape has none."""
    name = FONV + "22smg.nif"
    original = NifFile.read(corpus / name)
    assert_same_as_original(original, convert(make_xbox((corpus / name).read_bytes(), stride=stride)))


def test_colours_flagged_but_not_packed_fail_cleanly(corpus, tmp_path):
    xbox = make_xbox((corpus / "niftools/history/test/nif/base_vertex_alpha0.nif").read_bytes(), stride=36)
    with pytest.raises(FormatError, match="NiTriShapeData.*no color stream"):
        to_pc(NifFile.from_bytes(xbox))
    path = tmp_path / "colours.nif"
    path.write_bytes(xbox)
    result = run_cli("convert", path, tmp_path / "out.nif")  # the message names the file
    assert result.returncode == 2 and result.stderr.startswith(f"error: {path}, block ") and "no color stream" in result.stderr


def test_colours_decode_from_d3dcolor(corpus):
    name = "niftools/history/test/nif/base_vertex_color0.nif"
    original = NifFile.read(corpus / name)
    nif = NifFile.from_bytes(make_xbox((corpus / name).read_bytes()))
    packed = next(b for b in nif.blocks if isinstance(b, BSPackedAdditionalGeometryData))
    data = next(b for b in original.blocks if isinstance(b, NiTriBasedGeomData))
    assert packed.stride == 40
    colors = decode_streams(packed)["color"]
    np.testing.assert_allclose(colors, data.vertex_colors, atol=0.5 / 255)
    assert len(np.unique(colors[:, 0])) > 1  # a real test: the corpus colours vary


def test_missing_bitangents_are_cross_of_normal_and_tangent(corpus):
    name = FONV + "22smg.nif"
    original = NifFile.read(corpus / name)
    converted = convert(make_xbox((corpus / name).read_bytes(), stride=28))
    assert_same_as_original(original, converted, cross_bitangents=True)


@pytest.mark.parametrize("options", [dict(skinned_stride=52), dict(sentinel=True), dict(strip_size=3), dict(strip_size=5000)])
def test_skinned_variants(corpus, options):
    original = NifFile.read(corpus / SKINNED)
    assert_same_as_original(original, convert(make_xbox((corpus / SKINNED).read_bytes(), **options)))


def test_skinned_xbox_file_has_strips_and_no_partition_weights(corpus):
    nif = NifFile.from_bytes(make_xbox((corpus / SKINNED).read_bytes()))
    data = next(b for b in nif.blocks if isinstance(b, NiTriBasedGeomData))
    partition = next(b for b in nif.blocks if isinstance(b, NiSkinPartition))
    assert data.vertices is None and data.triangles is None and data.packed_flags == (1, 1, 0)
    part = partition.partitions[0]
    assert len(part.strips) > 1 and part.vertex_weights is None and part.bone_indices is None
    packed = nif.blocks[data.additional_data]
    assert packed.stride == 48 and packed.num_vertices == sum(p.num_vertices for p in partition.partitions)


@pytest.mark.parametrize("nifxml_length", [False, True])
def test_data_length_ambiguity_is_settled_by_the_block_size(corpus, nifxml_length):
    name = "niftools/history/test/nif/base_vertex_alpha0.nif"
    original = NifFile.read(corpus / name)
    xbox = make_xbox((corpus / name).read_bytes(), data_atoms=3, nifxml_length=nifxml_length)
    nif = NifFile.from_bytes(xbox)
    packed = next(b for b in nif.blocks if isinstance(b, BSPackedAdditionalGeometryData))
    assert len(packed.blocks[0].data) == packed.blocks[0].block_size * (3 if nifxml_length else 1)
    assert_same_as_original(original, convert(xbox))


def test_xbox_file_writes_back_identical_in_either_byte_order(corpus):
    xbox = make_xbox((corpus / SKINNED).read_bytes(), skinned_stride=52)
    nif = NifFile.from_bytes(xbox)
    assert nif.to_bytes() == xbox
    nif.header.little_endian = 1  # the packed block swaps each stream's words
    little = NifFile.from_bytes(nif.to_bytes())
    packed_be = next(b for b in nif.blocks if isinstance(b, BSPackedAdditionalGeometryData))
    packed_le = next(b for b in little.blocks if isinstance(b, BSPackedAdditionalGeometryData))
    for key, values in decode_streams(packed_be).items():
        np.testing.assert_array_equal(decode_streams(packed_le)[key], values)
    little.header.little_endian = 0
    assert little.to_bytes() == xbox


def test_weight_sentinel_is_dropped_and_renormalised():
    weights = np.array([[0.5, 0.3, 0.2, 1.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.6, 0.3, 0.0999, 1.0]], np.float32)
    fixed = fix_weight_sentinel(weights)
    np.testing.assert_allclose(fixed[0], [0.5, 0.3, 0.2, 0.0])
    np.testing.assert_array_equal(fixed[1:3], weights[1:3])
    np.testing.assert_allclose(fixed[3].sum(), 1.0, rtol=1e-6)
    assert fixed[3, 3] == 0


def test_stripify_helper_round_trips_through_strip_decoding():
    """The writer's own strips decode to its triangles (so a converter bug cannot hide there)."""
    from precombined_nif.core.nif.blocks.geometry import strips_to_triangles

    triangles = np.array([[0, 1, 2], [2, 1, 3], [4, 5, 6], [7, 8, 9], [1, 5, 9]])
    for size in (1, 2, 3, 10):
        assert canonical(strips_to_triangles(stripify(triangles, size))) == canonical(triangles)


def test_info_reports_endian_and_packed_streams(corpus):
    nif = NifFile.from_bytes(make_xbox((corpus / SKINNED).read_bytes(), skinned_stride=52))
    info = nif_info(nif)
    assert info["endian"] == "big"
    (packed,) = info["packed"]
    assert packed["stride"] == 52 and packed["vertices"] == nif.blocks[packed["block"]].num_vertices
    names = [stream["name"] for stream in packed["streams"]]
    assert names == ["position", "weights", "bone_indices", "normal", "uv", "tangent", "bitangent", "color"]
    assert [stream["offset"] for stream in packed["streams"]] == [0, 8, 16, 20, 28, 32, 40, 48]
    assert packed["streams"][4]["type"] == "half2"


def run_cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True)


def test_cli_convert_and_info(corpus, tmp_path):
    xbox = tmp_path / "xbox.nif"
    xbox.write_bytes(make_xbox((corpus / SKINNED).read_bytes()))
    info = run_cli("info", xbox, "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["endian"] == "big"
    pc = tmp_path / "pc.nif"
    result = run_cli("convert", xbox, pc)
    assert result.returncode == 0, result.stderr
    assert "1 shape" in result.stdout
    assert_same_as_original(NifFile.read(corpus / SKINNED), NifFile.read(pc))
    assert json.loads(run_cli("info", pc, "--json").stdout)["packed"] == []


def test_cli_convert_fails_cleanly_on_damage(corpus, tmp_path):
    xbox = bytearray(make_xbox((corpus / SKINNED).read_bytes()))
    bad = tmp_path / "bad.nif"
    bad.write_bytes(xbox[: len(xbox) // 2])
    result = run_cli("convert", bad, tmp_path / "out.nif")
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert not (tmp_path / "out.nif").exists()


def _packed_offset(xbox):
    nif = NifFile.from_bytes(xbox)
    index = next(i for i, b in enumerate(nif.blocks) if isinstance(b, BSPackedAdditionalGeometryData))
    end = len(xbox) - 4 - 4 * len(nif.roots)
    return end - sum(int(s) for s in nif.header.block_sizes[index:]), index


def test_damaged_packed_blocks_fail_cleanly(corpus):
    xbox = make_xbox((corpus / SKINNED).read_bytes())
    start, index = _packed_offset(xbox)
    rng = np.random.default_rng(6)
    failures = 0
    for trial in range(300):
        damaged = bytearray(xbox)
        for at in rng.integers(start, start + 200, size=3):  # the counts, stream infos and data header
            damaged[at] = rng.integers(0, 256)
        try:
            nif = NifFile.from_bytes(damaged)
            to_pc(nif)
            NifFile.from_bytes(nif.to_bytes())
        except FormatError as error:
            failures += 1
            assert str(error)
    assert failures > 0


def test_damaged_big_endian_files_fail_cleanly(corpus):
    """Random damage anywhere in a big-endian file: a FormatError or a file, never anything else."""
    for name in (SKINNED, FONV + "22smg.nif", "pynifly/io_scene_nifly/skeletons/FONV/skeleton.nif"):
        xbox = make_xbox((corpus / name).read_bytes())
        rng = np.random.default_rng(len(xbox))
        for trial in range(150):
            damaged = bytearray(xbox)
            for at in rng.integers(0, len(xbox), size=4):
                damaged[at] = rng.integers(0, 256)
            if trial % 3 == 0:
                damaged = damaged[: rng.integers(1, len(damaged))]
            try:
                nif = NifFile.from_bytes(damaged)
                to_pc(nif)
                nif.to_bytes()
            except FormatError:
                pass


def test_raw_block_is_refused_by_name(corpus):
    from precombined_nif.core.nif import RawBlock

    nif = NifFile.from_bytes(make_xbox((corpus / SKINNED).read_bytes()))
    nif.blocks.append(RawBlock("BSUnknownXboxBlock", b"\0" * 4, big_endian=True))
    with pytest.raises(FormatError, match="BSUnknownXboxBlock.*cannot be converted"):
        to_pc(nif)


def test_lod_additional_geometry_data_swaps_as_four_byte_words():
    from precombined_nif.core.nif.blocks.packed_geometry import DataBlock, NiAdditionalGeometryData
    from precombined_nif.core.nif.header import Header
    from precombined_nif.core.stream import ReadStream

    block = NiAdditionalGeometryData(num_vertices=2)
    data_block = DataBlock()
    data_block.block_size, data_block.offsets, data_block.atom_sizes = 8, np.array([0]), np.array([4])
    data_block.data = np.frombuffer(bytes(range(8)), np.uint8)
    block.blocks = [data_block]
    header = Header(bs_version=34, user_version=11)
    little = WriteStream(header)
    block.sync(little)
    big = WriteStream(header, big_endian=True)
    block.sync(big)
    assert bytes(little.out)[-8:] == bytes(range(8))
    assert bytes(big.out)[-8:] == bytes([3, 2, 1, 0, 7, 6, 5, 4])
    back = NiAdditionalGeometryData.__new__(NiAdditionalGeometryData)
    back.sync(ReadStream(memoryview(bytes(big.out)), header, big_endian=True))
    rewritten = WriteStream(header)
    back.sync(rewritten)
    assert bytes(rewritten.out) == bytes(little.out)


def test_packed_data_too_short_for_its_vertices_says_how_short(corpus):
    """One vertex more than the packed data holds: the message gives the bytes needed and the
    (smaller) bytes held, never two equal numbers."""
    nif = NifFile.from_bytes(make_xbox((corpus / FONV / "22smg.nif").read_bytes()))
    packed = next(b for b in nif.blocks if isinstance(b, BSPackedAdditionalGeometryData))
    packed.num_vertices += 1
    with pytest.raises(FormatError, match=r"need (\d+) bytes, the data block holds only (\d+)") as raised:
        decode_streams(packed)
    need, held = map(int, re.search(r"need (\d+) bytes, the data block holds only (\d+)", str(raised.value)).groups())
    assert need > held
