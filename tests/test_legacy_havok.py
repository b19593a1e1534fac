"""Fallout 3 / New Vegas Havok blocks in the codec: the corpus files' collision and a file holding
every other shape kind (packed by hand in tests/raw_havok.py) decode to what an independent
struct reading gets, write back byte for byte in either byte order, and Xbox 360 packed triangle
meshes convert to the PC file's values."""

import subprocess
import sys

import numpy as np
import pytest
from raw_havok import (
    block_bytes,
    collision_bodies,
    every_shape_file,
    read_shape,
    xbox_file,
)
from support import CORPUS, ROOT

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks import legacy_havok
from precombined_nif.core.nif.xbox import to_pc

FONV = "pynifly/tests/tests/FONV"
VAULT74 = "realmods/vault74/Meshes/SCOL/kynSCOLTemp04.NIF"  # a mod's static collection: packed meshes under MOPP
LEGACY_FILES = [f"{FONV}/9mmscp.nif", f"{FONV}/22smg.nif", VAULT74]  # every FO3/FNV corpus file with collision
SHAPE_TYPES = {"bhkBoxShape", "bhkSphereShape", "bhkCapsuleShape", "bhkConvexVerticesShape", "bhkTransformShape",
               "bhkConvexTransformShape", "bhkListShape", "bhkConvexListShape", "bhkMoppBvTreeShape",
               "bhkPackedNiTriStripsShape", "hkPackedNiTriStripsData"}


def test_the_corpus_legacy_files_are_every_fo3_fnv_file_with_collision():
    found = sorted(p.relative_to(CORPUS).as_posix() for p in [*CORPUS.glob("**/*.nif"), *CORPUS.glob("**/*.NIF")]
                   if b"bhkCollisionObject" in p.read_bytes() and NifFile.read(p).header.game == "FO3")
    assert found == sorted(LEGACY_FILES)


@pytest.fixture(scope="module")
def every_shape(corpus):
    return every_shape_file(corpus / f"{FONV}/9mmscp.nif")


def check_against_bytes(data):
    """Every Havok block of ``data`` decodes with no bytes left over, to the struct reading's values."""
    nif = NifFile.from_bytes(data)
    raw = block_bytes(data)
    checked = set()
    for index, block in enumerate(nif.blocks):
        type_name, payload = raw[index]
        if not type_name.startswith(("bhk", "hk")):
            continue
        assert not isinstance(block, RawBlock) and block.trailing == b"", type_name
        checked.add(type_name)
        if type_name not in SHAPE_TYPES:
            continue
        expected = read_shape(type_name, payload)
        if "material" in expected:
            assert block.material == expected["material"]
        if type_name == "bhkBoxShape":
            np.testing.assert_array_equal(block.dimensions, expected["dimensions"].astype(np.float32))
        elif type_name in ("bhkSphereShape", "bhkConvexVerticesShape"):
            assert block.radius == np.float32(expected["radius"])
            if "vertices" in expected:
                np.testing.assert_array_equal(np.asarray(block.vertices)[:, :3], expected["vertices"])
        elif type_name == "bhkCapsuleShape":
            np.testing.assert_array_equal(block.first, expected["first"].astype(np.float32))
            np.testing.assert_array_equal(block.second, expected["second"].astype(np.float32))
        elif type_name in ("bhkTransformShape", "bhkConvexTransformShape"):
            assert block.shape == expected["shape"]
            np.testing.assert_allclose(block.matrix, expected["matrix"], atol=1e-7)
        elif type_name in ("bhkListShape", "bhkConvexListShape"):
            assert list(block.sub_shapes) == expected["sub_shapes"]
        elif type_name == "bhkMoppBvTreeShape":
            assert block.shape == expected["shape"] and block.code == expected["code"]
        elif type_name == "hkPackedNiTriStripsData":
            np.testing.assert_array_equal(np.asarray(block.triangles)[:, :3], expected["triangles"])
            np.testing.assert_array_equal(block.vertices, expected["vertices"])
            assert [tuple(s) for s in block.sub_shapes.tolist()] == expected["sub_shapes"]
    return nif, checked


@pytest.mark.parametrize("name", LEGACY_FILES)
def test_corpus_collision_decodes_as_the_bytes_say_and_writes_back(corpus, name):
    data = (corpus / name).read_bytes()
    nif, checked = check_against_bytes(data)
    packed = {"bhkMoppBvTreeShape", "bhkPackedNiTriStripsShape", "hkPackedNiTriStripsData"}
    assert checked == {"bhkCollisionObject", "bhkRigidBody", *(packed if name == VAULT74 else {"bhkConvexVerticesShape"})}
    bodies, _ = collision_bodies(corpus / name)
    for owner, (collision, body, _) in bodies.items():
        block = nif.blocks[nif.blocks[collision].body]
        assert (block.mass, block.friction, block.restitution, block.havok_filter[0], block.motion_system) == pytest.approx(
            (body["mass"], body["friction"], body["restitution"], body["layer"], body["motion"]))
    assert nif.to_bytes() == data


def test_every_shape_kind_decodes_as_the_bytes_say(every_shape):
    nif, checked = check_against_bytes(every_shape)
    assert SHAPE_TYPES <= checked and "bhkRigidBodyT" in checked
    assert nif.to_bytes() == every_shape


def test_every_shape_kind_writes_back_in_either_byte_order(every_shape):
    nif = NifFile.from_bytes(every_shape)
    nif.header.little_endian = 0
    big = nif.to_bytes()
    assert big != every_shape
    back = NifFile.from_bytes(big)
    back.header.little_endian = 1
    assert back.to_bytes() == every_shape


def test_truncated_or_damaged_havok_blocks_fail_cleanly(every_shape):
    nif = NifFile.from_bytes(every_shape)
    raw = block_bytes(every_shape)
    index = next(i for i, (t, _) in raw.items() if t == "hkPackedNiTriStripsData")
    for cut in (3, 20, len(raw[index][1]) - 1):
        nif.blocks[index] = RawBlock("hkPackedNiTriStripsData", raw[index][1][:cut])
        with pytest.raises(FormatError, match="hkPackedNiTriStripsData") as error:
            NifFile.from_bytes(nif.to_bytes(), path="damaged.nif")
        assert "damaged.nif" in str(error.value)
    rng = np.random.default_rng(13)
    for _ in range(200):
        damaged = bytearray(every_shape)
        for at in rng.integers(len(every_shape) - 2000, len(every_shape), size=3):
            damaged[at] = rng.integers(0, 256)
        try:
            NifFile.from_bytes(bytes(damaged)).to_bytes()
        except FormatError as error:
            assert str(error)


def test_xbox_packed_collision_converts_to_the_pc_values(every_shape):
    """The converter gives the PC file's collision back."""
    pc = NifFile.from_bytes(every_shape)
    data, index = xbox_file(every_shape)
    console = NifFile.from_bytes(data)
    assert console.header.big_endian and console.blocks[index].compressed
    to_pc(console)
    converted = NifFile.from_bytes(console.to_bytes())
    assert not converted.header.big_endian
    data = converted.blocks[index]
    assert not data.compressed and data.vertices.dtype == np.dtype("<f4")
    # these vertices are exact in half precision, so the PC values come back exactly
    np.testing.assert_array_equal(data.vertices, pc.blocks[index].vertices)
    np.testing.assert_array_equal(data.triangles, pc.blocks[index].triangles)
    assert data.sub_shapes.tolist() == pc.blocks[index].sub_shapes.tolist()
    assert converted.to_bytes() == every_shape


def test_units_are_format_notes_value():
    assert legacy_havok.GAME_UNITS == 6.999125


def test_cli_convert_gives_the_pc_file(every_shape, tmp_path):
    data, _ = xbox_file(every_shape)
    xbox = tmp_path / "xbox.nif"
    xbox.write_bytes(data)
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "convert", str(xbox), str(tmp_path / "pc.nif")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pc.nif").read_bytes() == every_shape
