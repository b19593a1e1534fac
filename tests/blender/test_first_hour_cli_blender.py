"""cli.py import with a Data folder given on the command line (issue 44): ``--data DIR`` and
``--plugins``, and one line for the files not found instead of a warning each."""

import re

import pytest
from extension import blender_cli

pytestmark = pytest.mark.slow  # every test runs the command line in a Blender subprocess

CELL = "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
SUMMARY = re.compile(r"^warning: (\d+) (textures?|material files?) not found (.*) \(first: (.+)\)$")


def summaries(stderr):
    found = {}
    for line in stderr.splitlines():
        match = SUMMARY.match(line)
        if match:
            found[match.group(2).rstrip("s")] = (int(match.group(1)), match.group(3), match.group(4))
    return found


def cell_material_files(cell):
    """The material files (as the Data folder holds them: from ``materials\\``) the cell's shaders name."""
    from precombined_nif.core.nif import NifFile

    names = [block.name for block in NifFile.read(cell).blocks
             if block.type_name in ("BSLightingShaderProperty", "BSEffectShaderProperty") and block.name]
    return sorted({"materials" + name.lower().split("\\materials", 1)[1] for name in names if name.lower().endswith(".bgsm")})


def test_files_not_found_are_one_line_each_kind_and_data_finds_them(tmp_path, corpus):
    """Without --data: no warning per file, one line per kind, counting the cell's material
    files (from its shaders, read here); with --data holding one of them, one fewer."""
    cell = corpus / CELL
    materials = cell_material_files(cell)
    result = blender_cli("import", cell, "--blend", tmp_path / "a.blend")
    assert result.returncode == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if "not found in any Data folder" in line]
    alone = summaries(result.stderr)
    assert set(alone) == {"texture", "material file"}
    assert all(where == "(no Data folder given: --data DIR)" for _, where, _ in alone.values())
    assert alone["material file"][0] == len(materials)
    data = tmp_path / "Data"
    held = data / materials[0].replace("\\", "/")
    held.parent.mkdir(parents=True)
    held.write_bytes(next(corpus.rglob("*.bgsm")).read_bytes())
    result = blender_cli("import", cell, "--data", data, "--blend", tmp_path / "b.blend")
    assert result.returncode == 0, result.stderr
    given = summaries(result.stderr)
    assert given["material file"][:2] == (len(materials) - 1, f"in {data}")


def test_plugins_needs_data_and_data_must_be_a_folder(tmp_path, corpus):
    result = blender_cli("import", corpus / CELL, "--plugins", tmp_path / "plugins.txt", "--blend", tmp_path / "a.blend")
    assert result.returncode == 2 and "--plugins needs --data" in result.stderr
    result = blender_cli("import", corpus / CELL, "--data", tmp_path / "nothere", "--blend", tmp_path / "a.blend")
    assert result.returncode == 2 and "not a folder" in result.stderr
    assert not (tmp_path / "a.blend").exists()


def test_hints_of_import_and_export(tmp_path, corpus):
    """--csg given for a NIF that is no cell is said to be unused; one mesh is "1 mesh";
    --each names what is wrong (an output file, --object given) and keeps a cell's .NIF."""
    cube = tmp_path / "cube.nif"
    assert blender_cli("sample", cube).returncode == 0
    result = blender_cli("import", cube, "--csg", corpus / "ck-precombined/AlootHomePlate - Geometry.csg",
                         "--blend", tmp_path / "cube.blend")
    assert result.returncode == 0, result.stderr
    assert "warning: --csg" in result.stderr and "applies to precombined cells" in result.stderr
    assert "cube: 2 objects, 1 mesh\n" in result.stdout
    result = blender_cli("export", tmp_path / "cube.blend", tmp_path / "out", "--each", "--object", "Cube")
    assert result.returncode == 2 and "--object does not apply" in result.stderr
    result = blender_cli("export", tmp_path / "cube.blend", tmp_path / "out.nif", "--each")
    assert result.returncode == 2 and "not a file" in result.stderr and "--object" not in result.stderr
    cell = corpus / CELL
    assert blender_cli("import", cell, "--blend", tmp_path / "cell.blend").returncode == 0
    result = blender_cli("export", tmp_path / "cell.blend", tmp_path / "each", "--each")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "each").iterdir() if p.suffix.lower() == ".nif") == [cell.name]


def test_a_second_patch_names_update_patch(tmp_path, corpus):
    cell = corpus / CELL
    assert blender_cli("import", cell, "--blend", tmp_path / "cell.blend").returncode == 0
    patch = tmp_path / "Patch.esp"
    patch.write_bytes((corpus / "ck-precombined/AlootHomePlate.esp").read_bytes())  # a patch written before
    result = blender_cli("export", tmp_path / "cell.blend", tmp_path / cell.name, "--patch", patch)
    assert result.returncode == 2 and "--update-patch" in result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_warns_once_of_what_every_cell_shares(tmp_path, corpus, jobs):
    """Two cells of one plugin exported --each: the .cdx's warning (the cell's other meshes not at
    hand) is printed once, not once a cell."""
    cells = [corpus / CELL, corpus / "ck-precombined/Meshes/PreCombined/00001E58_15ACA888_OC.NIF"]
    result = blender_cli("import", *cells, "--csg", corpus / "ck-precombined/AlootHomePlate - Geometry.csg",
                         "--blend", tmp_path / "two.blend")
    assert result.returncode == 0, result.stderr
    result = blender_cli("export", tmp_path / "two.blend", tmp_path / "each", "--each", "--jobs", jobs)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings and len(warnings) == len(set(warnings)) and any(".cdx" in line for line in warnings)
