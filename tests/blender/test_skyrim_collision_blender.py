"""Skyrim LE / SE Havok collision in real Blender: every corpus file with collision shows it, its
bodies' values are the bytes' (read by tests/raw_skyrim_havok.py), its world bounds overlap the
meshes of their owners, untouched files write back byte for byte, and an edited compressed mesh
is written anew (data re-encoded, MOPP rebuilt) and comes back with the edit."""

import numpy as np
import pytest
from raw_skyrim_havok import SKYRIM_UNITS, read_bodies
from scene import bounds, export_bytes, imported, panel_drawn, world_points
from support import corpus_files_holding

COLLISION_FILES = corpus_files_holding("pynifly/tests/tests/Skyrim*/**/*.nif", b"bhkCollisionObject", b"bhkBlendCollisionObject")
CASES = [pytest.param(path, id=path.name) for path in COLLISION_FILES]


def bodies_of(collection):
    """{owner node index: body object}; a bone's node index is on the armature's bone."""
    found = {}
    for obj in collection.all_objects:
        if "nif_collision" in obj:
            owner = obj.parent.data.bones[obj.parent_bone] if obj.parent_type == "BONE" else obj.parent
            found[owner["nif_block"]] = obj
    return found


def collection_mesh_bounds(collection):
    points = [world_points(obj) for obj in collection.all_objects
              if obj.type == "MESH" and "havok_shape" not in obj and len(obj.data.vertices)]
    return bounds(np.concatenate(points)) if points else None


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES)
def test_corpus_collision_shows_with_the_bytes_values_over_its_meshes(clean_scene, path):
    collection = imported(path)
    bodies = bodies_of(collection)
    expected = read_bodies(path)
    assert sorted(bodies) == sorted(expected)
    meshes = collection_mesh_bounds(collection)
    for owner, obj in bodies.items():
        body = expected[owner]
        assert obj["havok_mass"] == pytest.approx(body["mass"]) and obj["havok_layer"] == body["layer"]
        assert obj["havok_friction"] == pytest.approx(body["friction"])
        assert obj["havok_restitution"] == pytest.approx(body["restitution"])
        if meshes is None:
            continue  # a skeleton: bones, no meshes
        low, high = meshes
        got = bounds(world_points(obj))
        # the body meets the meshes and is of their size: a wrong unit makes it ten times bigger or
        # smaller (dockstepsdownend01's collision also covers its BSLODTriShapes, not imported)
        assert (got[0] <= high).all() and (got[1] >= low).all(), f"{obj.name} does not meet the meshes"
        ratio = (got[1] - got[0]).max() / (high - low).max()
        assert 0.2 <= ratio <= 3, f"{obj.name} is {ratio:.2f} times the size of the meshes"


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES)
def test_untouched_corpus_collision_exports_byte_identical(clean_scene, tmp_path, path):
    collection = imported(path)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()


def assert_mopp_finds_every_triangle(tree, data):
    """The tree's code names the data's shape keys and returns each triangle's at its centre."""
    from precombined_nif.core.havok import mopp

    vertices, triangles, _, keys = data.mesh()
    mopp.check_leaves(tree.code, keys)
    origin, scale = np.array(tree.offset[:3]), tree.offset[3]
    for centre, key in zip(vertices[triangles].mean(axis=1), keys):
        assert key in mopp.leaves_at_point(tree.code, origin, scale, centre)


def built(path):
    """(collection, warnings) of ``path`` built by the importer's SceneBuilder itself."""
    import bpy

    from precombined_nif.core.nif import NifFile
    from precombined_nif.io.nif.importer import SceneBuilder

    collection = bpy.data.collections.new("built")
    bpy.context.scene.collection.children.link(collection)
    builder = SceneBuilder(NifFile.read(path), collection)
    builder.build()
    return collection, builder.warnings()


def compressed_blocks(path):
    """[(MOPP block, shape, data)] of a written file, read by the codec."""
    from precombined_nif.core.nif import NifFile

    nif = NifFile.read(path)
    return [(tree, nif.blocks[tree.shape], nif.blocks[nif.blocks[tree.shape].data])
            for tree in nif.blocks if tree.type_name == "bhkMoppBvTreeShape"]


def test_edited_compressed_mesh_is_written_with_a_new_mopp_and_comes_back(clean_scene, corpus, tmp_path):
    """rocks01.nif (Skyrim SE static): one collision vertex moved; the written file holds it
    (re-imported where Blender showed it), keeps every other triangle, and its new MOPP finds
    every triangle of the new data."""
    from mathutils import Vector

    path = corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif"
    collection = imported(path)
    body = next(obj for obj in collection.all_objects if obj.get("havok_shape") == "compressed_mesh")
    before = world_points(body)
    materials = np.empty(len(body.data.polygons), np.int32)
    body.data.attributes["havok_material"].data.foreach_get("value", materials)
    moved = before[0] + (0.0, 0.0, 7.0)
    body.data.vertices[0].co = body.matrix_world.inverted() @ Vector(moved)
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    (tree, shape, data), = compressed_blocks(out)
    (old_tree, _, _), = compressed_blocks(path)
    assert tree.code != old_tree.code
    assert_mopp_finds_every_triangle(tree, data)
    clean = imported(out)
    again = next(obj for obj in clean.all_objects if obj.get("havok_shape") == "compressed_mesh")
    after = world_points(again)
    assert len(after) == len(before)
    assert np.abs(after - moved).max(axis=1).min() < 0.1  # the moved vertex, within the 1/1000 Havok unit step
    expected = np.delete(before, 0, axis=0)
    distance = np.abs(after[:, None, :] - expected[None, :, :]).max(axis=2).min(axis=0)
    assert distance.max() < 0.1  # every other vertex kept
    got = np.empty(len(again.data.polygons), np.int32)
    again.data.attributes["havok_material"].data.foreach_get("value", got)
    assert sorted(got.tolist()) == sorted(materials.tolist())
    assert again["havok_motion"] == body["havok_motion"] == "static"


def test_edited_box_in_a_list_comes_back_where_blender_shows_it(clean_scene, corpus, tmp_path):
    """steeldagger.nif: a list of transformed boxes; one box stretched, the body's friction
    changed: written in Skyrim's units and layout, re-imported where Blender showed it."""
    import bpy

    path = corpus / "pynifly/tests/tests/SkyrimSE/steeldagger.nif"
    collection = imported(path)
    (owner, body), = bodies_of(collection).items()
    box = sorted(body.children, key=lambda child: child.name)[0]
    box.scale.x *= 1.5
    body["havok_friction"] = 0.8
    bpy.context.view_layer.update()
    edited = bounds(world_points(body))
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    raw_body = read_bodies(out)[owner]
    assert raw_body["friction"] == pytest.approx(0.8) and raw_body["motion"] == 3 and raw_body["mass"] == pytest.approx(9.0)
    again = bodies_of(imported(out))[owner]
    assert again["havok_shape"] == "list" and again["havok_motion"] == "dynamic"
    np.testing.assert_allclose(bounds(world_points(again)), edited, atol=1e-3)


def test_new_triangle_collision_on_a_skyrim_mesh(clean_scene, corpus, tmp_path):
    """Cube.nif (Skyrim LE, no collision): a mesh marked as triangle-mesh collision of the cube
    becomes a new static body (Skyrim's codes and flags) with a MOPP over compressed mesh data."""
    import bpy
    from raw_havok import block_bytes

    from precombined_nif.ui.collision_panel import mark_collision

    path = corpus / "pynifly/tests/tests/Skyrim/Cube.nif"
    collection = imported(path)
    cube = next(obj for obj in collection.all_objects if obj.type == "MESH")
    bpy.ops.mesh.primitive_ico_sphere_add(radius=30.0, location=(5.0, 0.0, 0.0))
    sphere = bpy.context.active_object
    for other in sphere.users_collection:
        other.objects.unlink(sphere)
    collection.objects.link(sphere)
    sphere.parent = cube
    mark_collision(sphere, "compressed_mesh")
    sphere["havok_material"] = "0x1DD9C611"
    bpy.context.view_layer.update()
    expected = bounds(world_points(sphere))
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    owner = cube["nif_block"]
    body = read_bodies(out)[owner]
    raw = block_bytes(out.read_bytes())
    assert body["type"] == "bhkRigidBody" and body["motion"] == 5 and body["layer"] == 1
    collision = next(payload for type_name, payload in raw.values() if type_name == "bhkCollisionObject")
    assert int.from_bytes(collision[4:6], "little") == 0x81
    assert raw[body["shape"]][0] == "bhkMoppBvTreeShape"
    (tree, _, data), = compressed_blocks(out)
    _, triangles, materials, _ = data.mesh()
    assert len(triangles) == len(sphere.data.polygons)
    assert set(np.asarray(data.chunk_materials["material"])[materials].tolist()) == {0x1DD9C611}
    assert_mopp_finds_every_triangle(tree, data)
    again = bodies_of(imported(out))[owner]
    assert again["havok_shape"] == "compressed_mesh" and again["havok_motion"] == "static"
    np.testing.assert_allclose(bounds(world_points(again)), expected, atol=0.1)


def test_panel_shows_the_physics_of_skyrim_bodies(clean_scene, corpus):
    """The Havok Collision panel draws a Skyrim body's physics (motion, mass when dynamic,
    friction, restitution, layer) and a compressed mesh's face materials."""
    import bpy
    panel_class = bpy.types.OBJECT_PT_havok_collision
    names = ("SkyrimSE/rocks01.nif", "Skyrim/staff04-collision.nif", "SkyrimSE/noblecrate01.nif")
    for name in names:
        for obj in bodies_of(imported(corpus / "pynifly/tests/tests" / name)).values():
            drawn = panel_drawn(panel_class, obj)
            texts = [text for _, text in drawn]
            assert {"Friction", "Restitution", "Layer", "Material"} <= set(texts)
            assert ("Mass (kg)" in texts) == (obj["havok_motion"] == "dynamic")
            if obj["havok_shape"] == "compressed_mesh":
                assert "Face materials" in texts and any(text.startswith("0x") and "faces" in text for text in texts)


def test_damaged_compressed_mesh_is_named_left_out_and_kept(clean_scene, corpus, tmp_path):
    """A chunk index past the chunk's vertices: the import says which chunk, shows the meshes
    without that collision, and the file writes back as it was."""
    from precombined_nif.core.nif import NifFile
    from precombined_nif.core.nif.blocks.compressed_mesh import bhkCompressedMeshShapeData

    nif = NifFile.read(corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif")
    data = next(block for block in nif.blocks if isinstance(block, bhkCompressedMeshShapeData))
    data.chunks[0].indices = np.r_[data.chunks[0].indices[:-3], 500, 501, 502].astype(np.uint16)
    path = tmp_path / "damaged.nif"
    path.write_bytes(nif.to_bytes())
    collection, warnings = built(path)
    assert any("chunk 0: an index names vertex 502" in warning for warning in warnings)
    assert not any("havok_shape" in obj for obj in collection.all_objects)
    assert any(obj.type == "MESH" for obj in collection.all_objects)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()


def raw_body_points(raw, body, owner_world):
    """World points of a body's shapes from the bytes: the owner's world matrix, a
    bhkRigidBodyT's translation (Havok units) and rotation, struct-read shapes (a compressed
    mesh's vertices, other shapes' corners as raw_havok.shape_vertices gives them)."""
    import struct

    from raw_havok import read_shape, shape_vertices
    from raw_skyrim_havok import read_compressed_data

    matrix = owner_world.copy()
    if body["type"] == "bhkRigidBodyT":
        x, y, z, w = body["rotation"]
        local = np.eye(4)
        local[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
        local[:3, 3] = body["translation"] * SKYRIM_UNITS
        matrix = matrix @ local
    type_name, payload = raw[body["shape"]]
    if type_name == "bhkCapsuleShape":  # its exact bounds: the placed ends +- the radius
        capsule = read_shape(type_name, payload)
        ends = np.array([capsule["first"], capsule["second"]]) * SKYRIM_UNITS @ matrix[:3, :3].T + matrix[:3, 3]
        return np.concatenate([ends - capsule["radius"] * SKYRIM_UNITS, ends + capsule["radius"] * SKYRIM_UNITS])
    if type_name == "bhkMoppBvTreeShape":
        shape = raw[struct.unpack_from("<i", payload)[0]][1]
        vertices, triangles, _ = read_compressed_data(raw[struct.unpack_from("<i", shape, 52)[0]][1])
        return vertices[np.unique(triangles)] * SKYRIM_UNITS @ matrix[:3, :3].T + matrix[:3, 3]
    return shape_vertices(raw, body["shape"], matrix, SKYRIM_UNITS)


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES)
def test_bodies_sit_where_the_bytes_put_them(clean_scene, path):
    """Every body's world bounds against the bytes (raw_body_points); a capsule's mesh (rings of
    16 vertices) falls short of its round bounds by up to 2% of its size."""
    from raw_havok import block_bytes
    from raw_nodes import read_nodes, world_matrices

    raw = block_bytes(path.read_bytes())
    nodes, roots = read_nodes(path)
    worlds = world_matrices(nodes, roots)
    bodies = bodies_of(imported(path))
    for owner, body in read_bodies(path).items():
        expected = bounds(raw_body_points(raw, body, worlds[owner]))
        got = bounds(world_points(bodies[owner]))
        kinds = {bodies[owner]["havok_shape"], *(child["havok_shape"] for child in bodies[owner].children)}
        tolerance = 0.02 * (expected[1] - expected[0]).max() if "capsule" in kinds else 1e-3
        np.testing.assert_allclose(got, expected, atol=tolerance, err_msg=f"{path.name}: body of node {owner}")


def test_damaged_mopp_code_is_warned_about_and_written_anew(clean_scene, corpus, tmp_path):
    """rocks01.nif with MOPP code that jumps outside itself: the import shows the mesh and
    warns, the export writes new code that finds every triangle."""
    from precombined_nif.core.nif import NifFile

    nif = NifFile.read(corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif")
    tree = next(block for block in nif.blocks if block.type_name == "bhkMoppBvTreeShape")
    tree.code = b"\x06\xff\xff" + tree.code[3:]
    path = tmp_path / "badmopp.nif"
    path.write_bytes(nif.to_bytes())
    collection, warnings = built(path)
    assert any("MOPP code of block" in warning and "damaged" in warning for warning in warnings)
    assert any(obj.get("havok_shape") == "compressed_mesh" for obj in collection.all_objects)
    out = tmp_path / "out.nif"
    export_bytes(imported(path), out)
    (tree, _, data), = compressed_blocks(out)
    assert_mopp_finds_every_triangle(tree, data)
