"""The corpus cell imported with geometry-nodes instancers (one object per record, a point per
copy) and exported with a patch: every point is the file's copy it stands for, so an untouched
export overrides no REFR and disables none (the patch holds the CELL alone, its XCRI the
plugin's), and an instancer with a point fewer is refused naming it, nothing written."""

import importlib

import pytest
from plugin_writer import xcri_pairs
from test_precombined_patch import MOVED_CELL, PATCH, corpus_records, data, export, patch_records  # noqa: F401


def import_instanced(addon, path):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    folders = file_import.UserFolders(data={"FO4": str(path.parents[2])})
    (collection,), _ = file_import.import_cells(bpy.context, [str(path)], folders=folders, instancing="GEOMETRY_NODES")
    return collection


def test_an_untouched_instanced_cell_overrides_no_refr(clean_scene, addon, data):
    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_instanced(addon, path)
    assert any(o.modifiers for o in collection.all_objects)
    export(addon, collection, path, data / PATCH)
    _, records = patch_records(data)
    assert set(records) == {0x1E58}
    source = corpus_records()[0x1E58]
    assert xcri_pairs(records[0x1E58]["fields"]["XCRI"][0]) == xcri_pairs(source["fields"]["XCRI"][0])


def test_an_instancer_with_a_point_fewer_is_refused(clean_scene, addon, data):
    import bmesh

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_instanced(addon, path)
    instancer = max((o for o in collection.all_objects if o.modifiers), key=lambda o: len(o.data.vertices))
    count = len(instancer.data.vertices)
    assert count > 1
    edit = bmesh.new()
    edit.from_mesh(instancer.data)
    edit.verts.ensure_lookup_table()
    edit.verts.remove(edit.verts[-1])
    edit.to_mesh(instancer.data)
    edit.free()
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    with pytest.raises(Exception, match=f"'{instancer.name}' places {count - 1} of the {count} copies it was imported with"):
        export(addon, collection, path, data / PATCH)
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before
