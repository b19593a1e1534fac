"""An edited Creation Kit cell (corpus ck-precombined/) shipped whole: exported with a patch
plugin, its .cdx lists the geometry its _OC files use, the patch's REFRs and CELL (read here
with struct after xEdit's definitions) agree with the edit, the load order with the patch keeps
the precombines, the cell re-imported with the patch has every copy at its REFR, and the moved
copy's collision is moved or the export names it."""

import importlib
import os
import shutil
import struct
import zlib

import numpy as np
import pytest
from plugin_writer import independent_records, independent_refrs, masters_of, xcri_pairs
from support import CORPUS

from precombined_nif.core.precombined.status import precombine_report

CK = CORPUS / "ck-precombined"
PLUGIN = CK / "AlootHomePlate.esp"
STAND_IN = "00001E58_1200ADBE_OC.NIF"  # the corpus has 11 of the cell's 38 meshes: the others stand in as copies of it
MOVED_CELL = "00001E58_1200ADBE_OC.NIF"  # 13 copies, 10 at REFRs of the plugin
EDITED_CELL = "00001E58_15ACA888_OC.NIF"  # a record edited here appends geometry
PATCH = "HomePlatePatch.esp"


def crc(text):
    return zlib.crc32(text.lower().encode(), 0xFFFFFFFF) ^ 0xFFFFFFFF


def corpus_records():
    return {r["form_id"]: r for r in independent_records(PLUGIN.read_bytes())}


@pytest.fixture
def data(corpus, tmp_path):
    """A Data folder: the plugin, its .csg and .cdx, the 11 real meshes and the physics file
    (links to the corpus: a write replaces the link, never the corpus file) and stand-ins for
    the 27 meshes the corpus lacks."""
    folder = tmp_path / "Data"
    meshes = folder / "Meshes" / "PreCombined"
    meshes.mkdir(parents=True)
    for name in ("AlootHomePlate.esp", "AlootHomePlate - Geometry.csg", "AlootHomePlate.cdx"):
        os.symlink(CK / name, folder / name)
    real = {p.name.upper(): p for p in (CK / "Meshes/PreCombined").iterdir()}
    cell = corpus_records()[0x1E58]
    hashes, _ = xcri_pairs(cell["fields"]["XCRI"][0])
    for mesh in hashes:
        name = f"00001E58_{mesh:08X}_OC.NIF"
        if name in real:
            os.symlink(real[name], meshes / name)
        else:
            shutil.copyfile(real[STAND_IN], meshes / name)
    os.symlink(real["00001E58_PHYSICS.NIF"], meshes / "00001E58_Physics.NIF")
    return folder


def modules(addon):
    return (importlib.import_module(f"{addon.__name__}.io.precombined.exporter"),
            importlib.import_module(f"{addon.__name__}.io.precombined.cell_outputs"),
            importlib.import_module(f"{addon.__name__}.io.file_import"))


def import_cell(addon, path, plugins=()):
    import bpy

    _, _, file_import = modules(addon)
    folders = file_import.UserFolders(data={"FO4": str(path.parents[2])})  # each record's .csg found there by its hash
    (collection,), _ = file_import.import_cells(bpy.context, [str(path)], plugins=[str(p) for p in plugins], folders=folders)
    return collection


def copies(collection):
    return [o for o in collection.all_objects if "precombined_instance" in o]


def named_copy(collection, number):
    """The ``number``-th copy by name of those matched to a REFR of the plugin."""
    return sorted((o for o in copies(collection) if "reference_form_id" in o), key=lambda o: o.name)[number]


def export(addon, collection, path, patch, **options):
    import bpy

    bpy.context.view_layer.update()  # world matrices of what the test moved
    exporter, cell_outputs, _ = modules(addon)
    return exporter.export_cell(str(path), list(collection.all_objects),
                                patch=cell_outputs.PatchOptions(str(patch), **options))


def used_geometry(folder):
    """(name hash, .csg offset) of every record of every _OC file of the folder."""
    from precombined_nif.core.nif import NifFile

    used = set()
    for path in (folder / "Meshes" / "PreCombined").glob("*_OC.NIF"):
        for block in NifFile.read(path).blocks:
            if block.type_name == "BSPackedCombinedSharedGeomDataExtra":
                used |= {(int(o["filename_hash"]), int(o["data_offset"])) for o in block.objects}
    return used


def index_geometry(path):
    """(name hash, offset) of the 0x80 rows of a .cdx, read with struct."""
    data = path.read_bytes()
    assert data[:4] == b"bcdx" and len(data) == 8 + 16 * struct.unpack_from("<I", data, 4)[0]
    rows = [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(struct.unpack_from("<I", data, 4)[0])]
    assert rows == sorted(rows, key=lambda r: (r[1], r[0], r[3], r[2]))
    return {(extra, value) for kind, cell, value, extra in rows if kind == 0x80 and cell == 0x1E58}


def patch_records(folder):
    data = (folder / PATCH).read_bytes()
    return masters_of(data), {r["form_id"]: r for r in independent_records(data)}


def check_common(folder, plan):
    """What every edit must leave: the patch's masters and CELL, dated at PCMB; the .cdx listing
    exactly the geometry the _OC files use; the load order keeping the precombines."""
    masters, records = patch_records(folder)
    assert masters == ["Fallout4.esm", "AlootHomePlate.esp"]
    cell = records[0x1E58]
    source = corpus_records()[0x1E58]
    pcmb = struct.unpack("<H", source["fields"]["PCMB"][0])[0]
    assert cell["type"] == "CELL" and cell["groups"][0] == (b"CELL", 0) and [g[1] for g in cell["groups"]] == [0, 2, 3]
    for record in records.values():
        assert record["vci"] & 0xFFFF == pcmb  # not after PCMB: the game keeps the precombines
    assert index_geometry(folder / "HomePlatePatch.cdx") == used_geometry(folder)
    report = precombine_report(folder, check_geometry=True)
    (state,) = report["cells"]
    assert (state["plugin"], state["status"], state["causes"]) == ("HomePlatePatch.esp", "intact", [])
    return records, cell, source


def check_reimport(addon, folder, name, expected_named):
    """Imported again with the patch, every copy matched to a REFR stands at it."""
    collection = import_cell(addon, folder / "Meshes" / "PreCombined" / name, [folder / PATCH, folder / "AlootHomePlate.esp"])
    refrs = independent_refrs((folder / "AlootHomePlate.esp").read_bytes())
    refrs.update(independent_refrs((folder / PATCH).read_bytes()))
    named = [o for o in copies(collection) if "reference_form_id" in o]
    assert len(named) == expected_named
    for obj in named:
        x, y, z, *_ = refrs[int(obj["reference_form_id"], 16)]
        assert np.abs(np.array(obj.matrix_world)[:3, 3] - (x, y, z)).max() <= 0.01
    return collection


def test_a_moved_copy_ships_with_its_refr_override(clean_scene, addon, data):
    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    moved = named_copy(collection, 0)
    form_id = int(moved["reference_form_id"], 16)
    before = np.array(moved.matrix_world)
    moved.location.x += 100.0
    plan = export(addon, collection, path, data / PATCH)
    records, cell, source = check_common(data, plan)
    refr = records[form_id]
    x, y, z, rx, ry, rz = struct.unpack("<6f", refr["fields"]["DATA"][0])
    np.testing.assert_allclose((x, y, z), before[:3, 3] + (100, 0, 0), atol=1e-3)
    assert refr["type"] == "REFR" and refr["fields"]["NAME"] == corpus_records()[form_id]["fields"]["NAME"]
    assert [g[1] for g in refr["groups"]] == [0, 2, 3, 6, 9] and struct.unpack("<I", refr["groups"][3][0])[0] == 0x1E58
    assert xcri_pairs(cell["fields"]["XCRI"][0]) == xcri_pairs(source["fields"]["XCRI"][0])  # every copy still combined
    # The corpus lacks the base models' collision: the physics stays and the export says whose.
    assert any(m.startswith(f"{moved.name}: collision left where it was") for m in plan.messages), plan.messages
    check_reimport(addon, data, MOVED_CELL, 10)


def test_a_deleted_copy_is_disabled_and_leaves_the_combined_references(clean_scene, addon, data):
    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    gone = named_copy(collection, 1)
    form_id = int(gone["reference_form_id"], 16)
    import bpy

    bpy.data.objects.remove(gone)
    plan = export(addon, collection, path, data / PATCH)
    records, cell, source = check_common(data, plan)
    refr = records[form_id]
    assert refr["flags"] & 0x800 and not refr["flags"] & 0x20  # Initially Disabled, not Deleted
    assert struct.unpack("<IB3x", refr["fields"]["XESP"][0]) == (0x14, 1)  # enabled opposite of the player
    assert struct.unpack("<6f", refr["fields"]["DATA"][0])[2] == -30000.0
    meshes, pairs = xcri_pairs(cell["fields"]["XCRI"][0])
    old_meshes, old_pairs = xcri_pairs(source["fields"]["XCRI"][0])
    assert meshes == old_meshes and pairs == [p for p in old_pairs if p[0] != form_id] and len(pairs) == 718
    assert any("collision left where it was" in m for m in plan.messages), plan.messages
    check_reimport(addon, data, MOVED_CELL, 9)


def test_an_edited_record_appends_geometry_to_the_patchs_own_files(clean_scene, addon, data):
    import bmesh

    path = data / "Meshes" / "PreCombined" / EDITED_CELL
    collection = import_cell(addon, path)
    named = sum("reference_form_id" in o for o in copies(collection))
    mesh = sorted(copies(collection), key=lambda o: o.name)[0].data
    edit = bmesh.new()
    edit.from_mesh(mesh)
    edit.verts.ensure_lookup_table()
    edit.verts[0].co.z += 25.0
    edit.to_mesh(mesh)
    edit.free()
    before = used_geometry(data)
    plan = export(addon, collection, path, data / PATCH)
    records, cell, source = check_common(data, plan)
    after = used_geometry(data)
    own = crc("homeplatepatch - geometry")
    added = after - before
    assert len(added) == 1 and next(iter(added))[0] == own and (data / "HomePlatePatch - Geometry.csg").is_file()
    assert not (data / "AlootHomePlate.cdx").resolve().is_relative_to(data)  # the plugin's own files untouched
    assert xcri_pairs(cell["fields"]["XCRI"][0]) == xcri_pairs(source["fields"]["XCRI"][0])
    assert set(records) == {0x1E58}  # no copy moved: the CELL alone
    assert named > 0
    check_reimport(addon, data, EDITED_CELL, named)


def duplicate(obj, offset):
    """A linked duplicate (Alt+D): the same mesh and properties, moved by ``offset``."""
    import bpy

    twin = obj.copy()
    for collection in obj.users_collection:
        collection.objects.link(twin)
    twin.location = np.array(obj.location) + offset
    bpy.context.view_layer.update()
    return twin


def test_duplicated_copies_get_new_refrs_and_a_second_cell_updates_the_patch(clean_scene, addon, data):
    import bpy

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    source = named_copy(collection, 2)
    form_id = int(source["reference_form_id"], 16)
    twin = duplicate(source, (0.0, 0.0, 150.0))
    plan = export(addon, collection, path, data / PATCH, light=True)
    masters, records = patch_records(data)
    new = [r for r in records.values() if r["form_id"] >> 24 == 2]
    assert len(new) == 1 and new[0]["form_id"] == 0x02000800  # the patch's first object id, ESL-sized
    assert new[0]["fields"]["NAME"] == corpus_records()[form_id]["fields"]["NAME"]
    np.testing.assert_allclose(struct.unpack("<6f", new[0]["fields"]["DATA"][0])[:3], np.array(twin.matrix_world)[:3, 3],
                               atol=1e-3)
    data_bytes = (data / PATCH).read_bytes()
    assert struct.unpack_from("<I", data_bytes, 8)[0] & 0x200  # the TES4 record's light flag
    cell = records[0x1E58]
    _, pairs = xcri_pairs(cell["fields"]["XCRI"][0])
    assert pairs[-1] == (0x02000800, int(MOVED_CELL.split("_")[1], 16)) and len(pairs) == 720
    check_common(data, plan)
    check_reimport(addon, data, MOVED_CELL, 11)  # the duplicate stands at its new REFR

    # Another mesh of the cell exported with the same patch: refused unless asked to update it,
    # then its records are added to the patch's and its earlier ones kept.
    other = data / "Meshes" / "PreCombined" / "00001E58_0F5ED9F3_OC.NIF"
    second = import_cell(addon, other)
    moved = named_copy(second, 0)
    moved.location.y -= 40.0
    before = {p: p.read_bytes() for p in data.iterdir() if p.is_file()}
    with pytest.raises(Exception, match="exists: a patch is never overwritten unless asked to update it"):
        export(addon, second, other, data / PATCH)
    assert {p: p.read_bytes() for p in data.iterdir() if p.is_file()} == before  # nothing half-written
    plan = export(addon, second, other, data / PATCH, update=True)
    _, records = patch_records(data)
    assert 0x02000800 in records and int(moved["reference_form_id"], 16) in records
    _, pairs = xcri_pairs(records[0x1E58]["fields"]["XCRI"][0])
    assert len(pairs) == 720
    check_common(data, plan)
    bpy.data.objects.remove(twin)


def test_the_panel_lists_what_the_export_would_write(clean_scene, addon, data):
    import bpy
    from scene import panel_drawn

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    moved = named_copy(collection, 0)
    moved.location.x += 100.0
    bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = moved
    before = sorted(p.name for p in data.rglob("*"))
    assert bpy.ops.object.precombined_export_preview("EXEC_DEFAULT", patch=str(data / PATCH)) == {"FINISHED"}
    assert sorted(p.name for p in data.rglob("*")) == before  # a preview writes nothing
    panel = importlib.import_module(f"{addon.__name__}.ui.precombined_panel")
    labels = [text for kind, text in panel_drawn(panel.OBJECT_PT_precombined, moved) if kind == "label"]
    assert any(text.startswith(f"{path}: precombined cell") and "(replaced)" in text for text in labels)
    assert any(text.startswith(str(data / PATCH)) and "patch plugin" in text and "(new)" in text for text in labels)
    assert any(text.strip().startswith(f"moved REFR {moved['reference_form_id']}") for text in labels)
    assert any("collision left where it was" in text for text in labels)


@pytest.mark.parametrize("damage, message", [
    ("truncated", "count 287 needs 4592 bytes"),
    ("unsorted", "not sorted"),
    ("no plugin", "the plugin of this cell was not found"),
])
def test_bad_input_is_refused_and_nothing_is_written(clean_scene, addon, data, damage, message):
    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    moved = named_copy(collection, 0)
    moved.location.x += 100.0
    index = data / "AlootHomePlate.cdx"
    ck = (CK / "AlootHomePlate.cdx").read_bytes()
    index.unlink()
    if damage == "truncated":  # the count says more rows than the file holds
        index.write_bytes(ck[:-16])
    elif damage == "unsorted":
        index.write_bytes(ck[:8] + ck[24:40] + ck[8:24] + ck[40:])
    else:
        index.write_bytes(ck)
        (data / "AlootHomePlate.esp").unlink()
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    with pytest.raises(Exception, match=message) as caught:
        export(addon, collection, path, data / PATCH)
    if damage != "no plugin":
        assert str(index) in str(caught.value)
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before


def run_cli(*args):
    import subprocess

    import extension

    python = str(extension.python(extension.VENVS["4.5"]))
    return subprocess.run([python, str(extension.ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_cli_dry_run_lists_the_export_and_the_export_keeps_the_precombines(clean_scene, addon, data, tmp_path):
    import bpy

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    moved = named_copy(collection, 0)
    moved.location.x += 100.0
    blend = tmp_path / "edited.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    dry = run_cli("export", blend, path, "--patch", data / PATCH, "--object", moved.name, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before
    lines = [line for line in dry.stdout.splitlines() if not line.startswith("Read blend")]
    assert lines[0] == f"{path}: dry run, nothing written"
    assert any(line.startswith(f"{path}: precombined cell") and line.endswith("(replaced)") for line in lines)
    assert any(line.startswith(f"{data / 'HomePlatePatch.cdx'}: resource index (.cdx)") for line in lines)
    assert any(line.startswith(f"{data / PATCH}: patch plugin") and line.endswith("(new)") for line in lines)
    assert any(line.strip().startswith("CELL 00001E58 override: XCRI 38 meshes, 719 references") for line in lines)
    assert any(line.strip().startswith(f"moved REFR {moved['reference_form_id']}") for line in lines)
    run = run_cli("export", blend, path, "--patch", data / PATCH, "--object", moved.name)
    assert run.returncode == 0, run.stderr
    assert f"{data / PATCH}: patch plugin" in run.stdout and "collision left where it was" in run.stderr
    report = run_cli("precombines", data, "--geometry", "--json")
    import json

    (state,) = json.loads(report.stdout)["cells"]
    assert (state["plugin"], state["status"], state["causes"]) == (PATCH, "intact", [])
    again = run_cli("export", blend, path, "--patch", data / PATCH, "--object", moved.name)
    assert again.returncode == 2 and "a patch is never overwritten unless asked to update it" in again.stderr
