"""A second export of a whole cell into the same patch (an edit users make every day): the patch
is updated, not rewritten. Its earlier records stay unless this export changes them, an override
moved back to its master's placement is dropped, new REFRs take FormIDs past the patch's own
(HEDR's next object id after them). Read back with the tests' own reader (plugin_writer), the
placements computed here from the values written."""

import struct

import numpy as np
import pytest
from cell_plugins import CELL, MASTER, _versioned_plugin, placed, versioned, write_cell
from plugin_writer import group, independent_records, masters_of, zstring
from test_cell_blender import PLAYER, game_matrix, import_cell, references

A, C, D, F, SOURCE_B, SOURCE_E = 0x802, 0x803, 0x804, 0x806, 0x805, 0x807  # the master's references (0x8xx)


def hedr_next_id(data):
    """HEDR (the header's first field, at 24 + 6): version f32, record count i32, next object id u32."""
    return struct.unpack_from("<fiI", data, 30)[2]


def plugins_txt(tmp_path, data, *names):
    path = tmp_path / f"plugins{len(names)}.txt"
    path.write_text("".join(f"*{p.name}\n" for p in data.glob("*.esm")) + "".join(f"*{n}\n" for n in names))
    return str(path)


def export(bpy, cell, output):
    bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = next(iter(references(cell).values()))
    assert bpy.ops.export_scene.cell_plugin(filepath=str(output)) == {"FINISHED"}


def duplicate(bpy, obj, offset):
    copy = obj.copy()
    obj.users_collection[0].objects.link(copy)
    copy.location.z += offset
    return copy


def by_id(data):
    """{FormID: record}; no FormID given twice."""
    records = independent_records(data)
    found = {r["form_id"]: r for r in records}
    assert len(found) == len(records), "a FormID given twice"
    return found


def data_of(record):
    return struct.unpack("<6f", record["fields"]["DATA"][0])


def where(matrix):
    return np.array(matrix)[:3, 3]


@pytest.fixture(params=["FO4", "SSE"])
def written_cell(request, tmp_path, corpus):
    data = tmp_path / "Data"
    data.mkdir()
    return data, write_cell(data, corpus, request.param), request.param


@pytest.mark.slow
def test_second_export_with_the_patch_active_keeps_the_first(clean_scene, written_cell, tmp_path):
    """Export 1: A and F moved, B added (a copy). Re-imported with the patch active, export 2: C
    moved, D deleted, F moved back where its master puts it, E added (a copy of B). The patch holds A's move, B,
    C's move, D disabled, E, no F; new FormIDs distinct and below HEDR's next id; re-imported,
    all stand where they were left."""
    import bpy

    data, expected, game = written_cell
    output = data / "Patch.esp"
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS", plugins_txt=plugins_txt(tmp_path, data, "Mod.esp"))
    found = references(cell)
    found[f"{A:08X}"].location.x += 250.0
    found[f"{F:08X}"].location.y -= 75.0
    copy_b = duplicate(bpy, found[f"{SOURCE_B:08X}"], 40.0)
    export(bpy, cell, output)
    left = {"A": found[f"{A:08X}"].matrix_world.copy(), "B": copy_b.matrix_world.copy()}
    first = by_id(output.read_bytes())
    own = [form_id for form_id in first if form_id >> 24 == 2]
    assert {A, F} <= set(first) and len(own) == 1

    active = plugins_txt(tmp_path, data, "Mod.esp", "Patch.esp")
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS", plugins_txt=active)
    found = references(cell)
    assert np.allclose(np.array(found[f"{A:08X}"].matrix_world), np.array(left["A"]), atol=1e-3)
    found[f"{C:08X}"].location.x -= 120.0
    bpy.data.objects.remove(found[f"{D:08X}"])
    found[f"{F:08X}"].location = expected[F][0]  # back where the master places it
    copy_e = duplicate(bpy, found[f"{own[0]:08X}"], -25.0)  # a copy of B, the patch's own REFR
    export(bpy, cell, output)
    left.update(C=found[f"{C:08X}"].matrix_world.copy(), E=copy_e.matrix_world.copy())

    written = output.read_bytes()
    second = by_id(written)
    # A's override and B as export 1 wrote them
    for form_id in (A, own[0]):
        assert (second[form_id]["fields"], second[form_id]["flags"]) == (first[form_id]["fields"], first[form_id]["flags"])
    assert F not in second  # identical to its master: dropped
    x, y, z, *angles = data_of(second[C])
    assert (x, y, z) == pytest.approx(np.array(expected[C][0]) - (120.0, 0, 0), abs=1e-3)
    assert second[D]["flags"] & 0x800 and not second[D]["flags"] & 0x20
    assert struct.unpack_from("<IB", second[D]["fields"]["XESP"][0]) == (PLAYER, 1)
    new = sorted(form_id for form_id in second if form_id >> 24 == 2)
    assert len(new) == 2 and new[0] == own[0] and new[1] > own[0]
    assert second[new[1]]["fields"]["NAME"] == first[own[0]]["fields"]["NAME"]  # E: B's base
    assert hedr_next_id(written) > max(form_id & 0xFFFFFF for form_id in new)
    assert masters_of(written) == [MASTER[game], "Mod.esp"]

    again = references(import_cell(data, f"{CELL:08X}", precombined="MODELS", plugins_txt=active))
    for name in ("A", "C"):
        key = f"{A if name == 'A' else C:08X}"
        assert np.allclose(np.array(again[key].matrix_world), np.array(left[name]), atol=1e-3), name
    assert np.allclose(np.array(again[f"{F:08X}"].matrix_world), game_matrix(*expected[F][:3]), atol=1e-3)
    assert again[f"{D:08X}"]["cell_flags"] & 0x800
    assert again[f"{D:08X}"]["reference_plugin"] == "Patch.esp"
    placed_new = [where(o.matrix_world) for o in again.values() if o["reference_plugin"] == "Patch.esp"
                  and int(o["reference_form_id"], 16) >> 24 == 2]
    assert len(placed_new) == 2
    for name in ("B", "E"):
        assert any(np.allclose(p, where(left[name]), atol=1e-3) for p in placed_new), name


def earlier_patch(data, game):
    """Patch.esp as another session left it, written here: A moved to (7, 8, 9), a new REFR B
    (02000800), and another cell (02000801) with a REFR of its own (02000802); HEDR's next
    object id 0x803."""
    master = MASTER[game]
    moved_a = placed("REFR", A, 0x102, (7.0, 8.0, 9.0), (0.0, 0.0, 0.5), game, scale=0.25)
    new_b = placed("REFR", 0x02000800, 0x105, (-40.0, 60.0, 1.0), (0.0, 0.0, 0.0), game)
    cell = versioned("CELL", CELL, [("EDID", zstring("TestCell")), ("DATA", struct.pack("<H", 1))], game)
    other = versioned("CELL", 0x02000801, [("EDID", zstring("OtherCell")), ("DATA", struct.pack("<H", 1))], game)
    other_refr = placed("REFR", 0x02000802, 0x103, (1.0, 2.0, 3.0), (0.0, 0.0, 0.0), game)
    block = group(0, [group(0, [cell, group(CELL, [group(CELL, [moved_a, new_b], 9)], 6),
                                other, group(0x02000801, [group(0x02000801, [other_refr], 9)], 6)], 3)], 2)
    data_bytes = bytearray(_versioned_plugin([master, "Mod.esp"], [group("CELL", [block])], game))
    struct.pack_into("<I", data_bytes, 38, 0x803)  # HEDR's next object id
    (data / "Patch.esp").write_bytes(bytes(data_bytes))
    return by_id(bytes(data_bytes))


@pytest.mark.slow
def test_export_into_a_patch_the_import_did_not_load(clean_scene, written_cell, tmp_path):
    """The cell imported without Patch.esp in the load order, C moved, D deleted, E added, exported
    into Patch.esp: its other records (A's move, B, the other cell and its REFR) kept as they were,
    C's override, D disabled, E numbered 0x803; with it active the cell's import has them all."""
    import bpy

    data, expected, game = written_cell
    before = earlier_patch(data, game)
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS", plugins_txt=plugins_txt(tmp_path, data, "Mod.esp"))
    found = references(cell)
    found[f"{C:08X}"].location.y += 33.0
    bpy.data.objects.remove(found[f"{D:08X}"])
    copy_e = duplicate(bpy, found[f"{SOURCE_E:08X}"], 15.0)
    export(bpy, cell, data / "Patch.esp")
    left = {"C": found[f"{C:08X}"].matrix_world.copy(), "E": copy_e.matrix_world.copy()}

    written = (data / "Patch.esp").read_bytes()
    after = by_id(written)
    for form_id in (A, 0x02000800, 0x02000801, 0x02000802):
        assert after[form_id]["fields"] == before[form_id]["fields"], f"{form_id:08X}"
    assert after[0x02000802]["groups"] == before[0x02000802]["groups"]
    assert data_of(after[C])[:3] == pytest.approx(np.array(expected[C][0]) + (0, 33.0, 0), abs=1e-3)
    assert after[D]["flags"] & 0x800
    assert masters_of(written) == [MASTER[game], "Mod.esp"]
    new = sorted(set(after) - set(before) - {C, D})
    assert new == [0x02000803] and hedr_next_id(written) == 0x804

    again = references(import_cell(data, f"{CELL:08X}", precombined="MODELS",
                                   plugins_txt=plugins_txt(tmp_path, data, "Mod.esp", "Patch.esp")))
    assert np.allclose(np.array(again[f"{A:08X}"].matrix_world), game_matrix((7, 8, 9), (0, 0, 0.5), 0.25), atol=1e-3)
    assert np.allclose(np.array(again[f"{C:08X}"].matrix_world), np.array(left["C"]), atol=1e-3)
    assert again[f"{D:08X}"]["cell_flags"] & 0x800
    assert np.allclose(np.array(again["02000800"].matrix_world), game_matrix((-40, 60, 1), (0, 0, 0), 1.0), atol=1e-3)
    assert np.allclose(np.array(again["02000803"].matrix_world), np.array(left["E"]), atol=1e-3)
