"""The corpus cell's merged physics (ck-precombined/00001E58_Physics.NIF, written by the Creation
Kit): each of its own triangles is found in it once within its quantisation and none shifted by
five units; a copy owning some of them (a model made here from them) deleted or moved takes
exactly those along, and the rest of the mesh stays where it was."""

import numpy as np
import pytest
from support import CORPUS

from precombined_nif.core.nif import NifFile
from precombined_nif.core.precombined import physics

PHYSICS = CORPUS / "ck-precombined/Meshes/PreCombined/00001E58_Physics.NIF"


@pytest.fixture(scope="module")
def merged(corpus):
    return physics.MergedMesh(NifFile.read(PHYSICS))


def test_the_cks_triangles_are_each_found_once(merged):
    assert len(merged.triangles) == 9480
    sample = merged.vertices[merged.triangles[::7]]
    assert (merged.find(sample) == np.arange(0, 9480, 7)).all()
    assert (merged.find(sample + (5.0, 0.0, 0.0)) == -1).all()


def placement(angle, translation):
    out = np.eye(4)
    c, s = np.cos(angle), np.sin(angle)
    out[:2, :2] = [[c, -s], [s, c]]
    out[:3, 3] = translation
    return out


@pytest.mark.parametrize("after", [None, placement(0.3, (100.0, -50.0, 20.0))])
def test_a_copys_triangles_go_or_move_and_the_rest_stay(merged, after):
    owned = np.arange(200, 260)
    before = placement(-1.1, (1400.0, 200.0, 300.0))
    # The copy's model: its triangles in the merged mesh brought back into model space.
    corners = merged.vertices[merged.triangles[owned]].reshape(-1, 3)
    local = (corners - before[:3, 3]) @ np.linalg.inv(before[:3, :3]).T
    source = physics.Source(local.reshape(-1, 3, 3), merged.materials[owned])
    edited, messages = physics.edit_physics(NifFile.read(PHYSICS), [physics.PhysicsEdit("copy", before, after, source)])
    assert messages == []
    result = physics.MergedMesh(edited)
    kept = np.setdiff1d(np.arange(len(merged.triangles)), owned)
    found = result.find(merged.vertices[merged.triangles[kept]])
    assert (found >= 0).all()
    assert (result.materials[found] == merged.materials[kept]).all()
    assert (result.find(merged.vertices[merged.triangles[owned]]) == -1).all()
    if after is None:
        assert len(result.triangles) == len(kept)
    else:
        moved = (corners @ (after @ np.linalg.inv(before))[:3, :3].T + (after @ np.linalg.inv(before))[:3, 3])
        assert (result.find(moved.reshape(-1, 3, 3)) >= 0).all() and len(result.triangles) == len(merged.triangles)


def test_a_copy_whose_triangles_are_not_all_there_is_named(merged):
    owned = np.arange(10)
    source = physics.Source(merged.vertices[merged.triangles[owned]] + (0.0, 0.0, 40.0), merged.materials[owned])
    edited, messages = physics.edit_physics(NifFile.read(PHYSICS), [physics.PhysicsEdit("lost", np.eye(4), None, source)])
    assert edited is None and messages == ["lost: collision left where it was: 10 of its 10 collision triangles are not "
                                           "in the cell's merged mesh"]
