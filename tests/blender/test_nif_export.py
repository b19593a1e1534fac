"""File > Export > NIF in real Blender: untouched imports write back byte for byte, edits and new
scenes are written as FO4 and FO3/FNV files whose decoded values are checked."""

import subprocess
from pathlib import Path

import numpy as np
import pytest

import extension
from scene import cube, export, export_objects, imported, scene_files, skinned_column
from support import CORPUS, unavailable

from precombined_nif.core.nif import NifFile, skinning
from precombined_nif.core.nif.blocks.geometry import NiTriBasedGeom, NiTriShapeData
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape

ROUND_TRIP = scene_files()


def shapes(nif):
    return [b for b in nif.blocks if isinstance(b, (BSTriShape, NiTriBasedGeom))]


def geometry(nif, shape):
    """(positions, triangles) of a shape in either game's layout."""
    if isinstance(shape, BSTriShape) and shape.vertex_data is None:  # Skyrim SE skinned: in the partition
        found = skinning.partition_geometry(nif, shape)
        return found.positions, found.triangles
    if isinstance(shape, BSTriShape):
        return shape.positions, np.asarray(shape.triangles)
    data = nif.blocks[shape.data]
    return data.vertices, np.asarray(data.triangles)


def triangle_set(points, triangles):
    """Triangles as corner positions (rounded), each rotated to start at its smallest corner so
    the winding counts but the starting corner does not."""
    out = []
    for corners in np.round(points[np.asarray(triangles)], 3).tolist():
        corners = [tuple(c) for c in corners]
        start = corners.index(min(corners))
        out.append(tuple(corners[start:] + corners[:start]))
    return sorted(out)


@pytest.mark.slow
@pytest.mark.parametrize("path", ROUND_TRIP, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_untouched_import_exports_byte_identical(clean_scene, tmp_path, path):
    collection = imported(path)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    "name", ["havok/MetalAddAwnARoofEndCap02.nif", "nifly/tests/input/TestNifFile_Skinned_FO4.nif", "pynifly/tests/tests/FONV/outfitf_simple.nif"]
)
def test_what_the_import_left_out_is_kept(clean_scene, corpus, tmp_path, name):
    """Imported without collision and skin: export keeps both as stored, not as deleted."""
    path = corpus / name
    collection = imported(path, use_collision=False, use_skin=False)
    assert not any(o.type == "ARMATURE" or "havok_shape" in o for o in collection.all_objects)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


def test_nifly_goldens_are_in_the_round_trip(corpus):
    names = {p.name for p in ROUND_TRIP}
    assert {"TestNifFile_Static_FO4.nif", "TestNifFile_Skinned_FO4.nif"} <= names


def test_edited_fo4_vertex_is_written_and_the_rest_kept(clean_scene, corpus, tmp_path):
    path = corpus / "pynifly/tests/tests/FO4/AlarmClock.nif"
    source = NifFile.read(path)
    collection = imported(path)
    obj = next(o for o in collection.objects if o.type == "MESH" and o.get("nif_type") == "BSTriShape")
    obj.data.vertices[0].co.x += 2.0
    out = export(collection, tmp_path / "out.nif")
    assert [b.type_name for b in out.blocks] == [b.type_name for b in source.blocks]
    before, after = source.blocks[obj["nif_block"]], out.blocks[obj["nif_block"]]
    # The mesh keeps one vertex per file vertex (no seams split differently), in the same order.
    assert after.num_vertices == before.num_vertices
    moved = before.positions.copy()
    moved[0, 0] += 2.0
    np.testing.assert_allclose(after.positions, moved, atol=np.abs(moved).max() * 2**-10)
    assert sorted(map(tuple, np.sort(after.triangles, axis=1))) == sorted(map(tuple, np.sort(before.triangles, axis=1)))
    np.testing.assert_allclose(after.uvs, before.uvs, atol=2e-3)
    assert after.bound_radius > 0
    # Blocks the edit does not touch keep their bytes.
    for index, (a, b) in enumerate(zip(source.blocks, out.blocks)):
        if index != obj["nif_block"] and not hasattr(a, "packfile"):
            assert vars(a).keys() == vars(b).keys()


def test_edited_strips_become_a_triangle_list(clean_scene, corpus, tmp_path):
    path = corpus / "pynifly/tests/tests/FONV/9mmscp.nif"
    source = NifFile.read(path)
    collection = imported(path)
    obj = next(o for o in collection.objects if o.type == "MESH")
    index = obj["nif_block"]
    obj.data.vertices[3].co.z += 1.0
    out = export(collection, tmp_path / "out.nif")
    assert out.header.game == "FO3"
    shape = out.blocks[index]
    assert shape.type_name == "NiTriShape" and isinstance(out.blocks[shape.data], NiTriShapeData)
    positions, triangles = geometry(out, shape)
    old_positions, old_triangles = geometry(source, source.blocks[index])
    assert len(triangles) == len(old_triangles)
    expected = old_positions.copy()
    expected[3, 2] += 1.0
    assert triangle_set(positions, triangles) == triangle_set(expected, old_triangles)
    others = [b for b in shapes(out) if b is not shape]
    assert others and all(b.type_name == "NiTriStrips" for b in others)


@pytest.mark.parametrize("game", ["FO4", "FO76", "FO3", "SSE", "SKYRIM"])
def test_new_cube_is_written_with_seams_and_hard_edges(clean_scene, tmp_path, game):
    obj = cube()
    obj.location = (1.0, 2.0, 3.0)
    out = export_objects([obj], tmp_path / "cube.nif", game=game)
    assert out.header.game == game
    (shape,) = shapes(out)
    positions, triangles = geometry(out, shape)
    assert len(triangles) == 12
    assert len(positions) == 24  # a flat-shaded, UV-mapped cube: four vertices per face
    np.testing.assert_allclose(np.abs(positions), 1.0, atol=1e-3)
    root = out.blocks[out.roots[0]]
    assert isinstance(root, NiNode) and shape.name == "Box"
    np.testing.assert_allclose(shape.translation, (1.0, 2.0, 3.0), atol=1e-6)
    normals = shape.normals if isinstance(shape, BSTriShape) else out.blocks[shape.data].normals
    face_normals = np.cross(positions[triangles[:, 1]] - positions[triangles[:, 0]], positions[triangles[:, 2]] - positions[triangles[:, 0]])
    face_normals /= np.linalg.norm(face_normals, axis=1, keepdims=True)
    for corner in range(3):  # every corner's normal is its face's (hard edges)
        np.testing.assert_allclose(normals[triangles[:, corner]], face_normals, atol=0.02)
    if isinstance(shape, BSTriShape):
        assert shape.tangents is not None and shape.uvs is not None
    else:
        data = out.blocks[shape.data]
        assert data.tangents is not None and len(data.uv_sets) == 1


def test_large_mesh_is_split_at_65535_vertices(clean_scene, tmp_path):
    import bpy

    bpy.ops.mesh.primitive_grid_add(x_subdivisions=300, y_subdivisions=300, size=100.0)
    grid = bpy.context.active_object
    faces = len(grid.data.polygons)
    out = export_objects([grid], tmp_path / "grid.nif", game="FO4", full_precision=True)
    pieces = shapes(out)
    assert len(pieces) == 2
    assert all(0 < p.num_vertices <= 0xFFFF for p in pieces)
    assert sum(p.num_triangles for p in pieces) == 2 * faces
    assert sum(p.num_vertices for p in pieces) >= len(grid.data.vertices)


def test_material_slots_become_separate_shapes(clean_scene, tmp_path):
    import bpy

    obj = cube()
    for name in ("A", "B"):
        obj.data.materials.append(bpy.data.materials.new(name))
    for polygon in obj.data.polygons[:2]:
        polygon.material_index = 1
    out = export_objects([obj], tmp_path / "two.nif")
    counts = sorted(s.num_triangles for s in shapes(out))
    assert counts == [4, 8]


def _delete_a_shape(path):
    import bpy

    collection = imported(path)
    victim = next(o for o in collection.objects if o.get("nif_type") == "BSTriShape")
    name = victim.name
    bpy.data.objects.remove(victim)
    return collection, name


def _children(nif):
    return {int(c) for b in nif.blocks if isinstance(b, NiNode) for c in np.asarray(b.children).tolist()}


def test_deleted_object_leaves_the_file(clean_scene, corpus, tmp_path):
    path = corpus / "nifly/tests/input/TestNifFile_Static_FO4.nif"
    source = NifFile.read(path)
    collection, name = _delete_a_shape(path)
    out = export(collection, tmp_path / "out.nif")
    assert name not in [b.name for b in shapes(out)]
    assert len(shapes(out)) == len(shapes(source)) - 1
    # Its shader and texture set went with it; every reference still lands on a block.
    assert len(out.blocks) == len(source.blocks) - 3
    assert all(0 <= c < len(out.blocks) for c in _children(out))
    assert all(0 <= s.shader_property < len(out.blocks) for s in shapes(out))


def test_deleted_object_is_detached_when_blocks_cannot_be_renumbered(clean_scene, corpus, tmp_path):
    """BOSRadarDish keeps blocks the codec does not decode: the deleted shape's blocks stay in the
    file (references inside undecoded blocks cannot be renumbered) but nothing shows them."""
    path = corpus / "pynifly/tests/tests/FO4/Meshes/BOSRadarDish.nif"
    source = NifFile.read(path)
    collection, name = _delete_a_shape(path)
    out = export(collection, tmp_path / "out.nif")
    assert len(out.blocks) == len(source.blocks)
    detached = next(i for i, b in enumerate(out.blocks) if isinstance(b, BSTriShape) and b.name == name)
    assert detached not in _children(out)


def test_moved_node_writes_its_new_transform(clean_scene, corpus, tmp_path):
    path = corpus / "pynifly/tests/tests/FO4/Meshes/BOSRadarDish.nif"
    collection = imported(path)
    obj = next(o for o in collection.objects if o.get("nif_type") == "BSTriShape")
    obj.location.z += 10.0
    obj.rotation_euler.z += 0.5
    out = export(collection, tmp_path / "out.nif")
    shape = out.blocks[obj["nif_block"]]
    matrix = np.array(obj.matrix_basis)
    np.testing.assert_allclose(shape.translation, matrix[:3, 3], atol=1e-4)
    np.testing.assert_allclose(np.array(shape.rotation).reshape(3, 3) * shape.scale, matrix[:3, :3], atol=1e-5)


def test_uneven_scale_is_refused_without_writing(clean_scene, tmp_path):
    import bpy

    obj = cube()
    obj.scale = (1.0, 2.0, 1.0)
    target = tmp_path / "bad.nif"
    target.write_bytes(b"keep me")
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    with pytest.raises(RuntimeError, match="scaled unevenly"):
        bpy.ops.export_scene.precombined_nif(filepath=str(target), use_selection=True)
    assert target.read_bytes() == b"keep me"


def test_a_failed_export_names_the_file_once(clean_scene, tmp_path):
    """The operators word failures as the import loop and the command line do (one path, then
    what is wrong), for the NIF and the precombined cell exporters."""
    import bpy

    obj = cube()
    obj["precombined"] = True  # a new record, for the cell exporter
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    target = tmp_path / "missing" / "out.nif"
    for export in (bpy.ops.export_scene.precombined_nif, bpy.ops.export_scene.precombined_cell):
        with pytest.raises(RuntimeError) as failure:
            export(filepath=str(target), use_selection=True)
        assert f"{target}: No such file or directory" in str(failure.value)
        assert str(failure.value).count(str(target)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_round_trip_on_other_blender_versions(extension_zip, corpus, tmp_path, version):
    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    files = [
        corpus / "nifly/tests/input/TestNifFile_Skinned_FO4.nif",
        corpus / "havok/MetalAddAwnARoofEndCap02.nif",
        corpus / "pynifly/tests/tests/FONV/outfitf_simple.nif",
        corpus / "pynifly/tests/tests/SkyrimSE/malebody_1.nif",  # skinned, its vertices in the partition
    ]
    command = [extension.python(venv), Path(__file__).with_name("smoke_nif.py"), extension_zip, tmp_path / "user", tmp_path, *files]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "imported, written back and edited" in result.stdout


def _node_worlds(nif):
    """World matrix of every node reached from the roots (world = T + R * s * v, rows as stored)."""
    from precombined_nif.core.transforms import transform_matrix

    worlds, stack = {}, [(root, np.eye(4)) for root in nif.roots]
    while stack:
        index, parent = stack.pop()
        block = nif.blocks[index]
        worlds[index] = parent @ transform_matrix(block.rotation, block.translation, block.scale)
        if isinstance(block, NiNode):
            stack.extend((int(c), worlds[index]) for c in np.asarray(block.children).tolist() if c >= 0)
    return worlds


@pytest.mark.parametrize("game", ["FO4", "FO76", "FO3", "SSE", "SKYRIM"])
def test_new_skinned_mesh_binds_and_weighs_like_blender(clean_scene, tmp_path, game):

    armature, column = skinned_column()
    out = export_objects([armature, column], tmp_path / "skinned.nif", game=game)
    (shape,) = shapes(out)
    assert shape.skinned
    instance, data, partition = skinning.skin_blocks(out, shape.skin if isinstance(shape, BSTriShape) else shape.skin_instance)
    assert [out.blocks[b].name for b in np.asarray(instance.bones).tolist()] == ["Lower", "Upper"]
    positions, triangles = geometry(out, shape)
    bs_skin = game in ("FO4", "FO76")  # weights in the shape's vertices, as half floats
    packed = (shape.bone_indices, shape.bone_weights) if bs_skin else None
    weights = skinning.shape_weights(instance, data, partition, len(positions), packed)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=2e-3)
    # Each file vertex carries the weights of the Blender vertex at its place.
    blender = {tuple(np.round(np.array(column.matrix_world @ v.co), 3)): [g.weight for g in sorted(v.groups, key=lambda g: g.group)] for v in column.data.vertices}
    worlds = _node_worlds(out)
    shape_world = worlds[out.blocks.index(shape)]
    for position, row in zip(positions, weights):
        expected = blender[tuple(np.round(shape_world[:3, :3] @ position + shape_world[:3, 3], 3))]
        np.testing.assert_allclose(row, expected, atol=2e-3 if bs_skin else 1e-5)
    # In the bind pose the skinning reproduces the mesh where Blender shows it.
    binds = skinning.bind_matrices(instance, data)
    bones = [worlds[b] for b in np.asarray(instance.bones).tolist()]
    homogeneous = np.c_[positions, np.ones(len(positions))]
    skinned = sum(w[:, None] * (homogeneous @ (bone @ bind).T) for w, bone, bind in zip(weights.T, bones, binds))
    np.testing.assert_allclose(skinned[:, :3], (homogeneous @ shape_world.T)[:, :3], atol=1e-3)
    if not bs_skin:
        covered = np.concatenate([skinning.partition_triangles(part) for part in partition.partitions])
        assert len(covered) == len(triangles)


# Windows-1252 bytes of accented names as Bethesda's tools write them (é, è, ü, Œ), and 0x81 and
# 0x9D, which Windows-1252 leaves undefined: none of these byte strings is UTF-8.
ODD_NAMES = {"cylinder_1": b"Caf\xe9 \x9c\x81", "BoneA": b"Kn\xfcpfel\x9d", "Scene Root": b"Cr\xe8me \x8c"}


def _windows_1252(raw):
    """What the game shows: Windows-1252, its five undefined bytes as the C1 control characters
    of the same number."""
    return "".join(bytes((b,)).decode("cp1252") if b not in b"\x81\x8d\x8f\x90\x9d" else chr(b) for b in raw)


def test_windows_1252_names_show_and_write_back_byte_for_byte(clean_scene, corpus, tmp_path):
    """Names whose bytes are not UTF-8 show in Blender as the game reads them (objects, bones,
    vertex groups) and an untouched export writes the same bytes back; a renamed object is
    written in Windows-1252."""
    from nif_rewriter import RawNif

    raw = RawNif.read(corpus / "nifly/tests/input/TestNifFile_Skinned_FO4.nif")
    for name, odd in ODD_NAMES.items():
        assert odd.decode("utf-8", "replace") != _windows_1252(odd)  # not UTF-8
        raw.strings[raw.strings.index(name)] = odd.decode("latin-1")  # RawNif keeps a byte per character
    path = tmp_path / "Odd.nif"
    path.write_bytes(raw.to_bytes())
    collection = imported(path)
    names = {o.name for o in collection.all_objects}
    assert {_windows_1252(ODD_NAMES["cylinder_1"]), _windows_1252(ODD_NAMES["Scene Root"])} <= names
    shape = next(o for o in collection.all_objects if o.name == _windows_1252(ODD_NAMES["cylinder_1"]))
    bone = _windows_1252(ODD_NAMES["BoneA"])
    assert bone in shape.modifiers["Armature"].object.data.bones and bone in shape.vertex_groups
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()
    shape.name = "Pâté œuvre"
    export(collection, tmp_path / "renamed.nif")
    out = RawNif.read(tmp_path / "renamed.nif")
    assert out.node_name(shape["nif_block"]).encode("latin-1") == "Pâté œuvre".encode("cp1252")


def test_name_outside_windows_1252_is_refused_by_name(clean_scene, corpus, tmp_path):
    import bpy

    collection = imported(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    obj = next(o for o in collection.all_objects if o.type == "MESH")
    obj.name = "時計"
    target = tmp_path / "out.nif"
    with pytest.raises(RuntimeError, match="時計.*cannot be stored"):
        export(collection, target)
    assert not target.exists()
    assert bpy.data.objects.get("時計") is obj


@pytest.mark.parametrize("name", ["pynifly/tests/tests/FO4/AlarmClock.nif", "nifly/tests/input/TestNifFile_Skinned_FO4.nif"])
def test_import_scale_is_the_exports_default(clean_scene, corpus, tmp_path, name):
    """Imported at 0.01 (the root object scaled once), kept on the collection: an export at the
    default scale writes the game's units back byte for byte, and a root moved by one Blender
    unit moves a hundred game units; an explicit 1.0 writes the root a hundred times smaller."""
    path = corpus / name
    collection = imported(path, scale=0.01)
    assert collection["nif_scale"] == pytest.approx(0.01)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()
    root = NifFile.read(path).blocks[0]
    obj = next(o for o in collection.all_objects if o.get("nif_block") == 0)
    obj.location.x += 1.0
    out = export(collection, tmp_path / "moved.nif")
    assert out.blocks[0].translation[0] == pytest.approx(root.translation[0] + 100.0, abs=1e-3)
    assert out.blocks[0].scale == pytest.approx(root.scale)
    out = export(collection, tmp_path / "at_one.nif", scale=1.0)
    assert out.blocks[0].scale == pytest.approx(root.scale * 0.01)
