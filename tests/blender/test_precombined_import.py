"""File > Import > Precombined NIF in real Blender: linked duplicates placed by the decoded
matrices, external geometry from a .csg, placeholders, clean failures."""

import numpy as np
import pytest
from precombined_builder import block_bytes, csg_bytes, geometry_space, make_object
from scene import export_cell

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.header import Header

OBJECTS = [make_object(i, instance_count=2 + i) for i in range(3)]


def write_cell(path, block_type, body):
    root = NiNode("BSFadeNode", name="cell", extra_data=[1])
    NifFile(Header(), [root, RawBlock(block_type, body)], [0]).write(path)
    return path


def instances_of(collection):
    return sorted(
        (o for o in collection.objects if "precombined_object" in o),
        key=lambda o: (o["precombined_object"], o["precombined_instance"]),
    )


def check_cell(collection, objects, scale=1.0, lod=0):
    """Each copy where the file places it, scaled once: the record's mesh holds the scale, the
    copy's matrix the file's rotation and scale with the position scaled; so every vertex lands
    at ``scale * (R s p + t)``."""
    placed = instances_of(collection)
    assert len(placed) == sum(len(o["instances"]) for o in objects)
    for obj in placed:
        source = objects[obj["precombined_object"]]
        inst = source["instances"][obj["precombined_instance"]]
        linear = np.array(inst["rotation"]) * inst["scale"]
        expected = np.eye(4)
        expected[:3, :3] = linear
        expected[:3, 3] = np.array(inst["translation"]) * scale
        matrix = np.array(obj.matrix_world)
        np.testing.assert_allclose(matrix, expected, rtol=1e-5, atol=1e-4)
        mesh = obj.data
        assert len(mesh.vertices) == len(source["positions"])
        assert len(mesh.polygons) == len(source["lods"][lod])
        co = np.empty(3 * len(mesh.vertices), np.float32)
        mesh.vertices.foreach_get("co", co)
        np.testing.assert_allclose(co.reshape(-1, 3), source["positions"] * scale, rtol=1e-6)
        world = co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
        game = np.asarray(source["positions"], np.float64) @ linear.T + inst["translation"]
        np.testing.assert_allclose(world, scale * game, rtol=1e-5, atol=1e-4)
    for index in range(len(objects)):  # linked duplicates: one mesh per record
        assert len({o.data.name for o in placed if o["precombined_object"] == index}) == 1


@pytest.mark.parametrize("block_type, layout", [("BSPackedCombinedSharedGeomDataExtra", "inline"), ("BSPackedCombinedGeomDataExtra", "baked")])
def test_inline_and_baked_cells(clean_scene, tmp_path, block_type, layout):
    import bpy

    path = write_cell(tmp_path / "00012345_0ABCDEF0_OC.nif", block_type, block_bytes(OBJECTS, layout))
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path), scale=0.5, lod="1") == {"FINISHED"}
    collection = bpy.data.collections[path.stem]
    check_cell(collection, OBJECTS, scale=0.5, lod=1)
    # Exported as imported, the block keeps its layout.
    assert export_cell(collection, tmp_path / "out.nif") == {"FINISHED"}
    assert [block.type_name for block in NifFile.read(tmp_path / "out.nif").blocks][1:] == [block_type]


def test_external_cell_with_csg_and_without(clean_scene, tmp_path):
    import bpy

    space, offsets = geometry_space(OBJECTS)
    csg = tmp_path / "Fallout4 - Geometry.csg"
    csg.write_bytes(csg_bytes(OBJECTS, space, offsets))
    path = write_cell(tmp_path / "cell_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "external", offsets=offsets))
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path), geometry_path=str(csg)) == {"FINISHED"}
    check_cell(bpy.data.collections["cell_OC"], OBJECTS)
    mesh = instances_of(bpy.data.collections["cell_OC"])[-1].data
    assert mesh["precombined_hash"] == "DDF19A67" and mesh["precombined_offset"] == offsets[-1]

    bpy.data.collections.remove(bpy.data.collections["cell_OC"])
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path)) == {"FINISHED"}  # no .csg: placeholders
    placed = instances_of(bpy.data.collections["cell_OC"])
    assert len(placed) == 9 and all(o.type == "EMPTY" and o.empty_display_type == "SPHERE" for o in placed)
    assert placed[0]["precombined_hash"] == "DDF19A67"


def test_damaged_cell_leaves_the_scene_as_it_was(clean_scene, tmp_path):
    import bpy

    body = block_bytes(OBJECTS, "inline")
    path = write_cell(tmp_path / "bad_OC.nif", "BSPackedCombinedSharedGeomDataExtra", body[:-30])
    counts = len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.collections)
    with pytest.raises(RuntimeError, match="bad_OC.nif"):
        bpy.ops.import_scene.precombined_cell(filepath=str(path))
    assert (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.collections)) == counts


@pytest.mark.slow
def test_cli_import_of_an_external_cell(tmp_path):
    import json
    import subprocess

    import extension

    space, offsets = geometry_space(OBJECTS)
    csg = tmp_path / "Fallout4 - Geometry.csg"
    csg.write_bytes(csg_bytes(OBJECTS, space, offsets))
    cell_path = write_cell(tmp_path / "cell_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "external", offsets=offsets))
    python = str(extension.python(extension.VENVS["4.5"]))
    blend = tmp_path / "cell.blend"
    run = subprocess.run(
        [python, str(extension.ROOT / "cli.py"), "import", str(cell_path), "--blend", str(blend), "--lod", "2", "--csg", str(csg)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    inspect = (
        "import bpy, json, sys; bpy.ops.wm.open_mainfile(filepath=sys.argv[1]); "
        "print(json.dumps(sorted([o['precombined_object'], len(o.data.polygons), o.data.name] "
        "for o in bpy.data.objects if 'precombined_object' in o)))"
    )
    out = subprocess.run([python, "-c", inspect, str(blend)], capture_output=True, text=True, timeout=300).stdout
    placed = json.loads(out.strip().splitlines()[-1])
    assert len(placed) == 9
    for record, polygons, mesh in placed:
        assert polygons == len(OBJECTS[record]["lods"][2])
    assert len({mesh for _, _, mesh in placed}) == 3


def test_plain_nif_import_builds_cells_too(clean_scene, tmp_path):
    """What drag-and-drop of a cell runs: the general NIF importer."""
    import bpy

    path = write_cell(tmp_path / "dropped_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "inline"))
    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    check_cell(bpy.data.collections["dropped_OC"], OBJECTS)


def test_geometry_nodes_instancing(clean_scene, tmp_path):
    import bpy

    path = write_cell(tmp_path / "big_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "inline"))
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path), instancing="GEOMETRY_NODES", scale=0.5) == {"FINISHED"}
    collection = bpy.data.collections["big_OC"]
    instancers = sorted((o for o in collection.objects if o.modifiers), key=lambda o: o["precombined_object"])
    assert len(instancers) == 3 and not [o for o in collection.objects if "precombined_instance" in o]
    depsgraph = bpy.context.evaluated_depsgraph_get()
    placed = {}
    for instance in depsgraph.object_instances:
        if instance.is_instance and instance.parent is not None and "precombined_object" in instance.parent.original:
            placed.setdefault(instance.parent.original["precombined_object"], []).append(np.array(instance.matrix_world))
    for index, obj in enumerate(OBJECTS):
        assert len(placed[index]) == len(obj["instances"])
        for inst, matrix in zip(obj["instances"], placed[index]):
            expected = np.eye(4)  # the source mesh holds the scale: positions only are scaled
            expected[:3, :3] = np.array(inst["rotation"]) * inst["scale"]
            expected[:3, 3] = np.array(inst["translation"]) * 0.5
            np.testing.assert_allclose(matrix, expected, rtol=1e-5, atol=1e-4)
        source = next(o for o in collection.objects if o.get("precombined_source") == index)
        co = np.empty(3 * len(source.data.vertices), np.float32)
        source.data.vertices.foreach_get("co", co)
        np.testing.assert_allclose(co.reshape(-1, 3), np.asarray(obj["positions"]) * 0.5, rtol=1e-6)


def test_geometry_found_in_the_preferences_data_folder(clean_scene, tmp_path, addon):
    import bpy

    preferences = addon.preferences.get(bpy.context)
    data = tmp_path / "Data"
    data.mkdir()
    space, offsets = geometry_space(OBJECTS)
    (data / "Fallout4 - Geometry.csg").write_bytes(csg_bytes(OBJECTS, space, offsets))
    path = write_cell(tmp_path / "pref_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "external", offsets=offsets))
    preferences.fo4_data = str(data)
    try:
        assert bpy.ops.import_scene.precombined_cell(filepath=str(path)) == {"FINISHED"}
    finally:
        preferences.fo4_data = ""
    check_cell(bpy.data.collections["pref_OC"], OBJECTS)


def test_mismatching_geometry_file_gives_placeholders_and_one_warning(clean_scene, tmp_path):
    import bpy

    space, offsets = geometry_space(OBJECTS)
    csg = tmp_path / "Other - Geometry.csg"
    csg.write_bytes(csg_bytes(OBJECTS, space, offsets))
    far = [offset + 10_000_000 for offset in offsets]  # past the file's geometry space
    path = write_cell(tmp_path / "far_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "external", offsets=far))
    from precombined_nif.io.file_import import import_cells

    collections, messages = import_cells(bpy.context, [str(path)], geometry_path=str(csg))
    assert len(collections) == 1 and len(messages) == 1
    assert "9 instances of 3 records have no geometry" in messages[0] and "outside" in messages[0]
    placed = [o for o in collections[0].objects if "precombined_object" in o]
    assert len(placed) == 9 and all(o.type == "EMPTY" for o in placed)


def test_records_sharing_hash_and_offset_get_unique_names(clean_scene, tmp_path):
    """Inline records all name hash DDF19A67 at offset 0: their meshes and copies get names of
    their own (no Blender ".001" suffixes, whose search makes large imports quadratic)."""
    import bpy

    path = write_cell(tmp_path / "same_OC.nif", "BSPackedCombinedSharedGeomDataExtra", block_bytes(OBJECTS, "inline"))
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path)) == {"FINISHED"}
    placed = instances_of(bpy.data.collections["same_OC"])
    names = [o.name for o in placed] + list({o.data.name for o in placed})
    assert len(names) == len(set(names)) and not any(name[-4:-3] == "." and name[-3:].isdigit() for name in names)
    assert all(o.name.startswith(f"DDF19A67:00000000 (1.{o['precombined_object']}) #") for o in placed)


def test_an_unknown_instancing_choice_is_refused_not_taken_for_objects(clean_scene, tmp_path):
    import bpy

    from precombined_nif.core.nif import samples
    from precombined_nif.io.file_import import import_cells

    path = tmp_path / "choice_OC.nif"
    samples.precombined_cell().write(path)
    objects = len(bpy.data.objects)
    collections, messages = import_cells(bpy.context, [str(path)], instancing="geometry-nodes")  # the CLI's spelling
    assert collections == [] and len(messages) == 1
    assert "instancing 'geometry-nodes' is not one of OBJECTS, GEOMETRY_NODES" in messages[0]
    assert len(bpy.data.objects) == objects and "choice_OC" not in bpy.data.collections
