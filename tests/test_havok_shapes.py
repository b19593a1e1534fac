"""Shape encoders: each shape type built from geometry, written in a packfile, read back and
decoded to the same geometry (within its quantisation)."""

import numpy as np
import pytest
from packfiles import nif_systems, shapes_round_trip

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.classes.physics_system import PhysicsSystemData
from precombined_nif.core.havok.shapes.base import GAME_UNITS, w_int
from precombined_nif.core.havok.shapes.compound import DynamicCompoundShape
from precombined_nif.core.havok.shapes.compressed_mesh import CompressedMeshShape
from precombined_nif.core.havok.shapes.compressed_mesh_encode import build_compressed_mesh
from precombined_nif.core.havok.shapes.convex import CapsuleShape, ConvexPolytopeShape, SphereShape
from precombined_nif.core.havok.shapes.hull import GRID_STEPS
from precombined_nif.core.havok.shapes.mass import unpack_vector
from precombined_nif.core.havok.shapes.static_tree import decode_tree


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def test_box_polytope():
    corners = np.array([[x, y, z] for x in (-10, 10) for y in (-20, 20) for z in (0, 5)], float)
    inner = np.random.default_rng(0).uniform([-9, -19, 1], [9, 19, 4], (30, 3))
    (shape,) = shapes_round_trip(ConvexPolytopeShape.build(np.vstack([corners, inner]), convex_radius=0.7))
    vertices, triangles = shape.mesh()
    assert len(shape.faces) == 6 and (shape.faces["count"] == 4).all()
    assert triangles.shape == (12, 3)
    assert np.allclose(np.sort(vertices, axis=0), np.sort(corners, axis=0), atol=1e-3)
    assert np.isclose(shape.radius, 0.7, atol=1e-5)
    assert set(shape.faces["min_half_angle"]) <= {127, 128}  # a box, as in the game's files
    planes = shape.planes[:6].astype(float)
    heights = (vertices / GAME_UNITS) @ planes[:, :3].T + planes[:, 3]
    assert np.allclose(heights.max(axis=0), 0, atol=1e-6)  # each plane touches the hull
    mass = shape.properties.entries[0].object
    expected = np.prod(np.ptp(corners, axis=0) / GAME_UNITS + 2 * 0.7 / GAME_UNITS)
    assert np.isclose(mass.volume, expected, rtol=1e-5) and mass.mass == mass.volume
    assert np.allclose(unpack_vector(mass.center_of_mass), [0, 0, 2.5 / GAME_UNITS], atol=1e-7)
    assert (mass.major_axis_space.view(np.uint16) == [32768, 32768, 32768, 62768]).all()


def test_random_hull_polytope():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(200, 3)) * [30, 20, 10]
    (shape,) = shapes_round_trip(ConvexPolytopeShape.build(points))
    vertices, triangles = shape.mesh()
    planes = shape.planes[: len(shape.faces)].astype(float)
    heights = (points / GAME_UNITS) @ planes[:, :3].T + planes[:, 3]
    assert heights.max() < np.ptp(points / GAME_UNITS, axis=0).max() / GRID_STEPS  # every point inside, within a grid step
    corners = vertices[triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    assert (np.einsum("ij,ij->i", normals, corners.mean(axis=1) - vertices.mean(axis=0)) > 0).all()
    assert len(shape.vertices) % 4 == 0 and len(shape.planes) % 4 == 0
    assert (w_int(shape.vertices[:, 3])[: len(vertices)] == np.arange(len(vertices))).all()


def test_flat_points_are_refused():
    with pytest.raises(FormatError, match="flat"):
        ConvexPolytopeShape.build([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])


def test_sphere_and_capsule():
    sphere, capsule = shapes_round_trip(SphereShape.build(12.5, (1, 2, 3)), CapsuleShape.build((0, 0, 10), (0, 0, 90), 15))
    assert isinstance(sphere, SphereShape) and np.isclose(sphere.radius, 12.5)
    assert np.allclose(sphere.center, (1, 2, 3), atol=1e-4)
    assert isinstance(capsule, CapsuleShape) and np.isclose(capsule.radius, 15)
    assert np.allclose(capsule.segment, [(0, 0, 10), (0, 0, 90)], atol=1e-4)
    vertices, triangles = capsule.mesh()
    assert vertices.shape == (8, 3) and triangles.shape == (12, 3)
    assert np.abs(vertices[:, :2]).max() < 15 * 0.011  # a thin box around the segment
    summary = capsule.summary()
    assert summary["type"] == "capsule" and np.isclose(summary["length"], 80, atol=1e-3)


def grid(n, size=1000.0):
    x, y = np.meshgrid(np.linspace(-size / 2, size / 2, n), np.linspace(-size / 3, size / 3, n))
    z = 25 * np.sin(x / 90) * np.cos(y / 70)
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    corner = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)).ravel()
    cells = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    return vertices, np.concatenate([cells[:, [0, 1, 2]], cells[:, [0, 2, 3]]])


def test_compressed_mesh_of_many_sections():
    vertices, triangles = grid(40)
    count = len(triangles)
    # each triangle its own material index, so decoded triangles map back to their source
    built = build_compressed_mesh(vertices, triangles, np.arange(count), material_ids=np.arange(count) * 7)
    (shape,) = shapes_round_trip(built)
    assert isinstance(shape, CompressedMeshShape)
    data = shape.data
    assert len(data.sections) > 10
    decoded, decoded_triangles, source, section_of, keys = data.decode()
    assert len(decoded_triangles) == count and sorted(source) == list(range(count))
    # same corners, same order (orientation kept), within the section's quantisation step
    error = np.abs(decoded[decoded_triangles] * GAME_UNITS - vertices[triangles[source]]).max(axis=(1, 2))
    steps = np.array([section.scale for section in data.sections]).max(axis=1) * GAME_UNITS
    assert (error <= steps[section_of] * 0.51 + 1e-3).all()
    summary = {"type": "compressed_mesh", "vertices": len(vertices), "triangles": count, "sections": len(data.sections)}
    assert shape.summary() == summary
    assert (shape.triangle_materials() == source * 7).all()

    # section limits, shared vertices, trees and keys
    for index, section in enumerate(data.sections):
        assert (section.primitives & 0xFF) <= 128 and section.num_packed + section.num_shared <= 255
        assert section.shared & 0xFF == section.num_packed
        leaves = decode_tree(section.nodes, section.aabb[:, :3], data_bytes=1)
        mine = section_of == index
        primitive = (keys[mine] & 0xFF) >> 1
        assert sorted(leaves) == list(range(section.primitives & 0xFF))
        corners = decoded[decoded_triangles[mine]]
        low = np.array([leaves[p][0] for p in primitive])
        high = np.array([leaves[p][1] for p in primitive])
        assert (corners.min(axis=1) >= low - 1e-6).all() and (corners.max(axis=1) <= high + 1e-6).all()
    top = decode_tree(data.tree, data.domain[:, :3], data_bytes=2)
    assert sorted(top) == list(range(len(data.sections)))
    for index, section in enumerate(data.sections):
        assert (top[index][0] <= section.aabb[0, :3]).all() and (top[index][1] >= section.aabb[1, :3]).all()
    used = np.unique(decoded_triangles)
    assert np.allclose(decoded[used].min(axis=0), data.domain[0, :3], atol=1e-6)
    assert np.allclose(decoded[used].max(axis=0), data.domain[1, :3], atol=1e-6)
    assert data.num_primitive_keys == count and data.max_key_value == keys.max()
    assert data.bits_per_key == shape.shape_key_bits == (data.max_key_value + 1).bit_length()
    assert shape.triangle_bits == data.max_key_value + 1 and len(shape.triangle_is_interior) * 32 >= shape.triangle_bits
    assert shape.quad_bits == ((len(data.sections) - 1) << 7) + (data.sections[-1].primitives & 0xFF)


def test_compressed_mesh_pairs_triangles_into_quads():
    """Same-material neighbours become quads, keeping every triangle and its winding; only the
    quads in a plane are marked flat."""
    n = 24
    vertices, triangles = grid(n)
    flat_side = vertices[:, 0] < 0
    vertices[flat_side, 2] = 0.0  # half the grid is planar, half is bumpy
    materials = (vertices[triangles, 1].mean(axis=1) > 0).astype(np.int64)  # two materials
    (shape,) = shapes_round_trip(build_compressed_mesh(vertices, triangles, materials, material_ids=(11, 22)))
    data = shape.data
    quads = data.primitives[:, 2] != data.primitives[:, 3]
    assert quads.sum() > 0.8 * len(triangles) / 2
    decoded, decoded_triangles, values, section_of, keys = data.decode()
    assert len(decoded_triangles) == len(triangles) == data.num_primitive_keys

    # identify vertices by their grid cell: every source triangle comes back once, same winding
    spacing = np.array([1000 / (n - 1), 2000 / 3 / (n - 1)])
    cell = lambda points: tuple(np.round((points[:, :2] + [500, 1000 / 3]) / spacing).astype(int).ravel())
    def canonical(corners):
        turns = [np.roll(corners, -k, axis=0) for k in range(3)]
        return min(cell(turn) for turn in turns)
    source = sorted(canonical(vertices[t]) for t in triangles)
    back = sorted(canonical(decoded[t] * GAME_UNITS) for t in decoded_triangles)
    assert source == back
    # materials survive the pairing
    centres = decoded[decoded_triangles].mean(axis=1) * GAME_UNITS
    assert (values == (centres[:, 1] > 0)).all()

    bits = np.unpackbits(shape.quad_is_flat.view(np.uint8), bitorder="little")[: shape.quad_bits]
    for index, section in enumerate(data.sections):
        first, count = section.primitives >> 8, section.primitives & 0xFF
        mine = section_of == index
        for primitive in range(count):
            corners = data.primitives[first + primitive]
            is_flat = bits[(index << 7) + primitive]
            if corners[2] == corners[3]:
                assert not is_flat
                continue
            keyed = decoded_triangles[mine][(keys[mine] >> 1 & 0x7F) == primitive]
            points = decoded[np.unique(keyed)] * GAME_UNITS
            planar = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)[2] < 1e-3
            if (points[:, 0] < -30).all():
                assert is_flat
            assert is_flat == planar or not is_flat


def test_compressed_mesh_shares_vertices_between_sections():
    vertices, triangles = grid(30)
    (shape,) = shapes_round_trip(build_compressed_mesh(vertices, triangles))
    data = shape.data
    decoded, decoded_triangles, _, section_of, _ = data.decode()
    # vertices on section borders are stored once, so neighbouring sections meet exactly
    border = np.zeros(len(decoded), bool)
    border[np.unique(decoded_triangles[section_of == 0])] = True
    others = np.unique(decoded_triangles[section_of != 0])
    assert border[others].any()
    assert len(data.shared_vertices) > 0
    assert len(np.unique(decoded[np.unique(decoded_triangles)], axis=0)) == len(vertices)


def test_compressed_mesh_refuses_bad_input():
    with pytest.raises(FormatError):
        build_compressed_mesh(np.zeros((3, 3)), [[0, 1, 5]])
    with pytest.raises(FormatError):
        build_compressed_mesh(np.eye(3), [[0, 0, 1]])  # only a degenerate triangle


def test_compound_of_several_children():
    box = ConvexPolytopeShape.build([[x, y, z] for x in (-5, 5) for y in (-5, 5) for z in (-2, 2)])
    wedge = ConvexPolytopeShape.build([[0, 0, 0], [10, 0, 0], [0, 10, 0], [0, 0, 10]])
    mesh = build_compressed_mesh(*grid(6, 100))
    ball = SphereShape.build(6, (1, 2, 3))
    placements = []
    for index in range(8):
        matrix = np.eye(4)
        matrix[:3, :3] = rotation((1, index, 2), index * 0.4) * (1.5 if index == 3 else 1.0)
        matrix[:3, 3] = (index * 30, -index * 10, index % 3 * 7)
        placements.append(([box, wedge, mesh, ball][index % 4], matrix))
    (compound,) = shapes_round_trip(DynamicCompoundShape.build(placements))
    assert isinstance(compound, DynamicCompoundShape) and len(compound.instances) == 8
    assert compound.shape_key_bits == 4
    for instance, (child, matrix) in zip(compound.instances, placements):
        assert np.allclose(instance.matrix, matrix, atol=1e-4)
        assert type(instance.shape) is type(child)
    flags = [int(w_int(instance.transform[0, 3])) for instance in compound.instances]
    assert flags[0] == 0x40 and flags[1] == 0x46 and flags[3] == 0x4E
    summary = compound.summary()
    assert [child["type"] for child in summary["children"]] == ["convex", "convex", "compressed_mesh", "sphere"] * 2

    # the BVH: node 0 null, parents contain children, each instance's leaf holds its placed child
    nodes = compound.bvh.nodes
    parents = w_int(nodes["parent"])
    leaves = {}
    for index in range(1, len(nodes) - 1):
        first, second = int(nodes["children"][index]) & 0xFFFF, int(nodes["children"][index]) >> 16
        if first == 0:
            leaves[second] = index
            continue
        for child in (first, second):
            assert parents[child] == index
            assert (nodes["min"][child] >= nodes["min"][index]).all()
            assert (nodes["max"][child] <= nodes["max"][index]).all()
    assert sorted(leaves) == list(range(8)) and compound.bvh.num_leaves == 8 and compound.bvh.root == 1
    assert not nodes["min"][0].any() and not nodes["max"][0].any() and not nodes["max"][-1].any()
    for number, instance in enumerate(compound.instances):
        leaf = leaves[number]
        assert w_int(instance.transform[3, 3]) == leaf
        vertices, _ = instance.shape.mesh()
        placed = (vertices @ instance.matrix[:3, :3].T + instance.matrix[:3, 3]) / GAME_UNITS
        grow = instance.shape.convex_radius * max(instance.scale[:3])
        assert (placed.min(axis=0) - grow >= nodes["min"][leaf] - 1e-5).all()
        assert (placed.max(axis=0) + grow <= nodes["max"][leaf] + 1e-5).all()
    assert np.allclose(compound.aabb[0, :3], nodes["min"][1]) and np.allclose(compound.aabb[1, :3], nodes["max"][1])


def test_compound_rebuild_matches_the_game_files_bvh_boxes(corpus):
    """A corpus compound's instances rebuilt: the leaf boxes equal the game's."""
    for name in ("pynifly/tests/tests/FO4/44BullBarrel.nif#5", "pynifly/tests/tests/FO4/RedR_ButtonBox.nif#18"):
        compound = Packfile.from_bytes(nif_systems()[name][1]).root.bodies[0].shape
        old = compound.bvh.nodes.copy()
        old_leaves = {
            int(children >> 16): index
            for index, children in enumerate(old["children"])
            if index and not children & 0xFFFF and old["max"][index].any()
        }
        compound.rebuild()
        new = compound.bvh.nodes
        for number, instance in enumerate(compound.instances):
            leaf = int(w_int(instance.transform[3, 3]))
            assert np.allclose(new["min"][leaf], old["min"][old_leaves[number]], atol=1e-6)
            assert np.allclose(new["max"][leaf], old["max"][old_leaves[number]], atol=1e-6)


def test_physics_system_built_from_bodies():
    """A new system with a body of each motion, written, read back and summarised."""
    from precombined_nif.core.havok.bodies import add_body
    from precombined_nif.core.havok.summary import body_summary

    system = PhysicsSystemData()
    ground = build_compressed_mesh(*grid(20))
    crate = ConvexPolytopeShape.build([[x, y, z] for x in (-20, 20) for y in (-20, 20) for z in (0, 30)])
    arm = CapsuleShape.build((0, 0, 0), (0, 0, 50), 8)
    assert add_body(system, ground) == 0
    add_body(system, crate, motion="dynamic", mass=12.0, layer=5, friction=0.8, restitution=0.1, position=(0, 0, 100))
    add_body(system, arm, motion="keyframed", layer=8, rotation=(0, 0, 0.7071068, 0.7071068))
    written = Packfile(system).to_bytes()
    again = Packfile.from_bytes(written).root
    assert Packfile.from_bytes(written).to_bytes() == written
    summaries = [body_summary(again, body) for body in again.bodies]
    assert [s["motion"] for s in summaries] == ["static", "dynamic", "keyframed"]
    assert [s["layer"] for s in summaries] == [1, 5, 8]
    assert summaries[1]["mass"] == 12.0 and summaries[1]["friction"] == 0.8 and summaries[1]["restitution"] == 0.1
    assert [s["shape"]["type"] for s in summaries] == ["compressed_mesh", "convex", "capsule"]
    motion = again.motion_of(again.bodies[1])
    assert np.allclose(motion["center_of_mass_world"][:3], np.array([0, 0, 115]) / GAME_UNITS, atol=1e-6)
    # a 40 x 40 x 30 box of 12 kg: inertia 12/12 (b^2 + c^2), times the game's 1.5
    size = np.array([40, 40, 30]) / GAME_UNITS
    expected = 1.5 * 12 / 12 * (size[[1, 0, 0]] ** 2 + size[[2, 2, 1]] ** 2)
    assert np.allclose(1 / motion["inverse_inertia_local"][:3], expected, rtol=1e-4)
    assert again.motion_of(again.bodies[2])["inverse_mass"] == 0
    assert len(again.referenced_objects) == 3 and len(again.materials) == 3


def _closed_and_holding(points, hull):
    """The hull's polygons close (each edge met once each way, V - E + F = 2) and every point
    lies inside each plane within a grid step of the extent."""
    vertices, faces, planes = hull
    edges = [(int(p[k]), int(p[(k + 1) % len(p)])) for p in faces for k in range(len(p))]
    assert len(set(edges)) == len(edges) and all((b, a) in set(edges) for a, b in edges)
    assert len(vertices) - len(edges) // 2 + len(faces) == 2
    heights = np.asarray(points, float) @ planes[:, :3].T + planes[:, 3]
    assert heights.max() <= np.ptp(points, axis=0).max() / GRID_STEPS


def test_hull_of_a_games_packed_mesh_closes(corpus):
    """vault74's kynSCOLTemp04 (New Vegas): the 398 vertices of its second packed mesh (124
    distinct, many on shared planes), read with struct, left the float hull open."""
    from raw_havok import block_bytes, read_shape

    from precombined_nif.core.havok.shapes.hull import convex_hull

    raw = block_bytes((corpus / "realmods/vault74/Meshes/SCOL/kynSCOLTemp04.NIF").read_bytes())
    vertices = read_shape(*raw[53])["vertices"]
    assert len(vertices) == 398 and len(np.unique(vertices, axis=0)) == 124
    _closed_and_holding(vertices, convex_hull(vertices))


@pytest.mark.parametrize("kind", ["cube-grid", "turned-box", "clusters"])
def test_hulls_of_degenerate_point_sets_close(kind):
    """Points on a cube's faces and edges on a grid (coplanar and collinear by the dozen), a
    turned box's faces in float32 (coplanar within rounding), clusters 1e-7 apart."""
    from precombined_nif.core.havok.shapes.hull import convex_hull

    rng = np.random.default_rng(["cube-grid", "turned-box", "clusters"].index(kind))
    for _ in range(20):
        if kind == "cube-grid":
            points = rng.integers(0, 5, (300, 3)).astype(float)
            points[np.arange(300), rng.integers(0, 3, 300)] = rng.choice([0, 4], 300)
        elif kind == "turned-box":
            points = rng.uniform(-1, 1, (200, 3))
            points[np.arange(200), rng.integers(0, 3, 200)] = rng.choice([-1, 1], 200)
            turn = np.linalg.qr(rng.normal(size=(3, 3)))[0]
            points = (points @ turn.T * [3, 2, 1]).astype(np.float32).astype(float)
        else:
            points = rng.normal(size=(20, 3))[rng.integers(0, 20, 300)] + rng.normal(size=(300, 3)) * 1e-7
        _closed_and_holding(points, convex_hull(points))


def test_spanned_hull_of_points_short_of_a_volume():
    from precombined_nif.core.havok.shapes.hull import spanned_hull

    square = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.5, 0], [1, 0, 0]]
    points, faces = spanned_hull(square)
    assert len(points) == 5 and len(faces) == 1  # every distinct point, one polygon round them
    assert sorted(map(tuple, points[faces[0]].tolist())) == [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)]
    corners = points[faces[0]]
    assert np.cross(corners[1] - corners[0], corners[2] - corners[0])[2] > 0  # counter-clockwise round +z
    points, faces = spanned_hull([[0, 0, 0], [0, 0, 2], [0, 0, 1], [np.nan, 0, 0]])
    assert len(points) == 3 and faces == []  # a line spans no face; the non-finite point is left out
    points, faces = spanned_hull([[0, 0, 1], [0, 2, 0], [0, 0, 0]])
    assert len(faces) == 1 and sorted(faces[0].tolist()) == [0, 1, 2]
    points, faces = spanned_hull(TETRA_POINTS)
    assert len(points) == 5 and len(faces) == 4  # the hull's faces; the inner point stays a point


TETRA_POINTS = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]]


def test_hull_planes_of_flat_points_are_the_polygons_sides_and_edges():
    from precombined_nif.core.havok.shapes.hull import hull_planes

    vertices, planes = hull_planes([[0, 0, 2], [3, 0, 2], [3, 1, 2], [0, 1, 2], [1, 0.5, 2]])
    assert sorted(map(tuple, vertices.tolist())) == [(0, 0, 2), (0, 1, 2), (3, 0, 2), (3, 1, 2)]
    heights = vertices @ planes[:, :3].T + planes[:, 3]
    assert len(planes) == 6 and heights.max() < 1e-12  # every corner on or inside every plane
    outside = np.array([[1.5, 0.5, 2.5], [1.5, 0.5, 1.5], [4, 0.5, 2], [1.5, -1, 2]])
    assert ((outside @ planes[:, :3].T + planes[:, 3]) > 0).any(axis=1).all()  # each point outside beyond a plane
    vertices, planes = hull_planes(TETRA_POINTS)
    assert len(vertices) == 4 and len(planes) == 4
    with pytest.raises(FormatError, match="lie on a line"):
        hull_planes([[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 0]])
