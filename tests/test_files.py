"""Writing outputs: never through something planted beside the target, never a damaged target
on failure, errors naming the file the user gave, permissions kept."""

import errno
import os
import stat

import pytest

import cli
from precombined_nif.core import files


def test_a_planted_tmp_symlink_is_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    target = tmp_path / "out.nif"
    (tmp_path / "out.nif.tmp").symlink_to(victim)
    (tmp_path / "out.tmp").symlink_to(victim)
    files.write_replacing(target, b"new data")
    assert target.read_bytes() == b"new data" and victim.read_bytes() == b"keep me"
    assert not target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.nif", "out.nif.tmp", "out.tmp", "victim.txt"]


def test_permissions_of_the_target_are_kept(tmp_path):
    target = tmp_path / "out.nif"
    target.write_bytes(b"old")
    target.chmod(0o640)
    files.write_replacing(target, b"new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_bytes() == b"new"


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        files.write_replacing(tmp_path / "new.nif", b"data")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.nif").stat().st_mode) == 0o644


def full_disk(*args):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_leaves_the_target_and_names_it(tmp_path, monkeypatch):
    target = tmp_path / "out.nif"
    target.write_bytes(b"old contents")
    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(OSError) as caught:
        files.write_replacing(target, b"new contents")
    assert caught.value.filename == str(target) and caught.value.errno == errno.ENOSPC
    assert target.read_bytes() == b"old contents" and [p.name for p in tmp_path.iterdir()] == ["out.nif"]


def test_cli_reports_a_full_disk_against_the_output(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.nif"
    monkeypatch.setattr(files.os, "fsync", full_disk)
    assert cli.main(["sample", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {out}: No space left on device"
    assert not out.exists() and not list(tmp_path.iterdir())
