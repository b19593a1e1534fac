"""File > Export > Precombined NIF: untouched imports write back byte for byte, edits reach the
file, the baked layout and the refusals."""

import struct

import numpy as np
import pytest
from precombined_builder import block_bytes, csg_bytes, geometry_space, make_object
from scene import export_cell

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.blocks.precombined import instance_matrices
from precombined_nif.core.nif.header import Header

SHARED = "BSPackedCombinedSharedGeomDataExtra"
OBJECTS = [make_object(i, instance_count=2 + i) for i in range(3)]


def write_cell(path, block_type, body):
    root = NiNode("BSFadeNode", name="cell", extra_data=[1])
    NifFile(Header(), [root, RawBlock(block_type, body)], [0]).write(path)
    return path


def import_cell(path, **options):
    import bpy

    assert bpy.ops.import_scene.precombined_cell(filepath=str(path), **options) == {"FINISHED"}
    return bpy.data.collections[path.stem]


@pytest.mark.parametrize("block_type, layout", [(SHARED, "inline"), ("BSPackedCombinedGeomDataExtra", "baked")])
def test_untouched_import_exports_byte_identical(clean_scene, tmp_path, block_type, layout):
    source = write_cell(tmp_path / "cell_OC.nif", block_type, block_bytes(OBJECTS, layout))
    collection = import_cell(source, lod="1")
    assert export_cell(collection, tmp_path / "out.nif", layout=layout) == {"FINISHED"}
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()


def test_external_cell_with_retail_descriptors_exports_byte_identical(clean_scene, tmp_path):
    """Retail records claim full precision (stride 28) over half-float bytes in the .csg: the
    header keeps the claim while the mesh is built from what is stored."""
    retail = 0x0041B00000650407  # CSG-NOTES: the block descriptor the game's files carry
    space, offsets = geometry_space(OBJECTS)
    csg = tmp_path / "Fallout4 - Geometry.csg"
    csg.write_bytes(csg_bytes(OBJECTS, space, offsets))
    source = write_cell(tmp_path / "retail_OC.nif", SHARED, block_bytes(OBJECTS, "external", offsets=offsets, desc=retail))
    collection = import_cell(source, geometry_path=str(csg))
    assert export_cell(collection, tmp_path / "out.nif") == {"FINISHED"}
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()


def test_placeholders_write_back_and_a_moved_one_carries_its_bound(clean_scene, tmp_path):
    """Copies whose geometry was not imported (no .csg: placeholders) write their records back as
    stored, headers and objects entries; a moved one gets the bound sphere its record's first
    copy stores (in record space), carried to its new place."""
    from mathutils import Matrix

    space, offsets = geometry_space(OBJECTS)
    source = write_cell(tmp_path / "cell_OC.nif", SHARED, block_bytes(OBJECTS, "external", offsets=offsets))
    collection = import_cell(source)
    placed = [o for o in collection.objects if "precombined_object" in o]
    assert placed and all(o.type == "EMPTY" for o in placed)
    assert export_cell(collection, tmp_path / "same.nif") == {"FINISHED"}
    assert (tmp_path / "same.nif").read_bytes() == source.read_bytes()
    moved = next(o for o in placed if o["precombined_object"] == 1 and o["precombined_instance"] == 1)
    moved.matrix_world = Matrix.Translation((100.0, 0.0, 0.0)) @ moved.matrix_world
    assert export_cell(collection, tmp_path / "moved.nif") == {"FINISHED"}
    stored, written = (NifFile.read(path).blocks[1] for path in (source, tmp_path / "moved.nif"))
    first, before, after = stored.records[1].instances[0], stored.records[1].instances[1], written.records[1].instances[1]
    np.testing.assert_allclose(after["translation"], before["translation"] + (100.0, 0.0, 0.0), atol=1e-3)
    rotation, scale = (np.asarray(first["rotation"], np.float64), float(first["scale"]))
    centre = rotation.T @ (first["bound_center"] - first["translation"]) / scale  # in record space
    turned = np.asarray(after["rotation"], np.float64) @ (float(after["scale"]) * centre)
    np.testing.assert_allclose(after["bound_center"], after["translation"] + turned, atol=1e-3)
    assert after["bound_radius"] == pytest.approx(first["bound_radius"] / scale * after["scale"], rel=1e-5)
    assert written.objects.tobytes() == stored.objects.tobytes()


def test_edits_reach_the_file_and_read_back(clean_scene, tmp_path):
    import bpy
    from mathutils import Matrix

    source = write_cell(tmp_path / "cell_OC.nif", SHARED, block_bytes(OBJECTS, "inline"))
    collection = import_cell(source)
    placed = sorted((o for o in collection.objects if "precombined_object" in o), key=lambda o: (o["precombined_object"], o["precombined_instance"]))
    moved = placed[0]
    moved.matrix_world = Matrix.Translation((10.0, 20.0, 30.0)) @ Matrix.Rotation(0.5, 4, "Z") @ Matrix.Scale(2.0, 4)
    mesh = placed[-1].data
    mesh.vertices[0].co = (1.5, 2.5, 3.5)
    assert export_cell(collection, tmp_path / "edited.nif") == {"FINISHED"}
    block = NifFile.read(tmp_path / "edited.nif").blocks[1]
    assert len(block.records) == 3
    first = instance_matrices(block.records[0].instances)[0]
    np.testing.assert_allclose(first, np.array(moved.matrix_world), rtol=1e-5, atol=1e-4)
    edited = block.records[2]
    np.testing.assert_array_equal(edited.positions[0], [1.5, 2.5, 3.5])
    np.testing.assert_array_equal(edited.positions[1:], OBJECTS[2]["positions"][1:])
    assert edited.lod_counts == tuple(len(lod) for lod in OBJECTS[2]["lods"])  # faces untouched: LODs kept
    # Untouched records keep their stored bytes, placements included.
    np.testing.assert_array_equal(block.records[1].positions, OBJECTS[1]["positions"])
    assert block.records[1].lod_counts == tuple(len(lod) for lod in OBJECTS[1]["lods"])
    for inst, raw in zip(OBJECTS[1]["instances"], block.records[1].instances):
        assert raw["scale"] == np.float32(inst["scale"])
    bpy.data.collections.remove(collection)


def test_new_objects_export_and_independent_reading(clean_scene, tmp_path):
    import bpy
    from mathutils import Matrix

    bpy.ops.mesh.primitive_cube_add(size=2.0)
    cube = bpy.context.active_object
    copies = [cube]
    for k in range(1, 3):
        twin = bpy.data.objects.new(f"copy{k}", cube.data)
        bpy.context.scene.collection.objects.link(twin)
        twin.matrix_world = Matrix.Translation((100.0 * k, 0, 0)) @ Matrix.Scale(1 + k, 4)
        copies.append(twin)
    for obj in bpy.context.scene.objects:
        obj.select_set(obj in copies)
    assert bpy.ops.object.precombined_mark() == {"FINISHED"}
    path = tmp_path / "new.nif"
    assert bpy.ops.export_scene.precombined_cell(filepath=str(path), layout="baked") == {"FINISHED"}
    data = path.read_bytes()
    nif = NifFile.from_bytes(data)
    block = nif.blocks[1]
    assert block.type_name == "BSPackedCombinedGeomDataExtra" and len(block.records) == 1
    record = block.records[0]
    assert record.num_vertices == 8 and record.lod_counts == (12, 12, 12)
    # Independent reading of the record header and its placements (FORMAT-NOTES section 5).
    start = data.index(struct.pack("<II", 8, 3))
    counts = struct.unpack_from("<6I", data, start + 8)
    assert counts[0::2] == (12, 12, 12) and counts[1::2] == (0, 36, 72)
    (num_instances,) = struct.unpack_from("<I", data, start + 32)
    assert num_instances == 3
    for k in range(3):
        values = struct.unpack_from("<18f", data, start + 36 + 72 * k)
        rotation, translation, scale = np.reshape(values[1:10], (3, 3)), values[10:13], values[13]
        np.testing.assert_allclose(rotation, np.eye(3), atol=1e-6)
        np.testing.assert_allclose(translation, (100.0 * k, 0, 0), atol=1e-4)
        assert scale == pytest.approx(1 + k)


def test_non_uniform_scale_is_refused(clean_scene, tmp_path):
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    bpy.context.active_object.scale = (1.0, 2.0, 1.0)
    bpy.ops.object.precombined_mark()
    with pytest.raises(RuntimeError, match="scaled unevenly"):
        bpy.ops.export_scene.precombined_cell(filepath=str(tmp_path / "bad.nif"))
    assert not (tmp_path / "bad.nif").exists()


@pytest.mark.slow
def test_cli_import_then_export_round_trip(tmp_path):
    import subprocess

    import extension

    python = str(extension.python(extension.VENVS["4.5"]))
    cli = str(extension.ROOT / "cli.py")
    source = write_cell(tmp_path / "cell_OC.nif", SHARED, block_bytes(OBJECTS, "inline"))
    for args in (["import", source, "--blend", tmp_path / "cell.blend"], ["export", tmp_path / "cell.blend", tmp_path / "out.nif"]):
        run = subprocess.run([python, cli, *map(str, args)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()
    assert "3 records, 9 instances" in run.stdout


def test_geometry_nodes_cell_exports_byte_identical(clean_scene, tmp_path):
    source = write_cell(tmp_path / "gn_OC.nif", SHARED, block_bytes(OBJECTS, "inline"))
    collection = import_cell(source, instancing="GEOMETRY_NODES")
    assert export_cell(collection, tmp_path / "out.nif") == {"FINISHED"}
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()


def test_edited_mesh_gets_tangents_like_the_game_files(clean_scene, corpus, tmp_path):
    """Tangent space of a re-encoded record follows Bethesda's convention (checked against a
    corpus shape: tangent = dP/dv of the file's UVs, bitangent = dP/du)."""
    import bpy

    from precombined_nif.core.nif.blocks.tri_shape import BSTriShape
    from precombined_nif.io.mesh_build import build_mesh

    shape = next(b for b in NifFile.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif").blocks if isinstance(b, BSTriShape))
    mesh = build_mesh("clock", shape.positions, shape.triangles, uvs=shape.uvs, normals=shape.normals)
    obj = bpy.data.objects.new("clock", mesh)
    bpy.context.scene.collection.objects.link(obj)
    for other in bpy.context.scene.objects:
        other.select_set(other is obj)
    bpy.ops.object.precombined_mark()
    assert bpy.ops.export_scene.precombined_cell(filepath=str(tmp_path / "clock.nif")) == {"FINISHED"}
    record = NifFile.read(tmp_path / "clock.nif").blocks[1].records[0]
    def agreement(a, b):
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-6)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-6)
        return np.median((a * b).sum(axis=1))
    assert agreement(record.tangents, shape.tangents) > 0.95
    assert agreement(record.bitangents, shape.bitangents) > 0.95


def test_meshes_hold_no_geometry_copies_and_export_rereads_the_csg(clean_scene, tmp_path):
    """Blender copies a mesh's ID properties into every copy's evaluated mesh, so the geometry
    export compares with is read again from the cell and its .csg, not kept on the meshes: an
    edit is still found, and a .csg gone since the import is named, with nothing written."""
    import bpy

    space, offsets = geometry_space(OBJECTS)
    csg = tmp_path / "Fallout4 - Geometry.csg"
    csg.write_bytes(csg_bytes(OBJECTS, space, offsets))
    source = write_cell(tmp_path / "ext_OC.nif", SHARED, block_bytes(OBJECTS, "external", offsets=offsets))
    collection = import_cell(source, geometry_path=str(csg))
    meshes = {o.data for o in collection.objects if o.type == "MESH"}
    assert len(meshes) == 3
    for mesh in meshes:
        sizes = [len(v) for v in mesh.values() if hasattr(v, "__len__") and not isinstance(v, str)]
        assert max(sizes, default=0) <= 3, dict(mesh)
    mesh = sorted(meshes, key=lambda m: m["precombined_object"])[1]
    mesh.vertices[0].co.z += 1.0  # an edit found by comparing with the .csg's record
    assert export_cell(collection, tmp_path / "edited.nif", plugin="Edits") == {"FINISHED"}
    written = NifFile.read(tmp_path / "edited.nif").blocks[1]
    assert [int(e["filename_hash"]) for e in written.objects].count(0xDDF19A67) == 2
    csg.unlink()
    with pytest.raises(RuntimeError, match=r"Fallout4 - Geometry\.csg.*cannot be read"):
        export_cell(collection, tmp_path / "gone.nif")
    assert not (tmp_path / "gone.nif").exists()
