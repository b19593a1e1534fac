""".bsm2 codec without Blender: corpus round trips, known contents, packed numbers, skinning,
damaged files, and the command line."""

import json
import struct
import subprocess
import sys

import numpy as np
import pytest
from support import ROOT, corpus_files

from precombined_nif.core import transforms
from precombined_nif.core.bsm2 import Animation, Bsm2File, packing, samples, skinning
from precombined_nif.core.bsm2.file import VERTEX_DTYPE
from precombined_nif.core.errors import FormatError
from precombined_nif.core.tangents import vertex_tangents

BSM2_FILES = corpus_files("bsm2/*.bsm2")
KNOWN = {  # corpus/README.md
    "Rabbit": dict(vertices=66, indices=186, subsets=3, bones=6, animations=[("Take 001", 301)]),
    "Cut": dict(vertices=703, indices=3300, subsets=1, bones=2, animations=[("Take 001", 301)]),
    "Brow": dict(vertices=1057, indices=2394, subsets=2, bones=1, animations=[("static", 1)]),
}


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_corpus_has_the_bsm2_files(corpus):
    assert {path.stem for path in BSM2_FILES} == set(KNOWN)


# -- corpus -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_round_trip_is_byte_identical(path):
    assert Bsm2File.read(path).to_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_known_contents(path):
    bsm = Bsm2File.read(path)
    known = KNOWN[path.stem]
    assert len(bsm.vertices) == known["vertices"] and len(bsm.indices) == known["indices"]
    assert len(bsm.subsets) == known["subsets"] and bsm.num_bones == known["bones"]
    assert [(a.name, len(a.keys)) for a in bsm.animations] == known["animations"]
    assert all(len(a.keys) == a.expected_keys for a in bsm.animations)
    assert bsm.hierarchy is None and not bsm.warnings
    sums = bsm.vertices["weights"].sum(axis=1, dtype=np.int64)
    assert np.all(sums == 255)
    assert np.all(np.diff(bsm.vertices["weights"].astype(np.int64), axis=1) <= 0)


def test_known_details(corpus):
    rabbit = Bsm2File.read(corpus / "bsm2/Rabbit.bsm2")
    assert rabbit.materials == ["Ear_shadow_mat", "mat_RabbitEar", "mat_rabbit"]
    assert rabbit.subsets.tolist() == [(0, 144, 0), (144, 18, 1), (162, 24, 2)]
    animation = rabbit.animations[0]
    assert (animation.duration_ns, animation.interval_ns) == (10_000_000_000, 33_333_333)
    brow = Bsm2File.read(corpus / "bsm2/Brow.bsm2")
    assert brow.animations[0].duration_ns == 0
    np.testing.assert_array_equal(brow.animations[0].keys[0, 0], np.eye(4)[:3])
    xyz, w = packing.unpack_1010102(brow.vertices["normal"])
    assert np.count_nonzero(np.linalg.norm(np.maximum(packing.snorm_decode(xyz), -1), axis=1) < 0.5) == 55
    assert not w.any()


def test_static_animation_keeps_vertices_in_place(corpus):
    brow = Bsm2File.read(corpus / "bsm2/Brow.bsm2")
    moved = skinning.skin(brow.vertices, skinning.skinning_matrices(brow, brow.animations[0]))
    np.testing.assert_array_equal(moved[0], brow.vertices["position"])


def test_rabbit_tangents_agree_with_computed_ones(corpus):
    """The file's tangents follow dP/du with v measured upwards, as core.tangents computes them."""
    rabbit = Bsm2File.read(corpus / "bsm2/Rabbit.bsm2")
    v = rabbit.vertices
    normals = np.maximum(packing.snorm_decode(packing.unpack_1010102(v["normal"])[0]), -1)
    uv = packing.uv_decode(v["uv"])
    tangents, signs = vertex_tangents(v["position"], normals, np.stack([uv[:, 0], 1 - uv[:, 1]], 1), rabbit.indices)
    stored, stored_signs = packing.unpack_1010102(v["tangent"])
    stored = packing.snorm_decode(stored)
    cosine = np.einsum("ij,ij->i", tangents, stored / np.linalg.norm(stored, axis=1, keepdims=True))
    assert cosine.min() > 0.99
    np.testing.assert_array_equal(signs, stored_signs)


# -- packed numbers -----------------------------------------------------------------------------
def test_1010102_fields_round_trip():
    raw = np.random.default_rng(0).integers(0, 2**32, 10_000, dtype=np.uint64).astype(np.uint32)
    xyz, w = packing.unpack_1010102(raw)
    assert xyz.min() >= -512 and xyz.max() <= 511 and w.min() >= -2 and w.max() <= 1
    np.testing.assert_array_equal(packing.pack_1010102(xyz, w), raw)


def test_1010102_layout():
    # x = bits 0-9, y = 10-19, z = 20-29, w = 30-31, two's complement.
    xyz, w = packing.unpack_1010102(np.array([1 | (0x3FF << 10) | (0x200 << 20) | (3 << 30)], np.uint32))
    assert xyz.tolist() == [[1, -1, -512]] and w.tolist() == [-1]


def test_snorm_values_come_back_exactly():
    every = np.arange(-512, 512)
    np.testing.assert_array_equal(packing.snorm_encode(packing.snorm_decode(every)), every)
    assert packing.snorm_encode([1.0, -1.0, 0.5, 2.0, -2.0]).tolist() == [511, -511, 256, 511, -512]


def test_uv_decoding_follows_the_notes():
    """FORMAT-NOTES section 9: raw / 65535, so the full u16 range is 0..1 exactly."""
    raw = np.array([0, 1, 32768, 65534, 65535], np.uint16)
    expected = np.array([0.0, 1 / 65535, 32768 / 65535, 65534 / 65535, 1.0], np.float32)
    np.testing.assert_array_equal(packing.uv_decode(raw), expected)
    np.testing.assert_array_equal(packing.uv_encode([0.0, 0.5, 1.0]), [0, 32768, 65535])


def test_uv_values_come_back_exactly():
    every = np.arange(65536)
    np.testing.assert_array_equal(packing.uv_encode(packing.uv_decode(every)), every)
    flipped = 1 - (1 - packing.uv_decode(every))  # what Blender holds, v flipped twice
    np.testing.assert_array_equal(packing.uv_encode(flipped), every)


def test_pack_weights_rules():
    bones = np.array([[3, 1, 7, 2, 5], [4, 0, 0, 0, 0], [1, 2, 0, 0, 0]])
    weights = np.array([[0.1, 0.4, 0.05, 0.3, 0.15], [2.0, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0]])
    packed_bones, packed = packing.pack_weights(bones, weights)
    assert packed.sum(axis=1, dtype=np.int64).tolist() == [255, 255, 255]
    assert np.all(np.diff(packed.astype(np.int64), axis=1) <= 0)
    assert packed_bones[0].tolist() == [1, 2, 5, 3]  # bone 7, the smallest, dropped
    assert packed[1].tolist() == [255, 0, 0, 0] and packed_bones[1].tolist() == [4, 0, 0, 0]
    assert packed[2].tolist() == [128, 127, 0, 0]


def test_pack_weights_refuses_unweighted_vertices():
    with pytest.raises(FormatError, match="2 vertices have no bone weight"):
        packing.pack_weights(np.zeros((3, 2)), np.array([[1.0, 0], [0, 0], [0, 0]]))


@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_pack_weights_reproduces_file_weights(path):
    """Weights as Blender holds them (byte / 255 in float32) quantise back to the same bytes."""
    vertices = Bsm2File.read(path).vertices
    float_weights = (vertices["weights"] / np.float32(255)).astype(np.float32)
    bones, weights = packing.pack_weights(vertices["bones"], float_weights)
    np.testing.assert_array_equal(weights, vertices["weights"])
    np.testing.assert_array_equal(bones, np.where(vertices["weights"] > 0, vertices["bones"], 0))


# -- the hierarchy, from the sample -------------------------------------------------------------
@pytest.mark.parametrize("hierarchy", [True, False])
def test_sample_round_trips(hierarchy):
    bsm = samples.skinned_strip(hierarchy)
    data = bsm.to_bytes()
    again = Bsm2File.from_bytes(data)
    assert again.to_bytes() == data
    assert (again.hierarchy is not None) == hierarchy
    if hierarchy:
        assert again.hierarchy.names == list(samples.BONE_NAMES)
        assert again.hierarchy.parents.tolist() == [0, 0, 1]
        # Column-major storage: the translation is at floats 12-14.
        assert again.hierarchy.inverse_bind[1, 12:15].tolist() == [0.0, -samples.SEGMENT, 0.0]


@pytest.mark.parametrize(
    "matrix",
    [
        [0.0] * 16,  # all zero
        [1.0, 2.0, 3.0, 0.0, 2.0, 4.0, 6.0, 0.0, 3.0, 6.0, 9.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # rank 1
        [float("nan")] * 16,
        [1e-9, 0, 0, 0, 0, 1e-9, 0, 0, 0, 0, 1e-9, 0, 0, 0, 0, 1],  # scaled to nothing
    ],
    ids=["zero", "rank-1", "nan", "tiny"],
)
def test_singular_inverse_bind_is_refused_naming_the_bone(matrix):
    """A bind no matrix inverts: the reader's error names the bone (not numpy's LinAlgError)."""
    data = samples.skinned_strip(True).to_bytes()
    stored = struct.pack("<16f", *Bsm2File.from_bytes(data).hierarchy.inverse_bind[1])
    assert data.count(stored) == 1
    damaged = data.replace(stored, struct.pack("<16f", *matrix))
    with pytest.raises(FormatError, match=f"bone 1 \\('{samples.BONE_NAMES[1]}'\\): its inverse bind matrix cannot be inverted"):
        Bsm2File.from_bytes(damaged, path="damaged.bsm2")


def test_hierarchy_and_full_matrices_deform_alike():
    local, full = samples.skinned_strip(True), samples.skinned_strip(False)
    for a, b in zip(local.animations, full.animations):
        np.testing.assert_allclose(
            skinning.skin(local.vertices, skinning.skinning_matrices(local, a)),
            skinning.skin(full.vertices, skinning.skinning_matrices(full, b)),
            atol=1e-4,
        )


def test_chained_bind_keys_give_the_inverse_of_the_inverse_bind():
    """FORMAT-NOTES: chaining the bind keys from the root after +90 degrees about X reproduces the
    inverse of the inverse bind, so the skinning matrices are the identity at bind."""
    bsm = samples.skinned_strip(True)
    static = bsm.animations[1]
    chained = skinning.global_matrices(bsm.hierarchy.parents, skinning.homogeneous(static.keys))
    np.testing.assert_allclose(chained[0], np.linalg.inv(bsm.hierarchy.inverse_bind_matrices), atol=1e-5)
    np.testing.assert_allclose(skinning.skinning_matrices(bsm, static)[0], np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-5)


def test_engine_stops_at_the_first_zero_weight():
    vertices = np.zeros(1, VERTEX_DTYPE)
    vertices["bones"] = [[0, 9, 1, 0]]
    vertices["weights"] = [[200, 0, 55, 0]]  # slot 2 follows a zero: ignored; bone 9 is junk
    matrices = np.broadcast_to(np.eye(4), (1, 2, 4, 4)).copy()
    matrices[0, 1, :3, 3] = 100
    assert skinning.skin(vertices, matrices)[0, 0].tolist() == [0.0, 0.0, 0.0]


# -- damaged files ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_bytes():
    return samples.skinned_strip(True).to_bytes()


def test_every_truncation_fails_cleanly(sample_bytes):
    """Except one: the hierarchy has no flag, so a file cut where it starts is a valid file
    without it."""
    hierarchy_at = len(samples.skinned_strip(False).to_bytes())
    for size in range(len(sample_bytes)):
        if size == hierarchy_at:
            assert Bsm2File.from_bytes(sample_bytes[:size]).hierarchy is None
            continue
        with pytest.raises(FormatError):
            Bsm2File.from_bytes(sample_bytes[:size], path="cut.bsm2")


def test_random_damage_fails_cleanly_or_reads(sample_bytes):
    rng = np.random.default_rng(5)
    for _ in range(300):
        data = bytearray(sample_bytes)
        for position in rng.integers(0, len(data), 4):
            data[position] = rng.integers(0, 256)
        try:
            Bsm2File.from_bytes(bytes(data))
        except FormatError:
            pass


def _patched(data, offset, fmt, value):
    data = bytearray(data)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


@pytest.mark.parametrize(
    "offset, fmt, value, message",
    [
        (0, "<I", 0xFFFFFFFF, "counts"),  # 4 billion vertices: refused before any allocation
        (4, "<I", 0x7FFFFFFF, "counts"),
        (12, "<I", 300, "300 bones"),
        (24 + 14 * 32, "<H", 14, "beyond the 14 vertices"),  # first index
    ],
)
def test_bad_counts_and_indices(sample_bytes, offset, fmt, value, message):
    with pytest.raises(FormatError, match=message) as error:
        Bsm2File.from_bytes(_patched(sample_bytes, offset, fmt, value), path="bad.bsm2")
    assert str(error.value).startswith("bad.bsm2")


def test_keys_of_no_bones_are_bounded():
    """Keys of zero bones take no bytes, so only the allocation budget stops a huge count."""
    data = struct.pack("<6I", 0, 0, 0, 0, 0, 1) + struct.pack("<I", 1) + b"a" + struct.pack("<QQI", 0, 1, 0xFFFFFFFF)
    with pytest.raises(FormatError, match="more structures"):
        Bsm2File.from_bytes(data)
    data = data[:-4] + struct.pack("<I", 1)
    assert len(Bsm2File.from_bytes(data).animations[0].keys) == 1


def test_error_names_the_offset(sample_bytes):
    with pytest.raises(FormatError) as error:
        Bsm2File.from_bytes(_patched(sample_bytes, 24 + 14 * 32 + 2 * 5, "<H", 99))
    assert error.value.offset == 24 + 14 * 32 + 2 * 5


def test_subset_beyond_the_indices(sample_bytes):
    subsets = 24 + 14 * 32 + 2 * 36
    with pytest.raises(FormatError, match="subset 1") as error:
        Bsm2File.from_bytes(_patched(sample_bytes, subsets + 12 + 4, "<I", 999))
    assert error.value.offset == subsets + 12


def test_weighted_bone_beyond_the_bones(sample_bytes):
    bones_at = 24 + VERTEX_DTYPE.fields["bones"][1]
    with pytest.raises(FormatError, match="vertex 0 weights bone 3 of 3") as error:
        Bsm2File.from_bytes(_patched(sample_bytes, bones_at, "<B", 3))
    assert error.value.offset == bones_at
    # After a zero weight a bone index may be junk.
    Bsm2File.from_bytes(_patched(sample_bytes, bones_at + 3, "<B", 200))


def test_trailing_bytes_and_bad_parents(sample_bytes):
    with pytest.raises(FormatError, match="bytes after the hierarchy"):
        Bsm2File.from_bytes(sample_bytes + b"\0")
    parents_at = len(sample_bytes) - sum(4 + len(name) for name in samples.BONE_NAMES) - 3 * 64 - 3
    assert sample_bytes[parents_at : parents_at + 3] == bytes([0, 0, 1])
    for parents, message in (([1, 0, 1], "parent loop"), ([0, 7, 1], "bone 1 has parent 7 of 3")):
        with pytest.raises(FormatError, match=message):
            Bsm2File.from_bytes(sample_bytes[:parents_at] + bytes(parents) + sample_bytes[parents_at + 3 :])


def test_writer_refuses_what_the_engine_cannot_read(tmp_path):
    bsm = samples.skinned_strip(True)
    bsm.indices = bsm.indices.copy()
    bsm.indices[0] = 500
    target = tmp_path / "out.bsm2"
    with pytest.raises(FormatError, match="beyond the 14 vertices"):
        bsm.write(target)
    assert not target.exists() and not list(tmp_path.iterdir())
    bsm = samples.skinned_strip(False)
    bsm.num_bones = 257
    with pytest.raises(FormatError, match="257 bones"):
        bsm.to_bytes()
    bsm = samples.skinned_strip(False)
    bsm.animations.append(Animation("short", 0, 1, np.zeros((1, 2, 3, 4), np.float32)))
    with pytest.raises(FormatError, match="keys for 2 of 3 bones"):
        bsm.to_bytes()


def test_timing_mismatch_is_a_warning():
    bsm = samples.skinned_strip(False)
    bsm.animations[0].duration_ns *= 2
    again = Bsm2File.from_bytes(bsm.to_bytes())
    assert any("keys where duration / interval + 1 gives 9" in warning for warning in again.warnings)


# -- transforms used by the Blender side --------------------------------------------------------
def test_compose_and_decompose():
    rng = np.random.default_rng(2)
    quaternions = rng.normal(size=(50, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    locations, scales = rng.normal(size=(50, 3)), rng.uniform(0.2, 3, (50, 3))
    matrices = transforms.compose(locations, transforms.quaternion_to_matrix(quaternions), scales)
    location, quaternion, scale, error = transforms.decompose(matrices)
    assert error < 1e-12
    np.testing.assert_allclose(location, locations)
    np.testing.assert_allclose(scale, scales)
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->i", quaternion, quaternions)), 1)
    sheared = np.eye(4)
    sheared[0, 1] = 0.5
    assert transforms.decompose(sheared)[3] > 0.1


def test_euler_orders_match_blender_conventions():
    # XYZ applies X first: a quarter turn about X then about Z takes +Y to +Z then keeps it.
    m = transforms.euler_to_matrix([np.pi / 2, 0, np.pi / 2], "XYZ")
    np.testing.assert_allclose(m @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(transforms.axis_angle_to_matrix([np.pi / 2, 0, 0, 1]) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


# -- command line -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_cli_info_json(path):
    result = run("info", path, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    known = KNOWN[path.stem]
    bsm = Bsm2File.read(path)
    assert info == {
        "format": "bsm2",
        "vertices": known["vertices"],
        "indices": known["indices"],
        "subsets": known["subsets"],
        "bones": known["bones"],
        "materials": bsm.materials,
        "animations": [
            {"name": name, "keys": keys, "duration_ns": a.duration_ns, "interval_ns": a.interval_ns}
            for (name, keys), a in zip(known["animations"], bsm.animations)
        ],
        "hierarchy": False,
        "warnings": [],
    }


def test_cli_info_text_and_roundtrip(corpus, tmp_path):
    source = corpus / "bsm2/Rabbit.bsm2"
    result = run("info", source)
    assert result.returncode == 0
    assert "66 vertices, 62 triangles, 3 subsets, 6 bones" in result.stdout and "'Take 001': 301 keys" in result.stdout
    result = run("roundtrip", source, tmp_path / "out.bsm2")
    assert result.returncode == 0 and "identical" in result.stdout
    assert (tmp_path / "out.bsm2").read_bytes() == source.read_bytes()


def test_cli_hierarchy_info(tmp_path):
    samples.skinned_strip(True).write(tmp_path / "strip.bsm2")
    info = json.loads(run("info", "--json", tmp_path / "strip.bsm2").stdout)
    assert info["hierarchy"] is True and [a["keys"] for a in info["animations"]] == [5, 1]


def test_cli_damaged_bsm2_is_one_line(tmp_path, sample_bytes):
    damaged = tmp_path / "damaged.bsm2"
    damaged.write_bytes(sample_bytes[:300])
    result = run("info", damaged)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {damaged}") and "Traceback" not in result.stderr
    result = run("roundtrip", damaged, tmp_path / "out.bsm2")
    assert result.returncode == 2 and not (tmp_path / "out.bsm2").exists()


@pytest.mark.parametrize("args", [("import", "x.bsm2", "--blend", "x.blend"), ("export", "x.blend", "x.bsm2")])
def test_cli_blender_commands_need_bpy(args):
    # Even where bpy is installed: a None entry makes "import bpy" fail as if it were missing.
    code = "import sys, runpy; sys.modules['bpy'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "cli.py"), *args], capture_output=True, text=True)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs Blender or the bpy module" in lines[0]


def test_codec_imports_without_bpy():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import cli; cli.load_package(); "
        "import precombined_nif.core.bsm2.samples, precombined_nif.core.bsm2.skinning, precombined_nif.core.formats, "
        "precombined_nif.core.transforms, precombined_nif.core.tangents; "
        "assert 'bpy' not in sys.modules and 'mathutils' not in sys.modules"
    )
    result = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
