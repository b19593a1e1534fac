"""Built precombines in real Blender (issue 40, point 3): the cell built from a test plugin placing
corpus statics (tests/test_precombine_build.py) imported with the precombined importer, every
copy's vertices where its REFR places its model's (read with struct, placed here); Build
Precombines on the Precombined panel rebuilds the cell of the active copy, the same bytes again;
the built ``_Physics.nif`` imported with the cell shows its collision over the copies."""

import numpy as np
import pytest
from test_precombine_build import (CELL, GAME_UNITS, Build, MergedMesh, expected_collision, expected_copies, polytope_reach,
                                   read_file, write_load_order)


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


def test_a_built_cell_s_collision_lands_over_its_copies(clean_scene, corpus, tmp_path):
    """The cell's _OC files and its built _Physics.nif imported together: the collision mesh's
    corners are the shelf's collision triangles' corners placed by its REFR (each one there) or
    lie on a placed polytope of the posters and curtains (computed in the test), and the shelf's
    collision is centred inside the box of the shelf's copies."""
    import bpy

    folder = write_load_order(corpus, tmp_path / "Data")
    Build(folder, f"{CELL:08X}").write()
    csg = folder / "Fallout4 - Precombined - Geometry.csg"
    physics = folder / "meshes/precombined" / f"{CELL:08X}_Physics.nif"
    paths = [*sorted((folder / "meshes/precombined").glob("*_OC.nif")), physics]
    for path in paths:
        assert bpy.ops.import_scene.precombined_cell(filepath=str(path), geometry_path=str(csg), scale=1.0) == {"FINISHED"}
    (collision,) = [o for o in bpy.data.collections[physics.stem].all_objects if "havok_shape" in o and o.type == "MESH"]
    shown = world_vertices(collision)
    meshes, polytopes = expected_collision(folder)
    ((_, shelf),) = [(key, triangles) for key, triangles in meshes if len(triangles)]
    corners = np.unique(shelf.reshape(-1, 3), axis=0)
    distance = np.linalg.norm(shown[:, None] - corners[None], axis=2)
    # the compressed mesh quantises its corners: the largest half step of the file, game units
    slack = MergedMesh(read_file(physics)).slack.max()
    assert (distance.min(axis=0) <= slack).all()  # every corner of the shelf's collision shown
    on_shelf = distance.min(axis=1) <= slack
    reach = np.array([np.abs(polytope_reach(shape, at, shown[~on_shelf]).max(axis=0)) for shape, at in polytopes])
    assert (~on_shelf).any() and (reach.min(axis=0) * GAME_UNITS * 0.75 <= slack).all()  # the rest on a polytope
    copies = [positions for form_id, positions in expected_copies(folder) if form_id == 0x2004]
    low, high = np.min([c.min(axis=0) for c in copies], axis=0), np.max([c.max(axis=0) for c in copies], axis=0)
    centre = shown[on_shelf].mean(axis=0)  # the collision is the shelf's, a little larger than its shapes
    assert (centre >= low).all() and (centre <= high).all()
