"""Constraints of Fallout 4 ragdolls: the skeletons' hkpRagdollConstraintData and
hkpLimitedHingeConstraintData decoded to the values a struct reading of the objects' bytes at
the atoms' offsets gives, pivots that the two bodies agree on, byte-exact write-back, edits
that touch only their bytes; hinge and ball-and-socket objects (absent from the corpus) built
here byte by byte."""

import struct

import numpy as np
import pytest
from raw_constraints import HINGE_LIMITS, RAGDOLL_LIMITS, RAGDOLLS, TRANSLATION_A, TRANSLATION_B, atom, built, pivot, transforms

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile, RawObject
from precombined_nif.core.havok.constraints import ConstraintData
from precombined_nif.core.nif import NifFile


def systems(path):
    nif = NifFile.read(path)
    return [Packfile.from_bytes(block.packfile).root for block in nif.blocks if block.type_name == "bhkRagdollSystem"]


def test_corpus_has_ragdoll_constraints():
    assert len(RAGDOLLS) >= 4
    kinds = {c.constraint_data.class_name for path in RAGDOLLS for s in systems(path) for c in s.constraints}
    assert kinds == {"hkpRagdollConstraintData", "hkpLimitedHingeConstraintData"}


@pytest.mark.parametrize("path", RAGDOLLS, ids=lambda p: p.name)
def test_constraints_match_their_bytes_and_write_back(path):
    close = 0
    count = 0
    for system in systems(path):
        for cinfo in system.constraints:
            raw = cinfo.constraint_data
            assert isinstance(raw, RawObject)
            data = ConstraintData.from_object(raw)
            assert data.to_bytes() == raw.data
            offsets = RAGDOLL_LIMITS if data.kind == "ragdoll" else HINGE_LIMITS
            assert data.kind == {"hkpRagdollConstraintData": "ragdoll", "hkpLimitedHingeConstraintData": "limited_hinge"}[raw.class_name]
            assert data.limits == {name: struct.unpack_from("<f", raw.data, at)[0] for name, at in offsets.items()}
            frame_a, frame_b = data.frames()
            in_a = struct.unpack_from("<3f", raw.data, TRANSLATION_A)
            in_b = struct.unpack_from("<3f", raw.data, TRANSLATION_B)
            assert np.allclose(frame_a[:3, 3], in_a) and np.allclose(frame_b[:3, 3], in_b)
            # the frame's columns are stored one after the other (hkTransform)
            assert np.allclose(frame_a[:3, 0], struct.unpack_from("<3f", raw.data, 0x30))
            # both bodies put the joint at the same place (the knees' hinges within half a unit)
            gap = np.linalg.norm(pivot(system.bodies[cinfo.body_a], in_a) - pivot(system.bodies[cinfo.body_b], in_b))
            assert gap < 0.5
            close += gap < 0.01
            count += 1
    assert count >= 16 and close >= count - 4


def test_edited_limit_changes_only_its_bytes():
    (system,) = systems(RAGDOLLS[0])
    raw = next(c.constraint_data for c in system.constraints if c.constraint_data.class_name == "hkpRagdollConstraintData")
    data = ConstraintData.from_object(raw)
    data.set_limit("twist_max", 0.5)
    out = data.to_bytes()
    changed = [i for i in range(len(out)) if out[i] != raw.data[i]]
    assert changed and min(changed) >= RAGDOLL_LIMITS["twist_max"] and max(changed) < RAGDOLL_LIMITS["twist_max"] + 4
    assert struct.unpack_from("<f", out, RAGDOLL_LIMITS["twist_max"])[0] == 0.5


def test_hinge_and_ball_and_socket_built_from_havok_atoms():
    stabilization = atom(0x17, b"\x01", 0x10)
    hinge = built("hkpHingeConstraintData", [transforms((1, 2, 3), (4, 5, 6)), stabilization, atom(0x0C, b"", 0x10), atom(5, b"", 0x10)])
    data = ConstraintData.from_object(hinge)
    assert data.kind == "hinge" and data.limits == {}
    assert np.allclose(data.frames()[0][:3, 3], (1, 2, 3)) and np.allclose(data.frames()[1][:3, 3], (4, 5, 6))
    assert data.to_bytes() == hinge.data
    pivots = atom(1, bytes(14) + struct.pack("<8f", 1.5, 0, -2, 0, 0, 3, 0, 0), 0x30)
    ball = built("hkpBallAndSocketConstraintData", [pivots, stabilization, atom(5, b"", 0x10)])
    data = ConstraintData.from_object(ball)
    assert data.kind == "ball_and_socket"
    assert np.allclose(data.frames()[0], [[1, 0, 0, 1.5], [0, 1, 0, 0], [0, 0, 1, -2], [0, 0, 0, 1]])
    assert np.allclose(data.frames()[1][:3, 3], (0, 3, 0))
    moved = np.eye(4)
    moved[:3, 3] = (7, 8, 9)
    data.set_frames(moved, moved)
    assert struct.unpack_from("<3f", data.to_bytes(), 0x30) == (7, 8, 9)


def test_wrong_atoms_are_refused():
    wrong = built("hkpHingeConstraintData", [transforms((0, 0, 0), (0, 0, 0)), atom(5, b"", 0x10)])
    with pytest.raises(FormatError, match="stabilization"):
        ConstraintData.from_object(wrong)
    with pytest.raises(FormatError):
        ConstraintData.from_object(built("hkpHingeConstraintData", [transforms((0, 0, 0), (0, 0, 0))[:40]]))
    with pytest.raises(FormatError, match="not known"):
        ConstraintData.from_object(RawObject("hkpPulleyConstraintData", bytes(64)))
