"""cli.py run the way ``blender -b --python cli.py -- ...`` runs it: bpy loaded, our arguments
after ``--``, and the exit status forced through to the shell."""

import json
from pathlib import Path

import pytest
from extension import blender_cli

pytestmark = pytest.mark.slow  # every test runs the command line in a Blender subprocess


def test_info_under_blender(tmp_path):
    sample = tmp_path / "sample.nif"
    assert blender_cli("sample", sample).returncode == 0
    result = blender_cli("info", "--json", sample)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout[result.stdout.index("{") :])["shapes"][0]["vertices"] == 24


def test_failure_status_reaches_the_shell_under_blender(tmp_path):
    missing = tmp_path / "missing.nif"
    result = blender_cli("info", missing)
    assert result.returncode == 2
    assert f"error: {missing}" in result.stderr and "Traceback" not in result.stderr


def test_nif_import_then_export_writes_the_file_back(tmp_path):
    """The headless round trip a modder scripts: import into a .blend, export it as a NIF."""
    sample = tmp_path / "sample.nif"
    assert blender_cli("sample", sample).returncode == 0
    blend, out = tmp_path / "scene.blend", tmp_path / "out.nif"
    result = blender_cli("import", sample, "--blend", blend)
    assert result.returncode == 0, result.stderr
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    assert "FO4 NIF" in result.stdout
    assert out.read_bytes() == sample.read_bytes()
    result = blender_cli("export", blend, tmp_path / "fo3.nif", "--game", "FO3")
    assert result.returncode == 0, result.stderr
    assert "FO3 NIF" in result.stdout and "not carried over" in result.stderr
    result = blender_cli("export", blend, tmp_path / "sse.nif", "--game", "SSE")
    assert result.returncode == 0, result.stderr
    assert "SSE NIF" in result.stdout
    from precombined_nif.core.nif import NifFile

    cube = NifFile.read(tmp_path / "sse.nif")
    assert (cube.header.user_version, cube.header.bs_version) == (12, 100)
    # the sample's own root node (a BSFadeNode, as Skyrim statics have it), then its cube as they hold it
    assert [b.type_name for b in cube.blocks] == ["BSFadeNode", "BSTriShape", "BSLightingShaderProperty", "BSShaderTextureSet"]
    assert len(cube.blocks[1].positions) == 24 and len(cube.blocks[1].triangles) == 12


@pytest.mark.slow
def test_new_fo76_and_skyrim_le_files_from_the_command_line(tmp_path):
    """``export --game FO76`` / ``--game SKYRIM`` write the sample's cube anew as those games'
    files (block by block: tests/blender/test_new_fo76_skyrim_le_blender.py)."""
    from nif_rewriter import RawNif

    sample, blend = tmp_path / "sample.nif", tmp_path / "scene.blend"
    assert blender_cli("sample", sample).returncode == 0
    assert blender_cli("import", sample, "--blend", blend).returncode == 0
    expected = {
        "FO76": (155, ["NiNode", "BSTriShape", "BSLightingShaderProperty", "BSShaderTextureSet"]),
        "SKYRIM": (83, ["BSFadeNode", "NiTriShape", "NiTriShapeData", "BSLightingShaderProperty", "BSShaderTextureSet"]),
    }
    for game, (bs_version, types) in expected.items():
        out = tmp_path / f"{game}.nif"
        result = blender_cli("export", blend, out, "--game", game)
        assert result.returncode == 0, result.stderr
        assert f"{game} NIF" in result.stdout and "not carried over" in result.stderr
        nif = RawNif.read(out)
        assert (nif.user_version, nif.bs_version) == (12, bs_version) and nif.block_types() == types


def test_cell_imported_from_an_archive_with_its_plugin(tmp_path, corpus):
    """``cli.py import "ARCHIVE.ba2:meshes/precombined/x_oc.nif" --plugin P`` headless: the cell's
    copies get their geometry and the references placing them."""
    from archive_writer import write_ba2_gnrl

    cell = corpus / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
    archive = tmp_path / "Fallout4 - Meshes.ba2"
    write_ba2_gnrl(archive, {"Meshes/PreCombined/00001E58_1200ADBE_OC.NIF": cell.read_bytes()})
    blend = tmp_path / "cell.blend"
    result = blender_cli("import", f"{archive}:meshes\\precombined\\00001e58_1200adbe_oc.nif", "--blend", blend,
                         "--csg", corpus / "ck-precombined/AlootHomePlate - Geometry.csg",
                         "--plugin", corpus / "ck-precombined/AlootHomePlate.esp")
    assert result.returncode == 0, result.stderr
    check_cell_import(result)
    assert "  00001E58_1200ADBE_OC: " in result.stdout  # named as the archive spells it


def test_cell_from_an_archive_finds_its_geometry_and_plugin_in_the_archives_data_folder(tmp_path, corpus):
    """The same with nothing given: the mod's archive also packs its '<Plugin> - Geometry.csg'
    (extracted once into the cache) and the plugin lies beside it."""
    import shutil

    from archive_writer import write_ba2_gnrl

    folder = corpus / "ck-precombined"
    write_ba2_gnrl(tmp_path / "AlootHomePlate - Main.ba2", {
        "Meshes/PreCombined/00001E58_1200ADBE_OC.NIF": (folder / "Meshes/PreCombined/00001E58_1200ADBE_OC.NIF").read_bytes(),
        "AlootHomePlate - Geometry.csg": (folder / "AlootHomePlate - Geometry.csg").read_bytes(),
    })
    shutil.copy(folder / "AlootHomePlate.esp", tmp_path / "AlootHomePlate.esp")
    result = blender_cli("import", f"{tmp_path / 'AlootHomePlate - Main.ba2'}:Meshes/PreCombined/00001E58_1200ADBE_OC.NIF",
                         "--blend", tmp_path / "cell.blend")
    assert result.returncode == 0, result.stderr
    check_cell_import(result)
    assert "13 precombined instances of 6 records" in result.stdout  # records of four blocks
    # Written back untouched it is the archived cell, external blocks and all.
    result = blender_cli("export", tmp_path / "cell.blend", tmp_path / "out_OC.nif")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out_OC.nif").read_bytes() == (folder / "Meshes/PreCombined/00001E58_1200ADBE_OC.NIF").read_bytes()
    # The archive gone, nothing is written rather than a new inline cell.
    (tmp_path / "AlootHomePlate - Main.ba2").unlink()
    result = blender_cli("export", tmp_path / "cell.blend", tmp_path / "gone_OC.nif")
    assert result.returncode == 2 and "cannot be read" in result.stderr and "AlootHomePlate - Main.ba2" in result.stderr
    assert not (tmp_path / "gone_OC.nif").exists()


def check_cell_import(result):
    assert "13 precombined instances" in result.stdout and "10 named after their references" in result.stdout
    assert "3 of 13 instances match no reference of AlootHomePlate.esp" in result.stderr
    assert "placeholders" not in result.stderr


def test_batch_import_keeps_the_good_files_and_names_the_bad(tmp_path, corpus):
    """One damaged file among good ones: the good are imported and saved, the bad is named on
    one line, the status is 2."""
    folder = tmp_path / "meshes"
    folder.mkdir()
    for name in ("pynifly/tests/tests/FO4/AlarmClock.nif", "bsm2/Rabbit.bsm2"):
        (folder / (corpus / name).name).write_bytes((corpus / name).read_bytes())
    (folder / "Broken.nif").write_bytes((corpus / "pynifly/tests/tests/FO4/AlarmClock.nif").read_bytes()[:400])
    blend = tmp_path / "scene.blend"
    result = blender_cli("import", folder, "--blend", blend)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Broken.nif" in errors[0] and "Traceback" not in result.stderr
    assert blend.is_file() and "2 of 3 file(s) imported" in result.stdout


def test_export_refuses_other_extensions_and_says_what_it_ignores(tmp_path):
    sample = tmp_path / "sample.nif"
    assert blender_cli("sample", sample).returncode == 0
    blend = tmp_path / "scene.blend"
    assert blender_cli("import", sample, "--blend", blend).returncode == 0
    result = blender_cli("export", blend, tmp_path / "out.obj")
    assert result.returncode == 2 and "must be a .nif, .kf, .bsm2 or .hkx" in result.stderr
    assert not (tmp_path / "out.obj").exists()
    result = blender_cli("export", blend, tmp_path / "out.nif", "--layout", "inline")
    assert result.returncode == 0, result.stderr
    assert "--layout does not apply to a NIF that is not a precombined cell: ignored" in result.stderr
    cell, cell_blend = tmp_path / "cell_OC.nif", tmp_path / "cell.blend"
    assert blender_cli("sample", cell, "--cell").returncode == 0
    assert blender_cli("import", cell, "--blend", cell_blend).returncode == 0
    result = blender_cli("export", cell_blend, tmp_path / "out_OC.nif", "--game", "FO3", "--full-precision")
    assert result.returncode == 0, result.stderr
    assert "--game does not apply to a precombined cell: ignored" in result.stderr
    assert "--full-precision does not apply to a precombined cell: ignored" in result.stderr
    assert (tmp_path / "out_OC.nif").read_bytes() == cell.read_bytes()


def test_kf_imported_over_a_skeleton_exports_from_the_command_line(tmp_path, corpus):
    """``cli.py export X.blend OUT.kf``: a New Vegas .kf (tests/kf_writer.py, for the corpus's New
    Vegas skeleton) imported with the skeleton writes back byte for byte; a .blend holding no .kf
    import is told so, nothing written."""
    from kf_writer import SKELETON, build_kf

    kf = tmp_path / "walk.kf"
    kf.write_bytes(build_kf())
    blend = tmp_path / "scene.blend"
    result = blender_cli("import", corpus / SKELETON, kf, "--blend", blend)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out.kf"
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == kf.read_bytes()
    assert "1 sequence(s)" in result.stdout
    skeleton_blend = tmp_path / "skeleton.blend"
    assert blender_cli("import", corpus / SKELETON, "--blend", skeleton_blend).returncode == 0
    result = blender_cli("export", skeleton_blend, tmp_path / "none.kf")
    assert result.returncode == 2 and "no .kf import" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "none.kf").exists()


def test_export_each_collection_as_its_own_file(tmp_path, corpus):
    """A folder imported into one .blend, then every file written back from it (untouched:
    byte-identical), in one process and in two."""
    names = ["pynifly/tests/tests/FO4/AlarmClock.nif", "pynifly/tests/tests/FONV/9mmscp.nif", "nifly/tests/input/TestNifFile_Static_FO4.nif"]
    folder = tmp_path / "meshes"
    folder.mkdir()
    for name in names:
        (folder / (corpus / name).name).write_bytes((corpus / name).read_bytes())
    blend = tmp_path / "scene.blend"
    assert blender_cli("import", folder, "--blend", blend).returncode == 0
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        result = blender_cli("export", blend, out, "--each", "--jobs", jobs)
        assert result.returncode == 0, result.stderr
        assert result.stderr.splitlines()[-1].startswith("3 file(s), 0 failed")
        for name in names:
            source = corpus / name
            assert (out / source.name).read_bytes() == source.read_bytes()


def test_cell_imported_with_geometry_nodes_instancing_writes_back_the_same_file(tmp_path):
    """--instancing geometry-nodes: a point cloud per record instead of an object per copy, and
    the cell still exports byte for byte."""
    cell = tmp_path / "sample_OC.nif"
    assert blender_cli("sample", "--cell", cell).returncode == 0
    blend, out = tmp_path / "scene.blend", tmp_path / "out_OC.nif"
    result = blender_cli("import", cell, "--blend", blend, "--instancing", "geometry-nodes")
    assert result.returncode == 0, result.stderr
    # the objects import makes 13 objects for 12 copies; here a source and a point cloud per record
    assert ": 7 objects, 6 meshes, 12 precombined instances of 3 records" in result.stdout
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == cell.read_bytes()


def test_import_of_a_plugin_given_as_a_nif_says_what_it_is(tmp_path, corpus):
    plugin = corpus / "ck-precombined/AlootHomePlate.esp"
    result = blender_cli("import", plugin, "--blend", tmp_path / "x.blend")
    assert result.returncode == 2 and f"{plugin}: not a NIF: this is a plugin" in result.stderr
    assert not (tmp_path / "x.blend").exists()


def test_jobs_under_blender_start_their_workers_and_end_them(tmp_path, corpus):
    """Under Blender the workers are spawned (a fresh interpreter, not a fork): they must find
    the package, and none may outlive the command (Blender leaves through os._exit; a worker
    left running holds the output open, and this run would never end)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("FO4/AlarmClock.nif", "FONV/9mmscp.nif", "FO4/BTMaleBody.nif"):
        (folder / name.split("/")[1]).write_bytes((corpus / "pynifly/tests/tests" / name).read_bytes())
    result = blender_cli("info", folder, "--json", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    files = [json.loads(line)["file"] for line in result.stdout.splitlines() if line.startswith("{")]
    assert sorted(Path(file).name for file in files) == ["9mmscp.nif", "AlarmClock.nif", "BTMaleBody.nif"]
    assert result.stderr.splitlines()[-1].startswith("3 file(s), 0 failed")
