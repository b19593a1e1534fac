"""Looking files up in Data folders: loose files first, then archives in load order."""

import os
from pathlib import Path

import pytest
from archive_writer import write_ba2_gnrl, write_bsa

from precombined_nif.core.archives.data import DataFiles, load_order_key, read_path, split_archive_path
from precombined_nif.core.errors import FormatError


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "Data"
    (folder / "Materials" / "Set").mkdir(parents=True)
    (folder / "Materials" / "Set" / "Loose.BGSM").write_bytes(b"loose")
    write_ba2_gnrl(folder / "Fallout4 - Materials.ba2", {
        "Materials/Set/Loose.bgsm": b"base archive, hidden by the loose file",
        "Materials/Set/Both.bgsm": b"base",
        "Materials/Set/Base.bgsm": b"base only",
    })
    write_ba2_gnrl(folder / "AMod - Main.ba2", {"materials/set/both.bgsm": b"mod"})
    write_bsa(folder / "Textures.bsa", {"textures/set/t_d.dds": b"texture"}, version=105)
    (folder / "Broken.ba2").write_bytes(b"BTDX")
    return folder


def test_a_plugins_archive_overrides_the_base_games(data, tmp_path):
    """An .esm plugin's archive named before "Fallout4" alphabetically still loads after it."""
    write_ba2_gnrl(data / "AAMaster - Main.ba2", {"materials/set/base.bgsm": b"AAMaster's"})
    (data / "AAMaster.esm").write_bytes(b"")
    assert DataFiles([data], cache_folder=tmp_path / "cache").read("set/base.bgsm", "materials")[0] == b"AAMaster's"


def test_loose_files_win_then_later_archives(data, tmp_path):
    files = DataFiles([data], cache_folder=tmp_path / "cache")
    assert files.read(r"materials\SET\loose.bgsm", "materials") == (b"loose", str(data / "Materials/Set/Loose.BGSM"))
    assert files.read("Set/Both.BGSM", "materials")[0] == b"mod"
    body, name = files.read("MATERIALS/set/base.bgsm", "materials")
    assert body == b"base only" and name == f"{data / 'Fallout4 - Materials.ba2'}:Materials/Set/Base.bgsm"
    assert files.read("set/nothing.bgsm", "materials") is None
    assert files.read(r"Data\Textures\SET\T_D.dds", "textures")[0] == b"texture"
    assert len(files.problems) == 1 and "Broken.ba2" in files.problems[0]


def test_archive_files_are_extracted_to_the_cache_once(data, tmp_path):
    files = DataFiles([data], cache_folder=tmp_path / "cache")
    target = files.file("set/t_d.dds", "textures")
    folder, *inner = target.relative_to(tmp_path / "cache").parts
    assert folder.startswith("Textures.bsa ") and inner == ["textures", "set", "t_d.dds"]
    assert target.read_bytes() == b"texture"
    extracted = target.stat().st_ino  # a new extraction would be a new file put in its place
    assert files.file("SET/T_D.DDS", "textures") == target and target.stat().st_ino == extracted
    assert DataFiles([data], cache_folder=tmp_path / "cache").file("set/t_d.dds", "textures") == target
    assert target.stat().st_ino == extracted
    assert files.file("materials/set/loose.bgsm", "materials") == data / "Materials/Set/Loose.BGSM"


def test_same_named_archives_of_two_data_folders_keep_apart_in_the_cache(data, tmp_path):
    other = tmp_path / "Other install" / "Data"
    other.mkdir(parents=True)
    write_bsa(other / "Textures.bsa", {"textures/set/t_d.dds": b"TEXTURE"}, version=105)
    stamp = (data / "Textures.bsa").stat().st_mtime_ns
    os.utime(other / "Textures.bsa", ns=(stamp, stamp))  # same name, size and time
    first = DataFiles([data], cache_folder=tmp_path / "cache").file("set/t_d.dds", "textures")
    second = DataFiles([other], cache_folder=tmp_path / "cache").file("set/t_d.dds", "textures")
    assert first != second and first.read_bytes() == b"texture" and second.read_bytes() == b"TEXTURE"


def test_an_archive_updated_in_place_is_extracted_again(data, tmp_path):
    """A mod's new version replaces its archive: same name, a texture of the same size."""
    first = DataFiles([data], cache_folder=tmp_path / "cache").file("set/t_d.dds", "textures")
    write_bsa(data / "Textures.bsa", {"textures/set/t_d.dds": b"TEXTURE"}, version=105)
    os.utime(data / "Textures.bsa", ns=(1, 1))  # even dated before the first: a change is a change
    again = DataFiles([data], cache_folder=tmp_path / "cache").file("set/t_d.dds", "textures")
    assert again == first and again.read_bytes() == b"TEXTURE"


def test_load_order_and_archive_paths(data):
    names = ["AMod - Main.ba2", "Fallout4 - Textures1.ba2", "DLCRobot - Main.ba2", "Fallout4 - Meshes.ba2",
             "ZMaster - Main.ba2", "Loose.ba2", "DLCCoast - Main.ba2", "ALight - Main.ba2"]
    plugins = {"amod": ".esp", "zmaster": ".esm", "alight": ".esl"}
    assert sorted(names, key=lambda n: load_order_key(n, plugins)) == [
        "Fallout4 - Meshes.ba2", "Fallout4 - Textures1.ba2", "DLCRobot - Main.ba2", "DLCCoast - Main.ba2",
        "ZMaster - Main.ba2", "ALight - Main.ba2", "AMod - Main.ba2", "Loose.ba2"]
    assert sorted(["Fallout - Meshes.bsa", "DeadMoney - Main.bsa", "Fallout - Textures.bsa"], key=load_order_key) == [
        "Fallout - Meshes.bsa", "Fallout - Textures.bsa", "DeadMoney - Main.bsa"]
    assert split_archive_path(r"C:\Data\Fallout4 - Meshes.BA2:meshes/x.nif") == (r"C:\Data\Fallout4 - Meshes.BA2", "meshes/x.nif")
    assert split_archive_path("plain/file.nif") is None
    inside = split_archive_path("/games/Fallout 4/Data/Fallout4 - Meshes.ba2:Meshes\\SetDressing\\AlarmClock.NIF")
    assert (inside.archive, inside.inner) == ("/games/Fallout 4/Data/Fallout4 - Meshes.ba2", "Meshes\\SetDressing\\AlarmClock.NIF")
    assert inside.data_folder == Path("/games/Fallout 4/Data") and inside.stem == "AlarmClock"  # the archive's folder
    assert read_path(f"{data / 'AMod - Main.ba2'}:Materials\\Set\\BOTH.bgsm") == b"mod"
    with pytest.raises(FormatError, match="holds no file"):
        read_path(f"{data / 'AMod - Main.ba2'}:nothing.nif")


def test_archive_tables_are_read_once_and_again_when_the_file_changes(data, tmp_path):
    first = DataFiles([data], cache_folder=tmp_path / "cache")
    assert first.read("set/both.bgsm", "materials")[0] == b"mod"
    second = DataFiles([data], cache_folder=tmp_path / "cache")
    assert second.archives[0] is first.archives[0] and all(a._handle is None for a in second.archives)
    write_ba2_gnrl(data / "AMod - Main.ba2", {"materials/set/both.bgsm": b"mod, version 2"})
    third = DataFiles([data], cache_folder=tmp_path / "cache")
    assert third.read("set/both.bgsm", "materials")[0] == b"mod, version 2"
