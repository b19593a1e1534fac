"""An existing patch updated by core.plugin.patch.CellPatch (a second export into the same
output): masters after the cell's kept, new FormIDs past every record the patch has of its own
(whatever HEDR says), an override put back as its master has it dropped (xEdit's "Remove
Identical to Master records"). Read back with plugin_writer's reader."""

import struct

from plugin_writer import group, masters_of, plugin, static
from test_plugin_patch import by_id, interior_plugin

from precombined_nif.core.plugin import Plugin
from precombined_nif.core.plugin.file import PluginFile
from precombined_nif.core.plugin.patch import CellPatch


def test_new_form_ids_pass_the_patchs_own_and_its_masters_are_kept(tmp_path):
    interior_plugin(tmp_path / "Mod.esp")
    # another session's patch: a master after Mod.esp (another cell's), a STAT of its own 0x02000900,
    # HEDR's next object id stale (plugin_writer writes 0x800)
    data = plugin(["Mod.esp", "Other.esp"], [group("STAT", [static(0x02000900, "Own", "own.nif")])])
    assert struct.unpack_from("<fiI", data, 30)[2] == 0x800
    existing = PluginFile.from_bytes(data, "Patch.esp")
    assert existing.masters == ["Mod.esp", "Other.esp"]
    with Plugin(tmp_path / "Mod.esp") as source:
        patch = CellPatch(source, 0x1000, existing=existing)
        new = patch.add(0x1002, 0xAAAA0001, (5, 5, 5), (0, 0, 0), 1.0)
        written = patch.finish().to_bytes()
    assert new == 0x02000901 and masters_of(written) == ["Mod.esp", "Other.esp"]
    assert set(by_id(written)) == {0x1000, 0x02000900, 0x02000901}
    assert struct.unpack_from("<fiI", written, 30)[2] == 0x902


def test_an_override_put_back_as_its_master_has_it_is_dropped(tmp_path):
    with Plugin(interior_plugin(tmp_path / "Mod.esp")) as source:
        first = CellPatch(source, 0x1000)
        first.move(0x1001, (1, 1, 1), (0, 0, 0.5), 1.5)
        first.move(0x1002, (2, 2, 2), (0, 0, 0), 1.0)
        existing = PluginFile.from_bytes(first.finish().to_bytes(), "Patch.esp")
        second = CellPatch(source, 0x1000, existing=existing)
        # back where Mod.esp has them, 0x1001 as a Blender transform brings it back (float32 off by an ulp)
        assert second.move(0x1001, (10.000001, 20, 29.999998), (0, 0, 0.5), 1.5)
        assert second.move(0x1002, (40, 50, 60.5), (0, 0, 0), 1.0)  # not quite: kept
        records = by_id(second.finish().to_bytes())
    assert 0x1001 not in records and 0x1000 in records
    assert struct.unpack("<6f", records[0x1002]["fields"]["DATA"][0])[:3] == (40, 50, 60.5)
