"""Whole plugins read and written (core.plugin.file) and patch plugins of a precombined cell's
edits (core.plugin.patch), read back here with struct after xEdit's definitions
(plugin_writer.independent_records): the corpus plugin byte for byte, compressed records and
XXXX fields, unknown fields carried, interior and exterior group paths, the game's rules kept."""

import struct

import numpy as np
import pytest
from plugin_writer import (cell_with_children, group, independent_records, masters_of, plugin, precombined_cell,
                           record, refr, stamp, static, worldspace, xcri_pairs, zstring)

from precombined_nif.core.errors import FormatError
from precombined_nif.core.plugin import Plugin
from precombined_nif.core.plugin.file import PluginFile
from precombined_nif.core.plugin.patch import CellPatch
from precombined_nif.core.plugin.references import reference_angles, rotation_matrix

PCMB = stamp(2023, 3, 14)


def by_id(data):
    return {r["form_id"]: r for r in independent_records(data)}


def test_the_corpus_plugin_reads_and_writes_back_byte_for_byte(corpus):
    data = (corpus / "ck-precombined/AlootHomePlate.esp").read_bytes()
    whole = PluginFile.from_bytes(data)
    assert whole.to_bytes() == data and whole.masters == ["Fallout4.esm"]
    records = independent_records(data)
    assert len(list(whole.records())) == len(records) == 2924
    groups = sum(g.count() for g in whole.groups) - len(records)
    assert struct.unpack_from("<fiI", whole.header.field("HEDR"))[1] == len(records) + groups == 2955


def test_compressed_and_large_records_and_unknown_fields_round_trip(tmp_path):
    big = bytes(range(256)) * 300  # 76800 bytes: an XXXX field gives its size
    cell = record("CELL", 0x1000, [("EDID", zstring("Big")), ("ZZZZ", b"\x01\x02"), ("XCRI", struct.pack("<II", 0, 0)),
                                   ("BIGF", big)], compressed=True)
    data = plugin([], [group("CELL", [group(0, [group(0, [cell], 3)], 2)])])
    whole = PluginFile.from_bytes(data)
    assert whole.to_bytes() == data
    (read,) = whole.records()
    assert [kind for kind, _ in read.fields] == ["EDID", "ZZZZ", "XCRI", "BIGF"] and read.field("BIGF") == big
    read.set_field("XCRI", struct.pack("<III", 1, 0, 7))
    again = by_id(whole.to_bytes())[0x1000]
    assert again["flags"] & 0x40000 and again["fields"]["XCRI"] == [struct.pack("<III", 1, 0, 7)]
    assert again["fields"]["BIGF"] == [big] and again["fields"]["ZZZZ"] == [b"\x01\x02"]


def first_record(data):
    """Where the first record after the header and the first group header is."""
    return 24 + struct.unpack_from("<I", data, 4)[0] + 24


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:-3], "does not fit its parent"),
    (lambda d: b"TES5" + d[4:], "not a plugin"),
    (lambda d: d[:first_record(d) + 4] + struct.pack("<I", 1 << 20) + d[first_record(d) + 8:], "run past"),
    (lambda d: d + b"STAT" + bytes(20), "outside every group"),
])
def test_a_damaged_plugin_is_refused(damage, message):
    data = plugin([], [group("STAT", [static(0x800, "A", "a.nif"), static(0x801, "B", "b.nif")])])
    with pytest.raises(FormatError, match=message):
        PluginFile.from_bytes(damage(data), "Damaged.esp")


def test_reference_angles_invert_the_games_rotation():
    rng = np.random.default_rng(7)
    for angles in [*rng.uniform(-3, 3, (200, 3)), (0.3, np.pi / 2, 1.0), (0.0, -np.pi / 2, -2.0)]:
        matrix = rotation_matrix(angles)
        assert np.abs(rotation_matrix(reference_angles(matrix)) - matrix).max() < 1e-9


def interior_plugin(path, persistent=False):
    """Mod.esp: an interior CELL 0x1000 (PCMB dated), its XCRI pairing REFRs 0x1001-0x1003 with
    mesh 0xAAAA0001, the REFRs (0x1003 persistent when asked) and their STAT."""
    refs = [refr(0x1001, 0x800, (10, 20, 30), (0, 0, 0.5), 1.5), refr(0x1002, 0x800, (40, 50, 60), (0, 0, 0))]
    third = record("REFR", 0x1003, [("NAME", struct.pack("<I", 0x800)), ("XTEL", bytes(32)),
                                    ("DATA", struct.pack("<6f", 70, 80, 90, 0, 0, 0))],
                   flags=0x400 if persistent else 0x20)
    cell = precombined_cell(0x1000, [0xAAAA0001], [0x1001, 0x1002, 0x1003], pcmb=PCMB, visi=PCMB)
    children = cell_with_children(cell, 0x1000, temporary=refs + ([] if persistent else [third]),
                                  persistent=[third] if persistent else [])
    body = plugin([], [group("STAT", [static(0x800, "Box", "box.nif")]),
                       group("CELL", [group(0, [group(0, [children], 3)], 2)])])
    path.write_bytes(body)
    return path


def test_a_patch_of_an_interior_cell(tmp_path):
    with Plugin(interior_plugin(tmp_path / "Mod.esp")) as source:
        patch = CellPatch(source, 0x1000)
        assert patch.move(0x1001, (11, 22, 33), (0.1, 0.2, 0.3), 2.0)
        assert patch.disable(0x1003)
        new = patch.add(0x1002, 0xAAAA0001, (1, 2, 3), (0, 0, 1.0), 1.0)
        assert not patch.move(0x5000, (0, 0, 0), (0, 0, 0), 1.0)  # no plugin given holds it
        data = patch.finish().to_bytes()
    assert masters_of(data) == ["Mod.esp"] and new == 0x01000800
    records = by_id(data)
    assert set(records) == {0x1000, 0x1001, 0x1003, 0x01000800}
    for item in records.values():
        assert item["vci"] & 0xFFFF == PCMB
    cell = records[0x1000]
    assert [g[1] for g in cell["groups"]] == [0, 2, 3] and cell["flags"] & 0x40000  # compressed as the source is
    meshes, pairs = xcri_pairs(cell["fields"]["XCRI"][0])
    assert meshes == [0xAAAA0001] and pairs == [(0x1001, 0xAAAA0001), (0x1002, 0xAAAA0001), (0x01000800, 0xAAAA0001)]
    moved = records[0x1001]
    assert struct.unpack("<6f", moved["fields"]["DATA"][0]) == pytest.approx((11, 22, 33, 0.1, 0.2, 0.3))
    assert struct.unpack("<f", moved["fields"]["XSCL"][0])[0] == 2.0
    assert [g[1] for g in moved["groups"]] == [0, 2, 3, 6, 9] and moved["groups"][3][0] == struct.pack("<I", 0x1000)
    gone = records[0x1003]
    assert gone["flags"] & 0x800 and not gone["flags"] & 0x20 and "XTEL" not in gone["fields"]
    assert struct.unpack("<IB3x", gone["fields"]["XESP"][0]) == (0x14, 1)
    assert struct.unpack("<6f", gone["fields"]["DATA"][0])[2] == -30000.0
    added = records[0x01000800]
    assert added["fields"]["NAME"] == [struct.pack("<I", 0x800)] and set(added["fields"]) == {"NAME", "DATA"}
    hedr = struct.unpack_from("<fiI", PluginFile.from_bytes(data).header.field("HEDR"))
    assert hedr[1:] == (4 + 5, 0x801)  # 4 records, 5 groups; the next object id


def test_a_persistent_reference_is_disabled_where_it_stands(tmp_path):
    with Plugin(interior_plugin(tmp_path / "Mod.esp", persistent=True)) as source:
        patch = CellPatch(source, 0x1000)
        assert patch.disable(0x1003)
        records = by_id(patch.finish().to_bytes())
    assert struct.unpack("<6f", records[0x1003]["fields"]["DATA"][0])[2] == 90.0  # not sunk: xEdit leaves it
    assert [g[1] for g in records[0x1003]["groups"]] == [0, 2, 3, 6, 8]


def test_an_exterior_cells_patch_keeps_its_worlds_groups(tmp_path):
    refs = [refr(0x1001, 0x800, (4100, 8200, 0), (0, 0, 0))]
    cell = precombined_cell(0x1000, [0xAAAA0001], [0x1001], pcmb=PCMB, interior=False, grid=(1, 2))
    path = tmp_path / "World.esp"
    path.write_bytes(plugin([], [group("STAT", [static(0x800, "Box", "box.nif")]),
                                 worldspace(0x900, cell_with_children(cell, 0x1000, temporary=refs))]))
    with Plugin(path) as source:
        patch = CellPatch(source, 0x1000)
        assert patch.move(0x1001, (4200, 8200, 0), (0, 0, 0), 1.0)
        data = patch.finish().to_bytes()
    records = independent_records(data)
    assert [(r["type"], r["form_id"]) for r in records] == [("WRLD", 0x900), ("CELL", 0x1000), ("REFR", 0x1001)]
    assert [g[1] for g in records[1]["groups"]] == [0, 1, 4, 5] and records[1]["groups"][1][0] == struct.pack("<I", 0x900)
    assert [g[1] for g in records[2]["groups"]] == [0, 1, 4, 5, 6, 9]


def test_an_existing_patch_is_updated_and_a_foreign_one_refused(tmp_path):
    with Plugin(interior_plugin(tmp_path / "Mod.esp")) as source:
        first = CellPatch(source, 0x1000)
        first.move(0x1001, (1, 1, 1), (0, 0, 0), 1.0)
        written = PluginFile.from_bytes(first.finish().to_bytes(), "Patch.esp")
        second = CellPatch(source, 0x1000, existing=written)
        second.disable(0x1002)
        records = by_id(second.finish().to_bytes())
        assert set(records) == {0x1000, 0x1001, 0x1002}
        _, pairs = xcri_pairs(records[0x1000]["fields"]["XCRI"][0])
        assert [p[0] for p in pairs] == [0x1001, 0x1003]
        foreign = PluginFile.from_bytes(plugin(["Other.esm"], []), "Foreign.esp")
        with pytest.raises(FormatError, match="Foreign.esp: its masters are Other.esm, not Mod.esp"):
            CellPatch(source, 0x1000, existing=foreign)


def test_a_light_patch_has_4096_object_ids(tmp_path):
    with Plugin(interior_plugin(tmp_path / "Mod.esp")) as source:
        patch = CellPatch(source, 0x1000, light=True)
        patch.next_id = 0xFFF
        assert patch.add(0x1001, 0xAAAA0001, (0, 0, 0), (0, 0, 0), 1.0) == 0x01000FFF
        with pytest.raises(FormatError, match="no object id left below 0x1000 \\(a light plugin\\)"):
            patch.add(0x1001, 0xAAAA0001, (0, 0, 0), (0, 0, 0), 1.0)
        assert patch.finish().header.flags & 0x200


def test_a_cell_without_combined_meshes_is_refused(tmp_path):
    cell = record("CELL", 0x1000, [("EDID", zstring("Plain"))])
    path = tmp_path / "Plain.esp"
    path.write_bytes(plugin([], [group("CELL", [group(0, [group(0, [cell], 3)], 2)])]))
    with Plugin(path) as source, pytest.raises(FormatError, match="CELL 00001000 has no XCRI"):
        CellPatch(source, 0x1000)


def test_the_corpus_cells_patch_has_the_plugins_records(corpus):
    with Plugin(corpus / "ck-precombined/AlootHomePlate.esp") as source:
        patch = CellPatch(source, 0x1E58)
        _, pairs = xcri_pairs(source.record(0x1E58).field("XCRI"))
        first = pairs[0][0]
        assert patch.move(first, (1, 2, 3), (0, 0, 0), 1.0)
        assert not patch.disable(0x000C67A5)  # Fallout4.esm's: not given
        data = patch.finish().to_bytes()
    assert masters_of(data) == ["Fallout4.esm", "AlootHomePlate.esp"]
    records = by_id(data)
    original = by_id((corpus / "ck-precombined/AlootHomePlate.esp").read_bytes())
    cell, source_cell = records[0x1E58], original[0x1E58]
    # Every field of the CELL carried (XCRI unchanged: nothing left the combined meshes).
    assert cell["fields"] == source_cell["fields"] and cell["groups"] == source_cell["groups"]
    assert records[first]["fields"]["NAME"] == original[first]["fields"]["NAME"]
