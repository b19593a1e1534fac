""".tri morphs in real Blender: every corpus .tri through Blender untouched writes back byte for
byte; the shape keys hold, at every vertex, the offsets an independent struct reader (raw_tri)
computes from the file's bytes; edited keys come back after export and re-import; new keys go
where the user says; vertex edits renumber the .tri with the NIF, or are refused by name."""

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import raw_tri
from scene import export_file, export_objects, imported
from support import CORPUS, ROOT, unavailable

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.extra_data import NiStringExtraData
from precombined_nif.core.tri import read_tri
from precombined_nif.io import schema

BASE = CORPUS / "pynifly/tests/tests"
# Each corpus .tri with the NIF the games read it with (its name, or its BODYTRI names it).
WITH_NIF = {
    "FO4/BaseMaleHead.tri": "FO4/BaseMaleHead.nif",
    "Skyrim/eyeschild.tri": "Skyrim/eyeschild.nif",
    "SkyrimSE/malehead.tri": "SkyrimSE/malehead.nif",
    "SkyrimSE/Anchor.tri": "SkyrimSE/Anchor.nif",
    "FO4/BaseMaleBody.tri": "FO4/BTBaseMaleBody.nif",
    "FO4/TEST_SEGMENTS_EMPTY.tri": "FO4/TEST_SEGMENTS_EMPTY.nif",
}
# FaceGen files no NIF of the corpus names: each is a mesh of its own (its base mesh).
ALONE = ["FO4/malehead.tri", "FONV/headfemale_willow.tri", "Skyrim/bad_tri.tri"]


def corpus_file(name):
    path = BASE / name
    if not path.is_file():
        unavailable(f"{path} not found: the corpus is needed")
    return path


def head_object(collection):
    meshes = [o for o in collection.all_objects if o.type == "MESH" and o.data.shape_keys is not None]
    assert len(meshes) == 1, [o.name for o in meshes]
    return meshes[0]


def coordinates(key):
    co = np.empty(3 * len(key.data), np.float32)
    key.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def key_offsets(obj):
    """{key name: (offsets, reference positions)} of every morph key."""
    keys = obj.data.shape_keys
    if keys is None:
        return {}
    basis = coordinates(keys.reference_key)
    return {key.name: (coordinates(key) - basis, basis) for key in keys.key_blocks if key != keys.reference_key}


def assert_offsets(found, basis, expected, what):
    """``found`` (a key's offsets) equals ``expected`` at every vertex, to the float32 rounding of
    a key stored as reference + offset (a step of the larger of the two)."""
    magnitude = np.maximum(np.abs(basis), np.abs(basis + expected))
    tolerance = 2 * np.spacing(magnitude.astype(np.float32))
    bad = np.abs(found - expected) > tolerance
    assert not bad.any(), f"{what}: vertex {np.argwhere(bad)[0][0]} differs: {found[bad.any(axis=1)][0]} vs {expected[bad.any(axis=1)][0]}"


def import_alone(path):
    """A .tri imported with nothing selected: a FaceGen file becomes a mesh of its own."""
    import bpy

    bpy.ops.object.select_all(action="DESELECT")
    assert bpy.ops.import_scene.tri_morphs(filepath=str(path)) == {"FINISHED"}
    return bpy.data.objects[path.stem]


def export_alone(obj, path, role="EXPRESSION"):
    import bpy

    bpy.context.view_layer.objects.active = obj
    return bpy.ops.export_scene.tri_morphs(filepath=str(path), role=role)


# -- untouched ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(WITH_NIF))
def test_untouched_nif_import_writes_its_tri_back(clean_scene, tmp_path, name):
    collection = imported(corpus_file(WITH_NIF[name]))
    out = tmp_path / "out" / corpus_file(WITH_NIF[name]).name
    out.parent.mkdir()
    export_file(collection, out)
    assert out.read_bytes() == corpus_file(WITH_NIF[name]).read_bytes()
    written = out.parent / corpus_file(name).name  # the FaceGen file by the NIF's name, the BodySlide one by BODYTRI
    assert written.read_bytes() == corpus_file(name).read_bytes()
    assert sorted(p.name for p in out.parent.glob("*.tri")) == [written.name]


@pytest.mark.parametrize("name", list(WITH_NIF))
def test_untouched_nif_import_exports_its_tri_alone(clean_scene, tmp_path, name):
    """File > Export > TRI Morphs of the mesh its NIF's import gave the morphs to: the same bytes."""
    collection = imported(corpus_file(WITH_NIF[name]))
    obj = next(o for o in collection.all_objects if o.type == "MESH" and schema.TRI_SOURCES in o)
    (role,) = obj[schema.TRI_SOURCES].keys()
    assert export_alone(obj, tmp_path / "out.tri", role) == {"FINISHED"}
    assert (tmp_path / "out.tri").read_bytes() == corpus_file(name).read_bytes()


@pytest.mark.parametrize("name", ALONE)
def test_untouched_tri_alone_writes_back(clean_scene, tmp_path, name):
    obj = import_alone(corpus_file(name))
    tri = read_tri(corpus_file(name))
    assert len(obj.data.vertices) == len(tri.vertices)
    assert export_alone(obj, tmp_path / "out.tri") == {"FINISHED"}
    assert (tmp_path / "out.tri").read_bytes() == corpus_file(name).read_bytes()


def test_a_tri_dropped_on_its_mesh(clean_scene, tmp_path):
    """FO4/malehead.tri is the Skyrim male head's: dropped onto that mesh (as a drop calls the
    import operator: directory and files), its keys go there and the NIF export writes it back."""
    import bpy

    collection = imported(corpus_file("Skyrim/malehead.nif"))
    obj = next(o for o in collection.all_objects if o.type == "MESH")
    assert obj.data.shape_keys is None  # no malehead.tri beside the Skyrim head
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    source = corpus_file("FO4/malehead.tri")
    result = bpy.ops.import_scene.tri_morphs("INVOKE_DEFAULT", directory=str(source.parent), files=[{"name": source.name}])
    assert result == {"FINISHED"}
    assert len(obj.data.shape_keys.key_blocks) == 45
    export_file(collection, tmp_path / "malehead.nif")
    assert (tmp_path / "malehead.tri").read_bytes() == source.read_bytes()
    assert "IO_FH_tri_morphs" in dir(bpy.types) and bpy.types.IO_FH_tri_morphs.bl_file_extensions == ".tri"


@pytest.mark.parametrize("name", ["SkyrimSE/malehead.tri", "FO4/BaseMaleBody.tri"])
def test_an_archived_nif_loads_its_archived_tri(clean_scene, addon, tmp_path, name):
    """A NIF imported from an archive (ARCHIVE.ba2:meshes/...) finds its .tri in the archive's Data
    folder: the keys are those of the loose import, and an export writes the .tri back as it was."""
    import importlib

    import bpy
    from archive_writer import write_ba2_gnrl

    nif, tri = corpus_file(WITH_NIF[name]), corpus_file(name)
    loose = {key: offsets for key, (offsets, _) in key_offsets(head_object(imported(nif))).items()}
    for collection in list(bpy.data.collections):
        bpy.data.collections.remove(collection)
    (tmp_path / "Data").mkdir()
    write_ba2_gnrl(tmp_path / "Data" / "Heads - Main.ba2",
                   {f"meshes/actors/{nif.name}": nif.read_bytes(), f"meshes/actors/{tri.name}": tri.read_bytes()})
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), messages = file_import.import_cells(bpy.context, [f"{tmp_path / 'Data' / 'Heads - Main.ba2'}:meshes/actors/{nif.name}"])
    assert not [m for m in messages if "morph" in m or ".tri" in m]  # (the textures are not in this Data folder)
    obj = head_object(collection)
    found = {key: offsets for key, (offsets, _) in key_offsets(obj).items()}
    assert found.keys() == loose.keys() and all(np.array_equal(found[key], loose[key]) for key in loose)
    export_file(collection, tmp_path / nif.name)
    assert (tmp_path / tri.name).read_bytes() == tri.read_bytes()


@pytest.mark.parametrize("name", ["FO4/BaseMaleBody.tri", "FO4/BaseMaleHead.tri"])
def test_a_tri_named_again_beside_its_nif_loads_once(clean_scene, addon, name):
    """``cli.py import X.nif X.tri`` (the command puts a named .tri onto the meshes of the file
    before it): the .tri its NIF loaded already is not loaded again, the keys are the file's
    morphs once (count and offsets from the file's bytes)."""
    import importlib

    import bpy

    tri_importer = importlib.import_module(f"{addon.__name__}.io.tri.importer")
    obj = head_object(imported(corpus_file(WITH_NIF[name])))
    given, warnings = tri_importer.apply_file(bpy.context, str(corpus_file(name)), [obj])
    assert given == [obj] and warnings == []
    if "Body" in name:
        (morphs,) = raw_tri.bodyslide(corpus_file(name).read_bytes())["shapes"].values()
        assert len(obj.data.shape_keys.key_blocks) == len(morphs) + 1  # the basis and each morph once
        test_bodyslide_keys_hold_the_file_offsets(clean_scene, name)
    else:
        facegen_keys_match_bytes(obj, corpus_file(name))


@pytest.mark.slow
def test_cli_import_of_a_nif_and_its_tri_writes_the_tri_back(tmp_path):
    """The form ``import --help`` gives: NIF then its .tri; the export writes the .tri as it was."""
    from extension import blender_cli

    nif, tri = corpus_file("FO4/BTBaseMaleBody.nif"), corpus_file("FO4/BaseMaleBody.tri")
    result = blender_cli("import", nif, tri, "--blend", tmp_path / "b.blend")
    assert result.returncode == 0, result.stderr
    (tmp_path / "out").mkdir()
    result = blender_cli("export", tmp_path / "b.blend", tmp_path / "out" / nif.name)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / tri.name).read_bytes() == tri.read_bytes()


# -- the offsets on the keys --------------------------------------------------------------------------
def facegen_keys_match_bytes(obj, path):
    raw = raw_tri.facegen(path.read_bytes())
    found = key_offsets(obj)
    count = len(obj.data.vertices)
    size = len(raw["vertices"])
    expected = {name: np.zeros((count, 3), np.float32) for name in list(raw["morphs"]) + list(raw["modifiers"])}
    for name, values in raw["morphs"].items():
        expected[name][:size] = values
    for name, targets in raw["modifiers"].items():
        for index, offset in targets.items():
            expected[name][index] = offset
    assert sorted(found) == sorted(expected)
    for name, values in expected.items():
        assert_offsets(*found[name], values, name)


@pytest.mark.parametrize("name", [n for n in WITH_NIF if "Body" not in n and "SEGMENTS" not in n])
def test_facegen_keys_hold_the_file_offsets(clean_scene, name):
    facegen_keys_match_bytes(head_object_or_none(imported(corpus_file(WITH_NIF[name]))), corpus_file(name))


def head_object_or_none(collection):
    meshes = [o for o in collection.all_objects if o.type == "MESH"]
    return next((o for o in meshes if o.data.shape_keys is not None), meshes[0])


@pytest.mark.parametrize("name", ALONE)
def test_facegen_keys_of_a_tri_alone(clean_scene, name):
    facegen_keys_match_bytes(import_alone(corpus_file(name)), corpus_file(name))


@pytest.mark.parametrize("name", ["FO4/BaseMaleBody.tri", "FO4/TEST_SEGMENTS_EMPTY.tri"])
def test_bodyslide_keys_hold_the_file_offsets(clean_scene, name):
    obj = head_object(imported(corpus_file(WITH_NIF[name])))
    raw = raw_tri.bodyslide(corpus_file(name).read_bytes())
    (shape, morphs), = raw["shapes"].items()
    assert obj.name == shape
    found = key_offsets(obj)
    assert sorted(found) == sorted(morphs)
    for morph, offsets in morphs.items():
        expected = np.zeros((len(obj.data.vertices), 3), np.float32)
        for index, offset in offsets.items():
            expected[index] = offset
        assert_offsets(*found[morph], expected, morph)


# -- edits ------------------------------------------------------------------------------------------
def moved(obj, key_name, vertex, by):
    key = obj.data.shape_keys.key_blocks[key_name]
    key.data[vertex].co = tuple(np.array(key.data[vertex].co) + np.array(by))


def reimported(nif_path):
    """The NIF imported again into a scene emptied of the first import."""
    import bpy

    for collection in list(bpy.data.collections):
        for obj in list(collection.objects):
            bpy.data.objects.remove(obj)
        bpy.data.collections.remove(collection)
    return head_object(imported(nif_path))


@pytest.mark.parametrize("name, key, vertex", [
    ("FO4/BaseMaleHead.tri", "JawOpen", 100),  # a difference morph
    ("Skyrim/eyeschild.tri", "BlinkLeft", 5),  # a modifier morph: its listed vertices change
    ("FO4/BaseMaleBody.tri", "BTBackArch", 2000),  # a BodySlide slider
])
def test_an_edited_key_comes_back(clean_scene, tmp_path, name, key, vertex):
    nif = corpus_file(WITH_NIF[name])
    copy = tmp_path / "in" / nif.name
    copy.parent.mkdir()
    shutil.copy(nif, copy)
    shutil.copy(corpus_file(name), copy.parent / corpus_file(name).name)
    obj = head_object(imported(copy))
    before = key_offsets(obj)
    moved(obj, key, vertex, (0.0, 0.25, -0.5))
    out = tmp_path / "out" / nif.name
    out.parent.mkdir()
    export_file(obj.users_collection[0], out)
    written = out.parent / corpus_file(name).name
    assert written.read_bytes() != corpus_file(name).read_bytes()
    after = key_offsets(reimported(out))
    offsets, _ = after[key]
    step = 0.5 / 32767 * 2 + 1e-6  # the edited morph is quantised anew: its largest offset grew
    expected = before[key][0].copy()
    expected[vertex] += (0.0, 0.25, -0.5)
    assert np.abs(offsets - expected).max() <= max(step, np.abs(expected).max() / 32767)
    for other, (values, _) in before.items():  # the others are written as they were read
        if other != key:
            assert np.array_equal(after[other][0], values) or np.allclose(after[other][0], values, atol=1e-5), other


def test_an_edited_tri_alone_comes_back(clean_scene, tmp_path):
    import bpy

    obj = import_alone(corpus_file("FONV/headfemale_willow.tri"))
    moved(obj, "Aah", 10, (0.1, 0.0, 0.0))
    moved(obj, "LookUp", 20, (0.0, 0.0, 0.3))  # a modifier morph listing vertex 20 now
    assert export_alone(obj, tmp_path / "edited.tri") == {"FINISHED"}
    bpy.data.objects.remove(obj)
    raw = raw_tri.facegen((tmp_path / "edited.tri").read_bytes())
    source = raw_tri.facegen(corpus_file("FONV/headfemale_willow.tri").read_bytes())
    assert np.abs(raw["morphs"]["Aah"][10] - source["morphs"]["Aah"][10] - (0.1, 0, 0)).max() < 1e-4
    assert np.allclose(raw["modifiers"]["LookUp"][20], (0, 0, 0.3), atol=1e-5)
    assert set(raw["modifiers"]["LookUp"]) == set(source["modifiers"]["LookUp"]) | {20}
    for name in source["morphs"]:
        if name != "Aah":
            assert np.array_equal(raw["morphs"][name], source["morphs"][name]), name


def test_a_renamed_and_a_deleted_key(clean_scene, tmp_path):
    obj = head_object(imported(corpus_file("Skyrim/eyeschild.nif")))
    keys = obj.data.shape_keys.key_blocks
    keys["MoodSad"].name = "MoodVerySad"
    obj.shape_key_remove(keys["DialogueFear"])
    export_file(obj.users_collection[0], tmp_path / "eyeschild.nif")
    raw = raw_tri.facegen((tmp_path / "eyeschild.tri").read_bytes())
    source = raw_tri.facegen(corpus_file("Skyrim/eyeschild.tri").read_bytes())
    assert "DialogueFear" not in raw["morphs"] and np.array_equal(raw["morphs"]["MoodVerySad"], source["morphs"]["MoodSad"])
    assert list(raw["modifiers"]) == list(source["modifiers"])  # a renamed key keeps its kind and place


# -- where new keys go --------------------------------------------------------------------------------
def test_new_keys_go_where_the_user_says(clean_scene, tmp_path):
    import bpy

    obj = head_object(imported(corpus_file("FO4/BaseMaleHead.nif")))
    bpy.context.view_layer.objects.active = obj
    obj.shape_key_add(name="Smirk", from_mix=False)
    moved(obj, "Smirk", 7, (0.0, 0.0, 0.2))
    obj.shape_key_add(name="Wide", from_mix=False)
    moved(obj, "Wide", 8, (0.3, 0.0, 0.0))
    assert bpy.ops.object.tri_morph_role(which="NEW", role="CHARGEN") == {"FINISHED"}
    obj.active_shape_key_index = len(obj.data.shape_keys.key_blocks) - 1  # Wide
    assert bpy.ops.object.tri_morph_role(which="ACTIVE", role="EXPRESSION") == {"FINISHED"}
    export_file(obj.users_collection[0], tmp_path / "BaseMaleHead.nif")
    chargen = raw_tri.facegen((tmp_path / "BaseMaleHeadChargen.tri").read_bytes())
    assert list(chargen["morphs"]) == ["Smirk"] and np.allclose(chargen["morphs"]["Smirk"][7], (0, 0, 0.2), atol=1e-5)
    nif = NifFile.read(tmp_path / "BaseMaleHead.nif")
    positions = next(b for b in nif.blocks if hasattr(b, "positions") and b.vertex_data is not None).positions
    assert np.allclose(chargen["vertices"], positions)  # a new FaceGen file: the shape as written is its base
    expression = raw_tri.facegen((tmp_path / "BaseMaleHead.tri").read_bytes())
    assert list(expression["morphs"])[-1] == "Wide" and np.allclose(expression["morphs"]["Wide"][8], (0.3, 0, 0), atol=1e-5)
    source = raw_tri.facegen(corpus_file("FO4/BaseMaleHead.tri").read_bytes())
    assert all(np.array_equal(expression["morphs"][n], v) for n, v in source["morphs"].items())


def test_new_bodyslide_keys_name_their_file(clean_scene, tmp_path):
    """A mesh with keys and no .tri, its new keys sent to BodySlide: the NIF gets a BODYTRI naming
    the .tri written beside it, whose shape is the mesh's."""
    import bpy

    from scene import cube

    obj = cube("Body")
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Belly", from_mix=False)
    moved(obj, "Belly", 3, (0.0, 0.5, 0.0))
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.tri_morph_role(which="NEW", role="BODYSLIDE")
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    assert bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "Body.nif"), use_selection=True) == {"FINISHED"}
    nif = NifFile.read(tmp_path / "Body.nif")
    values = [b.string_data for b in nif.blocks if isinstance(b, NiStringExtraData) and b.name == "BODYTRI"]
    assert values == ["Body.tri"]
    raw = raw_tri.bodyslide((tmp_path / "Body.tri").read_bytes())
    assert list(raw["shapes"]) == ["Body"] and list(raw["shapes"]["Body"]) == ["Belly"]
    shape = next(b for b in nif.blocks if getattr(b, "name", None) == "Body" and hasattr(b, "positions"))
    corner = np.array(obj.data.vertices[3].co)
    # The cube's corner is three file vertices (one per face normal), each with the offset.
    moving = {k for k, p in enumerate(shape.positions) if np.allclose(p, corner, atol=1e-3)}
    assert set(raw["shapes"]["Body"]["Belly"]) == moving and len(moving) == 3
    for offset in raw["shapes"]["Body"]["Belly"].values():
        assert np.allclose(offset, (0, 0.5, 0), atol=1e-5)


def test_chargen_told_apart_by_name(clean_scene, tmp_path):
    """A head's FaceGen file named ...Chargen.tri loads as character-creation morphs and goes back there."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(corpus_file("Skyrim/eyeschild.nif"), folder / "eyeschild.nif")
    shutil.copy(corpus_file("Skyrim/eyeschild.tri"), folder / "eyeschildCharGen.tri")
    obj = head_object(imported(folder / "eyeschild.nif"))
    assert set(obj[schema.TRI_SOURCES].keys()) == {"CHARGEN"}
    assert {r["role"] for r in obj[schema.TRI_MORPHS].values()} == {"CHARGEN"}
    export_file(obj.users_collection[0], tmp_path / "eyes.nif")
    assert (tmp_path / "eyesChargen.tri").read_bytes() == corpus_file("Skyrim/eyeschild.tri").read_bytes()
    assert not (tmp_path / "eyes.tri").exists()


# -- vertex edits -------------------------------------------------------------------------------------
def delete_vertices(obj, count):
    """The first ``count`` vertices deleted, as Edit Mode's Delete Vertices does (shape keys follow)."""
    import bmesh

    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.verts.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.verts[i] for i in range(count)], context="VERTS")
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()


def written_shape(path):
    """(positions, triangles) of the one shape a NIF export wrote."""
    nif = NifFile.read(path)
    shape = next(b for b in nif.blocks if b.type_name in ("BSTriShape", "BSSubIndexTriShape", "BSDynamicTriShape"))
    if shape.vertex_data is None:
        from precombined_nif.core.nif import skinning

        found = skinning.partition_geometry(nif, shape)
        return found.positions, found.triangles
    return shape.positions, shape.triangles


@pytest.mark.parametrize("nif_name", ["SkyrimSE/malehead.nif", "FO4/BaseMaleHead.nif"])
def test_deleted_vertices_renumber_the_tri_with_the_nif(clean_scene, tmp_path, nif_name):
    obj = head_object(imported(corpus_file(nif_name)))
    before = key_offsets(obj)
    positions = np.array([v.co for v in obj.data.vertices])[40:]
    delete_vertices(obj, 40)
    export_file(obj.users_collection[0], tmp_path / "head.nif")
    written, _ = written_shape(tmp_path / "head.nif")
    raw = raw_tri.facegen((tmp_path / "head.tri").read_bytes())
    assert len(raw["vertices"]) == len(written) and np.allclose(raw["vertices"], written, atol=1e-2)
    # Each file vertex carries the offsets of the Blender vertex it came from: one of the
    # vertices left at its position (seams put several there).
    for name, values in raw["morphs"].items():
        step = np.abs(before[name][0]).max() / 32767 + 1e-6
        for k, point in enumerate(written):
            at = np.flatnonzero(np.linalg.norm(positions - point, axis=1) < 2e-3) + 40
            assert len(at) and np.any(np.abs(before[name][0][at] - values[k]).max(axis=1) <= step), (name, k)


def test_deleted_vertices_of_modifier_morphs(clean_scene, tmp_path):
    """A FaceGen mesh of its own (eyes with modifier morphs) with vertices deleted, written as a new
    NIF: the .tri's modifier morphs list the written vertices that move, with their targets."""
    obj = import_alone(corpus_file("Skyrim/eyeschild.tri"))
    before = key_offsets(obj)
    positions = np.array([v.co for v in obj.data.vertices])[40:]
    delete_vertices(obj, 40)
    export_objects([obj], tmp_path / "eyes.nif")
    written, _ = written_shape(tmp_path / "eyes.nif")
    raw = raw_tri.facegen((tmp_path / "eyes.tri").read_bytes())
    assert np.allclose(raw["vertices"], written)
    origin = [int(np.argmin(np.linalg.norm(positions - p, axis=1))) + 40 for p in written]
    for name, targets in raw["modifiers"].items():
        expected = before[name][0][origin]
        assert set(targets) == set(np.flatnonzero(np.any(expected != 0, axis=1)).tolist()), name
        for index, offset in targets.items():
            assert np.allclose(offset, expected[index], atol=1e-5), name


def test_a_head_cut_into_shapes_is_refused_by_name(clean_scene, tmp_path):
    import bpy

    obj = head_object(imported(corpus_file("Skyrim/eyeschild.nif")))
    obj.data.materials.append(bpy.data.materials.new("Second"))
    obj.data.polygons[0].material_index = 1
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    with pytest.raises(RuntimeError, match=r"EyesChild: written as 2 shapes .* FaceGen \.tri, which morphs one shape"):
        bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "eyes.nif"), use_selection=True)
    assert not (tmp_path / "eyes.nif").exists()  # nothing half written


def test_a_tri_that_cannot_be_written_leaves_the_nif_unwritten(clean_scene, tmp_path):
    """The NIF and its .tri files are written together: a BodySlide .tri whose folder under Meshes
    is missing fails the export before the NIF is put in place."""
    import bpy

    folder = tmp_path / "in" / "Meshes" / "actors" / "character"
    folder.mkdir(parents=True)
    nif = NifFile.read(corpus_file("FO4/BTBaseMaleBody.nif"))
    (bodytri,) = [b for b in nif.blocks if isinstance(b, NiStringExtraData) and b.name == "BODYTRI"]
    bodytri.string_data = r"actors\character\BaseMaleBody.tri"
    nif.write(folder / "BTBaseMaleBody.nif")
    shutil.copy(corpus_file("FO4/BaseMaleBody.tri"), folder / "BaseMaleBody.tri")
    obj = head_object(imported(folder / "BTBaseMaleBody.nif"))
    out = tmp_path / "out" / "Meshes" / "BTBaseMaleBody.nif"
    out.parent.mkdir(parents=True)
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    with pytest.raises(RuntimeError, match=r"Meshes/actors/character/BaseMaleBody\.tri"):
        bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True)
    assert list(out.parent.iterdir()) == []  # neither the NIF nor a temporary file


def test_alone_export_of_an_edited_nif_mesh_is_refused(clean_scene, tmp_path):
    obj = head_object(imported(corpus_file("Skyrim/eyeschild.nif")))
    delete_vertices(obj, 1)
    with pytest.raises(RuntimeError, match="EyesChild: its geometry changed since its NIF was imported: export the NIF"):
        export_alone(obj, tmp_path / "eyes.tri")


# -- refusals and damage --------------------------------------------------------------------------------
def test_a_tri_too_big_for_the_mesh_is_refused(clean_scene):
    import bpy

    from scene import cube

    box = cube()
    bpy.ops.object.select_all(action="DESELECT")
    box.select_set(True)
    with pytest.raises(RuntimeError, match=r"eyeschild.tri: its 204 vertices are more than the 8 of mesh 'Box'"):
        bpy.ops.import_scene.tri_morphs(filepath=str(corpus_file("Skyrim/eyeschild.tri")))
    assert box.data.shape_keys is None
    with pytest.raises(RuntimeError, match=r"shape 'ArmorUnder', morph 'AryaydaMuscleSlider': vertex index \d+ is past the shape's 8 vertices"):
        bpy.ops.import_scene.tri_morphs(filepath=str(corpus_file("FO4/TEST_SEGMENTS_EMPTY.tri")))
    assert box.data.shape_keys is None


def test_a_damaged_companion_leaves_the_nif_import_standing(clean_scene, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(corpus_file("Skyrim/eyeschild.nif"), folder / "eyeschild.nif")
    data = bytearray(corpus_file("Skyrim/eyeschild.tri").read_bytes())
    struct.pack_into("<I", data, 36, 5000)  # difference morphs: past the data
    (folder / "eyeschild.tri").write_bytes(bytes(data))
    import bpy

    result = bpy.ops.import_scene.precombined_nif(filepath=str(folder / "eyeschild.nif"))
    assert result == {"FINISHED"}
    obj = next(o for o in bpy.data.collections["eyeschild"].all_objects if o.type == "MESH")
    assert obj.data.shape_keys is None
    result = bpy.ops.import_scene.precombined_nif(filepath=str(folder / "eyeschild.nif"), use_morphs=False)
    assert result == {"FINISHED"}


def test_the_morphs_option_is_the_nif_importers(clean_scene):
    """The NIF import's dialog offers Morphs (off: the head's .tri is left out); the precombined
    cell import's (which inherits the NIF import's options) does not."""
    import bpy

    assert "use_morphs" in bpy.ops.import_scene.precombined_nif.get_rna_type().properties.keys()
    assert "use_morphs" not in bpy.ops.import_scene.precombined_cell.get_rna_type().properties.keys()
    head = corpus_file("SkyrimSE/malehead.nif")
    assert bpy.ops.import_scene.precombined_nif(filepath=str(head), use_morphs=False) == {"FINISHED"}
    assert all(o.data.shape_keys is None for o in bpy.data.collections[head.stem].all_objects if o.type == "MESH")


# -- failures leave nothing behind -----------------------------------------------------------------
@pytest.mark.parametrize("importer", ["import_cells", "import_nif"])
def test_a_failure_after_the_morphs_leaves_nothing(clean_scene, addon, monkeypatch, importer):
    """The head's morphs load inside the file's rollback: a failure after they loaded (injected
    here, in both NIF imports) removes the head, its mesh and its shape keys."""
    import importlib

    import bpy
    from scene import snapshot

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    real = file_import.nif_morphs

    def failing(context, built):
        assert real(context, built) == []
        assert [o for o in built.objects.values() if isinstance(o, bpy.types.Object) and o.data is not None
                and o.type == "MESH" and o.data.shape_keys is not None]  # fmt: skip
        raise RuntimeError("after the morphs")

    monkeypatch.setattr(file_import, "nif_morphs", failing)
    before, keys = snapshot(), set(bpy.data.shape_keys)
    head = str(corpus_file("SkyrimSE/malehead.nif"))
    if importer == "import_cells":
        collections, messages = file_import.import_cells(bpy.context, [head])
    else:
        collections, messages = file_import.import_files(bpy.context, [head], file_import.import_nif)
    assert collections == [] and messages == [f"{head}: internal error (RuntimeError: after the morphs); please report it"]
    assert snapshot() == before and set(bpy.data.shape_keys) == keys


def test_a_failure_in_a_tri_of_its_own_leaves_nothing(clean_scene, addon, monkeypatch):
    """A FaceGen .tri fitting no mesh becomes one: a failure once it is made removes it again."""
    import importlib

    import bpy
    from scene import snapshot

    importer = importlib.import_module(f"{addon.__name__}.io.tri.importer")
    real = importer.apply_facegen

    def failing(obj, *args, **kwargs):
        real(obj, *args, **kwargs)
        assert obj.data.shape_keys is not None
        raise RuntimeError("after the keys")

    monkeypatch.setattr(importer, "apply_facegen", failing)
    before, keys = snapshot(), set(bpy.data.shape_keys)
    bpy.ops.object.select_all(action="DESELECT")
    with pytest.raises(RuntimeError, match=r"internal error \(RuntimeError: after the keys\)"):
        bpy.ops.import_scene.tri_morphs(filepath=str(corpus_file("FONV/headfemale_willow.tri")))
    assert snapshot() == before and set(bpy.data.shape_keys) == keys


def test_morphs_a_newer_version_stored_are_refused(clean_scene, tmp_path):
    """A mesh given morphs is stamped with the schema's version; one stamped by a newer version
    of the extension (its keys may mean other things) is not exported."""
    obj = import_alone(corpus_file("FONV/headfemale_willow.tri"))
    assert obj[schema.NIF_SCHEMA_VERSION] == schema.VERSION
    obj[schema.NIF_SCHEMA_VERSION] = schema.VERSION + 1
    with pytest.raises(RuntimeError, match="imported by a newer version of the extension"):
        export_alone(obj, tmp_path / "out.tri")
    assert not (tmp_path / "out.tri").exists()


# -- command line --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_import_and_export_carry_the_morphs(tmp_path):
    blend = tmp_path / "head.blend"
    run = [sys.executable, str(ROOT / "cli.py")]
    result = subprocess.run([*run, "import", corpus_file("SkyrimSE/malehead.nif"), "--blend", blend],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    result = subprocess.run([*run, "export", blend, tmp_path / "malehead.nif"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"{tmp_path / 'malehead.tri'}: morphs written" in result.stdout
    assert (tmp_path / "malehead.tri").read_bytes() == corpus_file("SkyrimSE/malehead.tri").read_bytes()
    (tmp_path / "plain").mkdir()
    result = subprocess.run([*run, "export", blend, tmp_path / "plain" / "malehead.nif", "--no-morphs"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and not (tmp_path / "plain" / "malehead.tri").exists()
    # A .tri named after a NIF goes onto its meshes; alone, a FaceGen .tri is a mesh of its own.
    result = subprocess.run([*run, "import", corpus_file("Skyrim/bad_tri.tri"), corpus_file("Skyrim/malehead.nif"),
                             corpus_file("FO4/malehead.tri"), "--blend", blend], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "3 of 3 file(s) imported" in result.stdout and "bad_tri" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_on_other_blender_versions(extension_zip, tmp_path, version):
    import extension

    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    command = [extension.python(venv), Path(__file__).with_name("smoke_tri.py"), extension_zip, tmp_path / "user", tmp_path,
               corpus_file("SkyrimSE/malehead.nif"), corpus_file("FONV/headfemale_willow.tri")]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "loaded, written back and edited" in result.stdout
