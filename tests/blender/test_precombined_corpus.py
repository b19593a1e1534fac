"""Real Creation Kit cells (corpus ck-precombined/): every record's geometry against an
independent reading of the .csg, shape materials, untouched export byte for byte."""

import struct
import zlib

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # the corpus's real cells, all of them, in Blender

CELL_FOLDER = "ck-precombined/Meshes/PreCombined"
CSG = "ck-precombined/AlootHomePlate - Geometry.csg"


def cell_paths(corpus):
    return sorted((corpus / CELL_FOLDER).glob("*_OC.NIF"))


def csg_geometry(path):
    """{data offset: (vertex desc, vertex count, index count, geometry bytes)} read straight from
    the .csg's tables (20-byte rows: u32 offset, u64 desc, u32 vertices, u32 indices)."""
    data = path.read_bytes()
    assert data[:4] == b"bcsg"
    objects, chunks = struct.unpack_from("<II", data, 4)
    table = [struct.unpack_from("<II", data, 12 + 8 * k) for k in range(chunks)]
    space = b"".join(zlib.decompress(data[offset : offset + size]) for size, offset in table)
    rows_at = 12 + 8 * chunks
    rows = {}
    for k in range(objects):
        offset, desc, vertices, indices = struct.unpack_from("<IQII", data, rows_at + 20 * k)
        stride = (desc & 0xF) * 4
        rows[offset] = (desc, vertices, indices, space[offset : offset + stride * vertices + 2 * indices])
    return rows


def cell_records(path):
    """[(block index, record index, hash, data offset, instance count)] of every
    BSPackedCombinedSharedGeomDataExtra of the cell."""
    from precombined_nif.core.nif import NifFile

    nif = NifFile.read(path)
    found = []
    for index, block in enumerate(nif.blocks):
        if block.type_name == "BSPackedCombinedSharedGeomDataExtra":
            for number, (entry, record) in enumerate(zip(block.objects, block.records)):
                found.append((index, number, int(entry["filename_hash"]), int(entry["data_offset"]), len(record.instances)))
    return found


def import_cells(paths, csg):
    import bpy

    result = bpy.ops.import_scene.precombined_cell(
        files=[{"name": p.name} for p in paths], directory=str(paths[0].parent), geometry_path=str(csg)
    )
    assert result == {"FINISHED"}
    return [bpy.data.collections[p.stem] for p in paths]


def export_collection(collection, path, **options):
    import bpy

    for obj in bpy.context.scene.objects:
        obj.select_set(obj.name in collection.all_objects)
    return bpy.ops.export_scene.precombined_cell(filepath=str(path), **options)


def test_records_match_an_independent_reading_of_the_csg(clean_scene, corpus):
    paths = cell_paths(corpus)
    assert len(paths) == 11
    rows = csg_geometry(corpus / CSG)
    collections = import_cells(paths, corpus / CSG)
    for path, collection in zip(paths, collections):
        placed = [o for o in collection.objects if "precombined_object" in o]
        records = cell_records(path)
        assert len(placed) == sum(count for *_, count in records)
        for block, number, filename_hash, offset, count in records:
            assert filename_hash == 0x5C4304E6
            copies = [o for o in placed if (o["precombined_block"], o["precombined_object"]) == (block, number)]
            assert {o.data["precombined_offset"] for o in copies} == {offset}
            assert len(copies) == count and len({o.data.name for o in copies}) == 1
            mesh = copies[0].data
            desc, vertices, indices, geometry = rows[offset]
            stride = (desc & 0xF) * 4
            raw = np.frombuffer(geometry[: stride * vertices], np.uint8).reshape(vertices, stride)
            positions = raw[:, :6].copy().view("<f2").astype(np.float32)
            triangles = np.frombuffer(geometry[stride * vertices :], "<u2").reshape(-1, 3)
            co = np.empty(3 * len(mesh.vertices), np.float32)
            mesh.vertices.foreach_get("co", co)
            np.testing.assert_array_equal(co.reshape(-1, 3), positions)
            faces = np.empty(3 * len(mesh.polygons), np.int32)
            mesh.polygons.foreach_get("vertices", faces)
            lod0 = triangles[: len(mesh.polygons)]
            np.testing.assert_array_equal(faces.reshape(-1, 3), lod0)


def test_a_cell_finds_the_csg_beside_its_plugin(clean_scene, corpus):
    """A cell imported with no .csg given and no Data folder set: the game's lookup finds
    '<Plugin> - Geometry.csg' in the cell's Data folder (beside the plugin named after it), so
    every record has its vertices (those of the .csg's own table) and none is a placeholder."""
    import bpy

    path = cell_paths(corpus)[0]
    rows = csg_geometry(corpus / CSG)
    assert bpy.ops.import_scene.precombined_cell(files=[{"name": path.name}], directory=str(path.parent)) == {"FINISHED"}
    placed = [o for o in bpy.data.collections[path.stem].objects if "precombined_object" in o]
    assert placed and all(o.data is not None for o in placed)
    for obj in placed:
        assert len(obj.data.vertices) == rows[obj.data["precombined_offset"]][1]


@pytest.mark.parametrize("number", range(11))
def test_untouched_cell_alone_exports_byte_identical(clean_scene, corpus, tmp_path, number):
    path = cell_paths(corpus)[number]
    (collection,) = import_cells([path], corpus / CSG)
    assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
    assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_all_cells_imported_together_export_byte_identical(clean_scene, corpus, tmp_path):
    """The cells and, beside them, the plugin's .cdx (its cell's rows made again from the cells)."""
    paths = cell_paths(corpus)
    collections = import_cells(paths, corpus / CSG)
    for path, collection in zip(paths, collections):
        assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
        assert (tmp_path / "AlootHomePlate.cdx").read_bytes() == (corpus / "ck-precombined/AlootHomePlate.cdx").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([p.name for p in paths] + ["AlootHomePlate.cdx"])


TIPPED = "00001E58_0F5ED9F3_OC.NIF"  # block 4 holds copies turned 90 degrees about Y (gimbal lock in Euler XYZ)


def test_copy_near_gimbal_lock_stays_untouched_and_an_edit_is_written(clean_scene, corpus, tmp_path):
    """A copy whose rotation is a hair from gimbal lock reads back from Blender as stored (Euler
    angles in single precision lost 1e-4 of it, and re-encoded the copy untouched); turned by
    two milliradians it is written with Blender's rotation and new bounds, the others as stored."""
    from mathutils import Quaternion

    from precombined_nif.core.nif import NifFile

    path = corpus / CELL_FOLDER / TIPPED
    stored = NifFile.read(path).blocks[4].records[0].instances
    rotation = np.asarray(stored[2]["rotation"], np.float64).reshape(3, 3)
    assert abs(rotation[2, 0]) > 0.9999  # the layout this test is about
    (collection,) = import_cells([path], corpus / CSG)
    tipped = next(o for o in collection.objects if (o.get("precombined_block"), o.get("precombined_object"), o.get("precombined_instance")) == (4, 0, 2))
    tipped.rotation_quaternion = tipped.rotation_quaternion @ Quaternion((0.0, 0.0, 1.0), 0.002)
    bpy_matrix = np.array(tipped.matrix_basis)  # no parent: the world matrix once the scene updates
    assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
    written = NifFile.read(tmp_path / path.name)
    instances = written.blocks[4].records[0].instances
    new = np.asarray(instances[2]["rotation"], np.float64).reshape(3, 3)
    np.testing.assert_allclose(new, bpy_matrix[:3, :3] / instances[2]["scale"], atol=1e-5)
    assert np.abs(new - rotation).max() > 1e-3
    assert instances[2]["bound_center"].tobytes() != stored[2]["bound_center"].tobytes()
    assert instances[[0, 1]].tobytes() == stored[[0, 1]].tobytes()
    original = NifFile.read(path)
    for index, block in enumerate(original.blocks):
        for number, record in enumerate(getattr(block, "records", ())):
            if (index, number) != (4, 0):
                assert written.blocks[index].records[number].instances.tobytes() == record.instances.tobytes()


@pytest.mark.parametrize("instancing", ["OBJECTS", "GEOMETRY_NODES"])
def test_cell_imported_at_a_hundredth_is_scaled_once_and_exports_its_bytes(clean_scene, corpus, tmp_path, instancing):
    """At scale 0.01 every vertex of every copy lands at 0.01 x where the game puts it (the csg's
    half-float positions through the copy's stored rotation, scale and translation, checked
    against the file's bytes), not 0.0001 x; the scale is kept on the cell's collection, and an
    export at the default scale gives the cell's bytes back (an explicit 1.0 does not)."""
    import bpy

    path = corpus / CELL_FOLDER / TIPPED
    rows = csg_geometry(corpus / CSG)
    result = bpy.ops.import_scene.precombined_cell(
        filepath=str(path), geometry_path=str(corpus / CSG), scale=0.01, instancing=instancing
    )
    assert result == {"FINISHED"}
    collection = bpy.data.collections[path.stem]
    assert collection["nif_scale"] == pytest.approx(0.01)
    data = path.read_bytes()
    records = {(block, number): offset for block, number, _, offset, _ in cell_records(path)}
    placed = []  # (record key, stored placement, world matrix, mesh) of every copy
    if instancing == "OBJECTS":
        for obj in collection.objects:
            if "precombined_instance" in obj:
                placed.append(((obj["precombined_block"], obj["precombined_object"]), obj["precombined_instance_raw"], obj.matrix_world, obj.data))
    else:
        sources = {(o.data["precombined_block"], o.data["precombined_object"]): o.data for o in collection.objects if "precombined_source" in o}
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for instance in depsgraph.object_instances:
            owner = instance.parent.original if instance.is_instance and instance.parent is not None else None
            if owner is not None and "precombined_object" in owner:
                raws = np.reshape(owner.data["precombined_instances_raw"], (-1, 18))
                matrix = np.array(instance.matrix_world)
                # The copy placed here: instances come in no promised order.
                number = np.abs(raws[:, 10:13] * 0.01 - matrix[:3, 3]).max(axis=1).argmin()
                key = (owner["precombined_block"], owner["precombined_object"])
                placed.append((key, raws[number], matrix, sources[key]))
    assert len(placed) == 107
    for key, placement, matrix, mesh in placed:
        desc, vertices, _, geometry = rows[records[key]]
        stride = (desc & 0xF) * 4
        raw = np.frombuffer(geometry[: stride * vertices], np.uint8).reshape(vertices, stride)
        positions = raw[:, :6].copy().view("<f2").astype(np.float64)
        placement = np.array(placement)
        assert struct.pack("<18f", *placement) in data
        rotation, translation, size = placement[1:10].reshape(3, 3), placement[10:13], placement[13]
        game = positions @ (rotation * size).T + translation
        co = np.empty(3 * vertices, np.float32)
        mesh.vertices.foreach_get("co", co)
        matrix = np.array(matrix)
        world = co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
        np.testing.assert_allclose(world, 0.01 * game, rtol=1e-5, atol=1e-4)
    assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
    assert (tmp_path / path.name).read_bytes() == data
    assert export_collection(collection, tmp_path / "at_one.nif", scale=1.0) == {"FINISHED"}
    assert (tmp_path / "at_one.nif").read_bytes() != data


def test_record_meshes_carry_their_shapes_materials(clean_scene, corpus, addon, tmp_path):
    """Each BSTriShape owns one block through its extra data list; every record of the block
    shows that shape's shader (its BGSM path kept), one Blender material per shape; textures are
    found under the Data folder."""
    import bpy
    from archive_writer import dds_bytes

    from precombined_nif.core.nif import NifFile

    paths = cell_paths(corpus)
    data = tmp_path / "Data"
    first = NifFile.read(paths[0])
    for block in first.blocks:
        for texture in getattr(block, "textures", ()):
            if texture:
                target = data / "Textures" / texture.replace("\\", "/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(dds_bytes())
    preferences = addon.preferences.get(bpy.context)
    preferences.fo4_data = str(data)
    try:
        collections = import_cells(paths, corpus / CSG)
    finally:
        preferences.fo4_data = ""
    for path, collection in zip(paths, collections):
        nif = NifFile.read(path)
        raw = path.read_bytes()
        owners = {}
        for index, shape in enumerate(nif.blocks):
            if shape.type_name in ("BSTriShape", "BSMeshLODTriShape"):  # the LOD shape of 00001E58_A8F0581B
                (block,) = [i for i in shape.extra_data if nif.blocks[i].type_name == "BSPackedCombinedSharedGeomDataExtra"]
                owners[block] = shape
        by_block = {}
        for obj in (o for o in collection.objects if "precombined_object" in o):
            assert len(obj.data.materials) == 1, obj.name
            by_block.setdefault(obj["precombined_block"], set()).add(obj.data.materials[0])
        assert set(by_block) == set(owners)
        for block, materials in by_block.items():
            (material,) = materials  # one material for every record of the shape
            shader = nif.blocks[owners[block].shader_property]
            assert material["nif_blocks"]["shader"] == owners[block].shader_property
            assert material["nif_record"]["shader"]["name"] == shader.name and shader.name.encode() in raw
            if shader.name.lower().endswith(".bgsm"):
                relative = material["nif_material_path"]
                assert relative.lower().startswith("materials\\") and shader.name.endswith(relative)
        shaders = {owners[b].shader_property for b in by_block}
        assert len({m for ms in by_block.values() for m in ms}) == len(shaders)
    for obj in (o for o in collections[0].objects if "precombined_object" in o):
        image = obj.data.materials[0].node_tree.nodes["NIF diffuse"].image
        assert image is not None and tuple(image.size) == (4, 4)


def run_cli(*args):
    import subprocess

    import extension

    python = str(extension.python(extension.VENVS["4.5"]))
    return subprocess.run([python, str(extension.ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=600)


def test_cli_export_of_a_mixed_scene_is_refused_and_one_cell_is_exact(corpus, tmp_path):
    """A cell imported with an ordinary mesh, a skinned body and a .bsm2: the scene is refused
    with one message naming what is not a cell; the cell alone (--object) writes back exactly."""
    cell = corpus / CELL_FOLDER / "00001E58_1200ADBE_OC.NIF"
    others = [corpus / "pynifly/tests/tests/FO4/AlarmClock.nif", corpus / "pynifly/tests/tests/FO4/MaleBody.nif", corpus / "bsm2/Rabbit.bsm2"]
    blend = tmp_path / "mixed.blend"
    run = run_cli("import", cell, *others, "--blend", blend, "--csg", corpus / CSG)
    assert run.returncode == 0, run.stderr
    refused = run_cli("export", blend, tmp_path / "mixed.nif")
    assert refused.returncode == 2 and not (tmp_path / "mixed.nif").exists()
    (message,) = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert "not part of a precombined cell" in message, message
    for name in ("AlarmClock", "MaleBody", "Rabbit"):
        assert name in message
    assert "5C4304E6" not in message and "BSTriShape" not in message  # the cell's own objects are not named
    one = run_cli("export", blend, tmp_path / cell.name, "--object", "5C4304E6:000062F4 #0")
    assert one.returncode == 0, one.stderr
    assert (tmp_path / cell.name).read_bytes() == cell.read_bytes()
    assert "6 records, 13 instances" in one.stdout
    named = run_cli("export", blend, tmp_path / "named.nif", "--object", "5C4304E6:000062F4 #0", "--plugin", "Other")
    assert named.returncode == 0, named.stderr  # nothing edited: no geometry file, the same bytes
    assert (tmp_path / "named.nif").read_bytes() == cell.read_bytes() and not list(tmp_path.glob("*.csg"))

    # The other layout: every block inline, holding the geometry the .csg has at its records' offsets.
    inline = run_cli("export", blend, tmp_path / "inline.nif", "--object", "5C4304E6:000062F4 #0", "--layout", "inline")
    assert inline.returncode == 0, inline.stderr
    from precombined_nif.core.nif import NifFile

    rows = csg_geometry(corpus / CSG)
    blocks = [b for b in NifFile.read(tmp_path / "inline.nif").blocks if hasattr(b, "records")]
    assert [b.layout for b in blocks] == ["inline"] * 4 and [len(b.records) for b in blocks] == [2, 2, 1, 1]
    for (_, _, _, offset, count), record in zip(cell_records(cell), [r for b in blocks for r in b.records]):
        desc, vertices, indices, geometry = rows[offset]
        assert record.vertex_data.tobytes() + record.triangles.tobytes() == geometry and len(record.instances) == count


def csg_rows(data):
    """The 20-byte rows of a .csg and its inflated geometry space, read with struct and zlib."""
    objects, chunks = struct.unpack_from("<II", data, 4)
    table = [struct.unpack_from("<II", data, 12 + 8 * k) for k in range(chunks)]
    rows = [struct.unpack_from("<IQII", data, 12 + 8 * chunks + 20 * k) for k in range(objects)]
    return rows, b"".join(zlib.decompress(data[at : at + size]) for size, at in table)


def edit_first_record(collection):
    """Move one vertex and delete one face of block 3's first record; (mesh, edited positions,
    edited triangles)."""
    import bmesh

    obj = next(o for o in collection.objects if (o.get("precombined_block"), o.get("precombined_object")) == (3, 0))
    mesh = obj.data
    edit = bmesh.new()
    edit.from_mesh(mesh)
    edit.verts.ensure_lookup_table()
    edit.verts[0].co.x += 400.25  # far enough to move the box around the block
    edit.faces.ensure_lookup_table()
    edit.faces.remove(edit.faces[0])
    edit.to_mesh(mesh)
    edit.free()
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    faces = np.empty(3 * len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("vertices", faces)
    return mesh, co.reshape(-1, 3), faces.reshape(-1, 3)


@pytest.mark.parametrize("plugin", ["MyEdit", None])
def test_edited_record_goes_to_the_plugins_geometry_file(clean_scene, corpus, addon, tmp_path, plugin):
    """An edited record of an external cell: its geometry in '<Plugin> - Geometry.csg' beside the
    cell, hashed by the plugin's name; the other records untouched; the cell re-imports with the
    edit at half precision. Without a plugin name: the records' own plugin, whose .csg keeps
    every record where it was."""
    import bpy

    source = corpus / CELL_FOLDER / "00001E58_1200ADBE_OC.NIF"
    before = cell_records(source)
    (collection,) = import_cells([source], corpus / CSG)
    mesh, positions, faces = edit_first_record(collection)
    data = tmp_path / "Data"
    data.mkdir()
    out = data / source.name
    assert export_collection(collection, out, **({"plugin": plugin} if plugin else {})) == {"FINISHED"}
    name = plugin or "AlootHomePlate"
    written = (data / f"{name} - Geometry.csg").read_bytes()
    expected_hash = zlib.crc32(f"{name} - geometry".lower().encode(), 0xFFFFFFFF) ^ 0xFFFFFFFF
    after = cell_records(out)
    assert [(b, n, count) for b, n, _, _, count in after] == [(b, n, count) for b, n, _, _, count in before]
    (edited,) = [entry for entry in after if entry[:2] == (3, 0)]
    assert edited[2] == expected_hash
    for old, new in zip(before, after):
        if old[:2] != (3, 0):
            assert new == old  # hash and offset of every other record kept
    rows, space = csg_rows(written)
    (row,) = [r for r in rows if r[0] == edited[3]]
    desc, vertices, indices = row[1:]
    stride = (desc & 0xF) * 4
    assert vertices == len(positions) and indices == 3 * len(faces)  # one LOD: the CK's record had one
    geometry = space[edited[3] : edited[3] + stride * vertices + 2 * indices]
    raw = np.frombuffer(geometry[: stride * vertices], np.uint8).reshape(vertices, stride)
    np.testing.assert_array_equal(raw[:, :6].copy().view("<f2").astype(np.float32), positions.astype(np.float16).astype(np.float32))
    triangles = np.frombuffer(geometry[stride * vertices :], "<u2").reshape(-1, 3)
    np.testing.assert_array_equal(np.sort(triangles, axis=None), np.sort(faces, axis=None))
    if plugin is None:  # the plugin's own file grew: its 110 records stay where they were
        original, original_space = csg_rows((corpus / CSG).read_bytes())
        assert rows[: len(original)] == original and space.startswith(original_space)
    else:
        (data / "AlootHomePlate - Geometry.csg").write_bytes((corpus / CSG).read_bytes())

    preferences = addon.preferences.get(bpy.context)
    preferences.fo4_data = str(data)  # each record's hash finds its .csg there
    try:
        assert bpy.ops.import_scene.precombined_cell(filepath=str(out)) == {"FINISHED"}
    finally:
        preferences.fo4_data = ""
    again = [c for c in bpy.data.collections if c.name.startswith(out.stem) and c != collection][0]
    reimported = next(o for o in again.objects if (o.get("precombined_block"), o.get("precombined_object")) == (3, 0)).data
    co = np.empty(3 * len(reimported.vertices), np.float32)
    reimported.vertices.foreach_get("co", co)
    np.testing.assert_array_equal(co.reshape(-1, 3), positions.astype(np.float16).astype(np.float32))
    assert len(reimported.polygons) == len(faces)
    assert sum(1 for o in again.objects if o.type == "EMPTY" and o.get("precombined_object") is not None) == 0
    # The host shape follows its block as the CK's do: translation at the centre of the box of
    # every placed vertex, bound radius their farthest distance; its counts the block's totals.
    from precombined_nif.core.nif import NifFile

    host = NifFile.read(out).blocks[2]
    placed = world_points([o for o in again.objects if o.get("precombined_block") == 3 and "precombined_instance" in o])
    centre = (placed.min(axis=0) + placed.max(axis=0)) / 2
    np.testing.assert_allclose(host.translation, centre, atol=1e-3)
    assert host.bound_radius == pytest.approx(np.linalg.norm(placed - centre, axis=1).max(), abs=1e-3)
    assert np.linalg.norm(np.subtract(host.translation, NifFile.read(source).blocks[2].translation)) > 50
    instances = [r for b, n, _, _, r in after if b == 3]
    assert host.num_triangles == 3 * (22 - 1) + 20 and sum(instances) == 4


@pytest.mark.parametrize("lod", [0, 1, 2])
def test_lods_with_geometry_nodes_on_real_cells(clean_scene, corpus, tmp_path, lod):
    """Records whose chosen LOD is empty show the nearest LOD that has triangles (most CK
    records fill LOD 0 only; one of 00001E58_A8F0581B fills LOD 1 only), the choice kept on the
    mesh; geometry-nodes cells write back byte for byte."""
    import bpy

    from precombined_nif.core.nif import NifFile

    rows = csg_geometry(corpus / CSG)
    paths = cell_paths(corpus)
    result = bpy.ops.import_scene.precombined_cell(
        files=[{"name": p.name} for p in paths], directory=str(paths[0].parent), geometry_path=str(corpus / CSG),
        lod=str(lod), instancing="GEOMETRY_NODES",
    )  # fmt: skip
    assert result == {"FINISHED"}
    fallbacks = 0
    for path in paths:
        collection = bpy.data.collections[path.stem]
        sources = {(o.data["precombined_block"], o.data["precombined_object"]): o.data for o in collection.objects if "precombined_source" in o}
        assert not [o for o in collection.objects if "precombined_instance" in o]
        nif = NifFile.read(path)
        for index, block in enumerate(nif.blocks):
            for number, record in enumerate(getattr(block, "records", ())):
                counts = record.lod_counts
                chosen = min((k for k in range(3) if counts[k]), key=lambda k: (abs(k - lod), k))
                fallbacks += chosen != lod
                mesh = sources[(index, number)]
                assert mesh["precombined_lod"] == chosen and len(mesh.polygons) == counts[chosen]
                desc, vertices, _, geometry = rows[int(block.objects[number]["data_offset"])]
                start = (desc & 0xF) * 4 * vertices + 2 * record.lod_offsets[chosen]
                expected = np.frombuffer(geometry[start : start + 6 * counts[chosen]], "<u2").reshape(-1, 3)
                faces = np.empty(3 * len(mesh.polygons), np.int32)
                mesh.polygons.foreach_get("vertices", faces)
                np.testing.assert_array_equal(np.sort(faces, axis=None), np.sort(expected, axis=None))
        assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    # Of 86 records, 79 fill LOD 0 only, 2 LOD 1 only, 4 LOD 2 only and one LOD 0 and 2.
    assert fallbacks == (6, 84, 81)[lod]


def world_points(objects):
    points = []
    for obj in objects:
        co = np.empty(3 * len(obj.data.vertices), np.float64)
        obj.data.vertices.foreach_get("co", co)
        matrix = np.array(obj.matrix_world)
        points.append(co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3])
    return np.concatenate(points)


def test_physics_cell_lands_where_the_cells_are(clean_scene, corpus):
    """The cell's _Physics.NIF (one static compressed mesh for the whole interior, in cell
    coordinates) imported with the eleven cells the corpus has of its 38: the cells lie inside
    its collision's bounds, and many record vertices sit on collision vertices (measured: 9 %
    within one unit), which a shift of 5 units destroys (0.2 %)."""
    import bpy
    from mathutils.kdtree import KDTree

    physics = corpus / CELL_FOLDER / "00001E58_Physics.NIF"
    paths = cell_paths(corpus)
    import_cells([*paths, physics], corpus / CSG)
    records = [o for p in paths for o in bpy.data.collections[p.stem].objects if "precombined_instance" in o]
    collision = [o for o in bpy.data.collections[physics.stem].all_objects if "havok_shape" in o and o.type == "MESH"]
    assert len(records) == 223 and len(collision) == 1
    cells, hull = world_points(records), world_points(collision)
    assert (cells.min(axis=0) >= hull.min(axis=0) - 1).all() and (cells.max(axis=0) <= hull.max(axis=0) + 1).all()
    tree = KDTree(len(hull))
    for index, point in enumerate(hull):
        tree.insert(point, index)
    tree.balance()
    for shift, low, high in (((0, 0, 0), 0.05, 1.0), ((5, 0, 0), 0.0, 0.01)):
        near = np.mean([tree.find(point + shift)[2] < 1.0 for point in cells])
        assert low < near < high, (shift, near)


def test_static_compound_collision_is_shown(clean_scene, corpus, tmp_path):
    """The CLONE node's hknpStaticCompoundShape: a compound holding its one child (the box the
    tree's leaf bounds), under its node; the cell still writes back byte for byte."""
    import bpy

    from precombined_nif.core.havok import GAME_UNITS, Packfile

    path = corpus / CELL_FOLDER / "00001E58_A8F0581B_OC.NIF"
    result = bpy.ops.import_scene.precombined_cell(filepath=str(path), geometry_path=str(corpus / CSG))
    assert result == {"FINISHED"}
    collection = bpy.data.collections[path.stem]
    (compound,) = [o for o in collection.objects if o.get("havok_shape") == "static_compound"]
    assert compound.parent.name == "CLONE BldWlpBgWallFreeWood01"
    (child,) = compound.children
    assert child["havok_shape"] == "compressed_mesh" and len(child.data.vertices) == 8
    from precombined_nif.core.nif import NifFile

    nif = NifFile.read(path)
    shape = Packfile.from_bytes(nif.blocks[14].packfile).root.bodies[0].shape
    box = shape.tree.leaves()[0] * GAME_UNITS  # compound space, game units
    co = np.empty(3 * 8, np.float64)
    child.data.vertices.foreach_get("co", co)
    local = np.array(compound.matrix_world.inverted() @ child.matrix_world)
    placed = co.reshape(-1, 3) @ local[:3, :3].T + local[:3, 3]
    np.testing.assert_allclose([placed.min(axis=0), placed.max(axis=0)], box, atol=1e-3)
    assert export_collection(collection, tmp_path / path.name) == {"FINISHED"}
    assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_edited_static_compound_child_is_written_into_the_cell(clean_scene, corpus, tmp_path):
    """Stretching the static compound's child in Blender: the exported cell's physics system
    holds a static compound again, its child the edit, its tree rebuilt around it; the records
    are untouched."""
    import bpy

    from precombined_nif.core.havok import GAME_UNITS, Packfile
    from precombined_nif.core.havok.shapes.static_compound import StaticCompoundShape
    from precombined_nif.core.nif import NifFile

    path = corpus / CELL_FOLDER / "00001E58_A8F0581B_OC.NIF"
    assert bpy.ops.import_scene.precombined_cell(filepath=str(path), geometry_path=str(corpus / CSG)) == {"FINISHED"}
    collection = bpy.data.collections[path.stem]
    (compound,) = [o for o in collection.objects if o.get("havok_shape") == "static_compound"]
    (child,) = compound.children
    co = np.empty(3 * len(child.data.vertices), np.float64)
    child.data.vertices.foreach_get("co", co)
    edited = co.reshape(-1, 3) * [1.0, 1.0, 1.5]
    child.data.vertices.foreach_set("co", edited.ravel())
    child.data.update()
    out = tmp_path / path.name
    assert export_collection(collection, out) == {"FINISHED"}
    assert cell_records(out) == cell_records(path)
    nif = NifFile.read(out)
    (system,) = [b for b in nif.blocks if b.type_name == "bhkPhysicsSystem"]
    shape = Packfile.from_bytes(system.packfile).root.bodies[0].shape
    assert isinstance(shape, StaticCompoundShape) and len(shape.instances) == 1
    (instance,) = shape.instances
    vertices, _ = instance.shape.mesh()
    placed = vertices @ instance.matrix[:3, :3].T + instance.matrix[:3, 3]
    local = np.array(compound.matrix_world.inverted() @ child.matrix_world)
    expected = edited @ local[:3, :3].T + local[:3, 3]
    np.testing.assert_allclose(np.sort(placed, axis=0), np.sort(expected, axis=0), atol=0.05)
    box = shape.tree.leaves()[0] * GAME_UNITS
    assert (placed >= box[0] - 1e-3).all() and (placed <= box[1] + 1e-3).all()
    assert box[1][2] == pytest.approx(expected[:, 2].max(), abs=0.05)


def test_marked_new_mesh_joins_an_external_cell(clean_scene, corpus, tmp_path):
    """A cube marked precombined, exported with a real cell: a new record (two copies) in the
    block of the shape whose material it carries, its geometry appended to the plugin's .csg."""
    import bpy
    from mathutils import Matrix

    source = corpus / CELL_FOLDER / "00001E58_1200ADBE_OC.NIF"
    (collection,) = import_cells([source], corpus / CSG)
    material = next(o for o in collection.objects if o.get("precombined_block") == 12).data.materials[0]
    bpy.ops.mesh.primitive_cube_add(size=20.0, location=(1500.0, -400.0, 100.0))
    cube = bpy.context.active_object
    cube.data.materials.append(material)
    twin = bpy.data.objects.new("twin", cube.data)
    bpy.context.scene.collection.objects.link(twin)
    twin.matrix_world = Matrix.Translation((1600.0, -400.0, 100.0))
    for obj in (cube, twin):
        obj["precombined"] = True
    for obj in bpy.context.scene.objects:
        obj.select_set(obj.name in collection.all_objects or obj in (cube, twin))
    out = tmp_path / source.name
    assert bpy.ops.export_scene.precombined_cell(filepath=str(out)) == {"FINISHED"}
    before, after = cell_records(source), cell_records(out)
    assert len(after) == len(before) + 1
    (new,) = [r for r in after if r[:2] == (12, 1)]
    assert new[2] == 0x5C4304E6 and new[4] == 2
    rows, space = csg_rows((tmp_path / "AlootHomePlate - Geometry.csg").read_bytes())
    (row,) = [r for r in rows if r[0] == new[3]]
    assert row[2:] == (8, 3 * 3 * 12)  # 8 corners; its 12 triangles in each of the three LODs
    assert row[0] == len(csg_rows((corpus / CSG).read_bytes())[1])  # appended after the CK's geometry


def test_two_cells_at_once_are_refused(clean_scene, corpus, tmp_path):
    import bpy

    paths = cell_paths(corpus)[:2]
    collections = import_cells(paths, corpus / CSG)
    for obj in bpy.context.scene.objects:
        obj.select_set(any(obj.name in c.all_objects for c in collections))
    with pytest.raises(RuntimeError, match=f"come from 2 cells \\({paths[0].name}, {paths[1].name}\\): export one cell at a time"):
        bpy.ops.export_scene.precombined_cell(filepath=str(tmp_path / "both.nif"))
    assert not list(tmp_path.iterdir())
