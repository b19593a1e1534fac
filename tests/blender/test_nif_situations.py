"""What the corpus lacks but users' files hold, built from corpus files with tests/nif_rewriter
(apart from the product's reader and writer): a Fallout 76 file, a billboard node, shapes
without vertex data. Each imports as what it is and, untouched, exports byte-identical."""

import struct

import numpy as np
import pytest

from nif_rewriter import RawNif
from raw_nodes import read_nodes, world_matrices

STATIC = "nifly/tests/input/TestNifFile_Static_FO4.nif"
MATERIAL = "Materials\\Test\\FO76Test.bgsm"


def imported(path):
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def exported(collection, path):
    import bpy

    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return path.read_bytes()


def fo76_file(corpus, tmp_path):
    """The nifly FO4 golden as Fallout 76 writes it: bs 155 (a u32 in place of the process
    script), BSTriShape with bound min/max, shaders named after their material file and holding
    nothing else."""
    nif = RawNif.read(corpus / STATIC)
    nif.bs_version = 155
    nif.export_info[1] = ("int", 0)
    for index in nif.indices_of("BSTriShape"):
        block = nif.blocks[index]
        at = nif.av_offsets(index)["end"] + 16  # bound centre and radius
        block[at:at] = struct.pack("<6f", -1.0, -2.0, -3.0, 1.0, 2.0, 3.0)
    for index in nif.indices_of("BSLightingShaderProperty"):
        nif.blocks[index] = bytearray(struct.pack("<iIi", nif.string_index(MATERIAL), 0, -1))
    path = tmp_path / "Static_FO76.nif"
    path.write_bytes(nif.to_bytes())
    return path


def test_fallout_76_file_imports_and_writes_back(clean_scene, corpus, tmp_path):
    path = fo76_file(corpus, tmp_path)
    collection = imported(path)
    meshes = [obj for obj in collection.all_objects if obj.type == "MESH"]
    assert len(meshes) == 2
    for obj in meshes:
        shader = obj.active_material["nif_record"]["shader"]
        assert shader["type"] == "BSLightingShaderProperty" and shader["name"] == MATERIAL
    assert exported(collection, tmp_path / "out.nif") == path.read_bytes()


def emptied_shape_file(corpus, tmp_path):
    """The FO4 golden with its first BSTriShape's vertex data taken out (counts and data size 0),
    as particle emitters' shapes are: (path, shape index)."""
    nif = RawNif.read(corpus / STATIC)
    index = nif.indices_of("BSTriShape")[0]
    block = nif.blocks[index]
    at = nif.av_offsets(index)["end"] + 16 + 12 + 8  # bounds, three refs, vertex description
    nif.blocks[index] = block[:at] + struct.pack("<IHI", 0, 0, 0)
    path = tmp_path / "EmptyShape.nif"
    path.write_bytes(nif.to_bytes())
    return path, index


def test_shape_without_vertices_is_an_object_and_writes_back(clean_scene, corpus, tmp_path):
    from mathutils import Matrix

    path, index = emptied_shape_file(corpus, tmp_path)
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    assert obj.type == "EMPTY"
    np.testing.assert_allclose(np.array(obj.matrix_world), world_matrices(*read_nodes(path))[index], atol=1e-5)
    assert exported(collection, tmp_path / "out.nif") == path.read_bytes()
    obj.matrix_basis = Matrix.Translation((0.0, 0.0, 25.0)) @ obj.matrix_basis  # the user moves it
    moved = exported(collection, tmp_path / "moved.nif")
    nodes, roots = read_nodes(tmp_path / "moved.nif")
    assert len(nodes) == len(read_nodes(path)[0])  # still the shape block, no new node
    np.testing.assert_allclose(world_matrices(nodes, roots)[index][2, 3], world_matrices(*read_nodes(path))[index][2, 3] + 25.0, atol=1e-4)
    assert len(moved) == len(path.read_bytes())


def billboard_file(corpus, tmp_path):
    """The FO4 golden with the node holding its first shape turned into a NiBillboardNode (rotate
    about up): (path, node index, shape index)."""
    nif = RawNif.read(corpus / STATIC)
    shape = nif.indices_of("BSTriShape")[0]
    node = next(i for i in nif.indices_of("NiNode") if shape in nif.node_children(i))
    nif.set_type(node, "NiBillboardNode")
    nif.blocks[node] += struct.pack("<H", 1)
    path = tmp_path / "Billboard.nif"
    path.write_bytes(nif.to_bytes())
    return path, node, shape


def test_billboard_node_and_its_shapes_are_imported_and_written_back(clean_scene, corpus, tmp_path):
    path, node, shape = billboard_file(corpus, tmp_path)
    collection = imported(path)
    by_block = {o["nif_block"]: o for o in collection.all_objects if "nif_block" in o}
    assert by_block[node].type == "EMPTY" and by_block[node]["nif_type"] == "NiBillboardNode"
    assert by_block[shape].type == "MESH" and by_block[shape].parent == by_block[node]
    worlds = world_matrices(*read_nodes(path))
    for index, obj in by_block.items():
        np.testing.assert_allclose(np.array(obj.matrix_world), worlds[index], atol=1e-5)
    assert exported(collection, tmp_path / "out.nif") == path.read_bytes()
