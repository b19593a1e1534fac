"""Precombined copies imported with their plugin carry the reference that placed them."""

import importlib
import struct

import numpy as np
import pytest
from plugin_writer import independent_refrs
from scene import export_cell
from support import CORPUS, corpus_files

PLUGIN = "ck-precombined/AlootHomePlate.esp"
CELLS = corpus_files("ck-precombined/**/*_OC.NIF")
CELL = CORPUS / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"  # 13 copies, 10 at REFRs of the plugin


def test_copies_carry_the_refr_placing_them(clean_scene, corpus, addon):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    plugin_module = importlib.import_module(f"{addon.__name__}.core.plugin")
    collections, messages = file_import.import_cells(bpy.context, [str(p) for p in CELLS],
                                                            plugins=[str(corpus / PLUGIN)])
    assert len(collections) == len(CELLS)
    with plugin_module.Plugin(corpus / PLUGIN) as plugin:
        copies = [o for c in collections for o in c.all_objects if "precombined_instance" in o]
        named = [o for o in copies if "reference_form_id" in o]
        assert len(copies) == 223 and len(named) == 178
        refrs = independent_refrs((corpus / PLUGIN).read_bytes())
        for obj in named:
            refr = plugin.record(int(obj["reference_form_id"], 16))
            assert_placed_by(obj.matrix_world, refrs[int(obj["reference_form_id"], 16)])
            assert obj["base_form_id"] == f"{struct.unpack('<I', refr.field('NAME'))[0]:08X}"
            if "base_editor_id" in obj:  # unique by itself, never by Blender's ".001"
                assert obj.name.split(" #")[0] == f"{obj['base_editor_id']} {obj['reference_form_id']}"
        assert not [o.name for o in named if "base_editor_id" in o and o.name[-4:-3] == "." and o.name[-3:].isdigit()]
    unnamed = [m for m in messages if "match no reference" in m]
    assert len(unnamed) == sum(1 for c in collections
                               if any("precombined_instance" in o and "reference_form_id" not in o for o in c.all_objects))
    assert all("Fallout4.esm" in m for m in unnamed)


def refr_rotation(angles):
    """The game's rotation of a REFR's DATA angles (radians), composed here independently of
    core.plugin: about x, then y, then z, each by its negated angle."""
    x, y, z = angles
    rx = np.array([[1, 0, 0], [0, np.cos(x), np.sin(x)], [0, -np.sin(x), np.cos(x)]])
    ry = np.array([[np.cos(y), 0, -np.sin(y)], [0, 1, 0], [np.sin(y), 0, np.cos(y)]])
    rz = np.array([[np.cos(z), np.sin(z), 0], [-np.sin(z), np.cos(z), 0], [0, 0, 1]])
    return rx @ ry @ rz


def assert_placed_by(matrix_world, refr):
    """The copy sits where its REFR places it (import scale 1): position within 0.01 units,
    rotation times XSCL scale within 1e-3. ``refr``: (x, y, z, rx, ry, rz, scale) read from the
    plugin's bytes by test_plugin.independent_refrs."""
    x, y, z, *angles, scale = refr
    matrix = np.array(matrix_world)
    assert np.abs(matrix[:3, 3] - (x, y, z)).max() <= 0.01
    assert np.abs(matrix[:3, :3] - refr_rotation(angles) * scale).max() <= 1e-3


READ_BLEND = """
import json, sys, bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
print(json.dumps({o.name: [o["reference_form_id"], [list(r) for r in o.matrix_world]]
                  for o in bpy.data.objects if "reference_form_id" in o}))
"""


@pytest.mark.slow
def test_cli_import_of_the_corpus_cells_places_every_named_copy_at_its_refr(tmp_path, corpus):
    """``cli.py import CELL... --plugin P`` headless does what the import in Blender does: every
    named copy saved in the .blend sits at the placement of the REFR it names."""
    import json
    import subprocess

    import extension
    from extension import blender_cli

    blend = tmp_path / "cells.blend"
    result = blender_cli("import", *CELLS, "--csg", corpus / "ck-precombined/AlootHomePlate - Geometry.csg",
                         "--plugin", corpus / PLUGIN, "--blend", blend)
    assert result.returncode == 0, result.stderr
    read = subprocess.run([str(extension.python(extension.VENVS["4.5"])), "-c", READ_BLEND, str(blend)],
                          capture_output=True, text=True, timeout=180)
    assert read.returncode == 0, read.stderr
    placed = json.loads(read.stdout.strip().splitlines()[-1])
    refrs = independent_refrs((corpus / PLUGIN).read_bytes())
    assert len(placed) == 178  # as test_plugin finds: 178 of the 223 copies sit at a REFR of the plugin
    # A reference whose base has several shapes places copies of several records: 141 REFRs here.
    assert len({form_id for form_id, _ in placed.values()}) == 141
    for form_id, matrix in placed.values():
        assert_placed_by(matrix, refrs[int(form_id, 16)])


def test_the_plugin_is_found_in_the_cells_data_folder(clean_scene, corpus, addon):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    collections, _ = file_import.import_cells(bpy.context, [str(CELL)])
    assert sum("reference_form_id" in o for o in collections[0].all_objects) == 10


def angles_of(rotation):
    """The DATA angles whose Rx(-x) Ry(-y) Rz(-z) is ``rotation``."""
    r = np.asarray(rotation, np.float64)
    b = np.arcsin(np.clip(r[0, 2], -1, 1))
    return -np.arctan2(-r[1, 2], r[2, 2]), -b, -np.arctan2(-r[0, 1], r[0, 0])


def test_copies_are_named_after_the_base_editor_id(clean_scene, corpus, addon, tmp_path):
    """A plugin written for the test places every copy of a corpus cell with a reference whose
    base is in the plugin: every copy gets that base's EditorID as its name."""
    import bpy
    from plugin_writer import cell, group, plugin, refr, static

    from precombined_nif.core.nif import NifFile
    from precombined_nif.core.plugin.references import cell_instances

    path = CELL
    copies = cell_instances(NifFile.read(path))
    statics, references = [], []
    for number, (block, record, instance_number, instance) in enumerate(copies):
        base, form_id = 0x01000800 + 2 * number, 0x01000801 + 2 * number
        statics.append(static(base, f"Base{block}x{record}x{instance_number}", f"Test\\Model{number}.nif"))
        references.append(refr(form_id, base, instance["translation"].tolist(), angles_of(instance["rotation"]),
                               float(instance["scale"])))
    esp = tmp_path / "Test.esp"
    esp.write_bytes(plugin(["Fallout4.esm"], [
        group("STAT", statics),
        group("CELL", [cell(0x00001E58, [0x1200ADBE], [0x01000801 + 2 * n for n in range(len(copies))]), *references]),
    ]))
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), messages = file_import.import_cells(bpy.context, [str(path)], plugins=[str(esp)])
    placed = [o for o in collection.all_objects if "precombined_instance" in o]
    assert len(placed) == len(copies) == 13
    for obj in placed:
        key = (obj["precombined_block"], obj["precombined_object"], obj["precombined_instance"])
        own = next(instance for b, r, i, instance in copies if (b, r, i) == key)
        # A reference whose base has several shapes places several records' copies: any
        # reference at exactly this placement is the right one.
        same = [n for n, (*_, instance) in enumerate(copies) if instance.tobytes()[4:56] == own.tobytes()[4:56]]
        number = int(obj["reference_form_id"], 16) - 0x01000801
        assert number % 2 == 0 and number // 2 in same
        b, r, i, _ = copies[number // 2]
        assert obj["base_editor_id"] == f"Base{b}x{r}x{i}"
        assert obj.name.split(" #")[0] == f"{obj['base_editor_id']} {obj['reference_form_id']}"  # no ".001"
        assert obj["reference_plugin"] == "Test.esp" and obj["base_model"] == f"Test\\Model{number // 2}.nif"
    assert not [m for m in messages if "match no reference" in m]


def test_copies_placed_by_geometry_nodes_carry_their_refr_as_a_point_attribute(clean_scene, corpus, addon, tmp_path):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    csg = str(corpus / "ck-precombined/AlootHomePlate - Geometry.csg")  # geometry nodes need the records' meshes
    (by_objects,), _ = file_import.import_cells(bpy.context, [str(CELL)], plugins=[str(corpus / PLUGIN)],
                                                       geometry_path=csg)
    expected = {(o["precombined_block"], o["precombined_object"], o["precombined_instance"]): o.get("reference_form_id")
                for o in by_objects.all_objects if "precombined_instance" in o}
    (by_points,), messages = file_import.import_cells(bpy.context, [str(CELL)], plugins=[str(corpus / PLUGIN)],
                                                             instancing="GEOMETRY_NODES", geometry_path=csg)
    found = {}
    for obj in by_points.all_objects:
        if obj.data is not None and "precombined_instances_raw" in obj.data:
            values = np.zeros(len(obj.data.vertices), np.int32)
            obj.data.attributes["reference_form_id"].data.foreach_get("value", values)
            for number, value in enumerate(values.view(np.uint32)):
                found[(obj["precombined_block"], obj["precombined_object"], number)] = f"{value:08X}" if value else None
    assert found == expected and sum(v is not None for v in found.values()) == 10
    assert any("3 of 13 instances match no reference" in m for m in messages)
    # The attribute is the import's own: the cell still exports as the Creation Kit wrote it.
    assert export_cell(by_points, tmp_path / "out.nif") == {"FINISHED"}
    assert (tmp_path / "out.nif").read_bytes() == CELL.read_bytes()


def test_a_cell_file_not_named_after_its_cell_is_named_once_in_its_warning(clean_scene, corpus, addon, tmp_path):
    """Without the cell's FormID in the file name no reference is looked up: one warning, naming
    the file once (the import loop names it)."""
    import bpy

    renamed = tmp_path / "Renamed_OC.nif"
    renamed.write_bytes(CELL.read_bytes())
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), messages = file_import.import_cells(bpy.context, [str(renamed)], plugins=[str(corpus / PLUGIN)])
    assert [m for m in messages if "references not looked up" in m] == [
        f"{renamed}: the file name does not start with the cell's FormID: references not looked up"
    ]
    assert not any("reference_form_id" in o for o in collection.all_objects)
