"""hknpStaticCompoundShape (collision kept inside Creation Kit precombined cells): every one in
the corpus decodes and writes back byte for byte, its instance placed as the file's CLONE node
says, its child inside the tree's bounds; edited and new compounds re-encode with a rebuilt
tree that decodes back to them."""

import json
import subprocess
import sys

import numpy as np
import pytest
from packfiles import shapes_round_trip
from support import CORPUS, ROOT, corpus_nifs

from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.shapes.base import GAME_UNITS, w_int
from precombined_nif.core.havok.shapes.compressed_mesh_encode import build_compressed_mesh
from precombined_nif.core.havok.shapes.convex import ConvexPolytopeShape
from precombined_nif.core.havok.shapes.static_compound import StaticCompoundShape
from precombined_nif.core.nif.blocks.collision import bhkSystem

CELL = "ck-precombined/Meshes/PreCombined/00001E58_A8F0581B_OC.NIF"


def static_compounds():
    """[(file, owner node, physics block, packfile bytes)] of every physics system in the corpus
    whose bytes name hknpStaticCompoundShape."""
    found = []
    for path, nif in corpus_nifs(b"hknpStaticCompoundShape"):
        for index, block in nif.blocks_of(bhkSystem):
            owner = next(b for b in nif.blocks if getattr(b, "collision_object", -1) >= 0 and nif.blocks[b.collision_object].data == index)
            found.append((path, owner, index, bytes(block.packfile)))
    return found


def shapes_of(system):
    return [body.shape for body in system.bodies if isinstance(body.shape, StaticCompoundShape)]


def placed_vertices(instance):
    vertices, _ = instance.shape.mesh()
    matrix = instance.matrix
    return (vertices @ matrix[:3, :3].T + matrix[:3, 3]) / GAME_UNITS


def test_every_static_compound_decodes_and_writes_back(corpus):
    found = static_compounds()
    assert [str(path.relative_to(CORPUS)) for path, *_ in found] == [CELL]
    for path, owner, index, data in found:
        packfile = Packfile.from_bytes(data)
        assert packfile.to_bytes() == data
        (shape,) = {id(s): s for s in shapes_of(packfile.root)}.values()
        assert len(shape.instances) == 1 and shape.shape_key_bits == 1
        (instance,) = shape.instances
        # The CK put the CLONE node's scale into the instance: identity rotation, no translation.
        assert owner.name == "CLONE BldWlpBgWallFreeWood01"
        np.testing.assert_allclose(instance.matrix[:3, :3], np.eye(3) * owner.scale, rtol=1e-6)
        assert not instance.matrix[:3, 3].any()
        assert w_int(instance.transform[0, 3]) == 0x68  # enabled, scaled, scaled surface
        leaves = shape.tree.leaves()
        assert set(leaves) == {0}
        points = placed_vertices(instance)
        box = leaves[0]
        assert (points >= box[0] - 1e-6).all() and (points <= box[1] + 1e-6).all()
        np.testing.assert_allclose(box, [points.min(axis=0), points.max(axis=0)], atol=1e-6)  # tight
        np.testing.assert_array_equal(shape.aabb[:, :3], box)


def test_edited_child_reencodes_and_decodes_back(corpus):
    (_, _, _, data), = static_compounds()
    packfile = Packfile.from_bytes(data)
    (shape,) = {id(s): s for s in shapes_of(packfile.root)}.values()
    old_w = shape.aabb[:, 3].copy()
    vertices, triangles = shape.instances[0].shape.mesh()
    edited = vertices * [1.0, 1.0, 1.5] + [0.0, 10.0, 0.0]
    shape.instances[0].shape = build_compressed_mesh(edited, triangles)
    shape.rebuild()
    written = packfile.to_bytes()
    again = Packfile.from_bytes(written)
    assert again.to_bytes() == written
    (decoded,) = {id(s): s for s in shapes_of(again.root)}.values()
    (instance,) = decoded.instances
    got, _ = instance.shape.mesh()
    assert np.abs(np.sort(got, axis=0) - np.sort(edited, axis=0)).max() < 0.05  # compressed mesh quantisation
    points = placed_vertices(instance)
    box = decoded.tree.leaves()[0]
    assert (points >= box[0] - 1e-6).all() and (points <= box[1] + 1e-6).all()
    assert box[1][2] == pytest.approx(points[:, 2].max(), abs=1e-5) and decoded.aabb[1, 2] > 1.5 * 1.48
    np.testing.assert_array_equal(decoded.aabb[:, 3], old_w)


def test_new_static_compound_of_several_children():
    """Seven boxes placed apart: the rebuilt tree (inner nodes of the 6-byte codec) finds every
    instance's vertices inside its leaf, the instances' order being the leaves'."""
    rng = np.random.default_rng(7)
    corners = np.array([[x, y, z] for x in (-5, 5) for y in (-8, 8) for z in (0, 12)], float)
    children = []
    for k in range(7):
        matrix = np.eye(4)
        matrix[:3, 3] = rng.uniform(-400, 400, 3)
        matrix[:3, :3] *= 1.0 + 0.25 * k
        children.append((ConvexPolytopeShape.build(corners), matrix))
    (shape,) = shapes_round_trip(StaticCompoundShape.build(children))
    assert len(shape.instances) == 7 and len(shape.tree.nodes) == 13
    leaves = shape.tree.leaves()
    assert sorted(leaves) == list(range(7))
    for number, instance in enumerate(shape.instances):
        points = placed_vertices(instance)
        grow = float(instance.shape.convex_radius) * max(instance.scale[:3]) + 1e-6
        assert (points >= leaves[number][0] - grow).all() and (points <= leaves[number][1] + grow).all()
    translations = sorted(tuple(np.round(instance.matrix[:3, 3], 3)) for instance in shape.instances)
    assert translations == sorted(tuple(np.round(matrix[:3, 3], 3)) for _, matrix in children)


def test_info_reports_static_compounds(corpus):
    """As the user asks for it: ``cli.py info CELL --json``."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "info", str(corpus / CELL), "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    text = json.dumps(json.loads(result.stdout))
    expected = '"shape": {"type": "static_compound", "tree_nodes": 1, "children": [{"type": "compressed_mesh", "vertices": 8, "triangles": 12'
    assert expected in text, text
