"""Plugins and the references of precombined copies, on the corpus CK plugin and its cells."""

import struct
import zlib

import numpy as np
import pytest
from support import corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile
from precombined_nif.core.plugin import CellReferences, Plugin, cell_form_id
from precombined_nif.core.plugin.references import (
    cell_instances, find_cell_plugin, geometry_hashes, references_of_cell, references_report, rotation_matrix,
)

PLUGIN = "ck-precombined/AlootHomePlate.esp"
CELLS = corpus_files("ck-precombined/**/*_OC.NIF")


def independent_refrs(data):
    """{FormID: (x, y, z, rx, ry, rz, scale)} of every REFR, read with struct and zlib only."""
    out = {}

    def walk(at, end):
        while at < end:
            kind, size, flags, form_id = struct.unpack_from("<4sIII", data, at)
            if kind == b"GRUP":
                walk(at + 24, at + size)
                at += size
                continue
            body = data[at + 24:at + 24 + size]
            if flags & 0x40000:
                body = zlib.decompress(body[4:])
            if kind == b"REFR":
                fields, pos = {}, 0
                while pos < len(body):
                    name, length = struct.unpack_from("<4sH", body, pos)
                    fields.setdefault(name, body[pos + 6:pos + 6 + length])
                    pos += 6 + length
                scale = struct.unpack("<f", fields[b"XSCL"])[0] if b"XSCL" in fields else 1.0
                out[form_id] = (*struct.unpack("<6f", fields[b"DATA"]), scale)
            at += 24 + size

    walk(24 + struct.unpack_from("<I", data, 4)[0], len(data))
    return out


@pytest.fixture(scope="module")
def plugin(corpus):
    with Plugin(corpus / PLUGIN) as opened:
        yield opened


def test_plugin_header_cell_and_xcri(plugin, corpus):
    assert plugin.masters == ["Fallout4.esm"]
    cell = plugin.record(0x1E58)
    assert cell.type == "CELL" and cell.flags & 0x40000  # compressed: inflated on reading
    references = CellReferences([plugin], 0x1E58)
    assert len(references.mesh_hashes) == 38 and len(references.form_ids) == 1438
    # The combined meshes' hashes are the second number of the _OC file names.
    assert {int(path.name.split("_")[1], 16) for path in CELLS} <= set(references.mesh_hashes)
    refrs = independent_refrs((corpus / PLUGIN).read_bytes())
    assert {r.form_id for r in references.references} == set(references.form_ids) & set(refrs)
    for reference in references.references:
        assert tuple(reference.position) + tuple(reference.angles) + (reference.scale,) == pytest.approx(refrs[reference.form_id])


def test_rotation_composition():
    x, y, z = 0.3, -1.1, 2.0
    rx = np.array([[1, 0, 0], [0, np.cos(x), np.sin(x)], [0, -np.sin(x), np.cos(x)]])
    ry = np.array([[np.cos(y), 0, -np.sin(y)], [0, 1, 0], [np.sin(y), 0, np.cos(y)]])
    rz = np.array([[np.cos(z), np.sin(z), 0], [-np.sin(z), np.cos(z), 0], [0, 0, 1]])
    assert np.allclose(rotation_matrix((x, y, z)), rx @ ry @ rz)


def test_every_copy_at_a_plugin_reference_is_matched_to_it(plugin, corpus):
    refrs = independent_refrs((corpus / PLUGIN).read_bytes())
    cell_list = set(CellReferences([plugin], 0x1E58).form_ids)
    listed = {f: v for f, v in refrs.items() if f in cell_list}
    positions = np.array([v[:3] for v in listed.values()])
    total = matched = at_a_reference = 0
    for path in CELLS:
        nif = NifFile.read(path)
        _, matches = references_of_cell(nif, path, [plugin])
        copies = cell_instances(nif)
        assert len(matches) == len(copies)
        for (*_, instance), (*_, reference) in zip(copies, matches):
            total += 1
            near = np.abs(positions - instance["translation"]).max(axis=1) <= 0.01
            at_a_reference += bool(near.any())
            if reference is None:
                continue
            matched += 1
            x, y, z, *angles, scale = listed[reference.form_id]
            assert np.abs(np.array([x, y, z]) - instance["translation"]).max() <= 0.01
            assert abs(scale - instance["scale"]) <= 1e-4
            assert np.abs(rotation_matrix(angles) - instance["rotation"]).max() <= 1e-3
    assert total == 116 and matched == at_a_reference and matched > total / 2
    assert matched == 84


def test_cell_plugin_found_from_the_cell_path(corpus):
    path = CELLS[0]
    assert find_cell_plugin(path, geometry_hashes(NifFile.read(path))) == (corpus / PLUGIN).resolve()
    assert cell_form_id(path) == 0x1E58
    assert cell_form_id("x/0001E58_oc.nif") is None


def test_report_names_the_base_when_it_is_in_the_plugin(plugin, corpus):
    references = CellReferences([plugin], 0x1E58)
    basket = [r for r in references.references if r.editor_id]
    assert [(r.editor_id, r.base_type, r.model) for r in basket] == [
        ("ALOOT_Static_WoodBasket", "STAT", "Props\\BucketsAndBaskets\\WoodBasket.nif")]
    report = references_report(NifFile.read(CELLS[1]), CELLS[1], [corpus / PLUGIN])
    assert report["references"] == 1438 and report["masters_not_given"] == ["Fallout4.esm"]


def test_damaged_plugins_fail_cleanly(corpus, tmp_path):
    data = (corpus / PLUGIN).read_bytes()
    path = tmp_path / "bad.esp"
    for cut in (0, 10, 30, 2000, len(data) // 2, len(data) - 3):
        path.write_bytes(data[:cut])
        with pytest.raises(FormatError) as error:
            Plugin(path).record(0x1E58)
        assert str(path) in str(error.value)
    path.write_bytes(b"NOPE" + data[4:])
    with pytest.raises(FormatError, match="not a plugin"):
        Plugin(path)
    with pytest.raises(FormatError, match="holds no CELL"):
        CellReferences([Plugin(corpus / PLUGIN)], 0x123456)


def test_cli_info_lists_the_references(corpus):
    import subprocess
    import sys

    from support import ROOT

    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", str(CELLS[1]), "--plugin", str(corpus / PLUGIN)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "CELL 00001E58: 38 combined meshes, 1438 references" in result.stdout
    assert "REFR 010173A3 base 000C570F" in result.stdout
    assert "10 of 13 instances matched a reference; 3 placed by references of masters not given (Fallout4.esm)" in result.stdout
