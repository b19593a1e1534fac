"""Recognising each game's Data folder (the add-on preferences validate theirs with it)."""

import pytest

from precombined_nif.core.games import GAMES, data_folder_problem
from precombined_nif.core.nif.versions import GAMES as HEADER_GAMES

# A file each game's Data folder holds, as the game installs it, in the case it ships with.
INSTALLED = {
    "FO4": ["Fallout4.esm", "Fallout4 - Meshes.ba2"],
    "FO3": ["Fallout3.esm", "FalloutNV.esm", "Fallout - Meshes.bsa"],
    "SSE": ["Skyrim.esm", "Skyrim - Meshes0.bsa"],
    "SKYRIM": ["Skyrim.esm", "Skyrim - Meshes.bsa"],
    "FO76": ["SeventySix.esm", "SeventySix - Meshes.ba2"],
    "SF": ["Starfield.esm", "Starfield - Meshes01.ba2"],
}


def test_every_game_a_nif_names_has_a_data_folder():
    assert set(GAMES) == {name for name, _ in HEADER_GAMES} == set(INSTALLED)


@pytest.mark.parametrize("game, name", [(game, name) for game, names in INSTALLED.items() for name in names])
@pytest.mark.parametrize("case", [str, str.lower, str.upper])
def test_folder_with_the_games_plugin_or_archive_is_accepted(tmp_path, game, name, case):
    (tmp_path / case(name)).write_bytes(b"")
    assert data_folder_problem(game, str(tmp_path)) is None


@pytest.mark.parametrize("game", INSTALLED)
def test_folder_without_the_games_files_is_refused_by_name(tmp_path, game):
    (tmp_path / "Textures").mkdir()
    (tmp_path / "Some Mod.esp").write_bytes(b"")
    problem = data_folder_problem(game, str(tmp_path))
    assert problem.startswith(f"{tmp_path}: not a {GAMES[game].label} Data folder")
    assert all(plugin in problem for plugin in GAMES[game].plugins)


@pytest.mark.parametrize("game", INSTALLED)
def test_another_games_data_folder_is_refused(tmp_path, game):
    other = next(g for g in INSTALLED if g != game)
    for name in INSTALLED[other]:
        (tmp_path / name).write_bytes(b"")
    assert "not a" in data_folder_problem(game, str(tmp_path))


def test_missing_folder_and_file_instead_of_folder(tmp_path):
    assert data_folder_problem("SSE", str(tmp_path / "Data")) == f"{tmp_path / 'Data'}: no such folder"
    (tmp_path / "Skyrim.esm").write_bytes(b"")
    assert data_folder_problem("SSE", str(tmp_path / "Skyrim.esm")).endswith("no such folder")


def test_unset_folder_is_no_problem():
    assert all(data_folder_problem(game, "") is None for game in GAMES)


def test_the_game_folder_above_data_is_refused(tmp_path):
    """The commonest slip: picking the game's folder instead of its Data folder."""
    (tmp_path / "Data").mkdir()
    (tmp_path / "Data" / "Fallout4.esm").write_bytes(b"")
    (tmp_path / "Fallout4.exe").write_bytes(b"")
    assert data_folder_problem("FO4", str(tmp_path / "Data")) is None
    problem = data_folder_problem("FO4", str(tmp_path))
    assert "not a Fallout 4 Data folder" in problem and problem.endswith(f"; did you mean {tmp_path / 'Data'}?")


def test_a_data_folder_of_another_game_inside_is_not_offered(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "Skyrim.esm").write_bytes(b"")
    assert data_folder_problem("FO4", str(tmp_path)).endswith("'Fallout4 - *.ba2' archive)")
    assert data_folder_problem("SSE", str(tmp_path)).endswith(f"; did you mean {tmp_path / 'data'}?")
