"""The merged physics of a cell follows its copies where each copy's collision is known: three
copies of a corpus crate placed by the REFRs of a plugin written here, the cell's _Physics.nif
made as the Creation Kit makes it (every copy's collision placed where its reference stands, one
compressed mesh around their centre, and a floor no copy owns); one copy moved, one deleted, one
duplicated: the moved copy's triangles are where it now stands, the deleted one's are gone, the
duplicate's are added, the rest stay."""

import importlib
import shutil
import struct

import numpy as np
import pytest
from plugin_writer import cell_with_children, group, interior_cells, plugin, precombined_cell, record, stamp, static
from precombined_builder import block_bytes, make_object, rotation_z
from support import CORPUS

from precombined_nif.core.havok import Packfile, PhysicsSystemData, add_body, build_compressed_mesh
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.header import Header
from precombined_nif.core.precombined import physics

MODEL = CORPUS / "pynifly/tests/tests/FO4/Meshes/Props/CrateDeathclaw01.nif"
CELL, MESH = 0xABCD, 0x11111111
CELL_NAME = f"{CELL:08X}_{MESH:08X}_OC.nif"
REFRS = (0x900, 0x901, 0x902)
FLOOR = np.array([[[-3000, -3000, -50], [3000, -3000, -50], [3000, 3000, -50]],
                  [[-3000, -3000, -50], [3000, 3000, -50], [-3000, 3000, -50]]], np.float64)


def placements():
    """The three copies: rotation about z (a NIF instance's rows), translation, scale."""
    obj = make_object(0, 3)
    for k, instance in enumerate(obj["instances"]):
        instance["translation"] = [600.0 * k, 250.0 * k, 10.0]
        instance["rotation"] = rotation_z(0.4 * k)
        instance["scale"] = 1.0 + 0.25 * k
    return obj


def matrix(instance):
    out = np.eye(4)
    out[:3, :3] = np.array(instance["rotation"]) * instance["scale"]
    out[:3, 3] = instance["translation"]
    return out


def model_triangles():
    return physics.source_triangles(NifFile.read(MODEL)).triangles


def placed(m, triangles):
    return (triangles.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]).reshape(-1, 3, 3)


def physics_nif(triangles, centre):
    """A _Physics.nif as the CK writes one: a root node at ``centre`` holding one body, one
    compressed mesh of every triangle relative to it."""
    vertices = triangles.reshape(-1, 3) - centre
    shape = build_compressed_mesh(vertices, np.arange(len(vertices)).reshape(-1, 3))
    system = PhysicsSystemData()
    add_body(system, shape)
    root = NiNode("NiNode", name=f"{CELL:08X}_Physics", translation=tuple(centre), collision_object=1)
    collision = bhkNPCollisionObject(target=0, flags=0x80, data=2, body_id=0)
    blocks = [root, collision, bhkSystem("bhkPhysicsSystem", packfile=Packfile(system).to_bytes())]
    return NifFile(Header(user_version=12, bs_version=130), blocks, roots=[0])


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "Data"
    (folder / "Meshes" / "Props").mkdir(parents=True)
    (folder / "Meshes" / "PreCombined").mkdir()
    shutil.copyfile(MODEL, folder / "Meshes" / "Props" / MODEL.name)
    obj = placements()
    cell = folder / "Meshes" / "PreCombined" / CELL_NAME
    root = NiNode("BSFadeNode", name="cell", extra_data=[1])
    NifFile(Header(), [root, RawBlock("BSPackedCombinedSharedGeomDataExtra", block_bytes([obj], "inline"))], [0]).write(cell)
    refrs = []
    for form_id, instance in zip(REFRS, obj["instances"]):
        angle = np.arctan2(instance["rotation"][1][0], instance["rotation"][0][0])
        fields = [("NAME", struct.pack("<I", 0x800)), ("XSCL", struct.pack("<f", instance["scale"])),
                  ("DATA", struct.pack("<6f", *instance["translation"], 0, 0, -angle))]  # the game turns by -z
        refrs.append(record("REFR", form_id, fields))
    pcmb = stamp(2024, 5, 1)
    cell_record = precombined_cell(CELL, [MESH], list(REFRS), pcmb=pcmb, visi=pcmb)
    statics = group("STAT", [static(0x800, "TestCrate", f"Props\\{MODEL.name}")])
    (folder / "Test.esp").write_bytes(plugin([], [statics, interior_cells(cell_with_children(cell_record, CELL, temporary=refrs))]))
    merged = np.concatenate([placed(matrix(i), model_triangles()) for i in obj["instances"]] + [FLOOR])
    centre = (merged.reshape(-1, 3).min(axis=0) + merged.reshape(-1, 3).max(axis=0)) / 2
    physics_nif(merged, centre).write(folder / "Meshes" / "PreCombined" / f"{CELL:08X}_Physics.nif")
    return folder


def merged_triangles(path):
    nif = NifFile.read(path)
    (body,) = physics.mesh_bodies(nif)
    vertices, triangles = body[3].mesh()
    return (vertices @ body[2][:3, :3].T + body[2][:3, 3])[triangles]


def found(triangles, within, tolerance=1.5):
    """How many of ``triangles`` have a triangle of ``within`` on the same corners (any turn)."""
    count = 0
    for triangle in triangles:
        near = np.abs(within.mean(axis=1) - triangle.mean(axis=0)).max(axis=1) <= tolerance
        count += any(np.abs(np.roll(t, turn, axis=0) - triangle).max() <= tolerance for t in within[near] for turn in range(3))
    return count


def imported_copies(addon, data):
    """(the cell file, its collection, {REFR FormID: copy}) of the test cell imported with its plugin."""
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    path = data / "Meshes" / "PreCombined" / CELL_NAME
    (collection,), _ = file_import.import_cells(bpy.context, [str(path)], plugins=[str(data / "Test.esp")])
    return path, collection, {int(o["reference_form_id"], 16): o for o in collection.all_objects if "reference_form_id" in o}


def test_moved_and_deleted_copies_collision_follows_them(clean_scene, addon, data):
    import bpy

    exporter = importlib.import_module(f"{addon.__name__}.io.precombined.exporter")
    cell_outputs = importlib.import_module(f"{addon.__name__}.io.precombined.cell_outputs")
    path, collection, copies = imported_copies(addon, data)
    assert sorted(copies) == list(REFRS)
    copies[REFRS[1]].location.x += 200.0
    bpy.data.objects.remove(copies[REFRS[2]])
    twin = copies[REFRS[0]].copy()  # a linked duplicate (Alt+D)
    collection.objects.link(twin)
    twin.location.y -= 900.0
    bpy.context.view_layer.update()
    before = [matrix(i) for i in placements()["instances"]]
    after = before[1].copy()
    after[0, 3] += 200.0
    plan = exporter.export_cell(str(path), list(collection.all_objects), plugins=[str(data / "Test.esp")],
                                patch=cell_outputs.PatchOptions(str(data / "Patch.esp")))
    assert not [m for m in plan.messages if "collision" in m], plan.messages
    written = merged_triangles(data / "Meshes" / "PreCombined" / f"{CELL:08X}_Physics.nif")
    model = model_triangles()
    assert len(written) == 3 * len(model) + len(FLOOR)  # one copy's triangles gone, a new one's added
    assert found(placed(before[0], model), written) == len(model)  # untouched
    assert found(placed(np.array(twin.matrix_world), model), written) == len(model)  # the duplicate's
    assert found(placed(after, model), written) == len(model)  # moved with its copy
    assert found(placed(before[1], model), written) < len(model) / 4  # not left behind (a crate overlaps its shift)
    assert found(placed(before[2], model), written) == 0  # deleted
    assert found(FLOOR, written) == 2


def test_a_copy_whose_model_is_not_at_hand_is_named(clean_scene, addon, data):
    import bpy

    (data / "Meshes" / "Props" / MODEL.name).unlink()
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    exporter = importlib.import_module(f"{addon.__name__}.io.precombined.exporter")
    path = data / "Meshes" / "PreCombined" / CELL_NAME
    physics_before = (data / "Meshes" / "PreCombined" / f"{CELL:08X}_Physics.nif").read_bytes()
    (collection,), _ = file_import.import_cells(bpy.context, [str(path)], plugins=[str(data / "Test.esp")])
    moved = next(o for o in collection.all_objects if o.get("reference_form_id") == f"{REFRS[1]:08X}")
    moved.location.x += 200.0
    bpy.context.view_layer.update()
    plan = exporter.export_cell(str(path), list(collection.all_objects), plugins=[str(data / "Test.esp")])
    (message,) = [m for m in plan.messages if "collision" in m]
    assert message.startswith(f"{moved.name}: collision left where it was") and f"Props\\{MODEL.name}" in message
    assert (data / "Meshes" / "PreCombined" / f"{CELL:08X}_Physics.nif").read_bytes() == physics_before
