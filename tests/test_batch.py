"""Many files at once through cli.py: folders, --jobs worker processes, one line per failure,
status 2 when any file failed, a summary, JSON lines."""

import json
import shutil
import subprocess
import sys

import pytest
from support import ROOT

GOOD = ["pynifly/tests/tests/FO4/AlarmClock.nif", "pynifly/tests/tests/FONV/9mmscp.nif", "bsm2/Rabbit.bsm2"]


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture
def folder(corpus, tmp_path):
    """Good corpus files in nested folders, and one truncated file among them."""
    root = tmp_path / "in"
    for number, name in enumerate(GOOD):
        target = root / f"part{number % 2}" / f"{number}_{(corpus / name).name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / name, target)
    bad = root / "part1" / "Broken.nif"
    bad.write_bytes((corpus / GOOD[0]).read_bytes()[:300])
    (root / "notes.txt").write_text("not a mesh")
    return root


@pytest.mark.parametrize("jobs", [1, 2])
def test_info_of_a_folder_reports_every_file_and_the_bad_one(folder, jobs):
    result = run("info", folder, "--json", "--jobs", jobs)
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(line["file"].rsplit("/", 1)[1] for line in lines) == sorted(p.name for p in folder.rglob("*_*"))
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Broken.nif" in errors[0]
    assert result.stderr.splitlines()[-1].startswith("4 file(s), 1 failed, ")


def test_roundtrip_of_a_folder_mirrors_it(folder, tmp_path):
    out = tmp_path / "out"
    result = run("roundtrip", folder, out, "--jobs", 2)
    assert result.returncode == 2 and "Broken.nif" in result.stderr
    for source in folder.rglob("*_*"):
        assert (out / source.relative_to(folder)).read_bytes() == source.read_bytes()
    assert not (out / "part1" / "Broken.nif").exists()


def test_convert_of_a_pc_file_says_so(corpus, tmp_path):
    result = run("convert", corpus / GOOD[0], tmp_path / "out.nif")
    assert result.returncode == 0 and "already a PC (little-endian) file" in result.stdout


def test_a_folder_without_meshes_is_a_usage_error(tmp_path):
    (tmp_path / "readme.txt").write_text("x")
    result = run("info", tmp_path)
    assert result.returncode == 2 and "no .nif or .bsm2 files" in result.stderr


def test_jobs_must_be_positive(corpus):
    result = run("info", corpus / GOOD[0], "--jobs", "0")
    assert result.returncode == 2 and "above 0" in result.stderr


def test_version():
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("cli.py (Precombined NIF) ")
