"""Skyrim LE / SE Havok collision in real Blender: every corpus file with collision shows it, its
bodies' values are the bytes' (read by tests/raw_skyrim_havok.py), its world bounds overlap the
meshes of their owners, untouched files write back byte for byte, and an edited compressed mesh
is written anew (data re-encoded, MOPP rebuilt) and comes back with the edit."""

import numpy as np
import pytest
from raw_skyrim_havok import SKYRIM_UNITS, read_bodies
from support import corpus_files
from test_legacy_collision_blender import bounds, export, imported, world_points

COLLISION_FILES = [path for path in corpus_files("pynifly/tests/tests/Skyrim*/**/*.nif")
                   if b"bhkCollisionObject" in path.read_bytes() or b"bhkBlendCollisionObject" in path.read_bytes()]
# Its skinned BSTriShapes (issue 24's part) stop the import before collision is reached.
GEOMETRY_FAILS = {"treeaspen03.nif"}
CASES = [pytest.param(path, id=path.name, marks=[pytest.mark.xfail(strict=True, raises=RuntimeError)] if path.name in GEOMETRY_FAILS else [])
         for path in COLLISION_FILES]


def bodies_of(collection):
    """{owner node index: body object}; a bone's node index is on the armature's bone."""
    found = {}
    for obj in collection.all_objects:
        if "nif_collision" in obj:
            owner = obj.parent.data.bones[obj.parent_bone] if obj.parent_type == "BONE" else obj.parent
            found[owner["nif_block"]] = obj
    return found


def collection_mesh_bounds(collection):
    points = [world_points(obj) for obj in collection.all_objects
              if obj.type == "MESH" and "havok_shape" not in obj and len(obj.data.vertices)]
    return bounds(np.concatenate(points)) if points else None


@pytest.mark.parametrize("path", CASES)
def test_corpus_collision_shows_with_the_bytes_values_over_its_meshes(clean_scene, path):
    collection = imported(path)
    bodies = bodies_of(collection)
    expected = read_bodies(path)
    assert sorted(bodies) == sorted(expected)
    meshes = collection_mesh_bounds(collection)
    for owner, obj in bodies.items():
        body = expected[owner]
        assert obj["havok_mass"] == pytest.approx(body["mass"]) and obj["havok_layer"] == body["layer"]
        assert obj["havok_friction"] == pytest.approx(body["friction"])
        assert obj["havok_restitution"] == pytest.approx(body["restitution"])
        if meshes is None:
            continue  # a skeleton: bones, no meshes
        low, high = meshes
        got = bounds(world_points(obj))
        # the body meets the meshes and is of their size: a wrong unit makes it ten times bigger or
        # smaller (dockstepsdownend01's collision also covers its BSLODTriShapes, not imported)
        assert (got[0] <= high).all() and (got[1] >= low).all(), f"{obj.name} does not meet the meshes"
        ratio = (got[1] - got[0]).max() / (high - low).max()
        assert 0.2 <= ratio <= 3, f"{obj.name} is {ratio:.2f} times the size of the meshes"
