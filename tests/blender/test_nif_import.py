"""File > Import > NIF in real Blender: objects, meshes and transforms match the codec."""

import numpy as np
import pytest
from support import CORPUS, corpus_files

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape


def imported(path, **options):
    import bpy

    result = bpy.ops.import_scene.precombined_nif(filepath=str(path), **options)
    assert result == {"FINISHED"}
    return bpy.data.collections[path.stem]


def test_fo4_static_shape_matches_the_codec(clean_scene, corpus):
    path = corpus / "pynifly/tests/tests/FO4/AlarmClock.nif"
    nif = NifFile.read(path)
    shape = next(b for b in nif.blocks if isinstance(b, BSTriShape))
    collection = imported(path)
    meshes = [o for o in collection.objects if o.type == "MESH"]
    assert len(meshes) == 1
    mesh = meshes[0].data
    assert len(mesh.vertices) == shape.num_vertices == 146
    assert len(mesh.polygons) == shape.num_triangles
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    np.testing.assert_array_equal(co.reshape(-1, 3), shape.positions)
    uv = np.empty(len(mesh.loops) * 2, np.float32)
    mesh.uv_layers[0].data.foreach_get("uv", uv)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    np.testing.assert_allclose(uv.reshape(-1, 2)[:, 1], 1 - shape.uvs[corners, 1], atol=1e-6)
    assert mesh.has_custom_normals
    root = next(o for o in collection.objects if o.parent is None)
    assert meshes[0].parent == root and root.type == "EMPTY"


@pytest.mark.parametrize("name", ["pynifly/tests/tests/FONV/9mmscp.nif", "niftools/history/test/nif/base_vertex_color0.nif"])
def test_fo3_shapes_import(clean_scene, corpus, name):
    collection = imported(corpus / name)
    meshes = [o for o in collection.objects if o.type == "MESH"]
    assert meshes and all(len(o.data.polygons) > 0 for o in meshes)


def test_bad_file_reports_and_leaves_the_scene_unchanged(clean_scene, tmp_path):
    import bpy

    bad = tmp_path / "bad.nif"
    bad.write_bytes(b"Gamebryo File Format, Version 20.2.0.7\n" + b"\x07\x00\x02\x14\x01")
    objects, collections = len(bpy.data.objects), len(bpy.data.collections)
    with pytest.raises(RuntimeError, match="bad.nif"):
        bpy.ops.import_scene.precombined_nif(filepath=str(bad))
    assert (len(bpy.data.objects), len(bpy.data.collections)) == (objects, collections)


def test_multi_file_import_keeps_going_past_a_bad_file(clean_scene, corpus, tmp_path):
    import bpy

    (tmp_path / "bad.nif").write_bytes(b"nonsense")
    good = corpus / "pynifly/tests/tests/FO4/AlarmClock.nif"
    (tmp_path / "AlarmClock.nif").write_bytes(good.read_bytes())
    result = bpy.ops.import_scene.precombined_nif(
        directory=str(tmp_path), files=[{"name": "bad.nif"}, {"name": "AlarmClock.nif"}]
    )
    assert result == {"FINISHED"}
    assert "AlarmClock" in bpy.data.collections and "bad" not in bpy.data.collections


@pytest.mark.parametrize("path", corpus_files("**/*.nif"), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_corpus_nif_imports_or_fails_cleanly(clean_scene, path):
    import bpy

    try:
        nif = NifFile.read(path)
    except Exception:
        with pytest.raises(RuntimeError):
            bpy.ops.import_scene.precombined_nif(filepath=str(path))
        return
    collection = imported(path)
    shapes = [b for b in nif.blocks if isinstance(b, BSTriShape) and b.vertex_data is not None]
    meshes = [o for o in collection.all_objects if o.type == "MESH" and o["nif_type"].startswith("BS")]
    assert len({o["nif_block"] for o in meshes}) <= len(shapes)
    for obj in meshes:
        assert len(obj.data.vertices) == nif.blocks[obj["nif_block"]].num_vertices
