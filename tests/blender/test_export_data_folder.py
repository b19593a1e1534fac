"""cli.py export --data DIR (issue 44): a precombined cell whose plugin is only in a Data folder
given on the command line is exported with its patch as with the preferences' Fallout 4 Data
folder in Blender; without it, the plugin is not found."""

import importlib
import shutil
import struct
import zlib

import pytest
from extension import blender_cli

CELL = "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
PLUGIN = "AlootHomePlate.esp"


def lone_cell(corpus, tmp_path):
    """The CK's cell copied into a Data folder of its own holding no plugin (nor .csg)."""
    cell = tmp_path / "Mod/Meshes/PreCombined" / (corpus / CELL).name
    cell.parent.mkdir(parents=True)
    shutil.copy(corpus / CELL, cell)
    return cell


def out_cell(folder, corpus):
    cell = folder / "Meshes/PreCombined" / (corpus / CELL).name
    cell.parent.mkdir(parents=True)
    return cell


def masters(plugin):
    """The MAST names of a plugin's header, read from its bytes (TES4 record, then subrecords)."""
    data = plugin.read_bytes()
    size = int.from_bytes(data[4:8], "little")
    at, names = 24, []
    while at < 24 + size:
        kind, length = data[at:at + 4], int.from_bytes(data[at + 4:at + 6], "little")
        if kind == b"MAST":
            names.append(data[at + 6:at + 6 + length].rstrip(b"\0").decode())
        at += 6 + length
    return names


@pytest.mark.slow
def test_export_finds_the_cells_plugin_through_data(tmp_path, corpus):
    data = corpus / "ck-precombined"
    cell = lone_cell(corpus, tmp_path)
    result = blender_cli("import", cell, "--data", data, "--blend", tmp_path / "cell.blend")
    assert result.returncode == 0, result.stderr
    alone = out_cell(tmp_path / "A", corpus)
    result = blender_cli("export", tmp_path / "cell.blend", alone, "--patch", tmp_path / "A/Patch.esp")
    assert result.returncode == 2 and "plugin of this cell was not found" in result.stderr
    assert not (tmp_path / "A/Patch.esp").exists()
    given = out_cell(tmp_path / "B", corpus)
    result = blender_cli("export", tmp_path / "cell.blend", given, "--patch", tmp_path / "B/Patch.esp", "--data", data)
    assert result.returncode == 0, result.stderr
    assert PLUGIN in masters(tmp_path / "B/Patch.esp")
    result = blender_cli("export", tmp_path / "cell.blend", out_cell(tmp_path / "C", corpus), "--data", tmp_path / "no")
    assert result.returncode == 2 and "--data" in result.stderr and "not a folder" in result.stderr


@pytest.mark.slow
def test_cli_data_is_the_preferences_data_folder(clean_scene, addon, tmp_path, corpus):
    """The operator with the preferences' Fallout 4 Data folder writes the bytes --data writes;
    with the preferences' folder unset, it finds no plugin."""
    import bpy

    data = corpus / "ck-precombined"
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    folders = file_import.UserFolders({"FO4": str(data)})
    collections, _ = file_import.import_cells(bpy.context, [str(lone_cell(corpus, tmp_path))], folders=folders)
    objects = list(collections[0].all_objects)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "cell.blend"), copy=True)
    by_cli = out_cell(tmp_path / "A", corpus)
    result = blender_cli("export", tmp_path / "cell.blend", by_cli, "--patch", tmp_path / "A/Patch.esp", "--data", data,
                         "--object", objects[0].name)  # the cell's collection, not the scene's other objects
    assert result.returncode == 0, result.stderr
    by_operator = out_cell(tmp_path / "B", corpus)
    settings = bpy.context.preferences.addons[addon.__name__].preferences
    export = bpy.ops.export_scene.precombined_cell
    for obj in bpy.context.scene.objects:
        obj.select_set(obj in objects)
    bpy.context.view_layer.objects.active = next(o for o in objects if "precombined_cell" in o)

    def preview():  # Object properties > Precombined > Preview Export, with a patch
        assert bpy.ops.object.precombined_export_preview("EXEC_DEFAULT", patch=str(tmp_path / "B/Patch.esp")) == {"FINISHED"}
        return collections[0]["precombined_export_preview"]

    with pytest.raises(RuntimeError, match="plugin of this cell was not found"):
        export(filepath=str(by_operator), use_selection=True, patch=str(tmp_path / "B/Patch.esp"))
    assert preview().startswith("error: ") and "plugin of this cell was not found" in preview()
    settings.fo4_data = str(data)
    try:
        assert "Patch.esp" in preview() and "error" not in preview()
        assert export(filepath=str(by_operator), use_selection=True, patch=str(tmp_path / "B/Patch.esp")) == {"FINISHED"}
    finally:
        settings.fo4_data = ""
    written = sorted(p.relative_to(tmp_path / "A") for p in (tmp_path / "A").rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(tmp_path / "B") for p in (tmp_path / "B").rglob("*") if p.is_file())
    assert len(written) >= 2
    for relative in written:
        assert (tmp_path / "A" / relative).read_bytes() == (tmp_path / "B" / relative).read_bytes(), relative


def cell_and_csg(corpus, tmp_path):
    """The CK's cell and its .csg, each in a folder of its own: no .cdx, plugin or previs file beside them."""
    csg = tmp_path / "Geometry" / "AlootHomePlate - Geometry.csg"
    csg.parent.mkdir()
    shutil.copy(corpus / "ck-precombined" / csg.name, csg)
    return lone_cell(corpus, tmp_path), csg


@pytest.mark.slow
def test_export_starts_the_index_from_the_one_in_data(tmp_path, corpus):
    """The .cdx found only through --data is the one the export starts from: the written index is
    the one written when the import read the .csg beside it (the corpus's own folder)."""
    cell, csg = cell_and_csg(corpus, tmp_path)
    assert blender_cli("import", cell, "--csg", csg, "--blend", tmp_path / "lone.blend").returncode == 0
    assert blender_cli("import", corpus / CELL, "--blend", tmp_path / "beside.blend").returncode == 0
    outputs = {}
    for name, blend, options in (("alone", "lone.blend", ()), ("data", "lone.blend", ("--data", corpus / "ck-precombined")),
                                 ("beside", "beside.blend", ())):
        output = out_cell(tmp_path / name, corpus)
        result = blender_cli("export", tmp_path / blend, output, *options)
        assert result.returncode == 0, result.stderr
        outputs[name] = (tmp_path / name / "AlootHomePlate.cdx", result.stderr)
    assert "no index of the cell was found to start from" in outputs["alone"][1]
    assert "no index of the cell was found" not in outputs["data"][1]
    assert outputs["data"][0].read_bytes() == outputs["beside"][0].read_bytes()
    assert outputs["data"][0].read_bytes() != outputs["alone"][0].read_bytes()


@pytest.mark.slow
def test_export_finds_the_previs_file_in_data(tmp_path, corpus):
    """A new index's previs row: the cell's .uvd (in vis\\<master>, the master its plugin names:
    another master's file of the same cell is beside it) is found in a Data folder given with
    --data holding them and the plugin alone, also by the processes of --each --jobs 2."""
    cell, csg = cell_and_csg(corpus, tmp_path)
    assert blender_cli("import", cell, "--csg", csg, "--blend", tmp_path / "lone.blend").returncode == 0
    data = tmp_path / "Data"
    for master in ("Fallout4.esm", "DLCRobot.esm"):
        (data / "Vis" / master).mkdir(parents=True)
        shutil.copy(corpus / "ck-precombined/Vis/Fallout4.esm/00001E58.uvd", data / "Vis" / master)
    shutil.copy(corpus / "ck-precombined" / PLUGIN, data)
    results = {}
    for name, options in (("alone", ()), ("data", ("--data", data))):
        result = blender_cli("export", tmp_path / "lone.blend", out_cell(tmp_path / name, corpus), *options)
        assert result.returncode == 0, result.stderr
        results[name] = result.stderr
    assert "no previs file of cell 00001E58" in results["alone"]
    assert "no previs file" not in results["data"]
    previs = (0x87, 0x1E58, bscrc(b"00001e58"), bscrc(b"vis\\fallout4.esm"))  # the cell's .uvd, of Fallout4.esm
    assert previs in rows_of(tmp_path / "data/AlootHomePlate.cdx")
    assert previs not in rows_of(tmp_path / "alone/AlootHomePlate.cdx")
    # --each with two jobs: each collection's process is given --data too
    result = blender_cli("export", tmp_path / "lone.blend", tmp_path / "each", "--each", "--jobs", "2", "--data", data)
    assert result.returncode == 0, result.stderr
    assert "no previs file" not in result.stderr
    assert previs in rows_of(tmp_path / "each/AlootHomePlate.cdx")


def bscrc(text):
    return zlib.crc32(text, 0xFFFFFFFF) ^ 0xFFFFFFFF


def rows_of(path):
    """(kind, cell, value, extra) rows of a .cdx, read with struct."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 4)
    return [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(count)]


@pytest.mark.slow
def test_edited_geometry_starts_from_the_csg_in_the_data_folder(clean_scene, addon, tmp_path, corpus):
    """An edited record written for another plugin (MyMod) into a folder of its own: the written
    'MyMod - Geometry.csg' starts from the one of that name in the user's Data folder, so the
    records it holds (other cells') are kept; without it, it holds the edit alone; a folder that
    is gone is no folder."""
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    exporter = importlib.import_module(f"{addon.__name__}.io.precombined.exporter")
    cell, csg = cell_and_csg(corpus, tmp_path)
    collections, _ = file_import.import_cells(bpy.context, [str(cell)], geometry_path=str(csg))
    objects = list(collections[0].all_objects)
    mesh = next(o.data for o in objects if o.type == "MESH" and "precombined_instance" in o)
    mesh.vertices[0].co.x += 1.0
    data = tmp_path / "Data"
    data.mkdir()
    held = (data / "MyMod - Geometry.csg")
    held.write_bytes(csg.read_bytes())  # a .csg of that name, holding other records
    sizes = {}
    for name, folders in (("alone", []), ("data", [str(data)]), ("gone", [str(tmp_path / "missing")])):
        exporter.export_cell(str(out_cell(tmp_path / name, corpus)), objects, plugin="MyMod", folders=folders)
        sizes[name] = (tmp_path / name / held.name).stat().st_size
    assert sizes["data"] > held.stat().st_size > sizes["alone"]
    # a Data folder set in the preferences that is gone since: as none
    assert [p.read_bytes() for p in sorted((tmp_path / "gone").rglob("*.*"))] == \
        [p.read_bytes() for p in sorted((tmp_path / "alone").rglob("*.*"))]
