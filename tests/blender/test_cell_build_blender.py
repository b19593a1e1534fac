"""Build Precombines on a whole cell's import in real Blender: the cell built from a test plugin
placing corpus statics (tests/test_precombine_build.py), imported with File > Import > Cell
(Plugin), one combined reference moved by a turned offset; Build Precombines writes that move
into the patch with the cell exporter and builds the precombines into the same patch: its REFR
override holds the new placement, its XCRI lists the reference, and the rebuilt _OC copy stands
where the moved reference places its model (vertices read with struct, placed here)."""

import math
import struct

import numpy as np
import pytest
from plugin_writer import independent_records, masters_of, xcri_pairs
from test_precombine_build import (CELL, MODELS, PLACED, Build, built_copies, model_shapes, placement, rotation,
                                   write_load_order)

MOVED = 0x2001  # the Golden static turned about three axes, scaled 1.5
PATCH = "Fallout4 - Precombined.esp"


def turned_offset():
    """The user's edit, in world space: turned 0.4 about z around the origin, then moved."""
    matrix = np.eye(4)
    c, s = math.cos(0.4), math.sin(0.4)
    matrix[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    matrix[:3, 3] = (250.0, -120.0, 30.0)
    return matrix


def placed_vertices(folder, matrix, base):
    path = folder / "meshes" / "Test" / MODELS[base][1].rsplit("/", 1)[-1]
    out = []
    for shape, positions in model_shapes(path):
        world = matrix @ shape
        out.append(positions @ world[:3, :3].T + world[:3, 3])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("order", ["every plugin", "patch not in plugins.txt"])
def test_build_precombines_writes_the_cell_s_edits_and_builds_on_them(clean_scene, corpus, tmp_path, order):
    """With every plugin of the Data folder loaded the import shows the built cell (its XCRI in
    the patch); with a plugins.txt not naming the patch the build still builds on the patch."""
    import bpy
    from mathutils import Matrix

    folder = write_load_order(corpus, tmp_path / "Data")
    Build(folder, f"{CELL:08X}").write()
    plugins_txt = ""
    if order != "every plugin":
        plugins_txt = str(tmp_path / "plugins.txt")
        (tmp_path / "plugins.txt").write_text("")
    before = set(bpy.data.collections)
    assert bpy.ops.import_scene.cell_plugin(directory=str(folder), cell=f"{CELL:08X}", plugins_txt=plugins_txt,
                                            precombined="MODELS") == {"FINISHED"}
    cell = next(c for c in set(bpy.data.collections) - before if "cell_key" in c)
    obj = next(o for o in cell.all_objects if o.get("reference_form_id") == f"{MOVED:08X}")
    assert bool(obj["cell_combined"]) == (order == "every plugin")

    base, position, angles, scale = PLACED[MOVED]
    wanted = turned_offset() @ placement(position, angles, scale)  # where the user leaves it, computed here
    obj.matrix_world = Matrix(turned_offset().tolist()) @ obj.matrix_world
    assert np.allclose(np.array(obj.matrix_world), wanted, atol=1e-4)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.precombined_build() == {"FINISHED"}

    data = (folder / PATCH).read_bytes()
    assert masters_of(data) == ["Fallout4.esm"]
    records = independent_records(data)
    (refr,) = [r for r in records if r["type"] == "REFR"]  # the one edit: the moved reference's override
    assert refr["form_id"] == MOVED
    values = struct.unpack("<6f", refr["fields"]["DATA"][0])
    (xscl,) = struct.unpack("<f", refr["fields"]["XSCL"][0])
    assert np.allclose(values[:3], wanted[:3, 3], atol=1e-3)
    assert np.allclose(rotation(values[3:]) * xscl, wanted[:3, :3], atol=1e-5)
    (cell_record,) = [r for r in records if r["type"] == "CELL"]
    assert "PCMB" in cell_record["fields"]
    _, pairs = xcri_pairs(cell_record["fields"]["XCRI"][0])
    assert sorted(form_id for form_id, _ in pairs) == sorted(PLACED)

    built = built_copies(folder, "shared")
    for positions in placed_vertices(folder, wanted, base):  # the rebuilt copies stand where the move puts them
        assert sum(v.shape == positions.shape and np.abs(v - positions).max() < 1e-2 for _, v in built) == 1
    for positions in placed_vertices(folder, placement(position, angles, scale), base):  # and not where it was
        assert not any(v.shape == positions.shape and np.abs(v - positions).max() < 1e-2 for _, v in built)


@pytest.mark.slow
def test_a_failed_build_puts_the_patch_back(clean_scene, corpus, tmp_path):
    """The edits are exported into the patch, then the build refuses a plugin whose CELL group
    is damaged (the cell's import skips it, named): the patch is the one written before, byte
    for byte, and no other file changed."""
    import bpy
    from mathutils import Matrix
    from plugin_writer import group, plugin

    folder = write_load_order(corpus, tmp_path / "Data")
    Build(folder, f"{CELL:08X}").write()
    before = set(bpy.data.collections)
    assert bpy.ops.import_scene.cell_plugin(directory=str(folder), cell=f"{CELL:08X}", precombined="MODELS") == {"FINISHED"}
    cell = next(c for c in set(bpy.data.collections) - before if "cell_key" in c)
    obj = next(o for o in cell.all_objects if o.get("reference_form_id") == f"{MOVED:08X}")
    obj.matrix_world = Matrix(turned_offset().tolist()) @ obj.matrix_world
    too_long = struct.pack("<4sI4siHHI", b"GRUP", 1000, bytes(4), 2, 0, 0, 0)  # runs past its top group
    (folder / "Broken.esp").write_bytes(plugin(["Fallout4.esm"], [group("CELL", [too_long])]))
    files = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    bpy.context.view_layer.objects.active = obj
    with pytest.raises(RuntimeError, match="Broken.esp"):
        bpy.ops.object.precombined_build()
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


@pytest.mark.slow
def test_the_patch_is_never_a_game_master_or_the_cell_s_plugin(clean_scene, corpus, tmp_path):
    """Build Precombines into the cell's own plugin is refused before the edits are written."""
    import bpy

    folder = write_load_order(corpus, tmp_path / "Data")
    before = set(bpy.data.collections)
    assert bpy.ops.import_scene.cell_plugin(directory=str(folder), cell=f"{CELL:08X}", precombined="MODELS") == {"FINISHED"}
    cell = next(c for c in set(bpy.data.collections) - before if "cell_key" in c)
    obj = next(o for o in cell.all_objects if o.get("reference_form_id") == f"{MOVED:08X}")
    obj.location.x += 100.0
    master = (folder / "Fallout4.esm").read_bytes()
    bpy.context.view_layer.objects.active = obj
    with pytest.raises(RuntimeError, match="never the cell's plugin"):
        bpy.ops.object.precombined_build(into="Fallout4.esm")
    assert (folder / "Fallout4.esm").read_bytes() == master
