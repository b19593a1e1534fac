"""A whole cell read across a load order (core.plugin.cell_contents) from plugins the test
writes (tests/cell_plugins.py), checked against the values they were written with."""

import math
import struct

import numpy as np
import pytest
from cell_plugins import CELL, KINDS, MASTER, _versioned_plugin, write_cell
from plugin_writer import group, plugin, record, zstring

from precombined_nif.core.errors import FormatError
from precombined_nif.core.plugin.cell_contents import CellContents
from precombined_nif.core.plugin.load_order import LoadOrder


def game_rotation(angles):
    """The game's turn of a reference (UESP: z first, then y, then x, each angle clockwise seen
    down its axis), built by turning the basis vectors one axis at a time."""
    def turn(vector, axis, angle):  # clockwise by ``angle``: counter-clockwise by -angle
        c, s = math.cos(-angle), math.sin(-angle)
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        out = list(vector)
        out[i], out[j] = c * vector[i] - s * vector[j], s * vector[i] + c * vector[j]
        return out

    columns = []
    for basis in np.eye(3):
        v = list(basis)
        for axis in (2, 1, 0):
            v = turn(v, axis, angles[axis])
        columns.append(v)
    return np.array(columns).T


@pytest.fixture(params=["FO4", "SSE"])
def cell_folder(request, tmp_path, corpus):
    return tmp_path, write_cell(tmp_path, corpus, request.param), request.param


def test_every_reference_as_the_load_order_leaves_it(cell_folder):
    folder, expected, game = cell_folder
    contents = CellContents(LoadOrder(folder), f"{CELL:08X}")
    found = {int(contents.form_id(r.key), 16): r for r in contents.references}
    assert set(found) == set(expected)
    for form_id, (position, angles, scale, base, flags) in expected.items():
        reference = found[form_id]
        assert np.allclose(reference.position, position) and np.allclose(reference.angles, angles, atol=1e-6)
        assert reference.scale == pytest.approx(scale) and reference.flags == flags
        assert contents.form_id(reference.base) == f"{base:08X}"
        matrix = reference.matrix()
        assert np.allclose(matrix[:3, :3], game_rotation(angles) * scale, atol=1e-6)
        assert np.allclose(matrix[:3, 3], position)
    assert found[0x800].entry.name == "Mod.esp"  # the override wins
    kinds = {contents.bases[r.base].type for r in contents.references if r.base in contents.bases}
    assert set(KINDS) <= kinds
    assert sum(r.base not in contents.bases for r in contents.references) == 1  # base 0xFFF
    parented = [r for r in contents.references if r.parent is not None]
    assert [(contents.form_id(r.parent[0]), r.parent[1]) for r in parented] == [("00000800", 1)]
    assert [r.deleted for r in contents.references].count(True) == 1
    assert [r.disabled for r in contents.references].count(True) == 1
    assert CellContents(LoadOrder(folder), "TestCell").key == contents.key  # by EditorID


def test_bases_decoded(cell_folder):
    folder, _, _ = cell_folder
    contents = CellContents(LoadOrder(folder), f"{CELL:08X}")
    by_type = {}
    for base in contents.bases.values():
        by_type.setdefault(base.type, []).append(base)
    light = by_type["LIGH"][0]
    assert light.light[0] == 512 and np.allclose(light.light[1], (1.0, 128 / 255, 0.0))
    scol = by_type["SCOL"][0]
    assert [len(p) for _, p in scol.parts] == [2, 1]
    assert all(part in contents.bases for part, _ in scol.parts)  # its STATs, placed by no reference
    assert np.allclose(scol.parts[1][1][0]["position"], (-30, 20, 5)) and scol.parts[1][1][0]["scale"] == 2.0
    assert by_type["ARMO"][0].model and by_type["NPC_"][0].model is None
    assert by_type["STAT"][0].bounds == ((-10, -20, -5), (10, 20, 30))
    assert any(base.marker for base in by_type["STAT"])


def test_unknown_cell_is_named(cell_folder):
    folder, _, _ = cell_folder
    with pytest.raises(FormatError, match="no plugin of the load order holds the cell NoSuchCell"):
        CellContents(LoadOrder(folder), "NoSuchCell")
    with pytest.raises(FormatError, match="00000BAD"):
        CellContents(LoadOrder(folder), "00000BAD")


def test_not_a_plugin_is_a_line_and_the_rest_stands(cell_folder):
    folder, expected, _ = cell_folder
    (folder / "Broken.esp").write_bytes(b"this is no plugin at all, but it is long enough")
    contents = CellContents(LoadOrder(folder), f"{CELL:08X}")
    assert any("Broken.esp" in line and "not a plugin" in line for line in contents.problems)
    assert len(contents.references) == len(expected)


def test_cyclic_enable_parent_is_named(tmp_path):
    refs = [record("REFR", 0x800 + i, [("NAME", struct.pack("<I", 0x100)), ("XESP", struct.pack("<IB3x", 0x800 + (i + 1) % 3, 0)),
                                      ("DATA", struct.pack("<6f", i, 0, 0, 0, 0, 0))]) for i in range(3)]
    cell = record("CELL", CELL, [("EDID", zstring("Loop")), ("DATA", struct.pack("<H", 1))])
    cells = group("CELL", [group(0, [group(0, [cell, group(CELL, [group(CELL, refs, 9)], 6)], 3)], 2)])
    (tmp_path / "Fallout4.esm").write_bytes(plugin([], [cells], flags=1))
    contents = CellContents(LoadOrder(tmp_path), "Loop")
    assert [line for line in contents.problems if "circle" in line] == [
        "enable parents go round in a circle: 00000800 > 00000801 > 00000802 > 00000800: each shown as enabled by none"]
    assert len(contents.references) == 3 and all(r.parent is None for r in contents.references)


@pytest.mark.parametrize("game", ["FO4", "SSE"])
def test_the_games_own_masters_load_unlisted(tmp_path, corpus, game):
    """plugins.txt names only Mod.esp: the game's own masters load first all the same (Skyrim
    SE: Skyrim.esm, Update.esm, Dawnguard.esm; libloadorder's list), no line names another
    game's master, and the cell stands as written."""
    expected = write_cell(tmp_path, corpus, game)
    dlc = {"FO4": ("DLCRobot.esm", "DLCCoast.esm"), "SSE": ("Update.esm", "Dawnguard.esm")}[game]
    for name in reversed(dlc):  # written in the other order: the game's order wins
        (tmp_path / name).write_bytes(_versioned_plugin([], [], game, flags=1))
    (tmp_path / "plugins.txt").write_text("# only the mod\n*Mod.esp\n")
    order = LoadOrder(tmp_path, tmp_path / "plugins.txt")
    assert order.game == game
    assert [e.name for e in order.entries] == [MASTER[game], *dlc, "Mod.esp"]
    assert order.problems == []
    contents = CellContents(order, f"{CELL:08X}")
    slot = len(dlc) + 1  # Mod.esp's own records: its slot after the DLCs
    assert {int(contents.form_id(r.key), 16) for r in contents.references} == {
        f if f >> 24 == 0 else slot << 24 | f & 0xFFFFFF for f in expected}
    assert not [line for line in contents.problems if "Fallout4.esm" in line or "Skyrim.esm" in line]


def test_skyrim_le_loads_its_two_masters(tmp_path):
    """HEDR 0.94 with form version 43 is Skyrim LE: Skyrim.esm and Update.esm load unlisted,
    Dawnguard.esm only when plugins.txt names it."""
    header = record("TES4", 0, [("HEDR", struct.pack("<fiI", 0.94, 0, 0x800))], flags=1)
    header = header[:20] + struct.pack("<H", 43) + header[22:]
    for name in ("Skyrim.esm", "Update.esm", "Dawnguard.esm"):
        (tmp_path / name).write_bytes(header)
    (tmp_path / "plugins.txt").write_text("")
    order = LoadOrder(tmp_path, tmp_path / "plugins.txt")
    assert order.game == "TES5" and [e.name for e in order.entries] == ["Skyrim.esm", "Update.esm"]
    (tmp_path / "plugins.txt").write_text("*Dawnguard.esm\n")
    assert [e.name for e in LoadOrder(tmp_path, tmp_path / "plugins.txt").entries] == [
        "Skyrim.esm", "Update.esm", "Dawnguard.esm"]


def test_references_moved_between_cells_follow_their_winning_override(tmp_path, corpus):
    """Later.esp moves the master's reference 00000801 into Other.esm's cell and Other.esm's
    reference 850 into the test cell: 801 leaves the cell, 850 joins it where Later.esp puts it;
    Other.esm's own cell sees the reverse."""
    expected = write_cell(tmp_path, corpus, "FO4")
    from cell_plugins import interior, placed

    other_cell = 0x01000A01
    stand = placed("REFR", 0x01000850, 0x100, (9.0, 8.0, 7.0), (0.0, 0.0, 0.0), "FO4")
    (tmp_path / "Other.esm").write_bytes(_versioned_plugin(
        ["Fallout4.esm"], [interior(other_cell, "OtherCell", [stand], "FO4")], "FO4", flags=1))
    into = placed("REFR", 0x01000850, 0x100, (-4.0, 3.0, 2.0), (0.0, 0.0, 0.5), "FO4")  # 850, Other.esm's
    out = placed("REFR", 0x00000801, 0x101, (60.0, 0.0, 0.0), (0.0, 0.0, 0.0), "FO4")
    cells = interior(CELL, "TestCell", [into], "FO4") + interior(other_cell, "OtherCell", [out], "FO4")
    (tmp_path / "Later.esp").write_bytes(_versioned_plugin(["Fallout4.esm", "Other.esm"], [cells], "FO4"))
    (tmp_path / "plugins.txt").write_text("*Other.esm\n*Mod.esp\n*Later.esp\n")
    order = LoadOrder(tmp_path, tmp_path / "plugins.txt")
    contents = CellContents(order, "TestCell")
    found = {contents.form_id(r.key): r for r in contents.references}
    assert "00000801" not in found and "00000800" in found  # Mod.esp's move within the cell stays
    assert np.allclose(found["01000850"].position, (-4.0, 3.0, 2.0)) and found["01000850"].entry.name == "Later.esp"
    assert len(found) == len(expected)  # one out, one in
    other = {contents.form_id(r.key): r for r in CellContents(order, "OtherCell").references}
    assert set(other) == {"00000801"} and np.allclose(other["00000801"].position, (60.0, 0.0, 0.0))
