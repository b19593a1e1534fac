"""Fallout 4 Havok collision in real Blender: bodies imported under their owners with what they
hold, edited through the panel's properties, and written back (unchanged, edited, new, deleted)
through io/havok/collision_export, checked by decoding the packfiles with the codec."""

import numpy as np
import pytest
from scene import imported, panel_drawn
from support import CORPUS, corpus_bytes, corpus_files_holding

from precombined_nif.core.havok import GAME_UNITS, Packfile
from precombined_nif.core.havok.shapes.compound import DynamicCompoundShape
from precombined_nif.core.havok.shapes.compressed_mesh import CompressedMeshShape
from precombined_nif.core.havok.shapes.convex import CapsuleShape, ConvexPolytopeShape, SphereShape
from precombined_nif.core.havok.summary import body_summary
from precombined_nif.core.havok.tagfile import MAGIC
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.collision import bhkNPCollisionObject
from precombined_nif.core.nif.blocks.nodes import NiNode

FO4 = "pynifly/tests/tests/FO4"
BARREL = f"{FO4}/44BullBarrel.nif"  # one dynamic compound of two polytopes
CRATE = f"{FO4}/Meshes/Props/CrateDeathclaw01.nif"  # a compressed mesh of 2 sections
BEAMS = f"{FO4}/Meshes/Architecture/DiamondCity/Stadium_Ext/DiamondCrossbeams01.nif"  # two bodies, one system
BALL = f"{FO4}/Meshes/Prewar_Ball01.nif"  # a sphere
STAIRS = f"{FO4}/CapsuleExtStairsFree01.nif"  # a compressed mesh and a polytope, one system


def physics_files():
    """Corpus NIFs holding a bhkPhysicsSystem packfile (skeletons' ragdolls are not built, nor
    Starfield's tagfiles)."""
    return [path for path in corpus_files_holding("**/*.nif", b"bhkPhysicsSystem") if MAGIC not in corpus_bytes(path)]


def bodies_of(collection):
    """The collision body objects (not compound children), by collision block."""
    return {obj["nif_collision"]: obj for obj in collection.all_objects if "nif_collision" in obj}


def owners_of(collection):
    from precombined_nif.io.havok.collision_export import is_collision

    return [obj for obj in collection.all_objects if "nif_block" in obj and not is_collision(obj)]


def write_all(collection, nif):
    """What the NIF exporter does for collision: write_collision for every owner object."""
    from precombined_nif.io.havok.collision_export import write_collision
    from precombined_nif.io.nif.exporter import NifExporter

    exporter = NifExporter(game="FO4", nif=nif)
    for obj in owners_of(collection):
        write_collision(exporter, obj, obj["nif_block"])
    return exporter


def collision_systems(nif):
    """{collision block index: (collision object, decoded system)}."""
    found = {}
    for index, collision in nif.blocks_of(bhkNPCollisionObject):
        system_block = nif.blocks[collision.data]
        if system_block.kind == "physics":
            found[index] = (collision, Packfile.from_bytes(system_block.packfile).root)
    return found


def mesh_vertices(obj):
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def placed(obj, vertices):
    """Vertices of ``obj`` placed by its local matrix (a compound child in its compound's space)."""
    matrix = np.array(obj.matrix_parent_inverse @ obj.matrix_basis)
    return vertices @ matrix[:3, :3].T + matrix[:3, 3]


def check_invariants(system):
    """What every physics system of the game's files shows."""
    assert len(system.materials) == len(system.bodies)
    assert sorted(body.material_id for body in system.bodies) == list(range(len(system.bodies)))
    moving = [body for body in system.bodies if system.motion_type(body) != "static"]
    assert len(system.motion_cinfos) == len(moving)
    dynamic = [body for body in system.bodies if system.motion_type(body) == "dynamic"]
    assert len(system.motion_properties) == len(dynamic)
    for body in system.bodies:
        assert any(body.shape is obj for obj in system.referenced_objects)
        shape = body.shape
        if isinstance(shape, CompressedMeshShape):
            data = shape.data
            keys = data.decode()[4]
            assert data.bits_per_key == shape.shape_key_bits == (data.max_key_value + 1).bit_length()
            assert data.max_key_value == keys.max() and data.num_primitive_keys == len(keys)
            assert len(shape.triangle_is_interior) * 32 >= shape.triangle_bits == data.max_key_value + 1
            last = data.sections[-1].primitives & 0xFF
            assert shape.quad_bits == ((len(data.sections) - 1) << 7) + last
            assert len(shape.quad_is_flat) * 32 >= shape.quad_bits


# -- import ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", physics_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_physics_system_body_is_built_under_its_owner(clean_scene, path):
    nif = NifFile.read(path)
    systems = collision_systems(nif)
    collection = imported(path)
    bodies = bodies_of(collection)
    assert sorted(bodies) == sorted(systems)
    for index, obj in bodies.items():
        collision, system = systems[index]
        body = system.bodies[collision.body_id]
        assert nif.blocks[obj.parent["nif_block"]].collision_object == index
        assert obj.hide_render and (obj.type == "EMPTY" or obj.display_type == "WIRE")
        summary = body_summary(system, body)
        assert obj["havok_motion"] == summary["motion"] and obj["havok_layer"] == summary["layer"]
        assert obj["havok_mass"] == pytest.approx(summary["mass"], abs=1e-4)
        assert obj["havok_friction"] == pytest.approx(summary["friction"], abs=0.01)
        assert obj["havok_restitution"] == pytest.approx(summary["restitution"], abs=0.01)
        shape = body.shape
        if isinstance(shape, DynamicCompoundShape):
            children = sorted(obj.children, key=lambda child: child.name)
            assert obj.type == "EMPTY" and len(children) == len(shape.instances)
            pairs = [(child, instance.shape, instance.matrix) for child, instance in zip(children, shape.instances)]
        else:
            pairs = [(obj, shape, np.eye(4))]
        for child, child_shape, matrix in pairs:
            assert int(child["havok_material"], 16) == child_shape.user_data
            if isinstance(child_shape, SphereShape):
                assert child.empty_display_type == "SPHERE"
                assert child.empty_display_size == pytest.approx(child_shape.radius, rel=1e-6)
                continue
            vertices, triangles = child_shape.mesh()
            if isinstance(child_shape, CompressedMeshShape):
                vertices = vertices[np.unique(triangles)]
                assert len(child.data.polygons) == len(triangles)
                values = np.empty(len(triangles), np.int32)
                child.data.attributes["havok_material"].data.foreach_get("value", values)
                assert (values.view(np.uint32) == child_shape.triangle_materials()).all()
            if isinstance(child_shape, CapsuleShape):
                continue  # shown as a capsule surface, checked in test_capsule_round_trip
            local = mesh_vertices(child)
            if child is not obj:
                local = placed(child, local)
            expected = vertices @ matrix[:3, :3].T + matrix[:3, 3]
            assert np.allclose(np.sort(local, axis=0), np.sort(expected, axis=0), atol=1e-3)


def owner_block(obj):
    """The node block a body object belongs to (its parent object's, or its parent bone's)."""
    if obj.parent_type == "BONE":
        return obj.parent.data.bones[obj.parent_bone]["nif_block"]
    return obj.parent["nif_block"]


def world_box(objects):
    points = [np.array(o.matrix_world) @ np.c_[mesh_vertices(o), np.ones(len(o.data.vertices))].T for o in objects]
    points = np.concatenate([p[:3].T for p in points])
    return points.min(axis=0), points.max(axis=0)


@pytest.mark.slow
@pytest.mark.parametrize("path", physics_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_collision_lands_on_its_node(clean_scene, path):
    """Where the game puts collision: the shape in its owner node's space (the body's stored
    transform is where the node stood, not an offset from it). Checked against node transforms
    read from the file's bytes apart from the product, the packfile's shapes, and the meshes."""
    from raw_nodes import read_nodes, world_matrices

    worlds = world_matrices(*read_nodes(path))
    nif = NifFile.read(path)
    systems = collision_systems(nif)
    collection = imported(path)
    for index, obj in bodies_of(collection).items():
        collision, system = systems[index]
        shape = system.bodies[collision.body_id].shape
        owner = owner_block(obj)
        node_world = worlds[owner]
        if isinstance(shape, DynamicCompoundShape):
            expected = {child.name: node_world @ instance.matrix for child, instance in zip(sorted(obj.children, key=lambda c: c.name), shape.instances)}
            np.testing.assert_allclose(np.array(obj.matrix_world), node_world, atol=1e-3)
            for child in obj.children:
                if not isinstance(shape.instances[0].shape, SphereShape):
                    np.testing.assert_allclose(np.array(child.matrix_world), expected[child.name], atol=1e-3)
        elif isinstance(shape, SphereShape):
            centre = node_world @ np.r_[shape.center, 1.0]
            np.testing.assert_allclose(np.array(obj.matrix_world.translation), centre[:3], atol=1e-3)
        else:
            np.testing.assert_allclose(np.array(obj.matrix_world), node_world, atol=1e-3)
        meshes = [o for o in collection.all_objects if o.type == "MESH" and "havok_shape" not in o and o.get("nif_block") in descendants(worlds, nif, owner)]
        pieces = [o for o in [obj, *obj.children_recursive] if o.type == "MESH"]
        if meshes and pieces:
            low, high = world_box(pieces)
            mesh_low, mesh_high = world_box(meshes)
            assert (low <= mesh_high + 1.0).all() and (mesh_low <= high + 1.0).all(), f"{obj.name} misses its node's meshes"


def descendants(worlds, nif, index):
    from precombined_nif.core.nif.blocks.nodes import NiNode as Node

    found, stack = set(), [index]
    while stack:
        current = stack.pop()
        if current in found:
            continue
        found.add(current)
        block = nif.blocks[current]
        if isinstance(block, Node):
            stack.extend(int(c) for c in np.asarray(block.children).tolist() if 0 <= c < len(nif.blocks))
    return found


def test_known_counts(clean_scene, corpus):
    crate = bodies_of(imported(corpus / CRATE))
    (obj,) = crate.values()
    assert obj["havok_shape"] == "compressed_mesh" and len(obj.data.polygons) == 312
    beams = bodies_of(imported(corpus / BEAMS))
    assert sorted(len(obj.data.polygons) for obj in beams.values()) == [20, 84]
    barrel = bodies_of(imported(corpus / BARREL))
    (obj,) = barrel.values()
    assert obj["havok_shape"] == "compound" and obj["havok_motion"] == "dynamic" and obj["havok_layer"] == 5
    assert [len(child.data.polygons) for child in obj.children] == [12, 12]
    assert obj["havok_mass"] == pytest.approx(9.0, abs=1e-5)
    (ball,) = bodies_of(imported(corpus / BALL)).values()
    assert ball.type == "EMPTY" and ball.empty_display_type == "SPHERE"


def test_ragdolls_are_kept_not_built(clean_scene, corpus):
    import bpy

    path = corpus / f"{FO4}/skeleton.nif"
    nif = NifFile.read(path)
    bpy.ops.import_scene.precombined_nif(filepath=str(path))
    collection = bpy.data.collections[path.stem]
    bodies = bodies_of(collection)
    # only CharacterBumper's capsule is in a bhkPhysicsSystem
    assert len(bodies) == 1 and list(bodies.values())[0]["havok_shape"] == "capsule"
    exporter = write_all(collection, nif)
    assert exporter.nif.to_bytes() == path.read_bytes()


def test_unreadable_packfile_warns_and_imports_the_rest(clean_scene, corpus, tmp_path):
    import bpy

    nif = NifFile.read(corpus / BARREL)
    (index, system_block), = [(i, b) for i, b in enumerate(nif.blocks) if b.type_name == "bhkPhysicsSystem"]
    system_block.packfile = b"\x57\xe0\xe0\x57\x10\xc0\xc0\x10" + bytes(40)
    path = tmp_path / "damaged.nif"
    nif.write(path)
    objects = len(bpy.data.objects)
    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    collection = bpy.data.collections["damaged"]
    assert not bodies_of(collection) and not any("havok_shape" in obj for obj in collection.all_objects)
    assert len(bpy.data.objects) > objects  # the scene graph imported


# -- export ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", physics_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_untouched_collision_writes_back_byte_identical(clean_scene, path):
    collection = imported(path)
    exporter = write_all(collection, NifFile.read(path))
    assert exporter.nif.to_bytes() == path.read_bytes()


def test_edited_body_is_reencoded(clean_scene, corpus):
    from mathutils import Matrix

    path = corpus / BARREL
    collection = imported(path)
    (obj,) = bodies_of(collection).values()
    obj["havok_friction"] = 0.8
    obj["havok_mass"] = 20.0
    obj["havok_layer"] = 7
    first = sorted(obj.children, key=lambda child: child.name)[0]
    first.matrix_basis = Matrix.Translation((0, 0, 5)) @ first.matrix_basis
    before = NifFile.read(path)
    nif = write_all(collection, NifFile.read(path)).nif
    assert len(nif.blocks) == len(before.blocks)
    ((collision, system),) = collision_systems(nif).values()
    check_invariants(system)
    summary = body_summary(system, system.bodies[collision.body_id])
    assert summary["friction"] == 0.8 and summary["mass"] == 20.0 and summary["layer"] == 7
    assert summary["restitution"] == 0.4 and summary["motion"] == "dynamic"
    old = Packfile.from_bytes(before.blocks[collision.data].packfile).root.bodies[0]
    new = system.bodies[collision.body_id]
    assert new.collision_filter_info >> 8 == old.collision_filter_info >> 8  # bits above the layer kept
    moved = new.shape.instances[0].matrix[:3, 3] - old.shape.instances[0].matrix[:3, 3]
    assert np.allclose(moved, (0, 0, 5), atol=1e-3)
    assert np.allclose(new.shape.instances[1].matrix, old.shape.instances[1].matrix, atol=1e-4)
    assert isinstance(new.shape.instances[0].shape, ConvexPolytopeShape)


def test_editing_one_body_of_a_shared_system_keeps_the_other(clean_scene, corpus):
    path = corpus / STAIRS
    collection = imported(path)
    bodies = bodies_of(collection)
    mesh_body = next(obj for obj in bodies.values() if obj["havok_shape"] == "compressed_mesh")
    co = mesh_vertices(mesh_body)
    co[:, 2] += 3.0
    mesh_body.data.vertices.foreach_set("co", co.astype(np.float32).ravel())
    before = collision_systems(NifFile.read(path))
    nif = write_all(collection, NifFile.read(path)).nif
    after = collision_systems(nif)
    assert sorted(after) == sorted(before)
    systems = {id(system) for _, system in after.values()}
    for index, (collision, system) in after.items():
        check_invariants(system)
        old_collision, old_system = before[index]
        body, old_body = system.bodies[collision.body_id], old_system.bodies[old_collision.body_id]
        if index == mesh_body["nif_collision"]:
            vertices, triangles = body.shape.mesh()
            old_vertices, old_triangles = old_body.shape.mesh()
            assert len(triangles) == len(old_triangles)
            used, old_used = vertices[np.unique(triangles)], old_vertices[np.unique(old_triangles)]
            assert np.allclose(np.sort(used, axis=0), np.sort(old_used + (0, 0, 3), axis=0), atol=0.05)
            assert sorted(set(body.shape.triangle_materials())) == sorted(set(old_body.shape.triangle_materials()))
        else:  # the other body of the system, written as it was
            assert type(body.shape) is type(old_body.shape)
            assert body.shape.encode()[0] == old_body.shape.encode()[0]
            assert body_summary(system, body) == body_summary(old_system, old_body)
    assert len(systems) == 2  # decoded once per collision object, one system block


def test_deleted_collision_is_unlinked(clean_scene, corpus):
    import bpy

    path = corpus / BARREL
    collection = imported(path)
    (obj,) = bodies_of(collection).values()
    owner_index = obj.parent["nif_block"]
    for child in list(obj.children):
        bpy.data.objects.remove(child)
    bpy.data.objects.remove(obj)
    nif = write_all(collection, NifFile.read(path)).nif
    assert nif.blocks[owner_index].collision_object == -1


NODE_TRANSLATION = (120.0, -45.0, 30.0)
NODE_TURN = 0.7  # radians about +Z


def new_owner(name="Owner"):
    """An empty in the scene with a NiNode for it in a new exporter's file, the node away from
    the origin and turned, so a body's stored place must be the node's."""
    import bpy

    from precombined_nif.io.nif.exporter import NifExporter

    owner = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(owner)
    exporter = NifExporter(game="FO4")
    c, s = np.cos(NODE_TURN), np.sin(NODE_TURN)
    node = NiNode("NiNode", name=name, translation=NODE_TRANSLATION, rotation=(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0))
    index = exporter.add(node)
    exporter.nif.roots = [index]
    return owner, exporter, index


def check_body_at_node(body):
    """The body's stored position and rotation are the owner node's (signs included)."""
    assert np.allclose(np.asarray(body.position[:3]) * GAME_UNITS, NODE_TRANSLATION, atol=1e-4)
    expected = np.array([0.0, 0.0, np.sin(NODE_TURN / 2), np.cos(NODE_TURN / 2)])  # x, y, z, w
    assert np.allclose(np.asarray(body.orientation), expected, atol=1e-6)


def box(name, size=(40.0, 20.0, 10.0), location=(0.0, 0.0, 0.0)):
    """A box mesh object (corners at +-size/2) linked to the scene."""
    import bpy

    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]) * size
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(corners.tolist(), [], faces)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.location = location
    return obj, corners


def mark(obj, parent, shape="convex"):
    """Parent ``obj`` and mark it through the operator, as a user would."""
    import bpy

    obj.parent = parent
    for other in bpy.context.selected_objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.havok_mark_collision(shape=shape) == {"FINISHED"}


def written_body(exporter, index):
    nif = NifFile.from_bytes(exporter.nif.to_bytes())
    collision = nif.blocks[nif.blocks[index].collision_object]
    assert isinstance(collision, bhkNPCollisionObject)
    assert collision.flags == 128 and collision.target == index and collision.body_id == 0
    assert nif.blocks[collision.data].type_name == "bhkPhysicsSystem"
    system = Packfile.from_bytes(nif.blocks[collision.data].packfile).root
    check_invariants(system)
    (body,) = system.bodies
    return system, body


def test_new_box_becomes_a_static_convex_body(clean_scene):
    from precombined_nif.io.havok.collision_export import is_collision, write_collision

    owner, exporter, index = new_owner()
    obj, corners = box("Box", location=(5.0, 6.0, 7.0))
    mark(obj, owner)
    assert is_collision(obj) and obj.display_type == "WIRE" and obj.hide_render
    write_collision(exporter, owner, index)
    system, body = written_body(exporter, index)
    assert system.motion_type(body) == "static" and body.layer == 1 and not len(system.motion_cinfos)
    check_body_at_node(body)
    vertices, triangles = body.shape.mesh()
    assert isinstance(body.shape, ConvexPolytopeShape) and len(triangles) == 12
    # the object's place under its owner is baked into the shape (owner space)
    assert np.allclose(np.sort(vertices, axis=0), np.sort(corners + (5, 6, 7), axis=0), atol=1e-3)


def test_new_dynamic_triangle_mesh_with_face_materials(clean_scene):
    import bpy

    from precombined_nif.io.havok.collision_export import write_collision

    owner, exporter, index = new_owner()
    obj, corners = box("Crate")
    obj.rotation_euler = (0.0, 0.0, 0.5)
    obj.scale = (2.0, 2.0, 2.0)
    mark(obj, owner, "compressed_mesh")
    assert bpy.ops.object.havok_set_motion(motion="dynamic") == {"FINISHED"}
    obj["havok_mass"] = 12.5
    obj["havok_material"] = "0xF413D173"
    # the top face gets another material, through the edit-mode operator
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="DESELECT")
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.data.polygons[3].select = True
    bpy.ops.object.mode_set(mode="EDIT")
    assert bpy.ops.mesh.havok_assign_material(material="0x1DD9C611") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    write_collision(exporter, owner, index)
    system, body = written_body(exporter, index)
    assert system.motion_type(body) == "dynamic" and system.mass(body) == pytest.approx(12.5)
    shape = body.shape
    assert isinstance(shape, CompressedMeshShape) and shape.user_data == 0xF413D173
    vertices, triangles = shape.mesh()
    assert len(triangles) == 12
    c, s = np.cos(0.5), np.sin(0.5)
    turned = corners * 2 @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]).T
    assert np.allclose(np.sort(vertices[np.unique(triangles)], axis=0), np.sort(turned, axis=0), atol=0.05)
    materials = shape.triangle_materials()
    assert sorted(materials.tolist()) == [0x1DD9C611] * 2 + [0xF413D173] * 10  # one quad face = two triangles
    check_body_at_node(body)


def test_capsule_round_trip(clean_scene):
    from precombined_nif.io.havok.collision_export import fit_capsule
    from precombined_nif.io.havok.collision_import import capsule_mesh

    a, b, radius = np.array([1.0, 2.0, 3.0]), np.array([11.0, -4.0, 30.0]), 6.5
    vertices, triangles = capsule_mesh(a, b, radius)
    corners = vertices[triangles]
    volume = np.einsum("ij,ij->", corners[:, 0] - vertices.mean(0), np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]))
    assert volume > 0  # faces outward
    fitted_a, fitted_b, fitted_radius = fit_capsule(vertices)
    if np.linalg.norm(fitted_a - a) > np.linalg.norm(fitted_a - b):
        fitted_a, fitted_b = fitted_b, fitted_a
    assert np.allclose([*fitted_a, *fitted_b, fitted_radius], [*a, *b, radius], atol=1e-6)


def test_new_compound_of_a_box_and_a_sphere(clean_scene):
    import bpy

    from precombined_nif.io.havok.collision_export import write_collision

    owner, exporter, index = new_owner()
    holder = bpy.data.objects.new("Holder", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.parent = owner
    holder["havok_shape"] = "compound"
    holder["havok_motion"] = "keyframed"
    first, corners = box("Part", location=(0.0, 0.0, 20.0))
    mark(first, holder)
    ball = bpy.data.objects.new("Ball", None)
    bpy.context.scene.collection.objects.link(ball)
    ball.parent = holder
    ball["havok_shape"] = "sphere"
    ball.empty_display_size = 8.0
    ball.location = (30.0, 0.0, 0.0)
    write_collision(exporter, owner, index)
    system, body = written_body(exporter, index)
    assert system.motion_type(body) == "keyframed" and system.motion_cinfos[0]["motion_properties_id"] == 0xFFFF
    compound = body.shape
    assert isinstance(compound, DynamicCompoundShape)
    (sphere, part) = compound.instances  # children in name order
    assert isinstance(part.shape, ConvexPolytopeShape) and isinstance(sphere.shape, SphereShape)
    assert np.allclose(part.matrix[:3, 3], (0, 0, 20), atol=1e-3) and np.allclose(sphere.matrix[:3, 3], (30, 0, 0), atol=1e-3)
    assert sphere.shape.radius == pytest.approx(8.0, rel=1e-6)


def test_bad_collision_is_a_clear_error(clean_scene):
    from precombined_nif.core.errors import FormatError
    from precombined_nif.io.havok.collision_export import write_collision

    owner, exporter, index = new_owner()
    obj, _ = box("Flat", size=(10.0, 10.0, 0.0))
    mark(obj, owner)
    with pytest.raises(FormatError, match="Flat"):
        write_collision(exporter, owner, index)
    obj.data.vertices[0].co.z = 5.0
    obj["havok_motion"] = "dynamic"  # without a mass
    with pytest.raises(FormatError, match="mass"):
        write_collision(exporter, owner, index)
    obj["havok_motion"] = "static"
    obj["havok_material"] = "wood"
    with pytest.raises(FormatError, match="Flat.*wood"):
        write_collision(exporter, owner, index)


# -- the panel's data --------------------------------------------------------------------------


def test_settings_survive_save_and_reload(clean_scene, corpus, tmp_path):
    import bpy

    (obj,) = bodies_of(imported(corpus / BARREL)).values()
    obj["havok_restitution"] = 0.25
    obj["havok_material"] = "0xDEADBEEF"
    saved = tmp_path / "collision.blend"
    bpy.data.libraries.write(str(saved), {obj})
    name = obj.name
    bpy.data.objects.remove(obj)
    with bpy.data.libraries.load(str(saved)) as (source, target):
        target.objects = [name]
    (again,) = target.objects
    assert again["havok_restitution"] == pytest.approx(0.25) and again["havok_motion"] == "dynamic"
    assert again["havok_material"] == "0xDEADBEEF" and again["havok_shape"] == "compound"
    assert again.id_properties_ui("havok_layer").as_dict()["max"] == 255


def test_panel_is_registered(addon):
    import bpy

    assert hasattr(bpy.types, "OBJECT_PT_havok_collision")
    assert bpy.ops.object.havok_mark_collision.idname() == "OBJECT_OT_havok_mark_collision"
    assert bpy.ops.object.havok_set_motion.idname() == "OBJECT_OT_havok_set_motion"
    assert bpy.ops.mesh.havok_assign_material.idname() == "MESH_OT_havok_assign_material"


def test_panel_draws_every_kind(clean_scene, corpus):
    import bpy

    panel_class = bpy.types.OBJECT_PT_havok_collision
    objects = [obj for name in (BARREL, CRATE, BALL) for obj in imported(corpus / name).all_objects]
    kinds = set()
    for obj in objects:
        drawn = panel_drawn(panel_class, obj)
        if "havok_shape" not in obj:
            assert drawn[0] == ("label", "Not a collision object")
            continue
        kinds.add(obj["havok_shape"])
        texts = [text for _, text in drawn]
        assert "Material" in texts
        if "havok_motion" in obj:
            assert {"Friction", "Restitution", "Layer"} <= set(texts)
            assert ("Mass (kg)" in texts) == (obj["havok_motion"] == "dynamic")
        if obj["havok_shape"] == "compressed_mesh":
            assert ("operator", "mesh.havok_assign_material") in drawn
            assert any(text.endswith(" faces") for text in texts)
    assert kinds == {"compound", "convex", "compressed_mesh", "sphere"}


# -- collision on a skeleton bone --------------------------------------------------------------


def bone_collision_file(corpus, tmp_path):
    """A skinned corpus body with CandleBottleLit01's collision moved onto one of its bones (a
    node away from the origin): (path, bone node index)."""
    import struct

    from nif_rewriter import RawNif

    body = RawNif.read(corpus / "pynifly/tests/tests/FO4/BTMaleBody.nif")
    candle = RawNif.read(corpus / "pynifly/tests/tests/FO4/Meshes/CandleBottleLit01.nif")
    (system,) = candle.indices_of("bhkPhysicsSystem")
    bone = next(i for i in body.indices_of("NiNode") if body.node_name(i) == "Pelvis_skin")
    system_index = body.add_block("bhkPhysicsSystem", candle.blocks[system])
    collision = body.add_block("bhkNPCollisionObject", struct.pack("<iHiI", bone, 0x80, system_index, 0))
    body.set_collision(bone, collision)
    path = tmp_path / "BoneCollision.nif"
    path.write_bytes(body.to_bytes())
    return path, bone


def test_bone_collision_lands_on_the_bone_and_writes_back(clean_scene, corpus, tmp_path):
    import bpy

    from raw_nodes import read_nodes, world_matrices

    path, bone = bone_collision_file(corpus, tmp_path)
    collection = imported(path)
    (obj,) = bodies_of(collection).values()
    assert obj.parent_type == "BONE" and owner_block(obj) == bone
    node_world = world_matrices(*read_nodes(path))[bone]
    assert abs(node_world[2, 3]) > 10  # the situation: a node far from the origin
    np.testing.assert_allclose(np.array(obj.matrix_world), node_world, atol=1e-3)
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    out = tmp_path / "out.nif"
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == path.read_bytes()


def test_a_body_the_import_cannot_build_is_kept(clean_scene, corpus, tmp_path):
    """A body without a shape (a null pointer), which the import cannot show: a warning, and the
    untouched file writes back as it was (the physics system's readable packfile made it look
    shown, so it was taken for deleted and unlinked)."""
    import bpy
    from scene import export_bytes

    from precombined_nif.io.nif.importer import SceneBuilder

    nif = NifFile.read(corpus / BARREL)
    (system_block,) = [b for b in nif.blocks if b.type_name == "bhkPhysicsSystem"]
    packfile = Packfile.from_bytes(system_block.packfile)
    packfile.root.bodies[0].shape = None
    system_block.packfile = packfile.to_bytes()
    path = tmp_path / "scaled.nif"
    nif.write(path)
    collection = bpy.data.collections.new("built")
    bpy.context.scene.collection.children.link(collection)
    builder = SceneBuilder(NifFile.read(path), collection)
    builder.build()
    assert any("collision not shown (no shape cannot be shown)" in warning for warning in builder.warnings()), builder.warnings()
    assert not bodies_of(collection)
    assert export_bytes(imported(path), tmp_path / "out.nif") == path.read_bytes()  # (a failure's diff takes minutes)
