"""Plugins and the references of precombined copies, on the corpus CK plugin and its cells."""

import numpy as np
import pytest
from plugin_writer import independent_refrs
from support import CORPUS, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile
from precombined_nif.core.plugin import CellReferences, Plugin, cell_form_id
from precombined_nif.core.plugin.references import (
    cell_instances, find_cell_plugin, geometry_hashes, match_instances, references_of_cell, references_report,
    rotation_matrix,
)

PLUGIN = "ck-precombined/AlootHomePlate.esp"
CELLS = corpus_files("ck-precombined/**/*_OC.NIF")
CELL = CORPUS / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"  # 13 copies, 10 at REFRs of the plugin


@pytest.fixture(scope="module")
def plugin(corpus):
    with Plugin(corpus / PLUGIN) as opened:
        yield opened


def test_plugin_header_cell_and_xcri(plugin, corpus):
    assert plugin.masters == ["Fallout4.esm"]
    cell = plugin.record(0x1E58)
    assert cell.type == "CELL" and cell.flags & 0x40000  # compressed: inflated on reading
    references = CellReferences([plugin], 0x1E58)
    # XCRI: 38 meshes, then 1438 values, (reference, mesh) pairs: every reference's mesh is one of the 38.
    assert len(references.mesh_hashes) == 38 and len(references.form_ids) == 719
    assert set(references.reference_meshes) <= set(references.mesh_hashes)
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
    assert total == 223 and matched == at_a_reference and matched > total / 2
    assert matched == 178


def test_cell_plugin_found_from_the_cell_path(corpus):
    path = CELLS[0]
    assert find_cell_plugin(path, geometry_hashes(NifFile.read(path))).resolve() == (corpus / PLUGIN).resolve()
    assert cell_form_id(path) == 0x1E58
    assert cell_form_id("x/0001E58_oc.nif") is None


def test_report_names_the_base_when_it_is_in_the_plugin(plugin, corpus):
    references = CellReferences([plugin], 0x1E58)
    basket = [r for r in references.references if r.editor_id]
    assert [(r.editor_id, r.base_type, r.model) for r in basket] == [
        ("ALOOT_Static_WoodBasket", "STAT", "Props\\BucketsAndBaskets\\WoodBasket.nif")]
    report = references_report(NifFile.read(CELL), CELL, [corpus / PLUGIN])
    assert report["references"] == 719 and report["masters_not_given"] == ["Fallout4.esm"]


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

    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", str(CELL), "--plugin", str(corpus / PLUGIN)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "CELL 00001E58: 38 combined meshes, 719 references" in result.stdout
    assert "REFR 010173A3 base 000C570F" in result.stdout
    assert "10 of 13 instances matched a reference; 3 placed by references of masters not given (Fallout4.esm)" in result.stdout


def test_references_and_bases_resolved_through_the_masters_given(tmp_path):
    from plugin_writer import cell, group, plugin, refr, static

    master = tmp_path / "Master.esm"
    master.write_bytes(plugin([], [
        group("STAT", [static(0x00000800, "MasterStatic", "Props\\Master.nif")]),
        group("CELL", [refr(0x00000900, 0x00000800, (1, 2, 3), (0, 0, 0.5))]),
    ]))
    mod = tmp_path / "Mod.esp"
    mod.write_bytes(plugin(["Master.esm"], [
        group("STAT", [static(0x01000810, "ModStatic", "Props\\Mod.nif")]),
        group("CELL", [cell(0x01000801, [0x1234], [0x01000802, 0x00000900, 0x01000803, 0x05000001]),
                       refr(0x01000802, 0x00000800, (10, 20, 30), (0.1, 0.2, 0.3), 2.0),
                       refr(0x01000803, 0x01000810, (-5, 0, 0), (0, 0, 0))]),
    ]))
    with Plugin(mod) as alone:
        refs = CellReferences([alone], 0x01000801)
        assert [r.form_id for r in refs.references] == [0x01000802, 0x01000803]
        assert refs.unresolved == [0x00000900, 0x05000001]
        assert refs.references[0].editor_id is None and refs.references[1].editor_id == "ModStatic"
    with Plugin(mod) as cell_plugin, Plugin(master) as master_plugin:
        refs = CellReferences([cell_plugin, master_plugin], 0x01000801)
        by_id = {r.form_id: r for r in refs.references}
        assert set(by_id) == {0x01000802, 0x00000900, 0x01000803} and refs.unresolved == [0x05000001]
        assert (by_id[0x01000802].editor_id, by_id[0x01000802].model, by_id[0x01000802].scale) == (
            "MasterStatic", "Props\\Master.nif", 2.0)
        assert by_id[0x00000900].plugin is master_plugin and by_id[0x00000900].editor_id == "MasterStatic"
        assert tuple(by_id[0x00000900].position) == (1, 2, 3)
        # Matching: the placement of the scaled, rotated reference and nothing else.
        matrix = rotation_matrix((0.1, 0.2, 0.3)) * 2.0
        found = match_instances(refs.references, [(10, 20, 30.005), (10, 20, 30), (-5, 0, 0.02)],
                                [matrix, matrix * 1.01, np.eye(3)])
        assert [f and f.form_id for f in found] == [0x01000802, None, None]


def test_long_fields_use_xxxx(tmp_path):
    from plugin_writer import group, plugin, record

    path = tmp_path / "Big.esp"
    path.write_bytes(plugin([], [group("STAT", [record("STAT", 0x800, [("EDID", b"Big\0"), ("MODT", bytes(70000)),
                                                                       ("MODL", b"x.nif\0")])])]))
    with Plugin(path) as opened:
        big = opened.record(0x800)
        assert len(big.field("MODT")) == 70000 and big.text("MODL") == "x.nif"


def test_byte_flips_in_the_plugin_fail_cleanly(corpus, tmp_path):
    data = (corpus / PLUGIN).read_bytes()
    cell_at = data.index(b"CELL", 1000)  # the CELL group's records and the references after it
    cell = NifFile.read(CELL)
    rng = np.random.default_rng(3)
    path = tmp_path / "damaged.esp"
    for _ in range(60):
        damaged = bytearray(data)
        for at in rng.integers(cell_at, len(data), 4):
            damaged[at] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(damaged))
        try:
            references_report(cell, CELL, [path])
        except FormatError as error:
            assert str(path) in str(error)


def test_cli_info_of_a_cell_inside_an_archive(corpus, tmp_path):
    import subprocess
    import sys

    from archive_writer import write_ba2_gnrl
    from support import ROOT

    archive = tmp_path / "AlootHomePlate - Main.ba2"
    write_ba2_gnrl(archive, {"Meshes/PreCombined/00001E58_1200ADBE_OC.NIF": CELL.read_bytes()})
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", f"{archive}:meshes/precombined/00001e58_1200adbe_oc.nif",
                             "--plugin", str(corpus / PLUGIN)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "10 of 13 instances matched a reference" in result.stdout
    missing = subprocess.run([sys.executable, str(ROOT / "cli.py"), "info", f"{archive}:meshes/none.nif"],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "holds no file meshes/none.nif" in missing.stderr
