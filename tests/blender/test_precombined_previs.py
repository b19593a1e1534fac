"""The 11 corpus cells (ck-precombined/) exported where no .cdx is yet: the fresh .cdx gets the
cell's previs row as the Creation Kit writes it (0x87, read here with struct from the CK's own
``AlootHomePlate.cdx``) when ``Vis\\<master>\\<cell>.uvd`` is in the Data folder, loose or
archived, whatever the case; the 0x88 row when it is nowhere."""

import importlib
import os
import struct
import zlib

import pytest
from archive_writer import write_ba2_gnrl
from support import CORPUS

pytestmark = pytest.mark.slow  # the corpus's 11 real cells imported and exported in Blender

CK = CORPUS / "ck-precombined"
UVD = CK / "Vis/Fallout4.esm/00001E58.uvd"


def rows(data):
    assert data[:4] == b"bcdx" and len(data) == 8 + 16 * struct.unpack_from("<I", data, 4)[0]
    return [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(struct.unpack_from("<I", data, 4)[0])]


def crc(text):
    """BSCRC32 of lower-case bytes: zlib's CRC-32 continued from 0xFFFFFFFF, inverted."""
    return zlib.crc32(text, 0xFFFFFFFF) ^ 0xFFFFFFFF


def data_folder(tmp_path, previs):
    """The cells' Data folder without the .cdx (links to the corpus), its previs file ``previs``:
    "loose" (a link to the corpus's Vis folder), "renamed" (loose, other case), "archived"
    (in a BA2 of the folder), or None."""
    folder = tmp_path / "Data"
    folder.mkdir()
    for name in ("AlootHomePlate.esp", "AlootHomePlate - Geometry.csg", "Meshes"):
        os.symlink(CK / name, folder / name)
    if previs == "loose":
        os.symlink(CK / "Vis", folder / "Vis")
    elif previs == "renamed":
        (folder / "vis" / "FALLOUT4.ESM").mkdir(parents=True)
        os.symlink(UVD, folder / "vis" / "FALLOUT4.ESM" / "00001e58.UVD")
    elif previs == "archived":
        write_ba2_gnrl(folder / "AlootHomePlate - Main.ba2", {"vis\\fallout4.esm\\00001e58.uvd": UVD.read_bytes()})
    return folder


def export_all(addon, folder, out):
    """Import the 11 cells together, export each into ``out``: the messages."""
    import bpy

    exporter = importlib.import_module(f"{addon.__name__}.io.precombined.exporter")
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    paths = sorted((folder / "Meshes" / "PreCombined").glob("*_OC.NIF"))
    assert len(paths) == 11
    folders = file_import.UserFolders(data={"FO4": str(folder)})
    collections, _ = file_import.import_cells(bpy.context, [str(p) for p in paths], folders=folders)
    out.mkdir()
    messages = []
    for path, collection in zip(paths, collections):
        plan = exporter.export_cell(str(out / path.name), list(collection.all_objects))
        messages += plan.messages
    return messages


@pytest.mark.parametrize("previs", ["loose", "renamed", "archived"])
def test_a_fresh_cdx_of_the_corpus_cells_is_the_cks(clean_scene, addon, tmp_path, previs):
    folder = data_folder(tmp_path, previs)
    messages = export_all(addon, folder, tmp_path / "out")
    written = (tmp_path / "out" / "AlootHomePlate.cdx").read_bytes()
    ck = (CK / "AlootHomePlate.cdx").read_bytes()
    (visibility,) = [r for r in rows(ck) if r[0] & 0xFF in (0x87, 0x88)]
    assert visibility[0] == 0x87 and visibility[1] == 0x1E58
    assert [r for r in rows(written) if r[0] & 0xFF in (0x87, 0x88)] == [visibility]
    # The corpus has 11 of the cell's 38 meshes: the fresh index lists those, each row one of the CK's.
    meshes = {int(p.name[9:17], 16) for p in (CK / "Meshes/PreCombined").glob("*_OC.NIF")}
    assert {r[2] for r in rows(written) if r[0] == 0x86} == meshes
    assert set(rows(written)) < set(rows(ck))
    assert not any("previs" in m for m in messages)


def test_a_fresh_cdx_without_a_previs_file_has_the_no_visibility_row(clean_scene, addon, tmp_path):
    folder = data_folder(tmp_path, None)
    messages = export_all(addon, folder, tmp_path / "out")
    written = rows((tmp_path / "out" / "AlootHomePlate.cdx").read_bytes())
    ck = rows((CK / "AlootHomePlate.cdx").read_bytes())
    assert [r for r in written if r[0] & 0xFF in (0x87, 0x88)] == [(0x88, 0x1E58, crc(b""), crc(b"vis"))]
    assert set(r for r in written if r[0] != 0x88) < set(r for r in ck if r[0] != 0x87)
    assert sum("no previs file of cell 00001E58" in m for m in messages) == 1  # said once, for the first cell
