"""Skyrim LE / SE Havok collision in the codec: every corpus file with collision decodes its
Havok blocks with no byte left over, to what an independent struct reading gets
(tests/raw_skyrim_havok.py), and writes back byte for byte; compressed meshes decode to the
struct reading's triangles and materials and to the shape keys the game's own MOPP names; built
anew they keep their triangles and get a MOPP that finds every one; damaged chunks fail with
clear errors."""

import numpy as np
import pytest
from raw_havok import block_bytes
from raw_skyrim_havok import SKYRIM_UNITS, read_bodies, read_compressed_data
from support import corpus_bytes, corpus_files_holding

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import mopp
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks import legacy_havok
from precombined_nif.core.nif.blocks.compressed_mesh import bhkCompressedMeshShapeData
from precombined_nif.core.nif.compressed_mesh_build import MAX_CHUNK_SPAN, build_compressed_data, build_mopp

SKYRIM = "pynifly/tests/tests/Skyrim*/**/*.nif"
COLLISION_FILES = corpus_files_holding(SKYRIM, b"bhkCollisionObject", b"bhkBlendCollisionObject")
MESH_FILES = [path for path in COLLISION_FILES if b"bhkCompressedMeshShapeData" in corpus_bytes(path)]
KEPT_RAW = {"bhkRagdollConstraint", "bhkLimitedHingeConstraint", "bhkSimpleShapePhantom", "bhkSPCollisionObject"}


def test_the_corpus_has_the_skyrim_files_with_collision():
    names = {path.name for path in COLLISION_FILES}
    assert {"dockstepsdownend01.nif", "commonchair01.nif", "noblechest01.nif", "caveghall1way01.nif", "rocks01.nif",
            "staff04-collision.nif", "steeldagger.nif", "skeleton_vanilla.nif"} <= names
    assert len(MESH_FILES) == 11


@pytest.mark.parametrize("path", COLLISION_FILES, ids=lambda path: path.name)
def test_corpus_collision_decodes_as_the_bytes_say_and_writes_back(path):
    data = path.read_bytes()
    nif = NifFile.from_bytes(data)
    for index, (type_name, _) in block_bytes(data).items():
        if type_name.startswith(("bhk", "hk")) and type_name not in KEPT_RAW:
            block = nif.blocks[index]
            assert not isinstance(block, RawBlock) and block.trailing == b"", type_name
            assert not getattr(block, "later_info", b""), type_name
    for owner, body in read_bodies(path).items():
        block = nif.blocks[nif.blocks[nif.blocks[owner].collision_object].body]
        assert block.type_name == body["type"]
        assert (block.mass, block.friction, block.restitution, block.havok_filter[0], block.motion_system) == pytest.approx(
            (body["mass"], body["friction"], body["restitution"], body["layer"], body["motion"]))
        np.testing.assert_allclose(block.translation[:3], body["translation"])
        np.testing.assert_allclose(block.rotation, body["rotation"])
    assert nif.to_bytes() == data


def compressed_meshes(path):
    """[(MOPP block, shape block, data block, data bytes)] of a file."""
    data = path.read_bytes()
    nif, raw = NifFile.from_bytes(data), block_bytes(data)
    found = []
    for block in nif.blocks:
        if block.type_name == "bhkMoppBvTreeShape":
            shape = nif.blocks[block.shape]
            found.append((block, shape, nif.blocks[shape.data], raw[shape.data][1]))
    return found


@pytest.mark.parametrize("path", MESH_FILES, ids=lambda path: path.name)
def test_compressed_meshes_decode_to_the_struct_reading_and_the_games_mopp_keys(path):
    for tree, _, data, payload in compressed_meshes(path):
        vertices, triangles, materials, keys = data.mesh()
        expected_vertices, expected_triangles, expected_ids = read_compressed_data(payload)
        np.testing.assert_allclose(vertices[triangles], expected_vertices[expected_triangles], atol=1e-6)
        assert np.asarray(data.chunk_materials["material"])[materials].tolist() == expected_ids
        # the game's MOPP names exactly these shape keys, and finds each triangle at its centre
        assert set(mopp.program_leaves(tree.code).tolist()) == set(keys.tolist())
        origin, scale = np.array(tree.offset[:3]), tree.offset[3]
        for corner_points, key in zip(vertices[triangles][:: max(1, len(triangles) // 50)], keys[:: max(1, len(triangles) // 50)]):
            assert key in mopp.leaves_at_point(tree.code, origin, scale, corner_points.mean(axis=0))


def triangle_set(vertices, triangles, ids):
    """Each triangle's corners (rotated to start at its smallest) and its material, sorted."""
    corners = np.round(vertices[triangles], 4)
    rows = []
    for corner, material in zip(corners.tolist(), ids):
        first = corner.index(min(corner))
        rows.append((tuple(map(tuple, corner[first:] + corner[:first])), int(material)))
    return sorted(rows)


@pytest.mark.parametrize("path", MESH_FILES, ids=lambda path: path.name)
def test_compressed_meshes_built_anew_keep_their_triangles_and_get_a_mopp_finding_each(path):
    for _, shape, data, _ in compressed_meshes(path):
        vertices, triangles, materials, _ = data.mesh()
        ids = np.asarray(data.chunk_materials["material"])[materials]
        filters = {int(row["material"]): (int(row["layer"]), int(row["flags"]), int(row["group"])) for row in data.chunk_materials}
        built = build_compressed_data(vertices, triangles, ids, filters, template=data)
        again = NifFile.from_bytes(rewrapped(path, shape.data, built)).blocks[shape.data]
        new_vertices, new_triangles, new_materials, keys = again.mesh()
        new_ids = np.asarray(again.chunk_materials["material"])[new_materials]
        assert triangle_set(new_vertices, new_triangles, new_ids) == triangle_set(vertices, triangles, ids)
        assert again.chunk_materials.tolist() == sorted(data.chunk_materials.tolist())
        tree = build_mopp(again, shape.radius)
        mopp.check_leaves(tree.code, keys)
        centres = new_vertices[new_triangles].mean(axis=1)
        for centre, key in zip(centres, keys):
            assert key in mopp.leaves_at_point(tree.code, tree.origin, tree.scale, centre)


def rewrapped(path, index, block):
    """The file's bytes with block ``index`` replaced (written and read back by the codec)."""
    nif = NifFile.read(path)
    nif.blocks[index] = block
    return nif.to_bytes()


def test_big_triangles_and_span_splits():
    """A triangle wider than a chunk becomes a big triangle; small ones far apart split into
    chunks each within the span; materials each get their own chunks."""
    vertices = np.array([[0, 0, 0], [100, 0, 0], [0, 100, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1],
                         [200, 0, 0], [201, 0, 0], [200, 1, 0]], np.float64)
    triangles = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [3, 5, 4]])
    data = build_compressed_data(vertices, triangles, [7, 7, 7, 9])
    assert len(data.big_triangles) == 1 and len(data.chunks) == 3
    for chunk in data.chunks:
        assert np.asarray(chunk.vertices).max() * 0.001 <= MAX_CHUNK_SPAN
    got_vertices, got_triangles, got_materials, keys = data.mesh()
    ids = np.asarray(data.chunk_materials["material"])[got_materials]
    assert triangle_set(got_vertices, got_triangles, ids) == triangle_set(vertices, triangles, [7, 7, 7, 9])
    assert keys[0] == 0 and sorted(keys[1:] >> data.bits_per_w_index) == [1, 2, 3]


def damaged(path, change):
    """The file with its first compressed mesh data changed by ``change(data)``, read again."""
    nif = NifFile.read(path)
    data = next(block for block in nif.blocks if isinstance(block, bhkCompressedMeshShapeData))
    change(data)
    return NifFile.from_bytes(nif.to_bytes()), data


@pytest.mark.parametrize("change, message", [
    (lambda d: d.chunks[0].__setattr__("indices", np.r_[d.chunks[0].indices, 60000].astype(np.uint16)), "chunk 0: an index names vertex 60000"),
    (lambda d: d.chunks[0].__setattr__("strips", np.array([60000], np.uint16)), "chunk 0: its strips need 60000 indices"),
    (lambda d: d.chunks[0].__setattr__("transform_index", 9), "chunk 0 uses transform 9"),
    (lambda d: d.chunks[0].__setattr__("material_index", 40), "chunk 0 uses material 40"),
    (lambda d: d.chunks[0].__setattr__("vertices", d.chunks[0].vertices[:-1]), "not three per vertex"),
    (lambda d: d.__setattr__("bits_per_w_index", 200), "do not fit 32 bits"),
    (lambda d: d.chunks[0].__setattr__("translation", (np.nan, 0.0, 0.0, 0.0)), "not a finite number"),
])
def test_damaged_chunks_are_named(corpus, change, message):
    nif, _ = damaged(corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif", change)
    data = next(block for block in nif.blocks if isinstance(block, bhkCompressedMeshShapeData))
    with pytest.raises(FormatError, match=message):
        data.mesh()


def test_hostile_counts_fail_before_any_allocation(corpus):
    path = corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif"
    payload = bytearray(path.read_bytes())
    nif = NifFile.read(path)
    raw = block_bytes(bytes(payload))
    index = next(i for i, (t, _) in raw.items() if t == "bhkCompressedMeshShapeData")
    body = raw[index][1]
    at = bytes(payload).find(body)
    # the chunk count (after the big triangles' count) set huge: refused from the bytes left
    chunk_bytes = sum(24 + 4 * 4 + 2 * (len(c.vertices) + len(c.indices) + len(c.strips) + len(c.welding))
                      for c in nif.blocks[index].chunks)
    chunks_at = at + len(body) - 4 - chunk_bytes - 4
    payload[chunks_at:chunks_at + 4] = (0x7FFFFFFF).to_bytes(4, "little")
    with pytest.raises(FormatError, match="chunks: count 2147483647"):
        NifFile.from_bytes(bytes(payload), path="hostile.nif")


def test_units_are_skyrims():
    assert legacy_havok.havok_scale(83) == legacy_havok.havok_scale(100) == SKYRIM_UNITS
    assert legacy_havok.havok_scale(34) == legacy_havok.GAME_UNITS


def test_chunk_transforms_move_their_chunks_as_the_struct_reading_does(corpus, tmp_path):
    """The corpus chunk transforms are all identities: a turned and moved one, written into
    rocks01.nif's data, decodes as the independent reading turns it (rotation, then translation)."""
    path = corpus / "pynifly/tests/tests/SkyrimSE/rocks01.nif"
    nif = NifFile.read(path)
    index = next(i for i, block in enumerate(nif.blocks) if isinstance(block, bhkCompressedMeshShapeData))
    data = nif.blocks[index]
    half = np.sqrt(0.5)
    data.chunk_transforms = np.array([[1.5, -2.0, 0.25, 0.0, 0.0, 0.0, half, half]], np.float32)  # 90 degrees about z
    written = nif.to_bytes()
    vertices, triangles, _, _ = NifFile.from_bytes(written).blocks[index].mesh()
    expected_vertices, expected_triangles, _ = read_compressed_data(block_bytes(written)[index][1])
    np.testing.assert_allclose(vertices[triangles], expected_vertices[expected_triangles], atol=1e-6)
    plain, _, _, _ = NifFile.read(path).blocks[index].mesh()
    np.testing.assert_allclose(vertices[:, 0], -plain[:, 1] + 1.5, atol=1e-5)  # x' = -y + 1.5


def test_randomly_damaged_compressed_mesh_data_decodes_or_fails_cleanly(corpus):
    """1 to 3 random bytes of dockstepsdownend01.nif's data changed, 500 times: the block reads
    and decodes, or a FormatError says why (no other exception)."""
    data = (corpus / "pynifly/tests/tests/Skyrim/dockstepsdownend01.nif").read_bytes()
    raw = block_bytes(data)
    index = next(i for i, (type_name, _) in raw.items() if type_name == "bhkCompressedMeshShapeData")
    start = data.find(raw[index][1])
    rng = np.random.default_rng(26)
    failed = 0
    for _ in range(500):
        damaged = bytearray(data)
        for at in rng.integers(start, start + len(raw[index][1]), size=rng.integers(1, 4)):
            damaged[at] = rng.integers(0, 256)
        try:
            block = NifFile.from_bytes(bytes(damaged)).blocks[index]
            if isinstance(block, bhkCompressedMeshShapeData):
                with np.errstate(invalid="ignore"):
                    block.mesh()
        except FormatError as error:
            failed += 1
            assert str(error)
    assert failed  # the damage was seen
