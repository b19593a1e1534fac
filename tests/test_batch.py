"""Many files at once through cli.py: folders, --jobs worker processes, one line per failure,
status 2 when any file failed, a summary, JSON lines."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

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
    good = [line for line in lines if "error" not in line]
    assert sorted(line["file"].rsplit("/", 1)[1] for line in good) == sorted(p.name for p in folder.rglob("*_*"))
    assert all(line["format"] in ("nif", "bsm2") and line["blocks" if line["format"] == "nif" else "vertices"] for line in good)
    (bad,) = [line for line in lines if "error" in line]  # a failure is an object too, naming what is wrong
    assert bad["file"].endswith("Broken.nif") and "Broken.nif" in bad["error"] and set(bad) == {"file", "error"}
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Broken.nif" in errors[0]
    assert result.stderr.splitlines()[-1].startswith("4 file(s), 1 failed, ")


def packed_meshes(corpus, tmp_path):
    """A BA2 holding two corpus NIFs, a truncated one and a text file, written by the tests'
    own archive writer; returns (archive, {inner path: bytes} of the NIFs)."""
    from archive_writer import write_ba2_gnrl

    nifs = {
        "meshes/clutter/AlarmClock.nif": (corpus / GOOD[0]).read_bytes(),
        "Meshes/Weapons/9mmscp.nif": (corpus / GOOD[1]).read_bytes(),
        "meshes/broken.nif": (corpus / GOOD[0]).read_bytes()[:300],
    }
    archive = tmp_path / "Test - Meshes.ba2"
    write_ba2_gnrl(archive, {**nifs, "meshes/readme.txt": b"not a mesh"})
    return archive, nifs


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_archive_is_a_batch_of_its_nifs(corpus, tmp_path, jobs):
    archive, nifs = packed_meshes(corpus, tmp_path)
    result = run("info", archive, "--json", "--jobs", jobs)
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["file"] for line in lines] == [f"{archive}:{name}" for name in nifs]
    assert [line["game"] for line in lines[:2]] == ["FO4", "FO3"] and "error" in lines[2]
    assert f"{archive}:meshes/broken.nif" in result.stderr

    out = tmp_path / "out"
    result = run("roundtrip", archive, out, "--json", "--jobs", jobs)
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line.get("identical") for line in lines] == [True, True, None]
    for name, data in list(nifs.items())[:2]:
        assert (out / name).read_bytes() == data
    assert not (out / "meshes/broken.nif").exists()


def test_a_folder_holding_archives_covers_them_and_names_a_damaged_one(corpus, tmp_path):
    """A Data folder: its loose meshes, its archives' meshes; an archive that cannot be read is
    one failure and the rest go on."""
    data = tmp_path / "Data"
    (data / "meshes").mkdir(parents=True)
    (data / "meshes" / "loose.nif").write_bytes((corpus / GOOD[0]).read_bytes())
    archive, nifs = packed_meshes(corpus, data)
    damaged = data / "Damaged - Meshes.ba2"
    damaged.write_bytes(archive.read_bytes()[:40])
    result = run("info", data, "--json")
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    files = [line["file"] for line in lines]
    assert files == [f"{damaged}:", *(f"{archive}:{name}" for name in nifs), str(data / "meshes" / "loose.nif")]
    assert str(damaged) in lines[0]["error"] and "do not fit in the file" in lines[0]["error"]
    assert [("error" in line) for line in lines] == [True, False, False, True, False]


def test_convert_of_a_folder_converts_the_good_files_and_names_the_bad(folder, tmp_path):
    out = tmp_path / "pc"
    result = run("convert", folder, out, "--json")
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    errors = {Path(line["file"]).name: line["error"] for line in lines if "error" in line}
    assert set(errors) == {"Broken.nif", "2_Rabbit.bsm2"}  # a .bsm2 has no byte order to convert
    assert "not a NIF" in errors["2_Rabbit.bsm2"]
    for source in folder.rglob("*.nif"):
        if source.name != "Broken.nif":
            assert (out / source.relative_to(folder)).read_bytes() == source.read_bytes()
    assert [line["from"] for line in lines if "error" not in line] == ["pc", "pc"]


def die(path, as_json):
    os._exit(3)  # a worker killed (out of memory, a signal) in the middle of a file


def test_a_lost_worker_ends_the_batch_with_a_message_not_a_hang():
    from precombined_nif.commands import batch

    with pytest.raises(batch.WorkerLost, match=r"a worker process stopped .*: 4 file\(s\) not processed"):
        list(batch.run(die, [(f"{n}.nif", ()) for n in range(4)], jobs=2))


def test_output_piped_into_a_command_that_stops_reading_is_no_error(folder):
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'cli.py'))} info {shlex.quote(str(folder))} | head -c 10"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert "Broken pipe" not in result.stderr and "Traceback" not in result.stderr


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
    assert result.returncode == 2 and f"error: {tmp_path}: holds no .nif, .kf, .bsm2, .mesh or .tri file" in result.stderr


def test_jobs_must_be_positive(corpus):
    result = run("info", corpus / GOOD[0], "--jobs", "0")
    assert result.returncode == 2 and "above 0" in result.stderr


def test_version():
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("cli.py (Precombined NIF) ")
