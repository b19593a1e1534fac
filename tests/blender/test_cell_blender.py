"""A whole cell in Blender (File > Import > Cell (Plugin), File > Export > Cell (Plugin), Add >
Game Reference): every object placed where its DATA and XSCL put it, computed here from the
values the test's plugins were written with (tests/cell_plugins.py) or read from the corpus
plugin by the test's own reader; edits written back and read again."""

import math
import shutil
import struct

import numpy as np
import pytest
from cell_plugins import CELL, MODELS, write_cell
from plugin_writer import independent_records, independent_refrs

CORPUS_CELL = "00001E58"
PLAYER = 0x14


def game_matrix(position, angles, scale):
    """World matrix of a reference: the game turns it about z, then y, then x, each angle
    clockwise (UESP's record notes), here as products of single-axis turns by -angle."""
    def about(axis, angle):
        c, s = math.cos(-angle), math.sin(-angle)
        m = np.eye(3)
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
        return m

    out = np.eye(4)
    out[:3, :3] = about(0, angles[0]) @ about(1, angles[1]) @ about(2, angles[2]) * scale
    out[:3, 3] = position
    return out


def form_versions(data):
    """{FormID: form version} of every record (header: type, size, flags, FormID, VCI, form
    version u16, VCI2; a group's size covers its header)."""
    out, at = {}, 24 + struct.unpack_from("<I", data, 4)[0]
    while at < len(data):
        kind, size, _, form_id, _, version = struct.unpack_from("<4sIIIIH", data, at)
        if kind == b"GRUP":
            at += 24  # into the group: its records follow
            continue
        out[form_id] = version
        at += 24 + size
    return out


def references(collection):
    return {o["reference_form_id"]: o for o in collection.all_objects if "cell_reference" in o}


def import_cell(folder, cell, **options):
    import bpy

    before = set(bpy.data.collections)
    assert bpy.ops.import_scene.cell_plugin(directory=str(folder), cell=cell, **options) == {"FINISHED"}
    return next(c for c in set(bpy.data.collections) - before if "cell_key" in c)


@pytest.fixture(params=["FO4", "SSE"])
def written_cell(request, tmp_path, corpus):
    data = tmp_path / "Data"
    data.mkdir()
    return data, write_cell(data, corpus, request.param)


def test_every_object_where_its_data_and_xscl_put_it(clean_scene, written_cell):
    import bpy

    data, expected = written_cell
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS")
    found = references(cell)
    assert set(found) == {f"{form_id:08X}" for form_id in expected}
    for form_id, (position, angles, scale, base, flags) in expected.items():
        obj = found[f"{form_id:08X}"]
        assert np.allclose(np.array(obj.matrix_world), game_matrix(position, angles, scale), atol=1e-4), obj.name
        assert obj["base_form_id"] == f"{base:08X}"
    kinds = {o["cell_base_type"]: o for o in found.values() if "cell_base_type" in o}
    assert kinds["LIGH"].type == "LIGHT" and np.allclose(kinds["LIGH"].data.color, (1, 128 / 255, 0), atol=1e-6)
    assert kinds["LIGH"].data.cutoff_distance == 512
    assert kinds["NPC_"].type == "MESH" and kinds["NPC_"].display_type == "WIRE"
    assert np.allclose(kinds["NPC_"].dimensions, np.array((20, 40, 35)) * expected[0x80F][2])
    assert kinds["STAT"].instance_type == "COLLECTION" and kinds["STAT"].instance_collection is not None
    groups = {c.name.split(".")[0]: c for c in cell.children_recursive}
    assert [o["reference_form_id"] for o in groups["Deleted"].objects if "cell_reference" in o] == ["00000814"]
    assert [o["reference_form_id"] for o in groups["Initially disabled"].objects if "cell_reference" in o] == ["00000812"]
    assert [o["reference_form_id"] for o in groups["Enabled by 00000800 (opposite)"].objects if "cell_reference" in o] == ["00000813"]
    # the SCOL's parts: their STATs' models where the SCOL's placement puts each part's
    scol = found["00000801"]
    parts = sorted((o for o in scol.children), key=lambda o: o.name)
    assert len(parts) == 3
    reference = game_matrix(*expected[0x801][:3])
    for part, (x, y, z, *angles, s) in zip(parts, [(0, 0, 10, 0, 0, math.pi / 2, 1.0),
                                                  (50, 0, 0, 0.3, -0.2, 0.1, 0.5),
                                                  (-30, 20, 5, math.pi / 2 - 1e-4, 0, 0, 2.0)]):
        assert np.allclose(np.array(part.matrix_world), reference @ game_matrix((x, y, z), angles, s), atol=1e-3)
    one_mesh = {o.instance_collection.name for o in found.values() if o.instance_type == "COLLECTION"}
    assert len(one_mesh) == len({c for c in one_mesh})  # one collection a model, shared
    assert len([c for c in bpy.data.collections if "base_model" in c]) == len(MODELS)


def test_model_vertices_land_where_the_game_draws_them(clean_scene, written_cell):
    import bpy

    data, expected = written_cell
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS")
    obj = references(cell)["0000080D"]  # an ARMO (its world model), turned about three axes, scaled 1.5
    model = obj.instance_collection
    local = []
    for part in model.all_objects:
        if part.type == "MESH":
            vertices = np.array([part.matrix_world @ v.co for v in part.data.vertices])
            local.append(vertices)
    local = np.concatenate(local)
    drawn = game_matrix(*expected[0x80D][:3])
    wanted = local @ drawn[:3, :3].T + drawn[:3, 3]
    depsgraph = bpy.context.evaluated_depsgraph_get()
    placed = []
    for instance in depsgraph.object_instances:
        if instance.is_instance and instance.parent and instance.parent.original == obj and instance.object.type == "MESH":
            mesh = instance.object.data
            matrix = np.array(instance.matrix_world)
            vertices = np.array([v.co for v in mesh.vertices])
            placed.append(vertices @ matrix[:3, :3].T + matrix[:3, 3])
    placed = np.concatenate(placed)
    assert placed.shape == wanted.shape and np.allclose(placed, wanted, atol=1e-3)


def test_move_delete_duplicate_add_written_back(clean_scene, written_cell, tmp_path):
    import bpy

    data, expected = written_cell
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS")
    found = references(cell)
    moved, deleted, source = found["00000802"], found["00000803"], found["00000804"]
    moved.location.x += 250.0
    bpy.data.objects.remove(deleted)
    copy = source.copy()
    source.users_collection[0].objects.link(copy)
    copy.location.z -= 40.0
    bpy.context.view_layer.objects.active = moved
    bpy.context.scene.cursor.location = (11.0, 22.0, 33.0)
    assert bpy.ops.object.add_game_reference(model="aloot\\HomePlate\\ALOOT_HP_Poster07.nif") == {"FINISHED"}
    added = bpy.context.active_object
    added.rotation_quaternion = (math.cos(0.2), 0, 0, math.sin(0.2))
    bpy.context.view_layer.update()
    left = {"moved": np.array(moved.matrix_world), "copy": np.array(copy.matrix_world),
            "added": np.array(added.matrix_world)}
    output = data / "Patch.esp"
    bpy.context.view_layer.objects.active = moved
    assert bpy.ops.export_scene.cell_plugin(filepath=str(output)) == {"FINISHED"}

    written = output.read_bytes()
    source = next(data.glob("*.esm")).read_bytes()
    # the game's header: HEDR version and form version as its master has them (SSE 1.7 and 44)
    assert written[30:34] == source[30:34] and written[20:22] == source[20:22]
    records = independent_records(written)
    originals = {r["form_id"]: r for r in independent_records((data / "Mod.esp").read_bytes())
                 + independent_records(next(data.glob("*.esm")).read_bytes())}
    by_type = {}
    for item in records:
        by_type.setdefault(item["type"], []).append(item)
    assert sorted(by_type) == ["CELL", "REFR", "STAT"]
    refrs = {r["form_id"]: r for r in by_type["REFR"]}
    assert set(refrs) & set(originals) == {0x802, 0x803}  # one override moved, one disabled
    new = [r for r in by_type["REFR"] if r["form_id"] not in originals]
    assert len(new) == 2 and len(by_type["STAT"]) == 1
    # the override of the moved reference: DATA alone differs from its original
    original, override = originals[0x802], refrs[0x802]
    assert {k: v for k, v in override["fields"].items() if k != "DATA"} == \
        {k: v for k, v in original["fields"].items() if k != "DATA"}
    x, y, z, *angles = struct.unpack("<6f", override["fields"]["DATA"][0])
    ox, oy, oz, *old_angles = struct.unpack("<6f", original["fields"]["DATA"][0])
    assert (x, y, z) == pytest.approx((ox + 250.0, oy, oz), abs=1e-3) and angles == old_angles
    disabled = refrs[0x803]
    assert disabled["flags"] & 0x800 and not disabled["flags"] & 0x20
    assert struct.unpack_from("<IB", disabled["fields"]["XESP"][0]) == (PLAYER, 1)
    stat = by_type["STAT"][0]
    assert stat["fields"]["MODL"][0].rstrip(b"\0").decode() == "aloot\\HomePlate\\ALOOT_HP_Poster07.nif"
    bases = sorted(struct.unpack("<I", r["fields"]["NAME"][0])[0] for r in new)
    assert bases == sorted([0x104, stat["form_id"]])
    form_version = struct.unpack_from("<H", source, 20)[0]
    versions = form_versions(written)
    assert {versions[r["form_id"]] for r in new + [stat]} == {form_version}

    # the plugin in the load order: every edit where it was left
    plugins = tmp_path / "plugins.txt"
    # the Fallout 4 masters load whatever plugins.txt says; Skyrim SE's are listed here
    plugins.write_text("".join(f"*{p.name}\n" for p in data.glob("*.esm")) + "*Mod.esp\n*Patch.esp\n")
    again = import_cell(data, f"{CELL:08X}", precombined="MODELS", plugins_txt=str(plugins))
    found = references(again)
    assert np.allclose(np.array(found["00000802"].matrix_world), left["moved"], atol=1e-3)
    assert found["00000803"].users_collection[0].name.startswith("Initially disabled") or \
        found["00000803"].users_collection[0].name.startswith("Enabled by 00000014")
    placed = {tuple(np.round(np.array(o.matrix_world)[:3, 3], 2)) for o in found.values()}
    assert tuple(np.round(left["copy"][:3, 3], 2)) in placed and tuple(np.round(left["added"][:3, 3], 2)) in placed
    new_ones = [o for o in found.values() if o["reference_plugin"] == "Patch.esp" and int(o["reference_form_id"], 16) >> 24 == 2]
    assert len(new_ones) == 2
    for obj in new_ones:
        wanted = left["added"] if obj.get("cell_base_type") == "STAT" and "Poster07" in obj.get("base_model", "") \
            else left["copy"]
        assert np.allclose(np.array(obj.matrix_world), wanted, atol=1e-3)


def test_untouched_import_writes_nothing(clean_scene, written_cell):
    import bpy

    data, _ = written_cell
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS")
    bpy.context.view_layer.objects.active = next(iter(references(cell).values()))
    output = data / "Nothing.esp"
    assert bpy.ops.export_scene.cell_plugin(filepath=str(output)) == {"FINISHED"}
    assert not output.exists()


def test_bad_input_named_and_nothing_half_built(clean_scene, written_cell):
    import bpy

    data, expected = written_cell
    before = len(bpy.data.objects), len(bpy.data.collections), len(bpy.data.meshes)
    with pytest.raises(RuntimeError, match="no plugin of the load order holds the cell NoSuchCell"):
        bpy.ops.import_scene.cell_plugin(directory=str(data), cell="NoSuchCell")
    assert (len(bpy.data.objects), len(bpy.data.collections), len(bpy.data.meshes)) == before
    (data / "meshes" / MODELS[2]).write_bytes(b"Gamebryo File Format, Version 20.2.0.7\n broken")
    (data / "Junk.esp").write_bytes(b"not a plugin, but long enough to have a header")
    module = __import__(next(m for m in __import__("sys").modules if m.endswith(".io.plugin.cell_import")),
                        fromlist=["import_cell"])
    collection, warnings = module.import_cell(bpy.context, data, f"{CELL:08X}", precombined="MODELS")
    assert any(MODELS[2].rsplit("/", 1)[-1] in w and "will not read" in w for w in warnings)
    assert any("Junk.esp" in w and "not a plugin" in w for w in warnings)
    assert any("1 references place a base no plugin of the load order holds" in w for w in warnings)
    assert len(references(collection)) == len(expected)


def test_corpus_cell_every_reference_placed(clean_scene, corpus, tmp_path):
    """00001E58 of AlootHomePlate.esp: its 2,343 references placed by their DATA (read here from
    the plugin's bytes), those combined in precombines by their own models; the 164 combined
    references of the absent Fallout4.esm counted; missing models and bases counted."""
    import bpy

    folder = corpus / "ck-precombined"
    module = __import__(next(m for m in __import__("sys").modules if m.endswith(".io.plugin.cell_import")),
                        fromlist=["import_cell"])
    collection, warnings = module.import_cell(bpy.context, folder, CORPUS_CELL, precombined="MODELS")
    refrs = independent_refrs((folder / "AlootHomePlate.esp").read_bytes())
    found = references(collection)
    assert len(found) == 2343
    for name, obj in found.items():
        # Fallout4.esm's records are named Fallout4.esm:XXXXXX (absent); the plugin's own took slot 00
        stored = int(name.split(":")[-1], 16) if ":" in name else 0x01000000 | int(name, 16) & 0xFFFFFF
        x, y, z, *angles, scale = refrs[stored]
        assert np.allclose(np.array(obj.matrix_world), game_matrix((x, y, z), angles, scale), atol=1e-2), obj.name
    placeholders = [o for o in found.values() if o.type == "MESH"]
    models = [o for o in found.values() if o.instance_type == "COLLECTION"]
    assert len(placeholders) + len(models) + sum(o.type in ("EMPTY", "LIGHT") and o.instance_type != "COLLECTION"
                                                 for o in found.values()) == 2343
    assert models  # the plugin's own models, from the corpus Data folder
    counted = [w for w in warnings if "placeholder" in w]
    total = sum(int(w.split(" references")[0]) for w in counted)
    assert total == len(placeholders)
    assert (None, []) != (collection, warnings)


def test_corpus_cell_with_precombined_copies(clean_scene, corpus):
    """By default the combined references are the _OC files' copies, never also their own models."""
    folder = corpus / "ck-precombined"
    cell = import_cell(folder, "DmndPlayerHouse01")
    found = references(cell)
    assert len(found) == 2343 - 555 and not any(o["cell_combined"] for o in found.values())
    copies = [o for o in cell.all_objects if "precombined_instance" in o]
    assert copies and {o["reference_form_id"] for o in copies if "reference_form_id" in o}.isdisjoint(set(found))


def test_corpus_moved_combined_reference_breaks_the_precombines(clean_scene, corpus, tmp_path):
    """A reference of 00001E58's precombines moved: its override differs from the plugin's REFR
    in DATA alone (both read by the test's reader), and the export says the precombines broke."""
    import bpy

    folder = corpus / "ck-precombined"
    module = __import__(next(m for m in __import__("sys").modules if m.endswith(".io.plugin.cell_export")),
                        fromlist=["export_cell"])
    cell = import_cell(folder, CORPUS_CELL, precombined="MODELS")
    combined = next(o for o in references(cell).values() if o["cell_combined"] and ":" not in o["reference_form_id"])
    combined.location.y -= 64.0
    bpy.context.view_layer.update()
    output = tmp_path / "Moved.esp"
    written, messages = module.export_cell(cell, output)
    assert written and any("the precombines are broken" in m and "Build Precombines" in m for m in messages)
    stored = 0x01000000 | int(combined["reference_form_id"], 16) & 0xFFFFFF
    original = next(r for r in independent_records((folder / "AlootHomePlate.esp").read_bytes())
                    if r["form_id"] == stored)
    records = independent_records(output.read_bytes())
    assert sorted(r["type"] for r in records) == ["CELL", "REFR"]
    override = next(r for r in records if r["type"] == "REFR")
    assert override["form_id"] == stored and override["flags"] == original["flags"]
    assert {k: v for k, v in override["fields"].items() if k != "DATA"} == \
        {k: v for k, v in original["fields"].items() if k != "DATA"}
    x, y, z, *angles = struct.unpack("<6f", override["fields"]["DATA"][0])
    ox, oy, oz, *old = struct.unpack("<6f", original["fields"]["DATA"][0])
    assert (x, y, z) == pytest.approx((ox, oy - 64.0, oz), abs=1e-3) and angles == old


def test_scol_as_one_object(clean_scene, written_cell):
    """SCOL option One Object: the SCOL's own model, no parts."""
    data, expected = written_cell
    cell = import_cell(data, f"{CELL:08X}", precombined="MODELS", scol="OBJECT")
    scol = references(cell)["00000801"]
    assert scol.instance_type == "COLLECTION" and not scol.children
    assert scol.instance_collection["base_model"] == MODELS[1]
    assert np.allclose(np.array(scol.matrix_world), game_matrix(*expected[0x801][:3]), atol=1e-4)


def test_corpus_cell_four_edits_written_and_reimported(clean_scene, corpus, tmp_path):
    """00001E58: one reference moved, one deleted, one duplicated and one added from a corpus
    model (Add > Game Reference finds its base): the plugin holds those four records' changes
    (and the CELL they go under), read by the test's reader; with it in the load order the
    cell's import has all four where they were left."""
    import bpy

    source = corpus / "ck-precombined"
    data = tmp_path / "Data"
    data.mkdir()
    for name in ("AlootHomePlate.esp", "Meshes", "meshes"):
        (data / name).symlink_to(source / name)
    cell = import_cell(data, CORPUS_CELL, precombined="MODELS")
    own = [o for o in references(cell).values() if not o["cell_combined"] and ":" not in o["reference_form_id"]
           and o.parent is None and o.instance_type == "COLLECTION"]
    moved, deleted, original = own[0], own[1], own[2]
    names = {"moved": moved["reference_form_id"], "deleted": deleted["reference_form_id"]}
    moved.location.x -= 32.0
    bpy.data.objects.remove(deleted)
    copy = original.copy()
    original.users_collection[0].objects.link(copy)
    copy.location.y += 48.0
    bpy.context.view_layer.objects.active = moved
    bpy.context.scene.cursor.location = (100.0, 200.0, 10.0)
    assert bpy.ops.object.add_game_reference(model="aloot\\HomePlate\\ALOOT_HP_DogBed.nif") == {"FINISHED"}
    added = bpy.context.active_object
    assert added["base_editor_id"] == "ALOOT_HP_DogBed"
    bpy.context.view_layer.update()
    left = [np.array(o.matrix_world) for o in (moved, copy, added)]
    bpy.context.view_layer.objects.active = moved
    assert bpy.ops.export_scene.cell_plugin(filepath=str(data / "CellEdits.esp")) == {"FINISHED"}

    records = independent_records((data / "CellEdits.esp").read_bytes())
    assert sorted(r["type"] for r in records) == ["CELL", "REFR", "REFR", "REFR", "REFR"]
    refrs = [r for r in records if r["type"] == "REFR"]
    stored = {key: 0x01000000 | int(value, 16) & 0xFFFFFF for key, value in names.items()}
    assert {r["form_id"] for r in refrs if r["form_id"] >> 24 == 1} == set(stored.values())
    assert [r["flags"] & 0x800 for r in refrs if r["form_id"] == stored["deleted"]] == [0x800]
    new = [r for r in refrs if r["form_id"] >> 24 == 2]
    base = int(added["base_form_id"], 16) & 0xFFFFFF | 0x01000000
    assert sorted(struct.unpack("<I", r["fields"]["NAME"][0])[0] for r in new) == sorted(
        [base, 0x01000000 | int(original["base_form_id"], 16) & 0xFFFFFF])

    (tmp_path / "plugins.txt").write_text("*AlootHomePlate.esp\n*CellEdits.esp\n")
    again = import_cell(data, CORPUS_CELL, precombined="MODELS", plugins_txt=str(tmp_path / "plugins.txt"))
    found = references(again)
    assert np.allclose(np.array(found[names["moved"]].matrix_world), left[0], atol=1e-3)
    assert found[names["deleted"]]["cell_flags"] & 0x800
    fresh = [o for o in found.values() if o["reference_plugin"] == "CellEdits.esp" and int(o["reference_form_id"], 16) >> 24 == 1]
    assert len(fresh) == 2
    for obj in fresh:
        wanted = left[2] if obj["base_form_id"] == added["base_form_id"] else left[1]
        assert np.allclose(np.array(obj.matrix_world), wanted, atol=1e-3)
