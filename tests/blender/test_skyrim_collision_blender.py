"""Skyrim LE / SE Havok collision in real Blender: every corpus file with collision shows it, its
bodies' values are the bytes' (read by tests/raw_skyrim_havok.py), its world bounds overlap the
meshes of their owners, untouched files write back byte for byte, and an edited compressed mesh
is written anew (data re-encoded, MOPP rebuilt) and comes back with the edit."""

import numpy as np
import pytest
from raw_skyrim_havok import SKYRIM_UNITS, read_bodies
from scene import bounds, export_bytes, imported, panel_drawn, world_points
from support import corpus_files_holding

from precombined_nif.core.havok import mopp

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

    from precombined_nif.io.havok.collision_edit import mark_collision

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
    warns, the export writes new code that finds every triangle, and nothing else (the
    compressed mesh was written anew from Blender's mesh)."""
    from raw_havok import block_bytes

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
    before, after = block_bytes(path.read_bytes()), block_bytes(out.read_bytes())
    changed = [index for index in before if before[index] != after[index]]
    assert [before[index][0] for index in changed] == ["bhkMoppBvTreeShape"]


# -- real files of other tools; MOPP trees over lists; convex shapes of degenerate points -------

WHEELS = "realmods/wheels-of-lull/meshes/lull/dwemertech/architecture/mainquest_static_console.nif"


def owner_world(path, owner):
    from raw_nodes import read_nodes, world_matrices

    nodes, roots = read_nodes(path)
    return world_matrices(nodes, roots)[owner]


def test_chunked_mopp_of_a_real_static_is_kept(clean_scene, corpus, tmp_path):
    """wheels-of-lull's console static (Skyrim SE): MOPP code in chunks joined by 70 jumps. No
    damage is reported, the mesh shows where the bytes put it, the untouched file writes back
    byte for byte (its code was rebuilt and the file grew by 625 bytes)."""
    from raw_havok import block_bytes

    path = corpus / WHEELS
    collection, warnings = built(path)
    assert not [warning for warning in warnings if "MOPP" in warning or "collision" in warning], warnings
    bpy_update()
    raw = block_bytes(path.read_bytes())
    for owner, body in read_bodies(path).items():
        expected = bounds(raw_body_points(raw, body, owner_world(path, owner)))
        np.testing.assert_allclose(bounds(world_points(bodies_of(collection)[owner])), expected, atol=1e-3)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()  # (a failure's diff takes minutes)


def bpy_update():
    import bpy

    bpy.context.view_layer.update()


def pack_skyrim_mopp(shape, code, origin=(-1.0, -1.0, -1.0), scale=254 * 65536 / 2.0):
    """A Skyrim bhkMoppBvTreeShape (nif.xml: shape, 12 unused bytes, scale, code size, offset and
    quantisation, build type, code)."""
    import struct

    return struct.pack("<i12xfI4fB", shape, 1.0, len(code), *origin, scale, 1) + code


# code naming the list's three children wherever a query is (splits whose both sides are taken)
HAND_LIST_MOPP = bytes.fromhex("10ff000130" "10ff000131" "32")
DAGGER = "pynifly/tests/tests/SkyrimSE/steeldagger.nif"


def dagger_under_mopp(corpus, tmp_path, code=HAND_LIST_MOPP):
    """steeldagger.nif (Skyrim SE, a dynamic body) with its list of three transformed boxes put
    under a MOPP tree packed by hand: (path, the MOPP tree's block index)."""
    import struct

    from raw_havok import block_bytes

    from precombined_nif.core.nif import NifFile, RawBlock

    data = (corpus / DAGGER).read_bytes()
    raw = block_bytes(data)
    nif = NifFile.from_bytes(data)
    body = next(index for index, (type_name, _) in raw.items() if type_name == "bhkRigidBody")
    (listed,) = struct.unpack_from("<i", raw[body][1])
    assert raw[listed][0] == "bhkListShape"
    nif.blocks.append(RawBlock("bhkMoppBvTreeShape", pack_skyrim_mopp(listed, code)))
    payload = bytearray(raw[body][1])
    struct.pack_into("<i", payload, 0, len(nif.blocks) - 1)
    nif.blocks[body] = RawBlock("bhkRigidBody", bytes(payload))
    path = tmp_path / "dagger_mopp.nif"
    path.write_bytes(nif.to_bytes())
    return path, len(nif.blocks) - 1


def list_children_boxes(path):
    """{child number: (low, high)} of the list under the body's MOPP tree, in the body's space
    (game units), read with struct."""
    from raw_havok import block_bytes, read_shape, shape_vertices

    raw = block_bytes(path.read_bytes())
    ((owner, body),) = read_bodies(path).items()
    assert raw[body["shape"]][0] == "bhkMoppBvTreeShape"
    listed = read_shape(*raw[body["shape"]])["shape"]
    assert raw[listed][0] == "bhkListShape"
    children = read_shape(*raw[listed])["sub_shapes"]
    return owner, raw, body, {number: np.array(bounds(shape_vertices(raw, child, units=SKYRIM_UNITS)))
                              for number, child in enumerate(children)}


def test_mopp_tree_over_a_list_is_shown_as_the_list_and_written_back(clean_scene, corpus, tmp_path):
    """A dynamic object's MOPP tree over a list of convex shapes (built here by hand): the list
    shows with its three children where the bytes put them, marked as under a MOPP tree, and the
    untouched file writes back byte for byte."""
    from raw_havok import shape_vertices

    path, _ = dagger_under_mopp(corpus, tmp_path)
    collection, warnings = built(path)
    assert not [warning for warning in warnings if "collision" in warning or "MOPP" in warning], warnings
    bpy_update()
    (owner, body), = bodies_of(collection).items()
    assert body["havok_shape"] == "list" and body["havok_mopp"] and len(body.children) == 3
    _, raw, raw_body, _ = list_children_boxes(path)
    expected = bounds(shape_vertices(raw, raw_body["shape"], owner_world(path, owner), SKYRIM_UNITS))
    np.testing.assert_allclose(bounds(world_points(body)), expected, atol=1e-3)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()  # (a failure's diff takes minutes)


def test_edited_list_under_a_mopp_tree_gets_code_over_its_children(clean_scene, corpus, tmp_path):
    """One box of the list moved, the body's friction changed: written under a new MOPP tree
    whose code names the three children and finds each in its box (read with struct from the
    written file); the two untouched boxes stay the blocks they were; it comes back as shown."""
    from precombined_nif.core.nif import NifFile

    path, _ = dagger_under_mopp(corpus, tmp_path)
    collection = imported(path)
    (owner, body), = bodies_of(collection).items()
    first = sorted(body.children, key=lambda child: child.name)[0]
    first.location.x += 3.0
    body["havok_friction"] = 0.8
    bpy_update()
    edited = bounds(world_points(body))
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    _, raw, raw_body, boxes = list_children_boxes(out)
    _, before, before_body, before_boxes = list_children_boxes(path)
    assert raw_body["friction"] == pytest.approx(0.8)
    from raw_havok import read_shape

    children = read_shape(*raw[read_shape(*raw[raw_body["shape"]])["shape"]])["sub_shapes"]
    old_children = read_shape(*before[read_shape(*before[before_body["shape"]])["shape"]])["sub_shapes"]
    for child, old_child in list(zip(children, old_children))[1:]:  # the same bytes but for the box's index
        assert raw[child][1][4:] == before[old_child][1][4:]
        assert raw[read_shape(*raw[child])["shape"]] == before[read_shape(*before[old_child])["shape"]]
    np.testing.assert_allclose(boxes[0], before_boxes[0] + (3.0, 0.0, 0.0), atol=1e-3)
    tree = NifFile.read(out).blocks[raw_body["shape"]]
    origin, scale = np.array(tree.offset[:3]), tree.offset[3]
    assert mopp.program_leaves(tree.code).tolist() == [0, 1, 2]
    for number, (low, high) in boxes.items():
        for point in (low, high, (low + high) / 2):
            assert number in mopp.leaves_at_point(tree.code, origin, scale, point / SKYRIM_UNITS)
    again = bodies_of(imported(out))[owner]
    assert again["havok_shape"] == "list" and again["havok_mopp"]
    np.testing.assert_allclose(bounds(world_points(again)), edited, atol=1e-3)


def test_damaged_code_over_a_list_is_rebuilt_alone(clean_scene, corpus, tmp_path):
    """The MOPP tree over the list names a fourth child: a warning on import and export, and
    the export changes only that code (built over the three children's boxes)."""
    from raw_havok import block_bytes

    from precombined_nif.core.nif import NifFile

    path, tree_index = dagger_under_mopp(corpus, tmp_path, bytes.fromhex("33"))
    _, warnings = built(path)
    assert any(f"MOPP code of block {tree_index} is damaged" in warning for warning in warnings), warnings
    out = tmp_path / "out.nif"
    export_bytes(imported(path), out)
    before, after = block_bytes(path.read_bytes()), block_bytes(out.read_bytes())
    assert sorted(before) == sorted(after)
    assert [index for index in before if before[index] != after[index]] == [tree_index]
    tree = NifFile.read(out).blocks[tree_index]
    assert mopp.program_leaves(tree.code).tolist() == [0, 1, 2]


STAFF = "pynifly/tests/tests/Skyrim/staff04-collision.nif"  # Skyrim LE: a weapon's dynamic body


def degenerate_points(kind, corpus):
    """Points (Havok units) a game's convex shape may hold that span no volume, or that the
    float hull could not close: vault74's packed mesh, shrunk to a staff's size."""
    if kind == "flat":
        return np.array([[0, 0, 0.1], [0.2, 0, 0.1], [0.2, 0.3, 0.1], [0, 0.3, 0.1], [0.1, 0.15, 0.1]])
    if kind == "three":
        return np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.3, 0], [0.2, 0, 0]])
    if kind == "line":
        return np.array([[0, 0, 0], [0, 0, 0.5], [0, 0, 1.0], [0, 0, 0.25]])
    from raw_havok import block_bytes, read_shape

    raw = block_bytes((corpus / "realmods/vault74/Meshes/SCOL/kynSCOLTemp04.NIF").read_bytes())
    vertices = read_shape(*raw[53])["vertices"]
    return (vertices - vertices.min(axis=0)) / 40.0


def weapon_with_points(corpus, tmp_path, kind):
    """staff04-collision.nif with its capsule replaced by a bhkConvexVerticesShape of
    ``degenerate_points`` packed by hand (planes: none, as a tool writing such points may)."""
    import struct

    from raw_havok import block_bytes, pack_convex

    from precombined_nif.core.nif import NifFile, RawBlock

    data = (corpus / STAFF).read_bytes()
    raw = block_bytes(data)
    nif = NifFile.from_bytes(data)
    body = next(index for index, (type_name, _) in raw.items() if type_name == "bhkRigidBody")
    (shape,) = struct.unpack_from("<i", raw[body][1])
    nif.blocks[shape] = RawBlock("bhkConvexVerticesShape", pack_convex(0x1B5, 0.01, degenerate_points(kind, corpus), []))
    path = tmp_path / f"staff_{kind}.nif"
    path.write_bytes(nif.to_bytes())
    return path, shape


@pytest.mark.parametrize("kind", ["flat", "three", "line", "vault74"])
def test_convex_shape_of_degenerate_points_is_shown_and_kept(clean_scene, corpus, tmp_path, kind):
    """A weapon whose convex shape's points are flat, three, on a line, or the packed mesh the
    float hull left open: shown as its points (where the bytes put them) and the hull they span
    (a polygon, a triangle, no face, a closed hull); the untouched file writes back byte for byte
    (its collision blocks were dropped), and with the body's friction edited the convex block is
    written as it was."""
    from raw_havok import block_bytes, read_shape

    path, shape = weapon_with_points(corpus, tmp_path, kind)
    collection, warnings = built(path)
    assert not [warning for warning in warnings if "collision" in warning], warnings
    bpy_update()
    (owner, body), = bodies_of(collection).items()
    assert body["havok_shape"] == "convex"
    raw = block_bytes(path.read_bytes())
    points = read_shape(*raw[shape])["vertices"] * SKYRIM_UNITS
    world = owner_world(path, owner)
    expected = np.unique(np.round(points @ world[:3, :3].T + world[:3, 3], 3), axis=0)
    np.testing.assert_allclose(np.unique(np.round(world_points(body), 3), axis=0), expected, atol=2e-3)
    faces = len(body.data.polygons)
    if kind == "line":
        assert faces == 0
    elif kind == "vault74":  # closed: every edge between two faces
        edges = [key for polygon in body.data.polygons for key in polygon.edge_keys]
        assert faces and set(np.unique(edges, axis=0, return_counts=True)[1].tolist()) == {2}
    else:  # the square's polygon (its centre a loose point) or the triangle, facing along z
        normals = np.array([polygon.normal[:] for polygon in body.data.polygons])
        assert faces == (2 if kind == "flat" else 1) and np.allclose(np.abs(normals[:, 2]), 1, atol=1e-5)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()  # (a failure's diff takes minutes)
    edited = imported(path)
    (_, again), = bodies_of(edited).items()
    again["havok_friction"] = 0.8
    out = tmp_path / "edited.nif"
    export_bytes(edited, out)
    written = block_bytes(out.read_bytes())
    assert len(written) == len(raw)
    (body_written,) = read_bodies(out).values()
    assert body_written["friction"] == pytest.approx(0.8) and written[body_written["shape"]] == raw[shape]



def test_edited_flat_convex_shape_is_written_as_its_polygon(clean_scene, corpus, tmp_path):
    """The weapon's flat convex shape moved up by 7: written as the square's four corners (the
    centre point inside it left out) with six planes, its two sides and its four edges, each
    holding the corners (read with struct)."""
    import struct

    from raw_havok import block_bytes

    path, _ = weapon_with_points(corpus, tmp_path, "flat")
    collection = imported(path)
    (owner, body), = bodies_of(collection).items()
    body.location.z += 7.0
    out = tmp_path / "out.nif"
    export_bytes(collection, out)
    (written,) = read_bodies(out).values()
    type_name, payload = block_bytes(out.read_bytes())[written["shape"]]
    assert type_name == "bhkConvexVerticesShape"
    (count,) = struct.unpack_from("<I", payload, 32)
    vertices = np.array(struct.unpack_from(f"<{4 * count}f", payload, 36)).reshape(-1, 4)[:, :3]
    (planes_count,) = struct.unpack_from("<I", payload, 36 + 16 * count)
    planes = np.array(struct.unpack_from(f"<{4 * planes_count}f", payload, 40 + 16 * count)).reshape(-1, 4)
    expected = degenerate_points("flat", corpus)[:4] + (0, 0, 7.0 / SKYRIM_UNITS)
    assert sorted(map(tuple, np.round(vertices, 5).tolist())) == sorted(map(tuple, np.round(expected, 5).tolist()))
    heights = vertices @ planes[:, :3].T + planes[:, 3]
    assert planes_count == 6 and np.abs(heights).max(axis=0).min() < 1e-5 and heights.max() < 1e-5
    assert sorted(np.round(np.abs(planes[:, 2]), 5).tolist()) == [0, 0, 0, 0, 1, 1]
