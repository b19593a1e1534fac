"""Ragdoll constraints of the corpus skeletons in real Blender: an empty at each pivot, under
body A's node, naming both bodies' nodes, with its limits; untouched exports keep the system
byte for byte, an edited limit and a moved pivot are written and re-imported."""

import math
import struct

import numpy as np
import pytest

from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.constraints import ConstraintData
from precombined_nif.core.nif import NifFile

from raw_constraints import RAGDOLL_LIMITS, RAGDOLLS, TRANSLATION_A, pivot
from scene import export, imported

SKELETON = "pynifly/tests/tests/FO4/skeleton.nif"


def constraint_empties(collection):
    return sorted((o for o in collection.objects if o.get("nif_extra_kind") == "constraint"), key=lambda o: o["nif_extra_item"])


def ragdoll(nif):
    (block,) = [b for b in nif.blocks if b.type_name == "bhkRagdollSystem"]
    return Packfile.from_bytes(block.packfile).root


def body_nodes(nif):
    """{body id: node name} of the ragdoll, read from the collision objects here."""
    names = {}
    for block in nif.blocks:
        ref = getattr(block, "collision_object", -1)
        if ref >= 0 and nif.blocks[ref].type_name == "bhkNPCollisionObject":
            if nif.blocks[nif.blocks[ref].data].type_name == "bhkRagdollSystem":
                names[nif.blocks[ref].body_id] = block.name
    return names


@pytest.mark.parametrize("path", RAGDOLLS, ids=lambda p: p.name)
def test_constraints_are_empties_at_their_pivots(clean_scene, tmp_path, path):
    nif = NifFile.read(path)
    system = ragdoll(nif)
    nodes = body_nodes(nif)
    collection = imported(path)
    empties = constraint_empties(collection)
    assert len(empties) == len(system.constraints) >= 16
    for obj, cinfo in zip(empties, system.constraints):
        raw = cinfo.constraint_data.data
        where = pivot(system.bodies[cinfo.body_a], struct.unpack_from("<3f", raw, TRANSLATION_A))
        assert np.allclose(np.array(obj.matrix_world.translation), where, atol=1e-3)
        assert obj["havok_body_a"] == nodes[cinfo.body_a] and obj["havok_body_b"] == nodes[cinfo.body_b]
        assert obj.parent.name == nodes[cinfo.body_a] or obj.parent_bone == nodes[cinfo.body_a]
        if obj["havok_constraint"] == "ragdoll":
            for name, at in RAGDOLL_LIMITS.items():
                assert obj[f"havok_{name}"] == struct.unpack_from("<f", raw, at)[0]
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


def test_edited_limit_and_moved_pivot_are_written(clean_scene, corpus, tmp_path):
    import bpy
    from mathutils import Matrix

    path = corpus / SKELETON
    source = ragdoll(NifFile.read(path))
    collection = imported(path)
    empties = constraint_empties(collection)
    first = next(o for o in empties if o["havok_constraint"] == "ragdoll")
    first["havok_twist_max"] = 0.5
    hinge = next(o for o in empties if o["havok_constraint"] == "limited_hinge")
    hinge.matrix_world = Matrix.Translation((2.0, -1.0, 3.0)) @ Matrix.Rotation(math.radians(20), 4, "Z") @ hinge.matrix_world
    bpy.context.view_layer.update()
    wanted = np.array(hinge.matrix_world)
    first_number, hinge_number = first["nif_extra_item"], hinge["nif_extra_item"]
    out = tmp_path / "edited.nif"
    system = ragdoll(export(collection, out))
    for number, (old, new) in enumerate(zip(source.constraints, system.constraints)):
        if number not in (first["nif_extra_item"], hinge["nif_extra_item"]):
            assert new.constraint_data.data == old.constraint_data.data
    edited = ConstraintData.from_object(system.constraints[first["nif_extra_item"]].constraint_data)
    assert edited.limits["twist_max"] == 0.5
    cinfo = system.constraints[hinge["nif_extra_item"]]
    moved = ConstraintData.from_object(cinfo.constraint_data)
    frame_a, frame_b = moved.frames()
    assert np.allclose(pivot(system.bodies[cinfo.body_a], frame_a[:3, 3]), wanted[:3, 3], atol=1e-3)
    # body B's frame moved with it: both bodies still agree on the pivot as closely as before
    old = ConstraintData.from_object(source.constraints[hinge["nif_extra_item"]].constraint_data)
    before = np.linalg.norm(pivot(source.bodies[cinfo.body_a], old.frames()[0][:3, 3]) - pivot(source.bodies[cinfo.body_b], old.frames()[1][:3, 3]))
    after = np.linalg.norm(pivot(system.bodies[cinfo.body_a], frame_a[:3, 3]) - pivot(system.bodies[cinfo.body_b], frame_b[:3, 3]))
    assert math.isclose(before, after, abs_tol=1e-3)
    for obj in list(collection.objects):
        bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)
    again = constraint_empties(imported(out))
    assert again[first_number]["havok_twist_max"] == 0.5
    assert np.allclose(np.array(again[hinge_number].matrix_world), wanted, atol=1e-3)


def test_hinge_and_ball_and_socket_in_a_physics_system(clean_scene, corpus, tmp_path, monkeypatch):
    """No corpus physics system holds a hinge or a ball and socket: DiamondCrossbeams01's system
    (two bodies owned by two nodes) gets both, their objects' bytes built here atom by atom, and
    body 1 moved and turned so the pivots go through its placement."""
    import bpy

    from precombined_nif.core.havok import GAME_UNITS
    from precombined_nif.core.havok.classes.physics_system import ConstraintCinfo
    from precombined_nif.core.havok.classnames import SIGNATURES
    from precombined_nif.core.havok.header import HK_2014

    from raw_constraints import atom, built, transforms

    path = corpus / "pynifly/tests/tests/FO4/Meshes/Architecture/DiamondCity/Stadium_Ext/DiamondCrossbeams01.nif"
    nif = NifFile.read(path)
    (block,) = [b for b in nif.blocks if b.type_name == "bhkPhysicsSystem"]
    packfile = Packfile.from_bytes(block.packfile)
    system = packfile.root
    turn = math.sqrt(0.5)
    system.bodies[1].position = (1.0, 2.0, 0.5, 0.0)
    system.bodies[1].orientation = (0.0, 0.0, turn, turn)  # 90 degrees about Z
    stabilization = atom(0x17, b"\x01", 0x10)
    hinge = built("hkpHingeConstraintData", [transforms((0.1, 0.2, 0.3), (0.0, 0.0, 0.0)), stabilization,
                                             atom(0x0C, b"", 0x10), atom(5, b"", 0x10)])  # fmt: skip
    pivots = atom(1, bytes(14) + struct.pack("<8f", 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 0x30)
    ball = built("hkpBallAndSocketConstraintData", [pivots, stabilization, atom(5, b"", 0x10)])
    for data, body_a, body_b in ((hinge, 0, 1), (ball, 1, 0)):
        cinfo = ConstraintCinfo()
        cinfo.constraint_data, cinfo.body_a, cinfo.body_b = data, body_a, body_b
        system.constraints.append(cinfo)
    for name in ("hkpHingeConstraintData", "hkpBallAndSocketConstraintData"):
        monkeypatch.setitem(SIGNATURES[HK_2014], name, 0)  # the packfile lists the new classes (signature unknown here)
    block.packfile = packfile.to_bytes()
    source = tmp_path / "DiamondCrossbeams01.nif"
    nif.write(source)
    collection = imported(source)
    first, second = constraint_empties(collection)
    assert (first["havok_constraint"], first["havok_body_a"], first["havok_body_b"]) == ("hinge", "DiamondCrossbeams01", "TransDummy")
    assert np.allclose(np.array(first.matrix_world.translation), np.array([0.1, 0.2, 0.3]) * GAME_UNITS, atol=1e-4)
    assert (second["havok_constraint"], second["havok_body_a"]) == ("ball_and_socket", "TransDummy")
    assert second.parent.name == "TransDummy"
    # body 1 turned a quarter about Z takes (0.5, 0, 0) to (0, 0.5, 0)
    assert np.allclose(np.array(second.matrix_world.translation), np.array([1.0, 2.5, 0.5]) * GAME_UNITS, atol=1e-4)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()
    second.location.z += 7.0
    bpy.context.view_layer.update()
    moved = ragdoll_or_physics(export(collection, tmp_path / "moved.nif"))
    frames = ConstraintData.from_object(moved.constraints[1].constraint_data).frames()
    assert np.allclose(pivot(moved.bodies[1], frames[0][:3, 3]), np.array([1.0, 2.5, 0.5]) * GAME_UNITS + (0, 0, 7), atol=1e-3)


def ragdoll_or_physics(nif):
    (block,) = [b for b in nif.blocks if b.type_name in ("bhkRagdollSystem", "bhkPhysicsSystem")]
    return Packfile.from_bytes(block.packfile).root


def test_unreadable_ragdoll_is_reported_and_kept(clean_scene, corpus, tmp_path):
    path = corpus / SKELETON
    data = bytearray(path.read_bytes())
    at = bytes(data).index(b"__classnames__")  # the ragdoll's section headers come first
    data[at : at + 14] = b"__somethingX__"
    damaged = tmp_path / "skeleton.nif"
    damaged.write_bytes(bytes(data))
    collection = imported(damaged)
    assert not constraint_empties(collection)
    export(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == bytes(data)
