"""The Creation Kit's precombined resource index (.cdx): the corpus's AlootHomePlate.cdx read
with struct here and by the codec, written back byte for byte, its rows for the corpus's 11
combined meshes made again from them; damaged files refused naming the file."""

import json
import struct
import subprocess
import sys
import zlib

import pytest
from support import CORPUS, ROOT

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile
from precombined_nif.core.precombined import cdx

CDX = CORPUS / "ck-precombined/AlootHomePlate.cdx"
CELLS = sorted((CORPUS / "ck-precombined/Meshes/PreCombined").glob("*_OC.NIF"))
CELL = 0x1E58


def rows_of(data):
    """(kind, cell, value, extra) rows of a .cdx, read with struct."""
    (count,) = struct.unpack_from("<I", data, 4)
    return [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(count)]


def crc(text):
    return zlib.crc32(text.lower().replace("/", "\\").encode(), 0xFFFFFFFF) ^ 0xFFFFFFFF


def expected_rows(path):
    """The rows a combined mesh gives its cell, made here from its shaders (read by the codec's NIF
    reader) after bacup's notes: 0x86 the mesh, 0x80 each record's (.csg offset, name hash), 0x81
    each BGSM and its textures by slot, 0x84 for slots 0, 3, 4, else 0x83; ids BSCRC32 of the
    lower-case stem and folder, under materials\\ or textures\\."""
    nif = NifFile.read(path)
    mesh = int(path.name.split("_")[1], 16)

    def ids(text, root):
        text = text.lower().replace("/", "\\")
        if "\\data\\" in text:
            text = text.split("\\data\\", 1)[1]
        text = text[len("data\\"):] if text.startswith("data\\") else text
        if not text.startswith(root + "\\"):
            text = f"{root}\\{text}"
        folder, name = text.rsplit("\\", 1)
        return crc(name.rsplit(".", 1)[0]), crc(folder)

    rows = {(0x86, CELL, mesh, CELL)}
    for block in nif.blocks:
        if block.type_name == "BSPackedCombinedSharedGeomDataExtra":
            rows |= {(0x80, CELL, int(o["data_offset"]), int(o["filename_hash"])) for o in block.objects}
        if block.type_name == "BSLightingShaderProperty":
            if block.name:
                rows.add((0x81, CELL, *ids(block.name, "materials")))
            for slot, texture in enumerate(nif.blocks[block.texture_set].textures[:8]):
                if texture:
                    rows.add((0x84 if slot in (0, 3, 4) else 0x83, CELL, *ids(texture, "textures")))
    return rows


@pytest.fixture(scope="module")
def ck(corpus):
    return CDX.read_bytes()


def test_the_ck_index_reads_as_struct_does_and_writes_back_byte_for_byte(ck):
    index = cdx.CdxFile.from_bytes(ck, CDX)
    assert ck[:4] == b"bcdx" and len(index.rows) == 287 == len(ck[8:]) // 16
    assert [tuple(int(v) for v in row) for row in index.rows] == rows_of(ck)
    assert index.to_bytes() == ck
    shuffled = cdx.CdxFile(index.rows[::-1].copy())
    assert shuffled.to_bytes() == ck  # the writer sorts by cell, kind, extra and value
    kinds = {}
    for kind, *_ in rows_of(ck):
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == {0x80: 110, 0x81: 35, 0x83: 62, 0x84: 41, 0x86: 38, 0x87: 1}


def test_rows_made_from_the_eleven_cells_are_the_cks_rows_for_their_meshes(ck):
    """Each mesh's rows as the product makes them equal those made here, and every one is among
    the CK's: 175 rows, every material of the 11 meshes, every geometry offset they use."""
    made, expected = set(), set()
    for path in CELLS:
        rows = cdx.mesh_rows(NifFile.read(path), CELL, int(path.name.split("_")[1], 16), (CELL, 0))
        mine = {tuple(int(v) for v in row) for row in rows}
        assert mine == expected_rows(path), path.name
        made |= mine
        expected |= expected_rows(path)
    assert len(CELLS) == 11 and len(made) == 175
    assert made <= set(rows_of(ck))
    # The previs row: BSCRC32 of the cell's id and of vis\<the cell's master>.
    assert (0x87, CELL, crc("00001e58"), crc("vis\\fallout4.esm")) in set(rows_of(ck))
    assert {tuple(int(v) for v in r) for r in cdx.visibility_row((CELL, 0), CELL, "Fallout4.esm")} <= set(rows_of(ck))


def test_a_cell_rebuilt_from_its_meshes_keeps_the_rows_of_meshes_not_at_hand(ck):
    index = cdx.CdxFile.from_bytes(ck)
    key = index.key_of_mesh(CELL, 0x1200ADBE)
    assert key == (CELL, 0) and len(index.meshes_of(key)) == 38
    meshes = {mesh: None for mesh in index.meshes_of(key)}
    meshes.update({int(p.name.split("_")[1], 16): NifFile.read(p) for p in CELLS})
    rebuilt = cdx.rebuild_cell(index, key, CELL, meshes)
    assert len(rebuilt.missing) == 27 and rebuilt.kept == 287 - 176
    index.replace_cell(key, rebuilt.rows)
    assert index.to_bytes() == ck
    # Every mesh at hand: the rows are the meshes' own and the previs row, nothing else.
    present = {m: n for m, n in meshes.items() if n is not None}
    alone = cdx.rebuild_cell(cdx.CdxFile.from_bytes(ck), key, CELL, present)
    assert not alone.missing and len(alone.rows) == 176


def test_an_exterior_cells_rows_carry_its_world_and_grid():
    key = cdx.exterior_key(0x3C, 1, -6)
    row = cdx.visibility_row(key, 0xE0D9, "Fallout4.esm")[0]
    # bacup's reading of retail Fallout4.cdx: CELL E0D9 at (1, -6) in world 3C, kind 0x001FFA07.
    assert (int(row["cell"]), int(row["kind"])) == (0x3C, 0x001FFA07)
    assert cdx.grid_of(int(row["kind"])) == (1, -6) and cdx.resource_kind(int(row["kind"])) == cdx.VISIBILITY


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:-5], "bytes"),  # truncated: the count says more than is there
    (lambda d: d[:4] + struct.pack("<I", 286) + d[8:], "holds 16 bytes more"),
    (lambda d: d[:4] + struct.pack("<I", 1 << 30) + d[8:], "count"),
    (lambda d: b"xcdx" + d[4:], "not a precombined resource index"),
    (lambda d: d[:8] + d[24:40] + d[8:24] + d[40:], "not sorted"),
    (lambda d: d[:8] + d[8:24] + d[8:24] + d[40:], "same row twice"),
    (lambda d: d[:-16] + struct.pack("<I", 0x89) + d[-12:], "kind 0x89"),
])
def test_a_damaged_index_is_refused_naming_the_file(ck, tmp_path, damage, message):
    path = tmp_path / "Damaged.cdx"
    path.write_bytes(damage(ck))
    with pytest.raises(FormatError, match=message) as caught:
        cdx.CdxFile.read(path)
    assert str(path) in str(caught.value)
    run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", str(path)], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.startswith(f"error: {path}") and "Traceback" not in run.stderr


def test_cli_info_names_the_rows_the_cells_files_tell(ck):
    run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", str(CDX), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    (cell,) = info["cells"]
    assert info["rows"] == 287 and info["meshes_found"] == 11 and cell["cell"] == "00001E58"
    counts = {kind: len(rows) for kind, rows in cell["kinds"].items()}
    assert counts == {"geometry": 110, "material": 35, "data texture": 62, "colour texture": 41, "combined mesh": 38,
                      "visibility": 1}
    named = {(kind, r["value"], r["extra"]): r["name"] for kind, rows in cell["kinds"].items() for r in rows}
    # Every material and texture of the 11 meshes is named by its path, the others are not.
    for path in CELLS:
        for kind, _, value, extra in expected_rows(path):
            name = named[({0x80: "geometry", 0x81: "material", 0x83: "data texture", 0x84: "colour texture",
                           0x86: "combined mesh"}[kind], f"{value:08X}", f"{extra:08X}")]
            assert name is not None
            if kind in (0x81, 0x83, 0x84):
                stem = name.replace("/", "\\").rsplit("\\", 1)[1].rsplit(".", 1)[0]
                assert crc(stem) == value
    assert named[("visibility", "044DA523", "D0557C27")] == "previs of 00001E58 (Fallout4.esm)"
    assert named[("geometry", "00000B18", "5C4304E6")] == "AlootHomePlate - Geometry.csg at 0xb18"
    text = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", str(CDX)], capture_output=True, text=True)
    assert text.returncode == 0 and "CELL 00001E58 (interior): 110 geometry, 35 material" in text.stdout
    assert len(text.stdout.splitlines()) == 2 + 287
