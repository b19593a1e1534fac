"""The Data folder on the command line (issue 44): the commands that look files up take it, each
refusing one that is not a folder on one line, before any work; those looking nothing up do not
take it."""

import subprocess
import sys

import pytest
from support import ROOT


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def one_error(result):
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("command", [
    ("precombines", "{missing}"),
    ("precombines", "{file}"),
    ("import-cell", "{missing}", "--cell", "1E58", "--blend", "{out}/a.blend"),
    ("info", "{file}", "--data", "{missing}"),
])
def test_a_data_folder_that_is_not_one_is_refused(tmp_path, command):
    text = tmp_path / "notes.txt"
    text.write_text("not a folder")
    names = {"missing": tmp_path / "nothere", "file": text, "out": tmp_path}
    line = one_error(run(*(part.format(**names) for part in command)))
    assert "not a folder" in line and str(names["missing"] if "{missing}" in command else text) in line
    assert not (tmp_path / "a.blend").exists()


def test_commands_take_the_data_folder_where_they_look_files_up():
    for command in ("info", "import", "export"):
        assert "--data DIR" in run(command, "--help").stdout, command
    for command in ("import", "precombines", "import-cell"):
        assert "--plugins" in run(command, "--help").stdout, command
    for command in ("roundtrip", "convert", "sample", "ls", "extract", "export-cell"):
        assert "--data" not in run(command, "--help").stdout, command


def test_info_data_loads_no_blender_code(tmp_path, corpus):
    """info --data finds a cell's plugin with Python and numpy alone (bpy made unimportable)."""
    code = "import sys, runpy; sys.modules['bpy'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    cell = corpus / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "cli.py"), "info", str(cell), "--data",
                             str(corpus / "ck-precombined")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "AlootHomePlate.esp" in result.stdout
