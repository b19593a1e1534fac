"""A cell's previs file ``vis\\<master>\\<cell>.uvd`` found as the game finds it: loose in a Data
folder whatever the case, else in its archives (not texture archives); the master is the file defining the cell, as the
cell's plugin stores the CELL (corpus ck-precombined: Fallout4.esm's cell 00001E58, overridden by
AlootHomePlate.esp, whose previs file is ``Vis/Fallout4.esm/00001E58.uvd``)."""

import struct
import zlib

from archive_writer import write_ba2_gnrl
from plugin_writer import interior_cells, plugin, precombined_cell

from precombined_nif.core.plugin import Plugin
from precombined_nif.core.precombined.previs import defining_file, find_previs

UVD = b"uvd-bytes"


def test_the_corpus_cells_previs_is_found_under_its_defining_master(corpus):
    data = corpus / "ck-precombined"
    with Plugin(data / "AlootHomePlate.esp") as aloot:
        # The CELL's FormID as AlootHomePlate stores it: master index 0, its first MAST.
        assert aloot.masters[0] == "Fallout4.esm"
        assert defining_file(aloot, 0x1E58) == "Fallout4.esm"
    found = find_previs([data], 0x1E58, "Fallout4.esm")
    assert found is not None and found[0] == "Fallout4.esm"
    assert found[1].replace("\\", "/").endswith("Vis/Fallout4.esm/00001E58.uvd")
    # Master unknown: the only master folder holding the cell's file.
    assert find_previs([data], 0x1E58)[0] == "Fallout4.esm"
    assert find_previs([data], 0x1E59) is None
    assert find_previs([data], 0x1E58, "DLCCoast.esm") is None


def test_a_cell_defined_by_the_plugin_itself_or_by_its_second_master(tmp_path):
    cells = interior_cells(precombined_cell(0x02000F99, [1], [0x02000001]), precombined_cell(0x01001E58, [1], [0x01000002]))
    (tmp_path / "Patch.esp").write_bytes(plugin(["Fallout4.esm", "DLCCoast.esm"], [cells]))
    with Plugin(tmp_path / "Patch.esp") as patch:
        assert defining_file(patch, 0xF99) == "Patch.esp"  # index 2 = its own, after two masters
        assert defining_file(patch, 0x1E58) == "DLCCoast.esm"
        assert defining_file(patch, 0x1234) is None


def test_loose_previs_files_are_found_whatever_the_case(tmp_path):
    folder = tmp_path / "VIS" / "fallout4.ESM"
    folder.mkdir(parents=True)
    (folder / "00001e58.UVD").write_bytes(UVD)
    files = [tmp_path]
    assert find_previs(files, 0x1E58, "Fallout4.esm")[0] == "Fallout4.esm"
    assert find_previs(files, 0x1E58) == ("fallout4.ESM", str(folder / "00001e58.UVD"))


def test_archived_previs_files_are_found_and_loose_ones_win(tmp_path):
    write_ba2_gnrl(tmp_path / "Patch - Main.ba2", {"Vis\\DLCCoast.esm\\00001E58.uvd": UVD})
    files = [tmp_path]
    master, where = find_previs(files, 0x1E58, "dlccoast.esm")
    assert where.replace("\\", "/").endswith("Patch - Main.ba2:Vis/DLCCoast.esm/00001E58.uvd") and master == "dlccoast.esm"
    assert find_previs(files, 0x1E58)[0].lower() == "dlccoast.esm"
    (tmp_path / "vis" / "fallout4.esm").mkdir(parents=True)
    (tmp_path / "vis" / "fallout4.esm" / "00001E58.uvd").write_bytes(UVD)
    # Two masters hold one: without the defining file known, neither is taken.
    assert find_previs([tmp_path], 0x1E58) is None
    assert find_previs([tmp_path], 0x1E58, "Fallout4.esm")[1] == str(tmp_path / "vis/fallout4.esm/00001E58.uvd")
    (tmp_path / "vis" / "DLCCoast.esm").mkdir()
    (tmp_path / "vis" / "DLCCoast.esm" / "00001E58.uvd").write_bytes(UVD)  # loose beside the archived one: it wins
    assert find_previs([tmp_path], 0x1E58, "DLCCoast.esm")[1] == str(tmp_path / "vis/DLCCoast.esm/00001E58.uvd")


def test_texture_archives_are_not_searched(tmp_path):
    write_ba2_gnrl(tmp_path / "Patch - Textures.ba2", {"vis/fallout4.esm/00001E58.uvd": UVD})
    assert find_previs([tmp_path], 0x1E58, "Fallout4.esm") is None
    write_ba2_gnrl(tmp_path / "Patch - Main.ba2", {"vis/fallout4.esm/00001E58.uvd": UVD})
    assert find_previs([tmp_path], 0x1E58, "Fallout4.esm")[1] == f"{tmp_path / 'Patch - Main.ba2'}:vis/fallout4.esm/00001E58.uvd"


def test_the_visibility_row_is_the_ck_rows_values(corpus):
    """BSCRC32 (zlib CRC-32 continued from 0xFFFFFFFF, inverted; lower case) of the cell's
    ``%08x`` id and of ``vis\\<master>``, against the CK's own 0x87 row."""
    from precombined_nif.core.precombined.cdx import visibility_row

    data = (corpus / "ck-precombined/AlootHomePlate.cdx").read_bytes()
    count = struct.unpack_from("<I", data, 4)[0]
    rows = [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(count)]
    (ck,) = [r for r in rows if r[0] == 0x87]
    row = visibility_row((0x1E58, 0), 0x1E58, "Fallout4.esm")[0]
    assert tuple(int(v) for v in row) == ck
    assert ck[1] == 0x1E58 and ck[2] == bscrc(b"00001e58") and ck[3] == bscrc(b"vis\\fallout4.esm")


def bscrc(text):
    return zlib.crc32(text, 0xFFFFFFFF) ^ 0xFFFFFFFF
