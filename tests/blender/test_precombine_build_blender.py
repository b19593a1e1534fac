"""Built precombines in real Blender (issue 40, point 3): the cell built from a test plugin placing
corpus statics (tests/test_precombine_build.py) imported with the precombined importer, every
copy's vertices where its REFR places its model's (read with struct, placed here); Build
Precombines on the Precombined panel rebuilds the cell of the active copy, the same bytes again."""

import numpy as np
import pytest
from test_precombine_build import CELL, Build, expected_copies, write_load_order


def world_vertices(obj):
    mesh = obj.data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    matrix = np.array(obj.matrix_world)
    return co.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]


def test_a_built_cell_re_imports_with_every_copy_at_its_reference(clean_scene, corpus, tmp_path):
    import bpy

    folder = write_load_order(corpus, tmp_path / "Data")
    Build(folder, f"{CELL:08X}").write()
    csg = folder / "Fallout4 - Precombined - Geometry.csg"
    copies = []
    for path in sorted((folder / "meshes/precombined").glob("*_OC.nif")):
        assert bpy.ops.import_scene.precombined_cell(filepath=str(path), geometry_path=str(csg), scale=1.0) == {"FINISHED"}
        copies += [o for o in bpy.data.collections[path.stem].objects if "precombined_instance" in o]
    expected = expected_copies(folder)
    assert len(copies) == len(expected)
    placed = [world_vertices(o) for o in copies]
    for _, positions in expected:  # each copy once, at its reference
        found = [i for i, v in enumerate(placed) if v.shape == positions.shape and np.abs(v - positions).max() < 1e-2]
        assert len(found) == 1

    plugin = folder / "Fallout4 - Precombined.esp"
    before = {p: p.read_bytes() for p in [plugin, csg, *(folder / "meshes/precombined").glob("*")]}
    for path in before:
        path.unlink()
    bpy.context.view_layer.objects.active = copies[0]
    assert bpy.ops.object.precombined_build() == {"FINISHED"}
    assert {p: p.read_bytes() for p in before} == before  # written again: the same references, the same files
