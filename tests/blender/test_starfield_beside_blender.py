"""A Starfield NIF's .mesh beside it (nifly's TestNifFile_SF.nif names ``TestNifFile_SF``, its
``TestNifFile_SF.mesh`` lies beside it) is found with no Data folder known, whatever the case
of its name on disk; the export writes it back beside the written NIF: untouched, the NIF and
the .mesh byte for byte (no ``geometries`` folder made), edited, a new .mesh named by its
bytes beside the NIF, keeping the stored vertex count, which a second import finds again.
Positions are checked against the .mesh bytes decoded by tests/raw_starfield.py."""

import importlib
import shutil

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_starfield import beside_file, geometry_slots, read_mesh

NIFLY = "nifly/tests/input/TestNifFile_SF.nif"
MOVE = (0.0, 0.01, 0.03)


def module(addon, name):
    return importlib.import_module(f"{addon.__name__}.{name}")


def corpus_copy(corpus, folder, mesh_name="TestNifFile_SF.mesh"):
    """The NIF and its .mesh copied from the corpus folder into ``folder`` (the .mesh named
    ``mesh_name``): (NIF path, .mesh path)."""
    folder.mkdir(parents=True)
    nif = folder / "TestNifFile_SF.nif"
    shutil.copyfile(corpus / NIFLY, nif)
    mesh = folder / mesh_name
    shutil.copyfile((corpus / NIFLY).with_suffix(".mesh"), mesh)
    return nif, mesh


def mesh_name(path):
    raw = RawNif.read(path)
    return geometry_slots(raw, raw.indices_of("BSGeometry")[0])[0][3]


def imported(addon, path):
    """(collection, shape object, warnings) of an import with no Data folder set."""
    import bpy

    assert bpy.context.preferences.addons[addon.__name__].preferences.sf_data == ""
    collection, warnings = module(addon, "io.file_import").import_nif(bpy.context, str(path))
    bpy.context.view_layer.update()
    (obj,) = [o for o in collection.objects if o.get("nif_type") == "BSGeometry"]
    return collection, obj, warnings


def export(addon, collection, path):
    objects = module(addon, "io.collection_objects").objects_in(collection)
    return module(addon, "io.nif.exporter").export_nif(str(path), objects)


def coordinates(obj):
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("on_disk", ["TestNifFile_SF.mesh", "testniffile_sf.MESH"])
def test_a_mesh_beside_its_nif_imports_and_goes_back_byte_for_byte(clean_scene, addon, corpus, tmp_path, on_disk):
    nif, mesh = corpus_copy(corpus, tmp_path / "input", on_disk)
    assert mesh_name(nif) == "TestNifFile_SF"
    stored = read_mesh(mesh.read_bytes())
    collection, obj, warnings = imported(addon, nif)
    assert not [w for w in warnings if ".mesh" in w], warnings
    assert len(obj.data.vertices) == len(stored["positions"]) == 6616
    np.testing.assert_allclose(coordinates(obj), stored["positions"], atol=1e-6)
    assert obj["sf_mesh_file"] == str(mesh.resolve())
    out = tmp_path / "out" / "TestNifFile_SF.nif"
    out.parent.mkdir()
    for _ in range(2):  # a second export into the same output
        export(addon, collection, out)
        assert out.read_bytes() == (corpus / NIFLY).read_bytes()
        assert beside_file(out, "TestNifFile_SF").read_bytes() == (corpus / NIFLY).with_suffix(".mesh").read_bytes()
        assert files_under(out.parent) == ["TestNifFile_SF.mesh", "TestNifFile_SF.nif"]


def test_an_edited_mesh_beside_its_nif_is_written_beside_and_keeps_its_vertices(clean_scene, addon, corpus, tmp_path):
    from mathutils import Vector

    nif, mesh = corpus_copy(corpus, tmp_path / "input")
    stored = read_mesh(mesh.read_bytes())
    collection, obj, _ = imported(addon, nif)
    obj.data.vertices[100].co += obj.matrix_world.inverted().to_3x3() @ Vector(MOVE)
    out = tmp_path / "out" / "edited.nif"
    out.parent.mkdir()
    export(addon, collection, out)
    name = mesh_name(out)
    assert name != "TestNifFile_SF" and len(name.split("\\")) == 2  # named by its bytes
    written = read_mesh(beside_file(out, name).read_bytes())
    assert files_under(out.parent) == sorted(["edited.nif", name.replace("\\", "/") + ".mesh"])
    assert len(written["positions"]) == len(stored["positions"]) == 6616
    moved = np.array(obj.matrix_world)[:3, :3] @ (np.array(written["positions"][100]) - stored["positions"][100])
    assert np.abs(moved - MOVE).max() <= 4 * written["scale"] / 32767
    others = np.r_[0:100, 101:len(stored["positions"])]
    np.testing.assert_array_equal(np.array(written["raw_positions"])[others], np.array(stored["raw_positions"])[others])
    # the written NIF, imported alone, finds its new .mesh beside it
    _, again, warnings = imported(addon, out)
    assert not [w for w in warnings if ".mesh" in w], warnings
    np.testing.assert_allclose(coordinates(again), written["positions"], atol=1e-6)


@pytest.mark.slow
def test_command_line_import_finds_the_mesh_beside(corpus, tmp_path):
    """blender -b --python cli.py -- import of the copy with no Data folder: the mesh and its two
    mesh LODs are imported; export writes NIF and .mesh back byte for byte."""
    from extension import blender_cli

    nif, _ = corpus_copy(corpus, tmp_path / "input")
    blend = tmp_path / "x.blend"
    result = blender_cli("import", nif, "--blend", blend)
    assert result.returncode == 0, result.stderr
    assert "TestNifFile_SF: 4 objects, 3 meshes, 38 bones" in result.stdout and ".mesh" not in result.stderr
    out = tmp_path / "out" / "TestNifFile_SF.nif"
    out.parent.mkdir()
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == (corpus / NIFLY).read_bytes()
    assert beside_file(out, "TestNifFile_SF").read_bytes() == (corpus / NIFLY).with_suffix(".mesh").read_bytes()
