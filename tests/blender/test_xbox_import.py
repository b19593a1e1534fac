"""File > Import > NIF accepts Xbox 360 FO3/FNV files (made by the test-side writer) and builds
what the PC original builds."""

import numpy as np
import pytest
from xbox_writer import make_xbox

NAMES = [
    "pynifly/tests/tests/FONV/9mmscp.nif",
    "pynifly/tests/tests/FONV/outfitf_simple.nif",
    "niftools/history/test/nif/base_vertex_color0.nif",
]


def import_collection(path):
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def mesh_summary(collection):
    """Per mesh object: name, vertex positions, polygon corner indices."""
    out = {}
    for obj in collection.all_objects:
        if obj.type != "MESH":
            continue
        mesh = obj.data
        co = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", co)
        corners = np.empty(len(mesh.loops), np.int32)
        mesh.loops.foreach_get("vertex_index", corners)
        out[obj.name.split(".")[0]] = (co.reshape(-1, 3), corners, len(mesh.polygons), len(obj.vertex_groups))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_xbox_file_imports_like_its_pc_original(clean_scene, corpus, tmp_path, name):
    source = corpus / name
    pc = tmp_path / "pc" / source.name
    xbox = tmp_path / "xbox" / source.name
    pc.parent.mkdir()
    xbox.parent.mkdir()
    pc.write_bytes(source.read_bytes())
    xbox.write_bytes(make_xbox(source.read_bytes()))
    expected = mesh_summary(import_collection(pc))
    got = mesh_summary(import_collection(xbox))
    assert expected and got.keys() == expected.keys()
    for key, (co, corners, polygons, groups) in expected.items():
        got_co, got_corners, got_polygons, got_groups = got[key]
        assert got_polygons == polygons and len(got_co) == len(co) and got_groups == groups
        np.testing.assert_allclose(got_co, co, rtol=2e-3, atol=2e-3)
        assert canonical(got_corners) == canonical(corners)  # same triangles, up to strip order


def canonical(corners):
    """Triangles as a sorted list, each rotated to start at its smallest index (winding kept)."""
    tris = corners.reshape(-1, 3).tolist()
    return sorted(tuple(t[i:] + t[:i]) for t in tris for i in [t.index(min(t))])


def test_damaged_xbox_file_reports_and_leaves_the_scene_unchanged(clean_scene, corpus, tmp_path):
    import bpy

    data = make_xbox((corpus / NAMES[1]).read_bytes())
    bad = tmp_path / "bad_xbox.nif"
    bad.write_bytes(data[: len(data) * 2 // 3])
    objects, collections, meshes = len(bpy.data.objects), len(bpy.data.collections), len(bpy.data.meshes)
    with pytest.raises(RuntimeError, match="bad_xbox.nif"):
        bpy.ops.import_scene.precombined_nif(filepath=str(bad))
    assert (len(bpy.data.objects), len(bpy.data.collections), len(bpy.data.meshes)) == (objects, collections, meshes)
