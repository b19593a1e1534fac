"""Precombines across a load order: every rule breaks a cell when it should and not otherwise,
on plugins written by tests/plugin_writer.py (struct and zlib only, not the product's reader);
the corpus plugin and cells; damaged plugins named and skipped."""

import json
import os
import subprocess
import sys

import pytest
from plugin_writer import (cell_with_children, group, interior_cells, land, placed, plugin, precombined_cell, record,
                           stamp, static, worldspace)
from support import CODE_FREE_PACKAGES, ROOT, corpus_plugin_folder

from precombined_nif.core.plugin.load_order import LoadOrder
from precombined_nif.core.precombined.status import precombine_report, stamp_date

PCMB = stamp(2020, 1, 10)
OLD, NEW = stamp(2019, 5, 5), stamp(2023, 3, 3)
INSIDE, OUTSIDE = 0x1000, 0x1100  # the interior cell, the exterior cell (grid 0, 0) of world 0x3C
WORLD = 0x3C


def inside_cell(vci=OLD, **options):
    values = dict(pcmb=PCMB, visi=PCMB)
    values.update(options)
    return precombined_cell(INSIDE, [0xAAAA0001], [0x2000, 0x2001], vci=vci, **values)


def outside_cell(vci=OLD, **options):
    values = dict(pcmb=PCMB, visi=PCMB, rvis=OUTSIDE)
    values.update(options)
    return precombined_cell(OUTSIDE, [0xBBBB0001], [0x2100, 0x2101], vci=vci, interior=False, grid=(0, 0), **values)


def write(folder, name, masters, groups, flags=0):
    (folder / name).write_bytes(plugin(masters, groups, flags))


@pytest.fixture
def data(tmp_path):
    """A Data folder whose Fallout4.esm has an interior and an exterior precombined cell, their
    loose meshes and previs files."""
    folder = tmp_path / "Data"
    folder.mkdir()
    write(folder, "Fallout4.esm", [], [
        group("STAT", [static(0x800, "Wall", "Wall.nif")]),
        interior_cells(cell_with_children(inside_cell(), INSIDE, temporary=[
            placed(0x2000, 0x800, (0, 0, 0), OLD), placed(0x2001, 0x800, (10, 0, 0), OLD),
            placed(0x2002, 0x800, (20, 0, 0), OLD)])),
        worldspace(WORLD, cell_with_children(outside_cell(), OUTSIDE, temporary=[
            land(0x1101, OLD), placed(0x2100, 0x800, (100, 100, 0), OLD)],
            persistent=[placed(0x2101, 0x800, (200, 100, 0), OLD, flags=0x400)])),
    ], flags=0x1)
    for path in ("meshes/precombined/00001000_AAAA0001_OC.nif", "meshes/precombined/00001100_BBBB0001_OC.nif",
                 "vis/00001000.uvd", "vis/00001100.uvd"):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(b"stand-in")
    return folder


def cells(folder, plugins_txt=None):
    report = precombine_report(folder, plugins_txt)
    return {cell["cell"]: cell for cell in report["cells"]}, report


def rules(cell):
    return [(c["rule"], c["plugin"], c["record"]) for c in cell["causes"]]


def test_the_base_game_cells_are_intact(data):
    found, report = cells(data)
    assert set(found) == {"00001000", "00001100"} and report["problems"] == []
    for cell in found.values():
        assert (cell["status"], cell["causes"], cell["previs_status"]) == ("intact", [], "intact")
        assert cell["precombined"] == "2020-01-10" and cell["plugin"] == "Fallout4.esm"
    assert found["00001000"]["meshes"] == [{"id": "AAAA0001", "file": "meshes\\precombined\\00001000_AAAA0001_OC.nif",
                                            "found": "loose"}]
    assert found["00001000"]["references"] == 2


@pytest.mark.parametrize("vci, broken", [(NEW, True), (0, True), (OLD, False), (PCMB, False)])
def test_an_override_of_a_combined_reference_dated_after_pcmb_breaks(data, vci, broken):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(cell_with_children(
        inside_cell(), INSIDE, temporary=[placed(0x2000, 0x800, (0, 0, 5), vci)]))])
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == ([("reference override", "Mod.esp", "REFR 00002000")] if broken else [])
    assert cell["previs_status"] == ("off" if broken else "intact")
    effect = (f"breaks: edited {stamp_date(vci) or 'with no date'}, after PCMB 2020-01-10" if broken
              else f"dated {stamp_date(vci)}, not after PCMB")
    assert cell["reference_overrides"] == [{"plugin": "Mod.esp", "record": "REFR 00002000", "effect": effect}]


def test_an_override_of_a_reference_not_combined_does_not_break(data):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(cell_with_children(
        inside_cell(), INSIDE, temporary=[placed(0x2002, 0x800, (0, 0, 5), NEW)]))])
    assert cells(data)[0]["00001000"]["status"] == "intact"


@pytest.mark.parametrize("esm, broken", [(False, False), (True, True)])
def test_a_partial_form_cell_override_leaves_its_references_ignored_unless_interior_in_an_esm(data, esm, broken):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(cell_with_children(
        inside_cell(flags=0x4000), INSIDE, temporary=[placed(0x2001, 0x800, (0, 0, 5), NEW)]))], flags=int(esm))
    cell = cells(data)[0]["00001000"]
    assert cell["plugin"] == "Fallout4.esm"  # a Partial Form override does not win
    assert rules(cell) == ([("reference override", "Mod.esp", "REFR 00002001")] if broken else [])
    if not broken:
        assert cell["reference_overrides"][0]["effect"] == \
            "ignored by the game: not in Fallout4.esm, whose CELL override wins"


@pytest.mark.parametrize("reference, position, effect", [
    (placed(0x2100, 0x800, (100, 100, 50), NEW), None, None),
    (placed(0x2100, 0x800, (5000, 100, 0), NEW), None, "moved out of the cell"),
])
def test_exterior_reference_overrides(data, reference, position, effect):
    write(data, "Mod.esp", ["Fallout4.esm"], [worldspace(WORLD, cell_with_children(
        outside_cell(), OUTSIDE, temporary=[reference]))])
    cell = cells(data)[0]["00001100"]
    if effect is None:
        assert rules(cell) == [("reference override", "Mod.esp", "REFR 00002100")]
    else:
        assert rules(cell) == [] and cell["reference_overrides"][0]["effect"] == f"ignored by the game: {effect}"


def test_a_persistent_exterior_reference_override_is_ignored(data):
    write(data, "Mod.esp", ["Fallout4.esm"], [worldspace(WORLD, cell_with_children(
        outside_cell(), OUTSIDE, persistent=[placed(0x2101, 0x800, (200, 100, 9), NEW, flags=0x400)]))])
    cell = cells(data)[0]["00001100"]
    assert rules(cell) == [] and cell["reference_overrides"][0]["effect"] == "ignored by the game: persistent"


@pytest.mark.parametrize("vci, broken", [(NEW, True), (0, True), (OLD, False)])
def test_a_land_override_dated_after_pcmb_breaks_an_exterior_cell(data, vci, broken):
    write(data, "Mod.esp", ["Fallout4.esm"], [worldspace(WORLD, cell_with_children(
        outside_cell(), OUTSIDE, temporary=[land(0x1101, vci)]))])
    assert rules(cells(data)[0]["00001100"]) == ([("LAND override", "Mod.esp", "LAND 00001101")] if broken else [])


@pytest.mark.parametrize("vci, broken", [(NEW, True), (0, True), (PCMB, False), (OLD, False)])
def test_a_cell_override_dated_after_its_pcmb_breaks(data, vci, broken):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(inside_cell(vci=vci))])
    cell = cells(data)[0]["00001000"]
    assert cell["plugin"] == "Mod.esp" and cell["precombines_from"] == "Fallout4.esm"
    assert rules(cell) == ([("cell override", "Mod.esp", "CELL 00001000")] if broken else [])


def test_an_empty_pcmb_breaks(data):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(inside_cell(pcmb=None))])
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [("empty PCMB", "Mod.esp", "CELL 00001000")] and cell["previs_status"] == "off"


def test_a_missing_oc_file_breaks_and_an_archived_one_does_not(data):
    from archive_writer import write_ba2_gnrl

    mesh = data / "meshes/precombined/00001000_AAAA0001_OC.nif"
    mesh.unlink()
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [("missing _OC file", None, "meshes\\precombined\\00001000_AAAA0001_OC.nif")]
    write_ba2_gnrl(data / "Fallout4 - Meshes.ba2", {"Meshes/PreCombined/00001000_AAAA0001_OC.NIF": b"stand-in"})
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [] and cell["meshes"][0]["found"] == \
        "Fallout4 - Meshes.ba2:Meshes/PreCombined/00001000_AAAA0001_OC.NIF"


@pytest.mark.parametrize("options, remove, status, first", [
    (dict(visi=OLD), None, "stale", "VISI 2019-05-05 is older than PCMB 2020-01-10"),
    (dict(visi=None), None, "disabled", "Mod.esp: the winning CELL override has no VISI date"),
    (dict(flags=0x80), None, "disabled", "Mod.esp: the CELL is flagged No Pre Vis"),
    ({}, "vis/00001000.uvd", "missing", "vis\\00001000.uvd is neither loose nor in an archive"),
    ({}, None, "intact", None),
])
def test_previs_stale_disabled_or_missing(data, options, remove, status, first):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(inside_cell(**options))])
    if remove:
        (data / remove).unlink()
    cell = cells(data)[0]["00001000"]
    assert cell["status"] == "intact" and cell["previs_status"] == status
    assert cell["previs_causes"][:1] == ([first] if first else [])


def test_the_exterior_previs_file_is_the_cluster_centre_s(data):
    (data / "vis/00001100.uvd").unlink()
    cell = cells(data)[0]["00001100"]
    assert cell["previs_causes"] == ["vis\\00001100.uvd is neither loose nor in an archive"]


def test_a_cell_defined_by_a_light_plugin_has_no_precombines(data):
    write(data, "Light.esl", ["Fallout4.esm"], [interior_cells(
        precombined_cell(0x01000801, [0xCCCC0001], [], pcmb=PCMB, visi=PCMB))], flags=0x200)
    (data / "meshes/precombined/Light.esl").mkdir()
    (data / "meshes/precombined/Light.esl/00000801_CCCC0001_OC.nif").write_bytes(b"stand-in")
    cell = cells(data)[0]["FE000801"]
    assert rules(cell) == [("light master", "Light.esl", "CELL FE000801")]
    assert cell["meshes"][0] == {"id": "CCCC0001", "file": "meshes\\precombined\\Light.esl\\00000801_CCCC0001_OC.nif",
                                 "found": "loose"}


def test_a_reference_another_master_defined_is_ignored(data):
    write(data, "Other.esm", ["Fallout4.esm"], [interior_cells(cell_with_children(
        precombined_cell(INSIDE, [0xAAAA0001], [0x2000, 0x01000900], pcmb=PCMB, visi=PCMB, vci=OLD), INSIDE,
        temporary=[placed(0x01000900, 0x800, (1, 2, 3), OLD)]))], flags=1)
    write(data, "Mod.esp", ["Fallout4.esm", "Other.esm"], [interior_cells(cell_with_children(
        precombined_cell(INSIDE, [0xAAAA0001], [0x2000, 0x01000900], pcmb=PCMB, visi=PCMB, vci=OLD), INSIDE,
        temporary=[placed(0x01000900, 0x800, (1, 2, 3), NEW)]))])
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [] and cell["precombines_from"] == "Other.esm"
    assert cell["reference_overrides"][0]["record"] == "REFR 01000900"
    assert cell["reference_overrides"][0]["effect"] == "ignored by the game: the reference is not defined by the cell's master"


# -- load order ---------------------------------------------------------------------------------
def test_load_order_from_plugins_txt(data, tmp_path):
    for name, flags in (("DLCRobot.esm", 1), ("B.esp", 0), ("A.esp", 0), ("C.esm", 1), ("Flagged.esp", 1),
                        ("L.esl", 0), ("Inactive.esp", 0), ("Lite.esp", 0x200)):
        write(data, name, ["Fallout4.esm"], [], flags=flags)
    listing = tmp_path / "plugins.txt"
    listing.write_text("# the game's list\n*B.esp\n*Fallout4.esm\nInactive.esp\n*Missing.esp\n*Flagged.esp\n*C.esm\n"
                       "*L.esl\n*Lite.esp\n*A.esp\n", encoding="utf-8")
    order = LoadOrder(data, listing)
    assert [(e.name, e.slot, e.light) for e in order.entries] == [
        ("Fallout4.esm", 0, False), ("DLCRobot.esm", 1, False), ("Flagged.esp", 2, False), ("C.esm", 3, False),
        ("L.esl", 0, True), ("B.esp", 4, False), ("Lite.esp", 1, True), ("A.esp", 5, False)]
    assert order.problems == [f"{listing}: names Missing.esp, which is not in {data}: skipped"]
    light = order.entries[4]
    assert order.form_id(order.key(light, 0x01000801)) == "FE000801"
    assert order.form_id(order.key(light, 0x00001000)) == "00001000"
    assert order.form_id(order.key(order.entries[6], 0x01000ABC)) == "FE001ABC"
    assert order.form_id(order.key(order.entries[7], 0x01123456)) == "05123456"
    assert order.key_of(0xFE001ABC) == order.key(order.entries[6], 0x01000ABC)
    unlisted = LoadOrder(data)
    assert [e.name for e in unlisted.entries] == ["Fallout4.esm", "DLCRobot.esm", "C.esm", "Flagged.esp", "L.esl",
                                                  "A.esp", "B.esp", "Inactive.esp", "Lite.esp"]


def test_a_plugin_whose_master_is_not_loaded_is_named_and_skipped(data):
    write(data, "Needy.esp", ["Fallout4.esm", "Absent.esm"], [])
    order = LoadOrder(data)
    assert [e.name for e in order.entries] == ["Fallout4.esm"]
    assert order.problems == [f"{data / 'Needy.esp'}: needs Absent.esm, not loaded before it: skipped"]


# -- damaged input ------------------------------------------------------------------------------
def test_damaged_plugins_are_named_and_skipped_and_the_report_goes_on(data):
    breaking = plugin(["Fallout4.esm"], [interior_cells(cell_with_children(
        inside_cell(), INSIDE, temporary=[placed(0x2000, 0x800, (0, 0, 5), NEW)]))])
    (data / "Truncated.esp").write_bytes(breaking[:-30])
    overrun = bytearray(breaking)
    top = overrun.index(b"GRUP")
    inner = overrun.index(b"GRUP", top + 24)
    overrun[inner + 4:inner + 8] = (len(overrun) - inner - 10).to_bytes(4, "little")  # past its parent's end
    (data / "Overrun.esp").write_bytes(bytes(overrun))
    cell = inside_cell()
    damaged = cell[:30] + bytes(b ^ 0x5A for b in cell[30:])  # the zlib stream after the size
    (data / "BadZlib.esp").write_bytes(plugin(["Fallout4.esm"], [interior_cells(damaged)]))
    (data / "Header.esp").write_bytes(b"TES4\xff\xff\x00\x00")
    found, report = cells(data)
    assert found["00001000"]["status"] == "intact"  # the damaged plugins' edits were skipped
    problems = "\n".join(report["problems"])
    for name, what in (("Truncated.esp", "runs past the end of the file"), ("Overrun.esp", "does not fit its parent"),
                       ("BadZlib.esp", "CELL 00001000"), ("Header.esp", "not even a record header")):
        line = next(p for p in report["problems"] if name in p)
        assert what in line and str(data / name) in line, problems
    assert [e["plugin"] for e in report["load_order"]] == ["Fallout4.esm", "BadZlib.esp", "Overrun.esp", "Truncated.esp"]


def test_compressed_cell_claiming_a_huge_size_is_refused(data):
    body = inside_cell()
    huge = body[:24] + (1 << 31).to_bytes(4, "little") + body[28:]
    (data / "Huge.esp").write_bytes(plugin(["Fallout4.esm"], [interior_cells(huge)]))
    report = precombine_report(data)
    assert any("Huge.esp" in p and "claims" in p for p in report["problems"])


# -- the corpus plugin and cells ----------------------------------------------------------------
def corpus_data(corpus, tmp_path):
    return corpus_plugin_folder(corpus, tmp_path / "Data")


def test_the_corpus_plugin_s_cell_is_intact_but_for_the_meshes_the_corpus_lacks(corpus, tmp_path):
    folder = corpus_data(corpus, tmp_path)
    report = precombine_report(folder, cell=None)
    (cell,) = report["cells"]
    on_disk = {path.name.upper() for path in (corpus / "ck-precombined/Meshes/PreCombined").glob("*_OC.NIF")}
    assert len(on_disk) == 11 and cell["cell"] == "Fallout4.esm:001E58" and cell["plugin"] == "AlootHomePlate.esp"
    assert cell["precombined"] == cell["previs"] == "2021-08-02"  # PCMB and VISI bytes 02 2B
    assert len(cell["meshes"]) == 38 and cell["references"] == 719  # XCRI: 38 meshes, 1438 u32s = 719 pairs
    # The plugin's own overrides of Fallout4.esm's references went into its precombines.
    assert cell["precombines_from"] == "AlootHomePlate.esp" and cell["reference_overrides"] == []
    missing = {c["record"].rsplit("\\", 1)[1].upper() for c in cell["causes"]}
    assert [c["rule"] for c in cell["causes"]] == ["missing _OC file"] * 27
    assert missing == {m["file"].rsplit("\\", 1)[1].upper() for m in cell["meshes"]} - on_disk
    assert report["problems"] == [f"{folder}: holds no Fallout4.esm: the cells and references it defines are unknown"]


def test_the_corpus_cell_with_every_mesh_present_is_intact_geometry_included(corpus, tmp_path):
    folder = tmp_path / "Data"
    meshes = folder / "meshes/precombined"
    meshes.mkdir(parents=True)
    os.symlink(corpus / "ck-precombined/AlootHomePlate.esp", folder / "AlootHomePlate.esp")
    os.symlink(corpus / "ck-precombined/AlootHomePlate - Geometry.csg", folder / "AlootHomePlate - Geometry.csg")
    real = {p.name.upper(): p for p in (corpus / "ck-precombined/Meshes/PreCombined").glob("*_OC.NIF")}
    report = precombine_report(folder)
    for mesh in report["cells"][0]["meshes"]:
        name = mesh["file"].rsplit("\\", 1)[1]
        target = meshes / name
        if name.upper() in real:
            os.symlink(real[name.upper()], target)
        else:
            target.write_bytes(real["00001E58_1200ADBE_OC.NIF"].read_bytes())  # a stand-in of the same plugin
    (vis := folder / "vis").mkdir()
    (vis / "00001E58.uvd").write_bytes(b"stand-in")
    (cell,) = precombine_report(folder, cell=None, check_geometry=True)["cells"]
    assert (cell["status"], cell["causes"], cell["previs_status"]) == ("intact", [], "intact")
    (folder / "AlootHomePlate - Geometry.csg").unlink()
    (cell,) = precombine_report(folder, check_geometry=True)["cells"]
    assert {c["rule"] for c in cell["causes"]} == {"missing geometry file"} and len(cell["causes"]) == 38
    assert "5C4304E6" in cell["causes"][0]["detail"]  # BSCRC32 of "aloothomeplate - geometry"


def test_cli_precombines_never_loads_blender_code(data):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(cell_with_children(
        inside_cell(), INSIDE, temporary=[placed(0x2000, 0x800, (0, 0, 5), NEW)]))])
    result = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "cli.py"), "precombines", str(data),
                             "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [c["status"] for c in report["cells"]] == ["broken", "intact"]
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    assert not [m for m in imported if m.split(".")[0] == "bpy" or m.startswith(("precombined_nif.io", "precombined_nif.ui"))
                and m not in CODE_FREE_PACKAGES]
    text = subprocess.run([sys.executable, str(ROOT / "cli.py"), "precombines", str(data), "--cell", "1000"],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "broken: reference override: Mod.esp, REFR 00002000: edited 2023-03-03, after PCMB 2020-01-10" in text.stdout
    assert "00001100" not in text.stdout
    unknown = subprocess.run([sys.executable, str(ROOT / "cli.py"), "precombines", str(data), "--cell", "0A001000"],
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "no plugin of the load order has the slot of FormID 0A001000" in unknown.stderr
    listing = subprocess.run([sys.executable, str(ROOT / "cli.py"), "precombines", str(data), "--plugins",
                              str(data / "none.txt")], capture_output=True, text=True, timeout=120)
    assert listing.returncode == 2 and listing.stderr.strip() == f"error: {data / 'none.txt'}: cannot be read: " \
        "No such file or directory"


def test_a_reference_override_that_does_not_inflate_is_named_and_taken_as_in_its_cell(data):
    reference = record("REFR", 0x2100, [("NAME", bytes(4)), ("DATA", bytes(24))], compressed=True, vci=NEW)
    damaged = reference[:28] + bytes(b ^ 0x33 for b in reference[28:])
    write(data, "Mod.esp", ["Fallout4.esm"], [worldspace(WORLD, cell_with_children(
        outside_cell(), OUTSIDE, temporary=[damaged]))])
    found, report = cells(data)
    assert rules(found["00001100"]) == [("reference override", "Mod.esp", "REFR 00002100")]
    assert any(str(data / "Mod.esp") in p and "REFR 00002100: damaged zlib data" in p for p in report["problems"])


def test_an_interior_reference_moved_to_another_cell_is_ignored(data):
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(inside_cell()), worldspace(WORLD, cell_with_children(
        outside_cell(), OUTSIDE, temporary=[placed(0x2000, 0x800, (100, 100, 0), NEW)]))])
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [] and cell["reference_overrides"][0]["effect"] == "ignored by the game: moved to another cell"
    # Moved into a cell the plugin defines: not even read.
    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(
        inside_cell(), cell_with_children(precombined_cell(0x01000900, [], [], xcri=False), 0x01000900,
                                          temporary=[placed(0x2000, 0x800, (0, 0, 0), NEW)]))])
    cell = cells(data)[0]["00001000"]
    assert rules(cell) == [] and cell["reference_overrides"] == []


def test_a_cell_asked_for_without_combined_meshes_is_named(data):
    from precombined_nif.core.errors import FormatError

    write(data, "Mod.esp", ["Fallout4.esm"], [interior_cells(precombined_cell(0x01000900, [], [], xcri=False))])
    report = precombine_report(data, cell=0x01000900)
    assert report["cells"] == [] and report["problems"] == ["CELL 01000900: no plugin gives it combined meshes (XCRI)"]
    with pytest.raises(FormatError, match="no plugin of the load order holds CELL 00002000"):
        precombine_report(data, cell=0x2000)
