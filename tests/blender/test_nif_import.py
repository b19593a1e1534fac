"""File > Import > NIF in real Blender: objects, meshes and transforms match the codec."""

import numpy as np
import pytest
from scene import imported, scene_files
from support import CORPUS, corpus_files

from precombined_nif.core.nif import NifFile, skinning
from precombined_nif.core.nif.blocks.geometry import NiTriBasedGeom
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape


def test_fo4_static_shape_matches_the_codec(clean_scene, corpus):
    path = corpus / "pynifly/tests/tests/FO4/AlarmClock.nif"
    nif = NifFile.read(path)
    shape = next(b for b in nif.blocks if isinstance(b, BSTriShape))
    collection = imported(path)
    meshes = _shapes(collection)
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
    meshes = _shapes(collection)
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


def test_the_import_report_says_precombined_only_for_cells(clean_scene, corpus, tmp_path, capfd):
    import bpy

    from precombined_nif.core.nif import samples

    (tmp_path / "AlarmClock.nif").write_bytes((corpus / "pynifly/tests/tests/FO4/AlarmClock.nif").read_bytes())
    assert bpy.ops.import_scene.precombined_nif(filepath=str(tmp_path / "AlarmClock.nif")) == {"FINISHED"}
    assert "Info: Imported 1 NIF file(s)\n" in capfd.readouterr().out
    samples.precombined_cell().write(tmp_path / "00012345_0ABCDEF0_OC.nif")
    result = bpy.ops.import_scene.precombined_nif(
        directory=str(tmp_path), files=[{"name": "AlarmClock.nif"}, {"name": "00012345_0ABCDEF0_OC.nif"}]
    )
    assert result == {"FINISHED"}
    assert "Info: Imported 2 NIF file(s) (1 precombined cell(s))" in capfd.readouterr().out


def _shapes(collection):
    """The NIF shapes an import made (collision bodies are meshes too, but not shapes)."""
    return [o for o in collection.all_objects if o.type == "MESH" and "havok_shape" not in o]


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_files("**/*.nif"), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_corpus_nif_imports_or_fails_cleanly(clean_scene, path):
    import bpy

    from precombined_nif.io.mesh_build import drop_degenerate

    try:
        nif = NifFile.read(path)
    except Exception:
        with pytest.raises(RuntimeError):
            bpy.ops.import_scene.precombined_nif(filepath=str(path))
        return
    collection = imported(path)
    # Skyrim SE skinned shapes: vertices and triangles in the skin partition
    in_partition = {index: skinning.partition_geometry(nif, block) for index, block in nif.blocks_of(BSTriShape)}
    in_partition = {index: found for index, found in in_partition.items() if found is not None}
    geometry = {
        index
        for index, block in nif.blocks_of(BSTriShape, NiTriBasedGeom)
        if (block.vertex_data is not None if isinstance(block, BSTriShape) else 0 <= block.data < len(nif.blocks))
    } | set(in_partition)
    meshes = _shapes(collection)
    assert {o["nif_block"] for o in meshes} <= geometry
    bones = {bone.name for o in collection.all_objects if o.type == "ARMATURE" for bone in o.data.bones}
    shaders = {}
    for obj in meshes:
        block = nif.blocks[obj["nif_block"]]
        data = in_partition.get(obj["nif_block"]) or (block if isinstance(block, BSTriShape) else nif.blocks[block.data])
        found = in_partition.get(obj["nif_block"])  # an SSE shape may count 0 vertices of its partition's
        count = len(found.positions) if found else block.num_vertices if isinstance(block, BSTriShape) else len(data.vertices)
        assert len(obj.data.vertices) == count
        assert len(obj.data.polygons) == len(drop_degenerate(data.triangles))
        skin = nif.blocks[block.skin if isinstance(block, BSTriShape) else block.skin_instance] if block.skinned else None
        if skin is not None and hasattr(skin, "bones"):  # every bone of the skin is an armature bone
            assert {nif.blocks[b].name for b in np.asarray(skin.bones).tolist()} <= bones
        if block.shader_property >= 0:  # a material per shader block, shared like the block
            assert obj.active_material is not None
            shaders.setdefault(block.shader_property, set()).add(obj.active_material.name)
    assert all(len(names) == 1 for names in shaders.values())


def test_progress_follows_the_shapes(clean_scene, corpus):
    import bpy

    from precombined_nif.io.nif.importer import SceneBuilder

    nif = NifFile.read(corpus / "pynifly/tests/tests/FONV/9mmscp.nif")
    seen = []
    collection = bpy.data.collections.new("progress")
    SceneBuilder(nif, collection, progress=seen.append).build()
    assert len(seen) == len(nif.blocks_of(NiTriBasedGeom)) > 1
    assert seen == sorted(seen) and seen[-1] == 1.0


@pytest.mark.slow
# cells, and files with packed collision strips
@pytest.mark.parametrize("path", scene_files("Packed"), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_object_and_bone_is_where_the_file_puts_its_node(clean_scene, path):
    """World matrices against the node transforms read from the bytes (tests/raw_nodes), not the
    codec: a transposed rotation or a lost parent moves something here."""
    from raw_nodes import read_nodes, world_matrices

    worlds = world_matrices(*read_nodes(path))
    collection = imported(path)
    checked = 0
    for obj in collection.all_objects:
        index = obj.get("nif_block")
        if index in worlds and "havok_shape" not in obj:
            np.testing.assert_allclose(np.array(obj.matrix_world), worlds[index], atol=1e-3, err_msg=obj.name)
            checked += 1
        if obj.type == "ARMATURE":
            for bone in obj.data.bones:
                rest = np.array(bone["nif_rest"]).reshape(4, 4)
                pose = np.array(obj.matrix_world @ obj.pose.bones[bone.name].matrix @ bone.matrix_local.inverted())
                np.testing.assert_allclose(pose @ rest, worlds[bone["nif_block"]], atol=1e-3, err_msg=bone.name)
                checked += 1
    assert checked
