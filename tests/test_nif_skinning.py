"""Skinning math without Blender: bind transforms, weights, pruning, partitions, segments."""

import numpy as np
import pytest

from support import CORPUS

from precombined_nif.core.errors import FormatError
from precombined_nif.core import transforms
from precombined_nif.core.nif import NifFile, segments, skinning
from precombined_nif.core.nif.blocks.nodes import NiNode

FNV_OUTFIT = "pynifly/tests/tests/FONV/outfitf_simple.nif"


def world(nif, index):
    parents = {int(c): i for i, b in enumerate(nif.blocks) if isinstance(b, NiNode) for c in np.asarray(b.children)}
    matrix = np.eye(4)
    while index in parents:
        b = nif.blocks[index]
        matrix = transforms.transform_matrix(b.rotation, b.translation, b.scale) @ matrix
        index = parents[index]
    return matrix


@pytest.mark.parametrize("name", ["pynifly/tests/tests/FO4/BTBaseMaleBody.nif", FNV_OUTFIT])
def test_inverse_bind_is_the_bone_node(corpus, name):
    """In these files the skeleton nodes stand in the bind pose: node world = shape @ inv(bind)."""
    nif = NifFile.read(corpus / name)
    index, shape = next((i, b) for i, b in enumerate(nif.blocks) if getattr(b, "skinned", False))
    instance, data, _ = skinning.skin_blocks(nif, getattr(shape, "skin", getattr(shape, "skin_instance", -1)))
    for node, bind in zip(instance.bones, skinning.bind_matrices(instance, data)):
        np.testing.assert_allclose(world(nif, index) @ np.linalg.inv(bind), world(nif, int(node)), atol=1e-4)


def test_transform_parts_round_trip():
    angle = 0.7
    rotation = (np.cos(angle), -np.sin(angle), 0, np.sin(angle), np.cos(angle), 0, 0, 0, 1)
    matrix = transforms.transform_matrix(rotation, (1, 2, 3), 2.5)
    r, t, s = transforms.transform_parts(matrix)
    np.testing.assert_allclose(r, rotation, atol=1e-12)
    assert t == (1.0, 2.0, 3.0) and s == pytest.approx(2.5)


def test_limit_weights_keeps_four_heaviest_normalised():
    weights = np.array([[0.1, 0.5, 0.05, 0.2, 0.15, 0.0], [0, 0, 0, 0, 0, 0], [0, 0, 2.0, 0, 0, 0]], np.float32)
    indices, values = skinning.limit_weights(weights)
    assert indices[0].tolist() == [1, 3, 4, 0]
    np.testing.assert_allclose(values[0], np.array([0.5, 0.2, 0.15, 0.1]) / 0.95, rtol=1e-6)
    assert values[1].tolist() == [0, 0, 0, 0] and indices[1].tolist() == [0, 0, 0, 0]
    assert indices[2].tolist() == [2, 0, 0, 0] and values[2].tolist() == [1, 0, 0, 0]
    np.testing.assert_allclose(skinning.dense_weights(indices, values, 6)[2], [0, 0, 1, 0, 0, 0])


def test_fnv_weights_agree_between_skin_data_and_partitions(corpus):
    nif = NifFile.read(corpus / FNV_OUTFIT)
    shape = next(b for b in nif.blocks if getattr(b, "skinned", False))
    instance, data, partition = skinning.skin_blocks(nif, shape.skin_instance)
    count = len(nif.blocks[shape.data].vertices)
    from_data = skinning.shape_weights(instance, data, partition, count)
    data.has_vertex_weights = 0
    from_partitions = skinning.shape_weights(instance, data, partition, count)
    # Where NiSkinData gives a vertex at most four weights, the partitions hold the same ones.
    simple = (from_data > 0).sum(axis=1) <= 4
    assert simple.mean() > 0.9
    np.testing.assert_allclose(from_data[simple], from_partitions[simple], atol=1e-4)
    assert len(instance.bones) == 23 and from_data.shape == (count, 23)


def test_fnv_partitions_cover_every_triangle(corpus):
    nif = NifFile.read(corpus / FNV_OUTFIT)
    shape = next(b for b in nif.blocks if getattr(b, "skinned", False))
    instance, data, partition = skinning.skin_blocks(nif, shape.skin_instance)
    numbers = skinning.face_partitions(nif.blocks[shape.data].triangles, partition)
    assert (numbers >= 0).all()
    assert np.bincount(numbers).tolist() == [p.num_triangles for p in partition.partitions]


def test_build_partitions_respects_the_bone_limit_and_rebuilds_weights():
    rng = np.random.default_rng(1)
    count, bones = 60, 12
    weights = np.zeros((count, bones), np.float32)
    for column in range(3):
        weights[np.arange(count), (np.arange(count) // 5 + column) % bones] = rng.random(count) + 0.1
    indices, values = skinning.limit_weights(weights)
    triangles = np.array([[i, i + 1, i + 2] for i in range(count - 2)])
    groups = np.where(np.arange(len(triangles)) < 30, 7, 3)
    parts = skinning.build_partitions(indices, values, triangles, groups, bone_limit=5)
    assert len(parts) > 2 and [p["group"] for p in parts] == sorted([p["group"] for p in parts], key=[7, 3].index)
    rebuilt = np.zeros((count, bones), np.float32)
    covered = []
    for p in parts:
        assert len(p["bones"]) <= 5
        vertices = p["vertex_map"].astype(np.intp)
        covered.extend(map(tuple, np.sort(vertices[p["triangles"]], axis=1).tolist()))
        slots = p["bones"][p["bone_indices"]]
        mask = p["vertex_weights"] > 0
        rows = np.broadcast_to(vertices[:, None], mask.shape)[mask]
        rebuilt[rows, slots[mask]] = p["vertex_weights"][mask]
    assert sorted(covered) == sorted(map(tuple, np.sort(triangles, axis=1).tolist()))
    np.testing.assert_allclose(rebuilt, skinning.dense_weights(indices, values, bones), atol=1e-6)
    with pytest.raises(Exception, match="partition limit"):
        skinning.build_partitions(indices, values, triangles, groups, bone_limit=2)


# Vanilla FO4 shapes whose segments follow the conventions write_segments writes (sub-segments,
# shared data with cut offsets, empty segments, one-segment shapes).
SEGMENTED = [
    "pynifly/tests/tests/FO4/MaleBody.nif",
    "pynifly/tests/tests/FO4/BTMaleBody.nif",
    "pynifly/tests/tests/FO4/6SuitM_Test.nif",
    "pynifly/tests/tests/FO4/FeralGhoulBase.nif",
    "pynifly/tests/tests/FO4/Bathrobe.nif",
    "pynifly/tests/tests/FO4/BaseFemaleHead.nif",
    "pynifly/tests/tests/FO4/Gloves.nif",
]


def sub_index_shapes(nif):
    return [b for b in nif.blocks if b.type_name == "BSSubIndexTriShape"]


@pytest.mark.parametrize("name", SEGMENTED)
def test_segments_rebuilt_from_shuffled_triangles_match_the_file(corpus, name):
    """Shuffle the triangles with their (segment, sub-segment) numbers, rebuild: every segment is
    contiguous again with the same triangles, and the tables are the file's byte for byte."""
    raw = (corpus / name).read_bytes()
    nif = NifFile.from_bytes(bytearray(raw))
    rng = np.random.default_rng(7)
    shapes = sub_index_shapes(nif)
    assert shapes
    for shape in shapes:
        original = np.array(shape.triangles)
        layout = segments.segment_layout(shape)
        segment, sub = segments.face_segments(shape)
        assert (segment >= 0).all()  # vanilla files put every triangle in a segment
        assert segments.segments_hold(shape, layout, segment, sub)
        shuffle = rng.permutation(len(original))
        shape.set_triangles(original[shuffle])
        groups = len(set(zip(segment.tolist(), sub.tolist())))
        # Tables still hold for shuffled triangles only when one range holds them all.
        assert segments.segments_hold(shape, layout, segment[shuffle], sub[shuffle]) == (groups == 1)
        segments.write_segments(shape, layout, segment[shuffle], sub[shuffle])
        new_segment, new_sub = segments.face_segments(shape)
        assert (np.diff(new_segment) >= 0).all()
        for number in range(len(shape.segments)):
            here = new_segment == number
            assert (np.diff(new_sub[here]) >= 0).all()
            assert sorted(map(tuple, shape.triangles[here].tolist())) == sorted(map(tuple, original[segment == number].tolist()))
        assert segments.segment_layout(shape) == layout
        shape.set_triangles(original)  # the file's own order within each segment
    assert bytes(nif.to_bytes()) == raw


def test_segments_after_deleting_triangles():
    """A layout with sub-segments; triangles deleted from the end and from the middle."""
    nif = NifFile.read(CORPUS / SEGMENTED[2])
    shape = next(s for s in sub_index_shapes(nif) if s.shared_data is not None)
    layout = segments.segment_layout(shape)
    segment, sub = segments.face_segments(shape)
    triangles = np.array(shape.triangles)
    shape.set_triangles(triangles[:-1])
    assert not segments.segments_hold(shape, layout, segment[:-1], sub[:-1])  # the last range ends past the end
    kept = np.flatnonzero(segment != 3)  # drop a whole segment without sub-segments
    shape.set_triangles(triangles[kept])
    segments.write_segments(shape, layout, segment[kept], sub[kept])
    assert shape.segments[3].num_primitives == 0 and shape.segments[3].start_index == 0
    starts = [s.start_index // 3 for s in shape.segments if s.num_primitives]
    counts = [s.num_primitives for s in shape.segments if s.num_primitives]
    assert starts == list(np.cumsum([0] + counts[:-1])) and sum(counts) == len(kept)
    for seg in shape.segments:
        rows = np.asarray(seg.sub_segments)
        if len(rows):
            assert rows[0, 0] == seg.start_index and rows[:, 1].sum() == seg.num_primitives
            np.testing.assert_array_equal(rows[1:, 0], rows[:-1, 0] + 3 * rows[:-1, 1])
    np.testing.assert_array_equal(segments.face_segments(shape)[0], np.sort(segment[kept]))
    out = NifFile.from_bytes(bytearray(nif.to_bytes()))
    assert segments.segment_layout(sub_index_shapes(out)[0]) == layout


def test_unknown_segments_resolve_to_the_fallback():
    layout = {"total": 4, "segments": [{"flags": 0, "parent": 0, "subs": []}, {"flags": 0, "parent": 0, "subs": [[1, 0], [1, 0]]}]}
    segment, sub = segments.resolve_segments(layout, [-1, 5, 1, 1, 1, 0], [0, 0, 1, -1, 7, 3], fallback=1)
    assert segment.tolist() == [1, 1, 1, 1, 1, 0]
    assert sub.tolist() == [0, 0, 1, 0, 0, -1]
    segment, _ = segments.resolve_segments(layout, [-1], [-1], fallback=9)  # a fallback the layout lacks
    assert segment.tolist() == [0]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda l: l.update(total=3), "3 total segments"),
        (lambda l: l.pop("shared"), "need shared data"),
        (lambda l: l["shared"]["records"].pop(), "records"),
        (lambda l: l["segments"][0].update(flags=-1), "32-bit"),
        (lambda l: l["segments"][1]["subs"].append([1]), "malformed"),
        (lambda l: l["shared"]["records"][0][2].append(float("nan")), "finite"),
        (lambda l: l.update(segments=[], total=0), "no segments"),
    ],
)
def test_bad_layouts_are_refused(change, message):
    layout = {
        "total": 4,
        "segments": [{"flags": 0, "parent": 0xFFFFFFFF, "subs": []}, {"flags": 0, "parent": 0xFFFFFFFF, "subs": [[1, 0], [1, 0]]}],
        "shared": {"starts": [0, 1], "records": [[0, 0xFFFFFFFF, []], [1, 0xFFFFFFFF, []], [32, 1, []], [33, 2, [1.5]]], "ssf": "a.ssf"},
    }
    segments.check_layout(layout)
    change(layout)
    with pytest.raises(FormatError, match=message):
        segments.check_layout(layout)


def test_bone_bounds_contain_the_weighted_vertices(corpus):
    nif = NifFile.read(corpus / "nifly/tests/input/TestNifFile_Skinned_FO4.nif")
    shape = nif.blocks[3]
    instance, data, _ = skinning.skin_blocks(nif, shape.skin)
    weights = skinning.shape_weights(instance, data, None, shape.num_vertices, (shape.bone_indices, shape.bone_weights))
    binds = skinning.bind_matrices(instance, data)
    for column, (center, radius) in enumerate(skinning.bone_bounds(shape.positions, weights, binds)):
        used = shape.positions[weights[:, column] > 0]
        local = used @ binds[column][:3, :3].T + binds[column][:3, 3]
        assert np.linalg.norm(local - center, axis=1).max() <= radius + 1e-6
