"""Connect points, furniture markers and BSBound as empties in real Blender: placed where the
file bytes (read here with struct) put them, written back byte for byte untouched, and moved
ones written and re-imported with the edit."""

import math
import struct

import numpy as np
import pytest

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.connect_points import BSConnectPointChildren, BSConnectPointParents
from precombined_nif.core.nif.blocks.extra_data import BSBound
from precombined_nif.core.nif.blocks.markers import BSFurnitureMarker

from raw_extra_data import CHAIR, SHOTGUN, SKELETON, block_bytes, points_in_bytes, quaternion_matrix, with_extra_block
from scene import export, imported, panel_drawn

FILES = [SHOTGUN, CHAIR, SKELETON, "pynifly/tests/tests/FO4/Shotgun/CombatShotgunBarrel.nif"]


def empties(collection, kind):
    return {obj.name: obj for obj in collection.objects if obj.get("nif_extra_kind") == kind}


def local(obj):
    return np.array(obj.matrix_parent_inverse @ obj.matrix_basis, np.float64)


@pytest.mark.parametrize("name", FILES)
def test_untouched_import_writes_back_byte_identical(clean_scene, corpus, tmp_path, name):
    path = corpus / name
    collection = imported(path)
    assert any("nif_extra_kind" in obj for obj in collection.objects)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


def test_connect_points_are_empties_where_the_bytes_put_them(clean_scene, corpus):
    path = corpus / SHOTGUN
    expected = points_in_bytes(path.read_bytes(), "WeaponMagazine")
    collection = imported(path)
    points = empties(collection, "connect_point")
    assert set(points) == set(expected)
    for name, (parent, rotation, translation, scale) in expected.items():
        obj = points[name]
        assert obj.parent.name == parent  # the node named as the point's parent
        matrix = local(obj)
        assert np.allclose(matrix[:3, 3], translation, atol=1e-5)
        assert np.allclose(matrix[:3, :3], quaternion_matrix(*rotation) * scale, atol=1e-5)
    assert set(empties(collection, "connect_child")) == {"C-Receiver", "C-Reciever"}


def test_moved_connect_point_is_written_and_reimported(clean_scene, corpus, tmp_path):
    from mathutils import Matrix

    import bpy

    path = corpus / SHOTGUN
    collection = imported(path)
    scope = empties(collection, "connect_point")["P-Scope"]
    edit = Matrix.Translation((1.5, -2.0, 3.25)) @ Matrix.Rotation(math.radians(30), 4, "X")
    scope.matrix_basis = edit @ scope.matrix_basis
    wanted = local(scope)
    out = tmp_path / "moved.nif"
    nif = export(collection, out)
    (block,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    written = {point.name: point for point in block.points}
    point = written["P-Scope"]
    assert point.parent == "CombatShotgunReceiver"
    assert np.allclose(point.translation, wanted[:3, 3], atol=1e-4)
    assert np.allclose(quaternion_matrix(*point.rotation), wanted[:3, :3], atol=1e-5)
    # the others are as stored, and the written bytes say the same
    stored = points_in_bytes(path.read_bytes(), "WeaponMagazine")
    again = points_in_bytes(out.read_bytes(), "WeaponMagazine")
    for name, values in stored.items():
        if name != "P-Scope":
            assert again[name] == values
    assert np.allclose(again["P-Scope"][2], wanted[:3, 3], atol=1e-4)
    for obj in list(collection.objects):
        bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    reimported = imported(out)
    assert np.allclose(local(empties(reimported, "connect_point")["P-Scope"]), wanted, atol=1e-4)


def test_furniture_markers_and_a_moved_one(clean_scene, corpus, tmp_path):
    import bpy

    path = corpus / CHAIR
    data = path.read_bytes()
    source = NifFile.read(path)
    (index,) = [i for i, b in enumerate(source.blocks) if isinstance(b, BSFurnitureMarker)]
    raw = block_bytes(data, source, index)
    collection = imported(path)
    markers = empties(collection, "furniture")
    assert len(markers) == 4
    for number in range(4):
        x, y, z, heading, kind, entry = struct.unpack_from("<4f2H", raw, 8 + 20 * number)
        obj = markers[f"FRN:{number}"]
        matrix = local(obj)
        assert np.allclose(matrix[:3, 3], (x, y, z), atol=1e-5)
        assert math.isclose(math.atan2(matrix[1, 0], matrix[0, 0]), math.remainder(heading, 2 * math.pi), abs_tol=1e-5)
        assert (obj["nif_animation_type"], obj["nif_entry_points"]) == (kind, entry)
    marker = markers["FRN:2"]
    marker.location = (10.0, -20.0, 40.0)
    marker.rotation_quaternion = (math.cos(0.25), 0.0, 0.0, math.sin(0.25))  # 0.5 rad about Z
    marker["nif_entry_points"] = 5
    out = tmp_path / "chair.nif"
    nif = export(collection, out)
    (block,) = [b for b in nif.blocks if isinstance(b, BSFurnitureMarker)]
    moved = block.positions[2]
    assert np.allclose(moved.offset, (10.0, -20.0, 40.0)) and math.isclose(moved.heading, 0.5, abs_tol=1e-6)
    assert moved.entry_points == 5
    assert [p.offset for i, p in enumerate(block.positions) if i != 2] == [
        p.offset for i, p in enumerate(source.blocks[index].positions) if i != 2
    ]
    for obj in list(collection.objects):
        bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    again = empties(imported(out), "furniture")["FRN:2"]
    assert np.allclose(local(again)[:3, 3], (10.0, -20.0, 40.0), atol=1e-5)
    assert again["nif_entry_points"] == 5


def test_bound_box_is_a_cube_empty(clean_scene, corpus, tmp_path):
    path = corpus / SKELETON
    source = NifFile.read(path)
    (index,) = [i for i, b in enumerate(source.blocks) if isinstance(b, BSBound)]
    centre_and_size = struct.unpack_from("<6f", block_bytes(path.read_bytes(), source, index), 4)
    collection = imported(path)
    (box,) = empties(collection, "bound").values()
    assert box.empty_display_type == "CUBE"
    matrix = local(box)
    assert np.allclose(matrix[:3, 3], centre_and_size[:3]) and np.allclose(np.diag(matrix)[:3], centre_and_size[3:])
    box.scale = (30.0, 20.0, 70.0)
    nif = export(collection, tmp_path / "box.nif")
    (block,) = [b for b in nif.blocks if isinstance(b, BSBound)]
    assert np.allclose(block.dimensions, (30.0, 20.0, 70.0)) and np.allclose(block.center, centre_and_size[:3])


def _connect_point_files():
    from support import corpus_files_holding

    return corpus_files_holding("**/*.nif", b"BSConnectPoint::Parents")


@pytest.mark.slow
@pytest.mark.parametrize("path", _connect_point_files(), ids=lambda p: p.name)
def test_every_connect_point_sits_where_its_parent_node_puts_it(clean_scene, path):
    """In the world: the parent node's world matrix in the file (the node holding the block when
    the parent names no node) composed with the point's rotation, translation and scale, the
    parent a plain node, a shape or a skeleton bone."""
    from precombined_nif.core.nif.scene_graph import world_matrix

    nif = NifFile.read(path)
    nodes = {}
    for index, block in enumerate(nif.blocks):
        if hasattr(block, "children"):
            nodes.setdefault(block.name, index)
    expected = []
    for index, block in enumerate(nif.blocks):
        for ref in np.asarray(getattr(block, "extra_data", ())).tolist():
            if isinstance(nif.blocks[ref], BSConnectPointParents):
                for point in nif.blocks[ref].points:
                    parent = nodes.get(point.parent, index)
                    local = np.eye(4)
                    local[:3, :3] = quaternion_matrix(*point.rotation) * point.scale
                    local[:3, 3] = point.translation
                    expected.append((point.name, world_matrix(nif, parent) @ local))
    collection = imported(path)
    points = sorted(
        (o for o in collection.objects if o.get("nif_extra_kind") == "connect_point"), key=lambda o: o["nif_extra_item"]
    )
    assert len(points) == len(expected)
    for obj, (name, world) in zip(points, expected):
        assert obj.name.split(".")[0] == name
        assert np.allclose(np.array(obj.matrix_world), world, atol=1e-3), name


def test_new_connect_points_join_the_file(clean_scene, corpus, tmp_path):
    """An empty marked as a connect point joins the root's parent block, hung from its parent's
    node; a new child name joins the child block; in a new file both blocks are made."""
    import bpy
    from mathutils import Matrix

    path = corpus / SHOTGUN
    collection = imported(path)
    receiver = bpy.data.objects["CombatShotgunReceiver"]
    point = bpy.data.objects.new("P-Laser", None)
    collection.objects.link(point)
    point["nif_extra_kind"] = "connect_point"
    point.parent = receiver
    point.matrix_basis = Matrix.Translation((0.0, 12.0, -1.5))
    child = bpy.data.objects.new("C-Stock", None)
    collection.objects.link(child)
    child["nif_extra_kind"] = "connect_child"
    nif = export(collection, tmp_path / "new.nif")
    (parents,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    added = parents.points[-1]
    assert (added.name, added.parent, added.translation, added.scale) == ("P-Laser", "CombatShotgunReceiver", (0.0, 12.0, -1.5), 1.0)
    assert np.allclose(added.rotation, (1, 0, 0, 0))
    assert [p.name for p in parents.points[:-1]] == ["P-Mag", "P-Grip", "P-Barrel", "P-Casing", "P-Scope"]
    (children,) = [b for b in nif.blocks if isinstance(b, BSConnectPointChildren)]
    assert children.point_names == ["C-Receiver", "C-Reciever", "C-Stock"]

    cube = bpy.data.objects.new("Gun Part", bpy.data.meshes.new("Gun Part"))
    cube.data.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    bpy.context.scene.collection.objects.link(cube)
    fresh = bpy.data.objects.new("P-Fresh", None)
    bpy.context.scene.collection.objects.link(fresh)
    fresh["nif_extra_kind"] = "connect_point"
    fresh.parent = cube
    fresh.location = (0.25, 0.5, 0.75)
    bpy.ops.object.select_all(action="DESELECT")
    cube.select_set(True)
    fresh.select_set(True)
    out = tmp_path / "fresh.nif"
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    written = NifFile.read(out)
    (parents,) = [b for b in written.blocks if isinstance(b, BSConnectPointParents)]
    root = written.blocks[written.roots[0]]
    assert written.blocks.index(parents) in np.asarray(root.extra_data).tolist()
    (point,) = parents.points
    assert (point.name, point.parent) == ("P-Fresh", "Gun Part") and np.allclose(point.translation, (0.25, 0.5, 0.75))


def test_damaged_constraint_is_left_out_and_the_file_kept(clean_scene, corpus, tmp_path):
    """A constraint whose atoms are not what its class holds is reported, the others shown, and
    the untouched export is still the file."""
    import bpy

    from precombined_nif.core.havok import Packfile

    path = corpus / SKELETON
    data = bytearray(path.read_bytes())
    nif = NifFile.read(path)
    (system,) = [b for b in nif.blocks if b.type_name == "bhkRagdollSystem"]
    constraint = Packfile.from_bytes(system.packfile).root.constraints[0].constraint_data.data
    at = bytes(data).index(constraint)
    data[at + 0x20] = 0x33  # the local transforms atom's type
    damaged = tmp_path / "damaged.nif"
    damaged.write_bytes(bytes(data))
    collection = imported(damaged)
    shown = [o for o in collection.objects if o.get("nif_extra_kind") == "constraint"]
    assert len(shown) == 16 and 0 not in [o["nif_extra_item"] for o in shown]
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == bytes(data)


def test_inventory_marker_and_fo3_furniture(clean_scene, corpus, tmp_path):
    """Neither is in the corpus: an INV marker on the chair and an FO3-layout FRN marker on an FNV
    mesh, their block bytes built here, shown, turned and moved, written back."""
    import bpy
    from mathutils import Euler

    nif, index = with_extra_block(corpus, "BSInvMarker", struct.pack("<3Hf", 4712, 959, 0, 1.25))
    source = tmp_path / "inv.nif"
    nif.write(source)
    collection = imported(source)
    (marker,) = empties(collection, "inventory_marker").values()
    assert np.allclose(local(marker)[:3, :3], np.array(Euler((4.712, 0.959, 0.0), "XYZ").to_matrix()), atol=1e-6)
    assert marker["nif_zoom"] == 1.25
    export(collection, tmp_path / "same.nif")
    assert (tmp_path / "same.nif").read_bytes() == source.read_bytes()
    marker.rotation_mode = "XYZ"
    marker.rotation_euler = (0.5, 0.0, 1.5)
    marker["nif_zoom"] = 2.0
    block = export(collection, tmp_path / "turned.nif").blocks[index]
    assert (block.rotation_x, block.rotation_y, block.rotation_z, block.zoom) == (500, 0, 1500, 2.0)

    payload = struct.pack("<I3fHBB", 1, 1.5, -2.0, 30.0, 3, 7, 7)
    nif, index = with_extra_block(corpus, "BSFurnitureMarker", payload, "pynifly/tests/tests/FONV/9mmscp.nif")
    source = tmp_path / "frn.nif"
    nif.write(source)
    collection = imported(source)
    (marker,) = empties(collection, "furniture").values()
    assert np.allclose(local(marker)[:3, 3], (1.5, -2.0, 30.0))
    assert (marker["nif_orientation"], marker["nif_position_ref_1"], marker["nif_position_ref_2"]) == (3, 7, 7)
    export(collection, tmp_path / "same.nif")
    assert (tmp_path / "same.nif").read_bytes() == source.read_bytes()
    marker.location.x = 4.0
    marker["nif_position_ref_1"] = 300
    with pytest.raises(RuntimeError, match="position_ref_1"):
        bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "bad.nif"))
    marker["nif_position_ref_1"] = 8
    position = export(collection, tmp_path / "moved.nif").blocks[index].positions[0]
    assert (position.offset, position.position_ref_1, position.orientation) == ((4.0, -2.0, 30.0), 8, 3)


def test_panel_and_add_connect_point_operator(clean_scene, corpus, tmp_path):
    """The NIF Markers panel is registered; the operator adds a parent point under the active
    object, which the export writes into the file's parent block."""
    import bpy

    assert hasattr(bpy.types, "OBJECT_PT_nif_markers")
    collection = imported(corpus / SHOTGUN)
    receiver = bpy.data.objects["CombatShotgunReceiver"]
    bpy.context.view_layer.objects.active = receiver
    assert bpy.ops.object.nif_add_connect_point(kind="connect_point", name="P-Light") == {"FINISHED"}
    added = bpy.data.objects["P-Light"]
    assert added.parent == receiver and added.get("nif_extra_kind") == "connect_point"
    added.location = (0.0, 5.0, 1.0)
    nif = export(collection, tmp_path / "light.nif")
    (block,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    assert (block.points[-1].name, block.points[-1].parent, block.points[-1].translation) == ("P-Light", "CombatShotgunReceiver", (0.0, 5.0, 1.0))


def test_panel_draws_every_kind(clean_scene, corpus):
    import bpy

    panel = bpy.types.OBJECT_PT_nif_markers
    objects = [obj for name in (SHOTGUN, CHAIR, SKELETON) for obj in imported(corpus / name).objects]
    kinds = set()
    for obj in objects:
        drawn = panel_drawn(panel, obj)
        if "nif_extra_kind" not in obj:
            assert drawn == [("menu", "object.nif_add_connect_point")]
            continue
        kinds.add(obj["nif_extra_kind"])
        texts = [text for _, text in drawn]
        if obj["nif_extra_kind"] == "furniture":
            assert {"Animation Type", "Entry Points"} <= set(texts)
        if obj.get("havok_constraint") == "ragdoll":
            assert {"Twist Min", "Cone Max", "Plane Max", "Max Friction Torque"} <= set(texts)
            assert f"Body B: {obj['havok_body_b']}" in texts
    assert kinds == {"connect_point", "connect_child", "furniture", "bound", "constraint"}


def test_connect_points_are_left_out_of_fo3_files(clean_scene, corpus, tmp_path):
    import bpy

    collection = imported(corpus / SHOTGUN)
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    out = tmp_path / "fo3.nif"
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), game="FO3") == {"FINISHED"}
    nif = NifFile.read(out)
    assert nif.header.game == "FO3"
    assert not [b for b in nif.blocks if "ConnectPoint" in b.type_name]


def test_moved_connect_point_under_a_bone(clean_scene, corpus, tmp_path):
    """A point hung from a skeleton bone of a skinned mesh, moved in the world: written in its
    bone node's space, where the file's node world matrix puts it back."""
    import bpy
    from mathutils import Matrix

    from precombined_nif.core.nif.scene_graph import world_matrix

    path = corpus / "pynifly/tests/tests/FO4/AnimatronicNormalWoman-simple.nif"
    collection = imported(path)
    helmet = empties(collection, "connect_point")["P-ArmorHelmet"]
    assert helmet.parent_type == "BONE" and helmet.parent_bone == "HEAD"
    helmet.matrix_world = Matrix.Translation((0.0, 2.0, 5.0)) @ helmet.matrix_world
    bpy.context.view_layer.update()
    wanted = np.array(helmet.matrix_world)
    nif = export(collection, tmp_path / "helmet.nif")
    (block,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    point = next(p for p in block.points if p.name == "P-ArmorHelmet")
    assert point.parent == "HEAD"
    head = next(i for i, b in enumerate(nif.blocks) if getattr(b, "name", None) == "HEAD" and hasattr(b, "children"))
    placed = world_matrix(nif, head)
    placed_point = placed @ np.block([[quaternion_matrix(*point.rotation) * point.scale, np.array(point.translation)[:, None]], [np.zeros((1, 3)), np.ones((1, 1))]])
    assert np.allclose(placed_point, wanted, atol=1e-3)


def test_renamed_connect_point_and_child(clean_scene, corpus, tmp_path):
    collection = imported(corpus / SHOTGUN)
    empties(collection, "connect_point")["P-Grip"].name = "P-Handle"
    empties(collection, "connect_child")["C-Reciever"].name = "C-Receiver.001"  # a duplicate name stays one
    nif = export(collection, tmp_path / "renamed.nif")
    (parents,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    assert [p.name for p in parents.points] == ["P-Mag", "P-Handle", "P-Barrel", "P-Casing", "P-Scope"]
    (children,) = [b for b in nif.blocks if isinstance(b, BSConnectPointChildren)]
    assert children.point_names == ["C-Receiver", "C-Receiver"]
