"""Cutting meshes into shapes of at most 65535 vertices (core, no Blender)."""

import numpy as np

from precombined_nif.core.mesh_split import split_triangles


def test_small_mesh_is_one_piece_in_order():
    triangles = np.array([[4, 5, 6], [6, 5, 7]])
    ((used, local),) = split_triangles(triangles)
    np.testing.assert_array_equal(used[local], triangles)
    np.testing.assert_array_equal(used, [4, 5, 6, 7])


def test_pieces_respect_the_limit_and_keep_every_triangle():
    rng = np.random.default_rng(7)
    triangles = rng.integers(0, 200_000, (150_000, 3))
    pieces = split_triangles(triangles)
    assert len(pieces) > 1
    assert all(len(used) <= 0xFFFF for used, _ in pieces)
    np.testing.assert_array_equal(np.concatenate([used[local] for used, local in pieces]), triangles)
    # Each piece is as long as the limit allows: one more triangle would overflow it.
    start = 0
    for used, local in pieces[:-1]:
        start += len(local)
        assert len(np.unique(triangles[start - len(local) : start + 1])) > 0xFFFF


def test_a_tiny_limit_still_moves_forward():
    triangles = np.arange(12).reshape(4, 3)
    pieces = split_triangles(triangles, limit=3)
    assert [len(local) for _, local in pieces] == [1, 1, 1, 1]


def test_no_triangles_is_one_empty_piece():
    ((used, local),) = split_triangles(np.zeros((0, 3), np.int64))
    assert len(used) == 0 and local.shape == (0, 3)
