"""tasks.py as a new developer uses it (issue 44): ``build`` packs only the add-on's own files,
``test FILE`` runs that file, and the fast set needs the main environment alone. Nothing here
sets up or rebuilds an environment: the plans are checked, and the build runs (slow) with the
main environment as it is."""

import subprocess
import sys
import zipfile

import pytest
from support import ROOT

sys.path.insert(0, str(ROOT))
import tasks  # noqa: E402


def git(folder, *args):
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


# -- 18: tasks.py test FILE, and the fast set -------------------------------------------------------
@pytest.mark.parametrize("args, environments, pytest_args", [
    (["tests/test_cli.py"], [".venv"], ["tests/test_cli.py"]),
    (["tests/test_cli.py::test_info_text", "-q"], [".venv"], ["tests/test_cli.py::test_info_text", "-q"]),
    (["-m", "not slow"], [".venv"], ["tests", "-m", "not slow"]),
    (["-m", "not slow", "tests/blender/test_tri_blender.py"], [".venv"], ["-m", "not slow", "tests/blender/test_tri_blender.py"]),
    (["-k", "tests/test_cli.py"], list(tasks.ENVIRONMENTS), ["tests", "-k", "tests/test_cli.py"]),  # a -k value, no file
    (["tests/blender/test_tri_blender.py"], list(tasks.ENVIRONMENTS), ["tests/blender/test_tri_blender.py"]),
    ([], list(tasks.ENVIRONMENTS), ["tests"]),
    (["-m", "slow"], list(tasks.ENVIRONMENTS), ["tests", "-m", "slow"]),
])
def test_test_runs_the_files_named_with_the_environments_they_need(args, environments, pytest_args):
    assert tasks.test_plan(args) == (environments, pytest_args)


# -- 16: tasks.py build packs what git tracks -------------------------------------------------------
def test_source_files_are_what_git_tracks(tmp_path):
    """Files the docs' commands leave in the repository (a .blend, a Data folder), tracked or
    not, ignored or not: only the tracked ones are the add-on's."""
    git(tmp_path, "init", "-q")
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "a.py").write_text("")
    git(tmp_path, "add", "__init__.py", "core/a.py")
    (tmp_path / "cell.blend").write_bytes(b"BLENDER")
    (tmp_path / "Data" / "Meshes").mkdir(parents=True)
    (tmp_path / "Data" / "Meshes" / "x.nif").write_bytes(b"x")
    (tmp_path / "core" / "new.py").write_text("")  # not added yet: not the add-on's
    assert sorted(tasks.source_files(tmp_path)) == ["__init__.py", "core/a.py"]
    copy = tasks.source_copy(tmp_path / "out", tmp_path)
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()) == ["__init__.py", "core/a.py"]


def test_outside_git_the_folder_is_its_own_source(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    assert tasks.source_files(tmp_path) is None or tasks.source_files(tmp_path) == []
    if tasks.source_files(tmp_path) is None:
        assert tasks.source_copy(tmp_path / "out", tmp_path) == tmp_path


@pytest.mark.slow  # Blender's extension builder, from the main environment's bpy
def test_build_packs_the_tracked_files_less_the_excluded(tmp_path):
    stray = ROOT / "first_hour_stray.blend"  # as a documented command would leave one
    stray.write_bytes(b"BLENDER" * 1000)
    try:
        result = subprocess.run([sys.executable, str(ROOT / "tasks.py"), "build", str(tmp_path)], cwd=ROOT,
                                capture_output=True, text=True, timeout=600)
    finally:
        stray.unlink()
    assert result.returncode == 0, result.stderr
    (zip_path,) = tmp_path.glob("*.zip")
    packed = set(zipfile.ZipFile(zip_path).namelist())
    tracked = set(tasks.source_files())
    assert "first_hour_stray.blend" not in packed
    assert packed <= tracked and "__init__.py" in packed and "blender_manifest.toml" in packed
    assert not [name for name in packed if name.startswith(("tests/", "docs/", "tools/", "benchmarks/"))]
    excluded = {name for name in tracked if name.startswith(("tests/", "docs/", "tools/", "benchmarks/", ".ci/"))
                or name in ("tasks.py", "README.md", ".gitignore") or name.endswith(".zip")}
    assert packed == tracked - excluded
