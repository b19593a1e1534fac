"""Starfield .mesh files: every corpus file decodes to the values an independent struct reader
computes (positions times scale / 32767, UDEC3 normals), writes back byte-identical and bears
its own SHA1 as its name; normals and tangents agree with the geometry; meshlets and culling
data rebuild to the stored bytes; edits write and read back; versions 0 and 1 (built here) read;
damaged files are refused naming the file."""

import hashlib

import numpy as np
import pytest
from raw_starfield import SF, packed_udec3, read_mesh, refusal, write_mesh
from support import CORPUS, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.starfield.mesh import MeshData, decode_udec3, mesh_name, mesh_path, quantise_weights
from precombined_nif.core.starfield.meshlets import MAX_TRIANGLES, MAX_VERTICES, rebuild_meshlets, scan_meshlets
from precombined_nif.core.tangents import vertex_tangents

MESHES = corpus_files(f"{SF}/**/*.mesh")


def ids(path):
    return path.relative_to(CORPUS / SF).as_posix()


def test_corpus_holds_starfield_meshes(corpus):
    assert len(MESHES) == 3


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_decoded_values_match_the_struct_reader(path):
    data = path.read_bytes()
    mesh, raw = MeshData.from_bytes(data, path), read_mesh(data)
    assert mesh.to_bytes() == data
    assert mesh.version == raw["version"] == 2 and mesh.scale == raw["scale"]
    np.testing.assert_array_equal(mesh.triangles, raw["triangles"])
    np.testing.assert_allclose(mesh.vertices, raw["positions"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(mesh.vertex_normals, raw["normals"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(mesh.vertex_tangents, raw["tangents"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(mesh.bitangent_signs, [1 if t >> 30 == 3 else -1 for t in raw["raw_tangents"]])
    np.testing.assert_array_equal(mesh.uv, raw["uvs"])
    np.testing.assert_allclose(mesh.rgba, [(r / 255, g / 255, b / 255, a / 255) for b, g, r, a in raw["colors"]])
    bones, weights = mesh.bone_weights
    per = raw["per_vertex"]
    np.testing.assert_array_equal(bones, np.array([b for b, _ in raw["weights"]]).reshape(-1, per))
    np.testing.assert_allclose(weights, np.array([w / 65535 for _, w in raw["weights"]]).reshape(-1, per), atol=1e-7)
    assert [len(lod) for lod in mesh.lods] == [len(lod) for lod in raw["lods"]]
    np.testing.assert_array_equal(mesh.meshlets.tolist(), raw["meshlets"])
    np.testing.assert_array_equal(mesh.culling.view(np.float32).reshape(-1, 6), np.float32(raw["culling"]))


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_skin_weights_sum_to_one_per_vertex(path):
    """65535 for most vertices, up to two units more for some (the game's own rounding; ours
    sums to 65535 exactly)."""
    raw = read_mesh(path.read_bytes())
    sums = np.array([w for _, w in raw["weights"]]).reshape(-1, raw["per_vertex"]).sum(axis=1)
    assert raw["per_vertex"] in (5, 6) and sums.min() == 65535 and sums.max() <= 65537
    assert (sums == 65535).mean() > 0.9


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_each_file_is_named_by_the_sha1_of_its_bytes(path):
    """``geometries/<first 20 hex>/<last 20 hex>.mesh``, as NifSkope's fo76utils fork names the
    meshes it writes (the body's copy outside geometries/ has the same bytes)."""
    data = path.read_bytes()
    digest = hashlib.sha1(data).hexdigest()
    assert mesh_name(data) == f"{digest[:20]}\\{digest[20:]}"
    if path.parent.parent.name == "geometries":
        assert (path.parent.name, path.stem) == (digest[:20], digest[20:])
        assert mesh_path(mesh_name(data)).replace("\\", "/") == path.relative_to(CORPUS / SF).as_posix()


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_normals_face_out_of_counter_clockwise_triangles(path):
    """The decoded normals point where the triangles' own normals do (a flipped UDEC3 field or
    a wrong position scale breaks this without the struct reader)."""
    mesh = MeshData.read(path)
    positions, triangles = mesh.vertices.astype(np.float64), mesh.triangles.astype(np.int64)
    faces = np.cross(positions[triangles[:, 1]] - positions[triangles[:, 0]], positions[triangles[:, 2]] - positions[triangles[:, 0]])
    summed = np.zeros_like(positions)
    for corner in range(3):
        np.add.at(summed, triangles[:, corner], faces)
    summed /= np.linalg.norm(summed, axis=1)[:, None]
    agreement = np.einsum("ij,ij->i", summed, mesh.vertex_normals)
    assert np.median(agreement) > 0.99 and (agreement > 0.5).mean() > 0.99


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_tangents_run_along_u_and_bitangent_signs_follow_the_stored_v(path):
    """Tangents computed from positions and the stored UVs: the decoded tangents run along +u,
    and the two top bits are 11 exactly where normal x tangent runs along +v of the UVs as stored
    (flipped v for Blender flips every sign: the import's concern)."""
    mesh = MeshData.read(path)
    tangents, signs = vertex_tangents(mesh.vertices, mesh.vertex_normals, mesh.uv, mesh.triangles)
    assert np.median(np.einsum("ij,ij->i", tangents, mesh.vertex_tangents)) > 0.99
    assert (signs == mesh.bitangent_signs).all()


# -- meshlets ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_meshlets_and_culling_rebuild_to_the_stored_bytes(path):
    data = path.read_bytes()
    mesh = MeshData.from_bytes(data)
    mesh.meshlets = mesh.culling = None
    assert rebuild_meshlets(mesh).to_bytes() == data


@pytest.mark.parametrize("path", MESHES, ids=ids)
def test_reordered_meshlets_are_valid(path):
    """A new mesh's triangles are ordered along a Morton curve, then split: every meshlet keeps
    to the limits, covers the next triangles, and its box holds their vertices."""
    mesh = MeshData.read(path)
    before = {tuple(sorted(t)) for t in mesh.triangles.tolist()}
    rebuild_meshlets(mesh, reorder=True)
    assert {tuple(sorted(t)) for t in mesh.triangles.tolist()} == before
    check_meshlets(mesh)
    assert len(mesh.meshlets) < len(MeshData.read(path).meshlets)  # fuller than the stored ones


def check_meshlets(mesh):
    meshlets = mesh.meshlets
    assert meshlets["triangle_count"].sum() == len(mesh.triangles)
    start, vertex_offset, triangle_offset = 0, 0, 0
    positions = mesh.vertices
    for meshlet, box in zip(meshlets, mesh.culling):
        run = mesh.triangles[start:start + meshlet["triangle_count"]]
        assert len(np.unique(run)) == meshlet["vertex_count"] <= MAX_VERTICES
        assert 0 < meshlet["triangle_count"] <= MAX_TRIANGLES
        assert (meshlet["vertex_offset"], meshlet["triangle_offset"]) == (vertex_offset, triangle_offset)
        corners = positions[run.reshape(-1)]
        assert (corners >= box["center"] - box["extent"] - 1e-6).all() and (corners <= box["center"] + box["extent"] + 1e-6).all()
        start += meshlet["triangle_count"]
        vertex_offset += meshlet["vertex_count"]
        triangle_offset += (3 * meshlet["triangle_count"] + 3) // 4 * 4


def test_scan_keeps_to_the_limits_on_a_fan():
    """A fan whose triangles share one vertex: 128 triangles (129 vertices) would pass 96, so a
    meshlet stops at 94 triangles (96 vertices)."""
    triangles = np.array([(0, i, i + 1) for i in range(1, 301)])
    meshlets = scan_meshlets(triangles)
    assert meshlets["triangle_count"].tolist() == [94, 94, 94, 18]
    assert meshlets["vertex_count"].tolist() == [96, 96, 96, 20]


# -- edits -------------------------------------------------------------------------------------
BODY = f"{SF}/geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh"


def edited(mesh):
    data = rebuild_meshlets(mesh).to_bytes()
    return data, MeshData.from_bytes(data), read_mesh(data)


def test_moved_vertex_writes_back(corpus):
    mesh = MeshData.read(corpus / BODY)
    vertices = mesh.vertices.copy()
    vertices[10] += (0.01, -0.02, 0.03)
    mesh.set_vertices(vertices, mesh.scale)
    data, again, raw = edited(mesh)
    np.testing.assert_allclose(raw["positions"][10], vertices[10], atol=mesh.scale / 32767)
    np.testing.assert_array_equal(again.positions[:10], MeshData.read(corpus / BODY).positions[:10])
    assert mesh_name(data) != mesh_name((corpus / BODY).read_bytes())
    check_meshlets(again)


def test_changed_weight_writes_back_normalised(corpus):
    mesh = MeshData.read(corpus / BODY)
    bones, weights = mesh.bone_weights
    weights[0] = (0.5, 0.25, 0.25, 0, 0, 0)
    bones[0, :3] = (3, 7, 12)
    mesh.set_bone_weights(bones, weights)
    _, again, raw = edited(mesh)
    assert raw["weights"][:6] == [(3, 32767), (7, 16384), (12, 16384), (0, 0), (0, 0), (0, 0)]
    assert (np.array([w for _, w in raw["weights"]]).reshape(-1, 6).sum(axis=1) == 65535).all()


def test_added_vertex_and_lod_write_back(corpus):
    mesh = MeshData.read(corpus / BODY)
    count = len(mesh.positions)
    mesh.set_vertices(np.vstack([mesh.vertices, [[-1.0, 0.0, 0.1]]]), mesh.scale)
    for name in ("normals", "tangents"):
        setattr(mesh, name, np.concatenate([getattr(mesh, name), getattr(mesh, name)[:1]]))
    mesh.uvs = np.concatenate([mesh.uvs, np.float16([[0.5, 0.5]])])
    mesh.colors = np.concatenate([mesh.colors, mesh.colors[:1]])
    mesh.weights = np.concatenate([mesh.weights, mesh.weights[:6]])
    mesh.triangles = np.concatenate([mesh.triangles, np.uint16([[0, 1, count]])])
    mesh.lods = [*mesh.lods, mesh.triangles[::4]]
    _, again, raw = edited(mesh)
    assert len(raw["positions"]) == count + 1 and raw["triangles"][-1] == (0, 1, count)
    assert len(raw["lods"]) == 3 and len(raw["lods"][2]) == len(mesh.triangles[::4])
    check_meshlets(again)


def test_new_mesh_quantises_positions_normals_and_weights():
    mesh = MeshData()
    mesh.set_vertices([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [0.0, -1.25, 0.5]])
    assert mesh.scale == 2.0  # the smallest power of two holding 1.5
    mesh.set_normals([[0, 0, 1]] * 3, [[1, 0, 0]] * 3, [1, -1, 1])
    mesh.set_bone_weights([[0, 1]] * 3, [[1, 1], [2, 1], [0, 0]])
    mesh.triangles = np.uint16([[0, 1, 2]])
    raw = read_mesh(rebuild_meshlets(mesh).to_bytes())
    assert raw["raw_positions"] == [(0, 0, 0), (24575, 0, 0), (0, -20479, 8192)]
    assert raw["raw_normals"][0] == packed_udec3(0, 0, 1, 1) and [t >> 30 for t in raw["raw_tangents"]] == [3, 0, 3]
    assert raw["weights"] == [(0, 32768), (1, 32767), (0, 43690), (1, 21845), (0, 0), (1, 0)]
    assert raw["meshlets"] == [(3, 0, 1, 0)] and raw["culling"] == [pytest.approx((0.75, -0.625, 0.25, 0.75, 0.625, 0.25), abs=1e-4)]


def test_udec3_decodes_the_ends_and_the_middle():
    assert decode_udec3([packed_udec3(-1, 0, 1, 0)]).tolist() == [[-1.0, pytest.approx(0.000977, abs=1e-6), 1.0]]


def test_weights_quantise_to_65535_with_the_largest_remainders():
    assert quantise_weights([[1, 1, 1]]).tolist() == [[21845, 21845, 21845]]
    assert quantise_weights([[0.2, 0.3, 0.5], [0, 0, 0]]).tolist() == [[13107, 19661, 32767], [0, 0, 0]]


# -- versions the corpus lacks -------------------------------------------------------------------
TRIANGLE = [(0, 1, 2)]
POSITIONS = [(0, 0, 0), (32767, 0, 0), (0, -32767, 16384)]
NORMALS = [packed_udec3(0, 0, 1, 1)] * 3
TANGENTS = [packed_udec3(1, 0, 0, 3)] * 3


@pytest.mark.parametrize("version", [0, 1])
def test_older_versions_read_and_write_back(version):
    sphere = [(0.5, -0.5, 0.25, 0.8, 0.0, 0.1)]  # centre, radius, four cone bytes (as a float), apex
    data = write_mesh(version, TRIANGLE, 0.5, POSITIONS, NORMALS, TANGENTS, uvs=[(0, 0), (1, 0), (0, 1)],
                      lods=[TRIANGLE] if version else (), meshlets=[(3, 0, 1, 0)], culling=sphere)
    mesh = MeshData.from_bytes(data)
    assert mesh.to_bytes() == data and len(mesh.lods) == version
    np.testing.assert_allclose(mesh.vertices, read_mesh(data)["positions"], atol=1e-7)
    assert mesh.culling["radius"].tolist() == [pytest.approx(0.8)]
    rebuild_meshlets(mesh)  # an edit makes it version 2 with box culling data
    assert read_mesh(mesh.to_bytes())["version"] == 2


def test_file_ending_after_its_lods_writes_back_without_meshlets():
    data = write_mesh(1, TRIANGLE, 1.0, POSITIONS, NORMALS, TANGENTS, tail=False)
    mesh = MeshData.from_bytes(data)
    assert mesh.meshlets is None and mesh.to_bytes() == data


# -- damaged files -----------------------------------------------------------------------------
def damaged_cases():
    good = write_mesh(2, TRIANGLE, 1.0, POSITIONS, NORMALS, TANGENTS, weights=[(0, 65535)] * 3, per_vertex=1,
                      meshlets=[(3, 0, 1, 0)], culling=[(0,) * 6])
    yield "truncated", good[:-9], "culling data: count 1 needs 24 bytes but only 15 remain"
    yield "count past the end", good[:4] + b"\xff\xff\x00\x00" + good[8:], "indices: count 65535 needs"
    yield "index count not three per triangle", write_mesh(2, TRIANGLE, 1.0, POSITIONS, NORMALS, TANGENTS)[:4] + b"\x02\x00\x00\x00" + good[8:], "not a multiple of 3"
    yield "vertex past the vertices", write_mesh(2, [(0, 1, 3)], 1.0, POSITIONS, NORMALS, TANGENTS), "triangles name vertex 3 of only 3"
    yield "weights for other vertices", write_mesh(2, TRIANGLE, 1.0, POSITIONS, NORMALS, TANGENTS, weights=[(0, 1)] * 2, per_vertex=1), "holds 2 bone weights where 3 vertices"
    yield "normals for other vertices", write_mesh(2, TRIANGLE, 1.0, POSITIONS, NORMALS[:2], TANGENTS), "holds 2 normals for 3 vertices"
    yield "version 3", b"\x03" + good[1:], "version 3 is not supported"
    yield "zero scale", write_mesh(2, TRIANGLE, 0.0, POSITIONS, NORMALS, TANGENTS), "scale 0.0 is not a positive number"


@pytest.mark.parametrize("name, data, message", damaged_cases(), ids=[c[0] for c in damaged_cases()])
def test_damaged_files_are_refused_naming_the_file(tmp_path, name, data, message):
    text = refusal(MeshData, tmp_path / "bad.mesh", data)
    assert text.startswith(f"{tmp_path / 'bad.mesh'}, offset") and message in text


def test_weights_past_the_skins_bones_are_refused(corpus):
    mesh = MeshData.read(corpus / BODY)
    mesh.check_bones(38)
    with pytest.raises(FormatError, match="weighted to bone 37 of a skin of 37 bones"):
        mesh.check_bones(37)
