"""The bounding trees of compressed meshes, walked by a decoder written here from the notes
(preorder nodes, per-axis nibbles quantised against the parent box: core/havok/shapes/
static_tree's docstring) rather than the product's: the game finds collision through these
boxes, so every node's box must hold its children's and every leaf's box its primitive."""

import numpy as np
import pytest
from support import CORPUS, corpus_nifs

from precombined_nif.core.havok import Packfile, PhysicsSystemData
from precombined_nif.core.havok.shapes.compound import DynamicCompoundShape
from precombined_nif.core.havok.shapes.compressed_mesh import CompressedMeshShape
from precombined_nif.core.havok.shapes.compressed_mesh_encode import build_compressed_mesh
from precombined_nif.core.havok.tagfile import is_tagfile
from precombined_nif.core.nif.blocks.collision import bhkSystem

SLACK = 1e-5  # float32 rounding of the boxes (Havok units)


def child_box(parent, codes):
    low, high = parent
    extent = high - low
    hi = (codes >> 4).astype(np.float32)
    lo = (codes & 15).astype(np.float32)
    step = np.float32(1.0 / 226.0)
    return np.array([low + hi * hi * step * extent, high - lo * lo * step * extent], np.float32)


def walk(nodes, domain, wide):
    """{leaf value: box}; asserts each child's box lies in its parent's and each node is
    visited once."""
    nodes = np.asarray(nodes, np.int64)
    leaves, seen = {}, set()

    def visit(index, parent):
        assert index not in seen and index < len(nodes)
        seen.add(index)
        box = child_box(parent, nodes[index, :3])
        assert (box[0] >= parent[0] - SLACK).all() and (box[1] <= parent[1] + SLACK).all()
        assert (box[0] <= box[1] + SLACK).all()
        if wide:
            inner, value = bool(nodes[index, 3] & 0x80), (int(nodes[index, 3] & 0x7F) << 8) | int(nodes[index, 4])
            right = 2 * value
        else:
            inner, value, right = bool(nodes[index, 3] & 1), int(nodes[index, 3]) >> 1, int(nodes[index, 3]) & 0xFE
        if not inner:
            leaves[value] = box
            return
        visit(index + 1, box)
        visit(index + right, box)

    if len(nodes):
        visit(0, np.asarray(domain, np.float32))
    assert len(seen) == len(nodes)
    return leaves


def check_trees(shape):
    data = shape.data
    vertices, triangles, _values, section_of, keys = data.decode()
    top = walk(data.tree, data.domain[:, :3], wide=True)
    assert sorted(top) == list(range(len(data.sections)))
    for number, section in enumerate(data.sections):
        box = top[number]
        assert (box[0] <= section.aabb[0, :3] + SLACK).all() and (box[1] >= section.aabb[1, :3] - SLACK).all()
        leaves = walk(section.nodes, section.aabb[:, :3], wide=False)
        mine = section_of == number
        corners = vertices[triangles[mine]]
        for primitive, low, high in zip((keys[mine] & 0xFF) >> 1, corners.min(axis=1), corners.max(axis=1)):
            leaf = leaves[int(primitive)]
            assert (leaf[0] <= low + SLACK).all() and (leaf[1] >= high - SLACK).all()


def corpus_meshes():
    found = []
    for path, nif in corpus_nifs(b"bhkPhysicsSystem"):
        for index, block in nif.blocks_of(bhkSystem):
            if is_tagfile(block.packfile):  # Starfield's: not decoded
                continue
            system = Packfile.from_bytes(block.packfile).root
            if not isinstance(system, PhysicsSystemData):
                continue
            for number, body in enumerate(system.bodies):
                shapes = [i.shape for i in body.shape.instances] if isinstance(body.shape, DynamicCompoundShape) else [body.shape]
                found += [(f"{path.relative_to(CORPUS)}#{index}.{number}", s) for s in shapes if isinstance(s, CompressedMeshShape)]
    return found


MESHES = corpus_meshes()


def test_corpus_holds_compressed_meshes(corpus):
    assert len(MESHES) >= 10


@pytest.mark.parametrize("name, shape", MESHES, ids=[name for name, _ in MESHES])
def test_game_trees_hold_their_contents(name, shape):
    check_trees(shape)


@pytest.mark.parametrize("name, shape", MESHES, ids=[name for name, _ in MESHES])
def test_rebuilt_trees_hold_their_contents(name, shape):
    """Each corpus mesh built anew from its own triangles."""
    vertices, triangles = shape.mesh()
    check_trees(build_compressed_mesh(vertices, triangles))


def test_trees_of_a_new_20k_triangle_mesh_hold_their_contents():
    n = 101  # 100 x 100 cells, two triangles each
    x, y = np.meshgrid(np.linspace(-3000, 3000, n), np.linspace(-2000, 2000, n))
    z = 120 * np.sin(x / 400) * np.cos(y / 300)
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    corner = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)).ravel()
    cells = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    triangles = np.concatenate([cells[:, [0, 1, 2]], cells[:, [0, 2, 3]]])
    assert len(triangles) == 20000
    shape = build_compressed_mesh(vertices, triangles)
    assert len(shape.data.sections) > 100
    check_trees(shape)


def test_a_box_sticking_out_of_its_parent_ends_at_the_whole_parent():
    """Rounding can leave a child box a hair outside its parent: encoding stops at nibble 0 (the
    whole parent) instead of stepping below it for ever."""
    from precombined_nif.core.havok.shapes.static_tree import _encode_boxes

    parents = np.array([[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]], np.float32)
    boxes = np.array([[[-0.5, 0.2, 0.2], [0.5, 1.5, 0.8]]], np.float32)
    codes, decoded = _encode_boxes(parents, boxes)
    assert codes.shape == (1, 3)
    assert (codes[0, 0] >> 4) == 0 and (codes[0, 1] & 0xF) == 0  # the sides that stick out
    assert decoded[0, 0, 0] == 0.0 and decoded[0, 1, 1] == 1.0
