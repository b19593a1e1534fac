"""Fallout 3 / New Vegas Havok collision in real Blender: bodies imported under their owners with
the Fallout 4 collision properties, placed where the bytes put them (read independently by
tests/raw_havok.py and tests/raw_nodes.py), and written back: untouched byte for byte, edited
boxes and new convex bodies re-encoded, edited MOPP meshes refused with the original kept."""

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
)
from raw_nodes import read_nodes, world_matrices

from precombined_nif.core.nif import NifFile

FONV = "pynifly/tests/tests/FONV"
LEGACY_FILES = [f"{FONV}/9mmscp.nif", f"{FONV}/22smg.nif"]  # every FO3/FNV corpus file with collision
MOTIONS = {7: "static", 6: "keyframed"}


def imported(path):
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def export(collection, path):
    import bpy

    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return path.read_bytes()


def bodies_of(collection):
    return {obj.parent["nif_block"]: obj for obj in collection.all_objects if "nif_collision" in obj}


def world_points(obj):
    """World positions of a collision object's geometry and its children's: mesh vertices, a
    sphere as the corners of its bounding box."""
    matrix = np.array(obj.matrix_world)
    if obj.type == "MESH":
        co = np.empty(3 * len(obj.data.vertices), np.float32)
        obj.data.vertices.foreach_get("co", co)
        local = co.reshape(-1, 3).astype(np.float64)
    elif obj.get("havok_shape") == "sphere":
        radius = obj.empty_display_size
        local = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float64) * radius
    else:
        local = np.zeros((0, 3))
    points = [local @ matrix[:3, :3].T + matrix[:3, 3]]
    points += [world_points(child) for child in obj.children if "havok_shape" in child]
    return np.concatenate(points)


def raw_world_points(path, owner):
    """The same points from the bytes: owner's world matrix, the body's translation and rotation
    when it is a bhkRigidBodyT, the shape tree in Havok units times the FO3/FNV scale."""
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
    return shape_vertices(blocks, body["shape"], matrix), body


def bounds(points):
    return points.min(axis=0), points.max(axis=0)


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
    assert export(collection, tmp_path / "out.nif") == (corpus / name).read_bytes()


def test_untouched_every_shape_file_exports_byte_identical(clean_scene, every_shape, tmp_path):
    collection = imported(every_shape)
    assert export(collection, tmp_path / "out.nif") == every_shape.read_bytes()
