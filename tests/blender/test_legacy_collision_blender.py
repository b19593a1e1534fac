"""Fallout 3 / New Vegas Havok collision in real Blender: bodies imported under their owners with
the Fallout 4 collision properties, placed where the bytes put them (read independently by
tests/raw_havok.py and tests/raw_nodes.py), and written back: untouched byte for byte, edited
boxes and new convex bodies re-encoded, edited packed meshes written with new MOPP code."""

import struct

import numpy as np
import pytest
from raw_havok import (
    PACKED_SUB_SHAPES,
    PACKED_TRIANGLES,
    SHAPE_NODES,
    UNITS,
    collision_bodies,
    every_shape_file,
    read_shape,
    shape_vertices,
    xbox_file,
)
from raw_nodes import read_nodes, world_matrices
from scene import bounds, export_bytes, imported, panel_drawn, world_points

from precombined_nif.core.havok import mopp
from precombined_nif.core.nif import NifFile

FONV = "pynifly/tests/tests/FONV"
LEGACY_FILES = [f"{FONV}/9mmscp.nif", f"{FONV}/22smg.nif"]  # every FO3/FNV corpus file with collision
MOTIONS = {7: "static", 6: "keyframed"}


def bodies_of(collection):
    return {obj.parent["nif_block"]: obj for obj in collection.all_objects if "nif_collision" in obj}


def raw_world_points(path, owner):
    """The same points from the bytes: owner's world matrix, the body's translation and rotation
    when it is a bhkRigidBodyT, the shape tree in Havok units times the FO3/FNV scale."""
    matrix, body, blocks = raw_body_frame(path, owner)
    return shape_vertices(blocks, body["shape"], matrix), body


def raw_body_frame(path, owner):
    """(where the body puts its shapes in the world, body dict, blocks), from the bytes."""
    bodies, blocks = collision_bodies(path)
    nodes, roots = read_nodes(path)
    world = world_matrices(nodes, roots)[owner]
    _, body, body_type = bodies[owner]
    matrix = world.copy()
    if body_type == "bhkRigidBodyT":
        x, y, z, w = body["rotation"]
        rotation = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])
        local = np.eye(4)
        local[:3, :3] = rotation
        local[:3, 3] = body["translation"] * UNITS
        matrix = world @ local
    return matrix, body, blocks


def mesh_bounds(owner):
    """World bounds of the NIF meshes below ``owner`` (collision objects left out)."""
    points = []
    stack = list(owner.children)
    while stack:
        obj = stack.pop()
        if "havok_shape" in obj:
            continue
        stack.extend(obj.children)
        if obj.type == "MESH" and len(obj.data.vertices):
            points.append(world_points(obj))
    return bounds(np.concatenate(points))


@pytest.fixture
def every_shape(corpus, tmp_path):
    path = tmp_path / "every_shape.nif"
    path.write_bytes(every_shape_file(corpus / f"{FONV}/9mmscp.nif"))
    return path


# -- import ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LEGACY_FILES)
def test_corpus_bodies_hold_the_values_of_the_bytes_and_sit_in_their_meshes(clean_scene, corpus, name):
    path = corpus / name
    collection = imported(path)
    bodies = bodies_of(collection)
    expected, _ = collision_bodies(path)
    assert sorted(bodies) == sorted(expected)
    for owner, obj in bodies.items():
        points, body = raw_world_points(path, owner)
        assert obj["havok_shape"] == "convex" and obj.hide_render and obj.display_type == "WIRE"
        assert obj["havok_mass"] == pytest.approx(body["mass"]) and obj["havok_layer"] == body["layer"]
        assert obj["havok_friction"] == pytest.approx(body["friction"])
        assert obj["havok_restitution"] == pytest.approx(body["restitution"])
        assert obj["havok_motion"] == MOTIONS.get(body["motion"], "dynamic")
        got = bounds(world_points(obj))
        np.testing.assert_allclose(got, bounds(points), atol=1e-4)
        # Placement: the body lies within its node's meshes and spans most of them.
        low, high = mesh_bounds(obj.parent)
        margin = 0.05 * (high - low).max()
        assert (got[0] >= low - margin).all() and (got[1] <= high + margin).all()
        assert (got[1] - got[0]).max() >= 0.8 * (high - low).max()


def test_scope_body_wraps_the_scope(clean_scene, corpus):
    """9mmscp.nif: the convex body spans the gun and its scope (the scope's mesh is inside it)."""
    collection = imported(corpus / f"{FONV}/9mmscp.nif")
    body = bodies_of(collection)[0]
    scope = next(obj for obj in collection.all_objects if obj.name.startswith("Scope:0"))
    low, high = bounds(world_points(body))
    scope_low, scope_high = bounds(world_points(scope))
    margin = body["havok_radius"] + 0.5
    assert (scope_low >= low - margin).all() and (scope_high <= high + margin).all()


def test_every_shape_kind_is_placed_as_the_bytes_say(clean_scene, every_shape):
    collection = imported(every_shape)
    bodies = bodies_of(collection)
    assert sorted(bodies) == sorted([0, *SHAPE_NODES])
    kinds = {owner: bodies[owner]["havok_shape"] for owner in SHAPE_NODES}
    assert kinds == {18: "box", 23: "list", 28: "packed_mesh", 33: "convex_list"}
    for owner in SHAPE_NODES:
        points, _ = raw_world_points(every_shape, owner)
        np.testing.assert_allclose(bounds(world_points(bodies[owner])), bounds(points), atol=1e-4, err_msg=SHAPE_NODES[owner])
    listed = sorted(child["havok_shape"] for child in bodies[23].children)
    assert listed == ["capsule", "convex", "sphere"]
    sphere = next(child for child in bodies[23].children if child["havok_shape"] == "sphere")
    assert sphere.empty_display_size == pytest.approx(0.2 * UNITS)
    assert bodies[33]["havok_motion"] == "dynamic" and bodies[33]["havok_mass"] == 2.0 and bodies[33]["havok_layer"] == 5
    box = bodies[18]
    assert box["havok_material"] == "0x00000007" and box["havok_radius"] == pytest.approx(0.05 * UNITS)
    packed = bodies[28]
    values = np.empty(len(packed.data.polygons), np.int32)
    packed.data.attributes["havok_material"].data.foreach_get("value", values)
    ends = np.cumsum([count for _, count, _ in PACKED_SUB_SHAPES])
    expected = [PACKED_SUB_SHAPES[np.searchsorted(ends, a, side="right")][2] for a, _, _ in PACKED_TRIANGLES]
    assert values.tolist() == expected


# -- export ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LEGACY_FILES)
def test_untouched_corpus_collision_exports_byte_identical(clean_scene, corpus, tmp_path, name):
    collection = imported(corpus / name)
    assert export_bytes(collection, tmp_path / "out.nif") == (corpus / name).read_bytes()


def test_untouched_every_shape_file_exports_byte_identical(clean_scene, every_shape, tmp_path):
    collection = imported(every_shape)
    assert export_bytes(collection, tmp_path / "out.nif") == every_shape.read_bytes()


def objects_of(collection):
    return list(collection.all_objects)


def exported_blocks(collection, path):
    from precombined_nif.io.nif.exporter import export_nif

    nif, messages = export_nif(str(path), objects_of(collection))
    return NifFile.read(path), messages


def test_scaled_box_exports_and_reimports_with_the_edit(clean_scene, every_shape, tmp_path):
    import bpy

    from raw_havok import block_bytes

    collection = imported(every_shape)
    box = bodies_of(collection)[18]
    box.scale.x *= 2.0
    box["havok_material"] = "0x0000000B"
    box["havok_friction"] = 0.75
    box["havok_layer"] = 9
    bpy.context.view_layer.update()
    edited = bounds(world_points(box))
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    # read back from the bytes: the body keeps its translation and rotation, the box doubles along x
    raw = block_bytes(out.read_bytes())
    bodies, _ = collision_bodies(out)
    _, body, body_type = bodies[18]
    assert body_type == "bhkRigidBodyT"
    np.testing.assert_allclose(body["translation"], (0.25, 0.5, -0.125), atol=1e-6)
    transform = read_shape(*raw[body["shape"]])
    box_shape = read_shape(*raw[transform["shape"]])
    assert raw[body["shape"]][0] == "bhkConvexTransformShape" and raw[transform["shape"]][0] == "bhkBoxShape"
    np.testing.assert_allclose(box_shape["dimensions"], (0.6, 0.2, 0.1), atol=1e-5)
    assert box_shape["material"] == transform["material"] == 11 and box_shape["radius"] == pytest.approx(0.05)
    assert body["friction"] == 0.75 and body["layer"] == 9 and body["motion"] == 7
    np.testing.assert_allclose(transform["matrix"][:3, 3], (0.5, -0.25, 0.125), atol=1e-5)
    np.testing.assert_allclose(transform["matrix"][:2, 0], (np.cos(np.radians(30)), np.sin(np.radians(30))), atol=1e-5)
    np.testing.assert_allclose(bounds(raw_world_points(out, 18)[0]), edited, atol=1e-4)
    # the other bodies are kept as they were (their blocks renumbered)
    for owner in (23, 28, 33):
        np.testing.assert_array_equal(raw_world_points(out, owner)[0], raw_world_points(every_shape, owner)[0])
    clean_reimport = imported(out)
    np.testing.assert_allclose(bounds(world_points(bodies_of(clean_reimport)[18])), edited, atol=1e-4)


def test_new_convex_collision_on_a_new_vegas_mesh(clean_scene, corpus, tmp_path):
    import bpy

    from precombined_nif.io.havok.collision_edit import mark_collision

    collection = imported(corpus / f"{FONV}/9mmscp.nif")
    scope_node = next(obj for obj in collection.all_objects if obj.get("nif_block") == 39)
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    cube = bpy.context.active_object
    for other in cube.users_collection:
        other.objects.unlink(cube)
    collection.objects.link(cube)
    cube.parent = scope_node
    cube.location = (3.0, 1.0, 2.5)
    cube.scale = (4.0, 1.0, 1.0)
    mark_collision(cube, "convex")
    cube["havok_motion"] = "dynamic"
    cube["havok_mass"] = 3.0
    cube["havok_layer"] = 5
    bpy.context.view_layer.update()
    expected = bounds(world_points(cube))
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    bodies, raw = collision_bodies(out)
    assert sorted(bodies) == [0, 39]
    _, body, body_type = bodies[39]
    assert body_type == "bhkRigidBody" and body["mass"] == 3.0 and body["layer"] == 5 and body["motion"] == 4
    assert raw[body["shape"]][0] == "bhkConvexVerticesShape"
    vertices = read_shape(*raw[body["shape"]])["vertices"] * UNITS
    np.testing.assert_allclose(bounds(vertices), expected, atol=1e-4)
    assert len(vertices) == 8
    nif = NifFile.read(out)
    written = nif.blocks[nif.blocks[nif.blocks[39].collision_object].body]
    np.testing.assert_allclose(np.array(written.center[:3]) * UNITS, (3.0, 1.0, 2.5), atol=1e-4)
    # a solid box of mass 3: inertia m/12 (b^2 + c^2) about each axis, Havok units
    size = np.array([8.0, 2.0, 2.0]) / UNITS
    expected_inertia = 3.0 / 12 * (size[[1, 0, 0]] ** 2 + size[[2, 2, 1]] ** 2)
    np.testing.assert_allclose(np.array(written.inertia).reshape(3, 4)[:, :3], np.diag(expected_inertia), atol=1e-5)
    reimported = imported(out)
    body_obj = bodies_of(reimported)[39]
    assert body_obj["havok_shape"] == "convex" and body_obj["havok_motion"] == "dynamic"
    np.testing.assert_allclose(bounds(world_points(body_obj)), expected, atol=1e-4)


@pytest.fixture(params=["pc", "xbox"])
def packed_source(request, every_shape, tmp_path):
    """The every-shape file, and the same with its packed triangle data in the Xbox 360 layout
    (big-endian, half floats: FORMAT-NOTES section 7, packed by hand)."""
    if request.param == "pc":
        return every_shape
    from raw_havok import PACKED_SUB_SHAPES, PACKED_TRIANGLES, PACKED_VERTICES, pack_packed_data

    from precombined_nif.core.nif import RawBlock

    xbox = NifFile.from_bytes(every_shape.read_bytes())
    index = next(i for i, b in enumerate(xbox.blocks) if b.type_name == "hkPackedNiTriStripsData")
    xbox.header.little_endian = 0
    xbox.blocks[index] = RawBlock("hkPackedNiTriStripsData", pack_packed_data(
        PACKED_TRIANGLES, PACKED_VERTICES, PACKED_SUB_SHAPES, order=">", compressed=True), big_endian=True)
    path = tmp_path / "every_shape_xbox.nif"
    path.write_bytes(xbox.to_bytes())
    return path


def test_edited_packed_mesh_exports_with_a_new_mopp(clean_scene, packed_source, tmp_path):
    """Moving a vertex of the MOPP-wrapped packed mesh: the output holds the edit (read with
    struct), the new MOPP code names every triangle and finds each at its centre and corners,
    the materials stay per face, and the file imports again with the edit."""
    from raw_havok import HAND_MOPP, PACKED_SUB_SHAPES
    from raw_mopp import mopp_blocks, shape_triangles

    collection = imported(packed_source)
    packed = bodies_of(collection)[28]
    packed.data.vertices[0].co.x += 1.0
    edited = np.array([v.co[:] for v in packed.data.vertices])
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    ((_, code, origin, scale, type_name, payload, raw),) = mopp_blocks(out.read_bytes())
    vertices, triangles, keys, radius = shape_triangles(type_name, payload, raw)
    assert type_name == "bhkPackedNiTriStripsShape" and radius == pytest.approx(0.1)
    assert code != HAND_MOPP
    written = np.unique(np.round(vertices * UNITS, 4), axis=0)
    np.testing.assert_allclose(written, np.unique(np.round(edited, 4), axis=0), atol=1e-3)
    assert np.array_equal(mopp.program_leaves(code), keys)
    for corners, key in zip(vertices[triangles], keys):
        for point in (*corners, corners.mean(axis=0)):
            assert key in mopp.leaves_at_point(code, origin, scale, point)
    again = bodies_of(imported(out))[28]
    values = np.empty(len(again.data.polygons), np.int32)
    again.data.attributes["havok_material"].data.foreach_get("value", values)
    assert sorted(set(values.tolist())) == sorted({material for _, _, material in PACKED_SUB_SHAPES})
    reread = np.array([v.co[:] for v in again.data.vertices])
    assert np.isclose(reread, edited[0], atol=1e-3).all(axis=1).any()


@pytest.mark.parametrize("code", [bytes.fromhex("0540 31"), bytes.fromhex("36"), b""], ids=["jump-out", "leaf-5-of-5", "empty"])
def test_damaged_mopp_code_is_written_anew(clean_scene, every_shape, tmp_path, code):
    """Stored MOPP code that jumps outside itself, names a sixth of five triangles or is empty:
    the untouched body is exported with new code (and a warning), its triangles unchanged."""
    from raw_havok import block_bytes, pack_mopp
    from raw_mopp import mopp_blocks, shape_triangles

    from precombined_nif.core.nif import RawBlock

    nif = NifFile.read(every_shape)
    index = next(i for i, b in enumerate(nif.blocks) if b.type_name == "bhkMoppBvTreeShape")
    nif.blocks[index] = RawBlock("bhkMoppBvTreeShape", pack_mopp(nif.blocks[index].shape, code))
    damaged = tmp_path / "damaged.nif"
    damaged.write_bytes(nif.to_bytes())
    _, before_triangles, _, _ = shape_triangles(*mopp_blocks(damaged.read_bytes())[0][4:])
    collection = imported(damaged)
    _, messages = exported_blocks(collection, tmp_path / "out.nif")
    assert any("damaged" in message and f"block {index}" in message for message in messages), messages
    ((_, new_code, origin, scale, type_name, payload, raw),) = mopp_blocks((tmp_path / "out.nif").read_bytes())
    vertices, triangles, keys, _ = shape_triangles(type_name, payload, raw)
    assert len(triangles) == len(before_triangles) and np.array_equal(mopp.program_leaves(new_code), keys)
    for centre, key in zip(vertices[triangles].mean(axis=1), keys):
        assert key in mopp.leaves_at_point(new_code, origin, scale, centre)
    assert block_bytes((tmp_path / "out.nif").read_bytes())


def test_new_wall_mesh_collision_gets_mopp_code(clean_scene, corpus, tmp_path):
    """A new static wall (a subdivided plane, a flat mesh: no hull) marked as a packed mesh on a
    node without collision: a new body holding a MOPP tree over a packed mesh of its faces,
    placed where the plane is, whose code finds every triangle."""
    import bpy

    from raw_mopp import mopp_blocks, shape_triangles

    from precombined_nif.io.havok.collision_edit import mark_collision

    collection = imported(corpus / f"{FONV}/9mmscp.nif")
    scope_node = next(obj for obj in collection.all_objects if obj.get("nif_block") == 39)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=12, y_subdivisions=9, size=40.0)
    wall = bpy.context.active_object
    for other in wall.users_collection:
        other.objects.unlink(wall)
    collection.objects.link(wall)
    wall.parent = scope_node
    wall.rotation_euler = (np.pi / 2, 0.0, 0.3)
    mark_collision(wall, "packed_mesh")
    bpy.context.view_layer.update()
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    bodies, raw = collision_bodies(out)
    _, body, _ = bodies[39]
    assert raw[body["shape"]][0] == "bhkMoppBvTreeShape"
    ((_, code, origin, scale, type_name, payload, blocks),) = mopp_blocks(out.read_bytes())
    vertices, triangles, keys, _ = shape_triangles(type_name, payload, blocks)
    assert len(triangles) == 2 * 12 * 9
    owner = np.array(scope_node.matrix_world)
    placed = vertices * UNITS @ owner[:3, :3].T + owner[:3, 3]
    np.testing.assert_allclose(bounds(placed), bounds(world_points(wall)), atol=1e-3)
    assert np.array_equal(mopp.program_leaves(code), keys)
    for corners, key in zip(vertices[triangles], keys):
        for point in (*corners, corners.mean(axis=0)):
            assert key in mopp.leaves_at_point(code, origin, scale, point)


def test_strips_shape_is_the_files_triangles_where_the_bytes_put_them(clean_scene, corpus, tmp_path):
    """A bhkNiTriStripsShape of two NiTriStripsData blocks in a moved, turned bhkRigidBodyT: one
    mesh of both blocks' vertices (game units, times the shape's scale, not the Havok scale: see
    tests/raw_strips.py), the strips' triangles, placed by the node and the body; untouched it
    writes back byte for byte, edited it becomes a packed mesh under new MOPP code."""
    from raw_mopp import mopp_blocks, shape_triangles
    from raw_strips import STRIPS_NODE, read_strips_data, read_strips_shape, strip_triangles, strips_shape_file

    path = tmp_path / "strips.nif"
    path.write_bytes(strips_shape_file(corpus / f"{FONV}/9mmscp.nif"))
    collection = imported(path)
    bodies = bodies_of(collection)
    assert sorted(bodies) == [0, STRIPS_NODE]
    obj = bodies[STRIPS_NODE]
    assert obj["havok_shape"] == "strips_mesh" and obj.type == "MESH"

    matrix, body, blocks = raw_body_frame(path, STRIPS_NODE)
    assert blocks[body["shape"]][0] == "bhkNiTriStripsShape"
    shape = read_strips_shape(blocks[body["shape"]][1])
    assert obj["havok_material"] == f"0x{shape['material']:08X}"
    vertices, triangles = [], []
    for index in shape["data"]:
        assert blocks[index][0] == "NiTriStripsData"
        points, strips = read_strips_data(blocks[index][1])
        triangles += [tuple(v + sum(map(len, vertices)) for v in triangle) for triangle in strip_triangles(strips)]
        vertices.append(points)
    points = np.concatenate(vertices) * shape["scale"]
    expected = points @ matrix[:3, :3].T + matrix[:3, 3]
    np.testing.assert_allclose(world_points(obj), expected, atol=1e-4)

    def winding(triangle):  # the same triangle from its lowest corner on, its winding kept
        start = triangle.index(min(triangle))
        return tuple(int(v) for v in triangle[start:] + triangle[:start])

    got = [winding(tuple(polygon.vertices)) for polygon in obj.data.polygons]
    assert sorted(got) == sorted(winding(triangle) for triangle in triangles) and len(got) == 7

    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()
    obj.data.vertices[0].co.x += 1.0
    export_bytes(collection, tmp_path / "edited.nif")
    matrix, body, blocks = raw_body_frame(tmp_path / "edited.nif", STRIPS_NODE)
    assert blocks[body["shape"]][0] == "bhkMoppBvTreeShape"
    ((_, code, origin, scale, type_name, payload, raw),) = mopp_blocks((tmp_path / "edited.nif").read_bytes())
    vertices, triangles, keys, _ = shape_triangles(type_name, payload, raw)
    placed = vertices * UNITS @ matrix[:3, :3].T + matrix[:3, 3]
    np.testing.assert_allclose(np.unique(np.round(placed, 3), axis=0), np.unique(np.round(world_points(obj), 3), axis=0), atol=2e-3)
    assert np.array_equal(mopp.program_leaves(code), keys) and len(keys) == 7
    for centre, key in zip(vertices[triangles].mean(axis=1), keys):
        assert key in mopp.leaves_at_point(code, origin, scale, centre)


def test_deleted_collision_is_dropped(clean_scene, corpus, tmp_path):
    import bpy

    collection = imported(corpus / f"{FONV}/9mmscp.nif")
    body = bodies_of(collection)[0]
    bpy.data.objects.remove(body)
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    nif = NifFile.read(out)
    assert nif.blocks[0].collision_object == -1
    assert not [b for b in nif.blocks if b.type_name.startswith("bhk")]


def test_dynamic_body_without_mass_is_refused_by_name(clean_scene, corpus, tmp_path):
    import bpy

    collection = imported(corpus / f"{FONV}/9mmscp.nif")
    body = bodies_of(collection)[0]
    body["havok_mass"] = 0.0
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    with pytest.raises(RuntimeError, match=f"{body.name}.*mass"):
        bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "out.nif"))


def test_triangle_mesh_in_a_convex_list_is_refused_by_name(clean_scene, every_shape, tmp_path):
    import bpy

    collection = imported(every_shape)
    convex_list = bodies_of(collection)[33]
    child = next(obj for obj in convex_list.children if obj.get("havok_shape") == "convex")
    child["havok_shape"] = "packed_mesh"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    with pytest.raises(RuntimeError, match=f"{convex_list.name}.*convex list holds convex shapes"):
        bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "out.nif"))


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_damaged_collision_blocks_import_or_fail_naming_the_file(clean_scene, every_shape, tmp_path):
    """Bytes of the Havok blocks overwritten: the import shows what it can (a body it cannot show
    is a warning) or fails naming the file; never an internal error."""
    import random
    import struct

    import bpy

    data = every_shape.read_bytes()
    rng = random.Random(13)
    tail = 1400  # the appended Havok blocks and the footer
    failed = 0
    for number in range(30):
        damaged = bytearray(data)
        at = len(data) - rng.randrange(8, tail)
        value = rng.choice((0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x10000, 0x7FC00000, 3))
        struct.pack_into("<I", damaged, at, value)
        path = tmp_path / "damaged.nif"
        path.write_bytes(damaged)
        try:
            bpy.ops.import_scene.precombined_nif(filepath=str(path))
        except RuntimeError as error:
            failed += 1
            assert "internal error" not in str(error) and "damaged.nif" in str(error), str(error)
        for collection in [c for c in bpy.data.collections if c.name.startswith("damaged")]:
            for obj in list(collection.all_objects):
                bpy.data.objects.remove(obj)
            bpy.data.collections.remove(collection)
    assert failed < 30


def test_panel_draws_every_legacy_kind(clean_scene, every_shape):
    """The Fallout 4 collision panel draws the legacy kinds with the same fields."""
    import bpy
    panel_class = bpy.types.OBJECT_PT_havok_collision
    kinds = set()
    for obj in imported(every_shape).all_objects:
        if "havok_shape" not in obj:
            continue
        drawn = panel_drawn(panel_class, obj)
        texts = [text for _, text in drawn]
        kinds.add(obj["havok_shape"])
        assert "Material" in texts or obj["havok_shape"] in ("list", "convex_list")
        if "havok_motion" in obj:
            assert {"Friction", "Restitution", "Layer"} <= set(texts)
            assert ("Mass (kg)" in texts) == (obj["havok_motion"] == "dynamic")
        assert ("Convex Radius" in texts) == (obj["havok_shape"] in ("convex", "box"))
    assert kinds == {"box", "list", "sphere", "capsule", "convex", "packed_mesh", "convex_list"}


def test_legacy_kinds_export_as_fallout_4_collision(clean_scene, every_shape, tmp_path):
    """A New Vegas import written as Fallout 4: each body becomes a physics system body of the
    nearest FO4 shape (boxes as polytopes, lists as compounds, triangle meshes as compressed
    meshes), where Blender shows it."""
    from precombined_nif.core.havok import Packfile
    from precombined_nif.core.nif.blocks.collision import bhkNPCollisionObject
    from precombined_nif.io.nif.exporter import export_nif

    collection = imported(every_shape)
    bodies = bodies_of(collection)
    nif, messages = export_nif(str(tmp_path / "fo4.nif"), objects_of(collection), game="FO4")
    nif = NifFile.read(tmp_path / "fo4.nif")
    assert nif.header.game == "FO4"
    kinds = {}
    for _, collision in nif.blocks_of(bhkNPCollisionObject):
        system = Packfile.from_bytes(nif.blocks[collision.data].packfile).root
        owner = nif.blocks[collision.target].name
        kinds[owner] = system.bodies[collision.body_id].shape.class_name
    assert len(kinds) == len(bodies) == 5
    assert sorted(kinds.values()) == sorted(["hknpConvexPolytopeShape", "hknpConvexPolytopeShape", "hknpDynamicCompoundShape",
                                             "hknpCompressedMeshShape", "hknpDynamicCompoundShape"]), kinds
    expected = {body.parent.name: bounds(world_points(body)) for body in bodies.values()}
    again = imported(tmp_path / "fo4.nif")
    placed = {body.parent.name.split(".")[0]: bounds(world_points(body)) for body in bodies_of(again).values()}
    assert placed.keys() == expected.keys()
    for name, got in placed.items():
        # compressed meshes quantise their vertices; the rest comes back to float precision
        np.testing.assert_allclose(got, expected[name], atol=2e-3, err_msg=name)


def test_every_primitive_kind_edited_comes_back_where_blender_shows_it(clean_scene, every_shape, tmp_path):
    """Lists' children moved, rotated and scaled (a sphere, a capsule, a convex, a box): written
    anew and re-imported, each body's world bounds are those of the edited objects."""
    import bpy
    from mathutils import Euler

    collection = imported(every_shape)
    bodies = bodies_of(collection)
    for owner in (23, 33):
        for number, child in enumerate(sorted(bodies[owner].children, key=lambda c: c.name)):
            child.location.x += 0.5 + number
            child.rotation_mode = "XYZ"
            child.rotation_euler = Euler((0.1 * number, 0.2, 0.3))
            if child["havok_shape"] in ("box", "convex"):
                child.scale = (1.5, 1.0, 0.75)
            elif child["havok_shape"] == "capsule":  # a capsule scales evenly
                child.scale = (1.25, 1.25, 1.25)
    bodies[33]["havok_mass"] = 5.0
    bpy.context.view_layer.update()
    expected = {owner: bounds(world_points(bodies[owner])) for owner in (23, 33)}
    kinds = {owner: sorted(child["havok_shape"] for child in bodies[owner].children) for owner in (23, 33)}
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    _, raw = collision_bodies(out)
    assert {t for t, _ in raw.values()} >= {"bhkConvexTransformShape", "bhkListShape", "bhkConvexListShape", "bhkSphereShape"}
    nif = NifFile.read(out)
    assert nif.blocks[nif.blocks[nif.blocks[33].collision_object].body].mass == 5.0
    collection.name = "edited"
    again = bodies_of(imported(out))
    for owner in (23, 33):
        assert sorted(child["havok_shape"] for child in again[owner].children) == kinds[owner]
        # a capsule's mesh is rebuilt with another roll about its axis: its polygon's bounds move a little
        np.testing.assert_allclose(bounds(world_points(again[owner])), expected[owner], atol=2e-3)
        # the bytes give a capsule's true box, Blender's polygon lies inside it by up to r (1 - cos(360/32))
        np.testing.assert_allclose(bounds(raw_world_points(out, owner)[0]), expected[owner], atol=0.02)


def test_a_body_that_cannot_be_shown_is_kept(clean_scene, corpus, tmp_path):
    """A body of a shape the import does not show (a bhkMultiSphereShape): a warning on import,
    and the file writes back as it was (the collision is not taken for deleted)."""
    import struct

    import bpy
    from raw_havok import block_bytes, pack_body, pack_collision

    from precombined_nif.core.nif import RawBlock

    data = (corpus / f"{FONV}/9mmscp.nif").read_bytes()
    nif = NifFile.from_bytes(data)
    spheres = struct.pack("<If", 0, 0.0) + struct.pack("<3I", 0, 0, 0x80000000) + struct.pack("<I4f4f", 2, 0, 0, 0, 0.1, 0, 0, 1, 0.1)
    nif.blocks.append(RawBlock("bhkMultiSphereShape", spheres))
    body, kind = pack_body(block_bytes(data)[5][1], len(nif.blocks) - 1)
    nif.blocks.append(RawBlock(kind, body))
    nif.blocks.append(RawBlock("bhkCollisionObject", pack_collision(44, len(nif.blocks) - 1)))
    nif.blocks[44].collision_object = len(nif.blocks) - 1
    path = tmp_path / "multisphere.nif"
    path.write_bytes(nif.to_bytes())
    collection = imported(path)
    assert sorted(bodies_of(collection)) == [0]
    bodies_of(collection)[0].location.x += 1.0  # an edited body beside it is still written
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    written = NifFile.read(out)
    clip = next(block for block in written.blocks if getattr(block, "name", None) == "##nmClip")
    assert written.blocks[written.blocks[clip.collision_object].body].type_name == "bhkRigidBody"
    assert written.blocks[written.blocks[written.blocks[clip.collision_object].body].shape].type_name == "bhkMultiSphereShape"
    bpy.context.view_layer.update()
    collection.name = "before"
    untouched = imported(path)
    assert export_bytes(untouched, tmp_path / "same.nif") == path.read_bytes()


def test_lists_naming_lists_twice_over_are_refused_quickly(clean_scene, corpus, tmp_path):
    """A damaged file whose lists each name the next list twice (2^40 shapes): a warning, at once."""
    import time

    from raw_havok import block_bytes, pack_body, pack_collision, pack_list, pack_sphere

    from precombined_nif.core.nif import RawBlock

    data = (corpus / f"{FONV}/9mmscp.nif").read_bytes()
    nif = NifFile.from_bytes(data)
    nif.blocks.append(RawBlock("bhkSphereShape", pack_sphere(0, 0.1)))
    for _ in range(40):
        below = len(nif.blocks) - 1
        nif.blocks.append(RawBlock("bhkListShape", pack_list([below, below], 0)))
    body, kind = pack_body(block_bytes(data)[5][1], len(nif.blocks) - 1)
    nif.blocks.append(RawBlock(kind, body))
    nif.blocks.append(RawBlock("bhkCollisionObject", pack_collision(44, len(nif.blocks) - 1)))
    nif.blocks[44].collision_object = len(nif.blocks) - 1
    path = tmp_path / "lists.nif"
    path.write_bytes(nif.to_bytes())
    start = time.process_time()
    collection = imported(path)
    assert time.process_time() - start < 10
    assert sorted(bodies_of(collection)) == [0]


def test_xbox_file_with_packed_collision_imports_as_the_pc_file(clean_scene, every_shape, tmp_path):
    pc = {owner: bounds(world_points(body)) for owner, body in bodies_of(imported(every_shape)).items()}
    data, _ = xbox_file(every_shape.read_bytes())
    path = tmp_path / "console.nif"
    path.write_bytes(data)
    xbox = bodies_of(imported(path))
    assert sorted(xbox) == sorted(pc)
    for owner, body in xbox.items():
        np.testing.assert_allclose(bounds(world_points(body)), pc[owner], atol=1e-5)


def test_new_file_for_fallout_3_gets_its_collision(clean_scene, tmp_path):
    """No imported file behind it: a mesh with a box collision child written as a new FO3 file."""
    import bpy

    from precombined_nif.io.nif.exporter import export_nif
    from precombined_nif.io.havok.collision_edit import mark_collision

    bpy.ops.mesh.primitive_cube_add(size=2.0)
    mesh = bpy.context.active_object
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.5, 0.0, 0.0))
    box = bpy.context.active_object
    box.parent = mesh
    mark_collision(box, "convex")
    box["havok_shape"] = "box"
    bpy.context.view_layer.update()
    expected = bounds(world_points(box))
    nif, messages = export_nif(str(tmp_path / "new.nif"), [mesh, box], game="FO3")
    bodies, raw = collision_bodies(tmp_path / "new.nif")
    (owner,) = bodies
    _, body, kind = bodies[owner]
    assert kind == "bhkRigidBody" and body["motion"] == 7
    assert raw[body["shape"]][0] == "bhkConvexTransformShape"
    np.testing.assert_allclose(bounds(raw_world_points(tmp_path / "new.nif", owner)[0]), expected, atol=1e-5)


# -- real files of other tools; collision the import does not show -----------------------------

VAULT74 = "realmods/vault74/Meshes/SCOL/kynSCOLTemp04.NIF"


def import_warnings(path):
    """(collection, warnings) of ``path`` built by the importer's SceneBuilder itself (in a
    collection not named after the file, which ``imported`` returns)."""
    import bpy

    from precombined_nif.io.nif.importer import SceneBuilder

    collection = bpy.data.collections.new("built")
    bpy.context.scene.collection.children.link(collection)
    builder = SceneBuilder(NifFile.read(path), collection)
    builder.build()
    bpy.context.view_layer.update()
    return collection, builder.warnings()


def test_real_static_collection_shows_its_packed_meshes_and_writes_back(clean_scene, corpus, tmp_path):
    """vault74's kynSCOLTemp04 (New Vegas, a mod's static collection): three bodies of packed
    strips under MOPP code whose keys carry their sub shape. Each shows where the bytes put it,
    no code is called damaged, and the untouched file writes back byte for byte (it was refused:
    the code taken for damaged, the mesh's hull left open)."""
    path = corpus / VAULT74
    collection, warnings = import_warnings(path)
    assert not [warning for warning in warnings if "MOPP" in warning or "collision" in warning], warnings
    bodies = bodies_of(collection)
    expected, _ = collision_bodies(path)
    assert sorted(bodies) == sorted(expected) and len(bodies) == 3
    for owner, obj in bodies.items():
        assert obj["havok_shape"] == "packed_mesh"
        points, _ = raw_world_points(path, owner)
        np.testing.assert_allclose(bounds(world_points(obj)), bounds(points), atol=1e-3)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()  # (a failure's diff takes minutes)


def names_of(path):
    """{block index: name} of a file's nodes, read from the bytes."""
    return {index: node.name for index, node in read_nodes(path)[0].items()}


def test_real_static_collection_edited_keeps_its_other_bodies(clean_scene, corpus, tmp_path):
    """One body's mesh moved and given a mass (its stored motion code, 205, reads as dynamic):
    its new packed mesh and MOPP are written and its inertia computed from the mesh's hull (the
    hull that did not close); the two other bodies' blocks are written as they were."""
    from raw_havok import block_bytes
    from raw_mopp import mopp_blocks, shape_triangles

    path = corpus / VAULT74
    collection = imported(path)
    bodies = bodies_of(collection)
    edited_owner = next(owner for owner, obj in bodies.items() if len(obj.data.vertices) > 100)
    obj = bodies[edited_owner]
    obj.data.vertices[0].co.z += 5.0
    obj["havok_mass"] = 10.0
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    before, after = block_bytes(path.read_bytes()), block_bytes(out.read_bytes())
    old_bodies, _ = collision_bodies(path)
    new_bodies, _ = collision_bodies(out)
    # The export drops the edited body's old blocks, so blocks are renumbered: owners are matched
    # by name, and the untouched blocks compared apart from the references they hold.
    old_names, new_names = (names_of(file) for file in (path, out))
    old_by_name = {old_names[owner]: found for owner, found in old_bodies.items()}
    assert sorted(old_by_name) == sorted(new_names[owner] for owner in new_bodies)
    edited = next(owner for owner in new_bodies if new_names[owner] == old_names[edited_owner])
    for owner, (collision, body, _) in new_bodies.items():
        old_collision, old_body, _ = old_by_name[new_names[owner]]
        if owner == edited:
            assert body["mass"] == 10.0 and after[body["shape"]][0] == "bhkMoppBvTreeShape"
            continue
        (_, _, body_block), (_, _, old_body_block) = (struct.unpack_from("<iHi", raw) for _, raw in
                                                      (after[collision], before[old_collision]))
        assert after[collision][1][4:6] == before[old_collision][1][4:6]  # flags: target and body are references
        assert after[body_block][1][4:] == before[old_body_block][1][4:]  # the body past its shape reference
        assert after[body["shape"]][1][4:] == before[old_body["shape"]][1][4:]  # the MOPP tree past its shape's
    written = next(found for found in mopp_blocks(out.read_bytes()) if found[0] == new_bodies[edited][1]["shape"])
    vertices, triangles, keys, _ = shape_triangles(*written[4:])
    assert np.array_equal(mopp.program_leaves(written[1]), np.unique(keys))
    assert (keys >> 24).max() > 0  # its sub shapes' triangles tagged as the file's own were


def test_body_with_a_zero_rotation_is_kept(clean_scene, corpus, tmp_path):
    """A bhkRigidBodyT whose rotation is the zero quaternion cannot be placed: a warning, and the
    untouched file writes back as it was (its collision was taken for deleted and dropped)."""
    from raw_havok import TETRA, TETRA_PLANES, block_bytes, pack_body, pack_collision, pack_convex

    from precombined_nif.core.nif import RawBlock

    data = (corpus / f"{FONV}/9mmscp.nif").read_bytes()
    nif = NifFile.from_bytes(data)
    nif.blocks.append(RawBlock("bhkConvexVerticesShape", pack_convex(5, 0.01, TETRA, TETRA_PLANES)))
    body, kind = pack_body(block_bytes(data)[5][1], len(nif.blocks) - 1, rigid_t=True, rotation=(0, 0, 0, 0))
    nif.blocks.append(RawBlock(kind, body))
    nif.blocks.append(RawBlock("bhkCollisionObject", pack_collision(44, len(nif.blocks) - 1)))
    nif.blocks[44].collision_object = len(nif.blocks) - 1
    path = tmp_path / "zero_rotation.nif"
    path.write_bytes(nif.to_bytes())
    collection, warnings = import_warnings(path)
    assert any("collision not shown (its rotation is a zero quaternion)" in warning for warning in warnings), warnings
    assert sorted(bodies_of(collection)) == [0]
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()

