"""Havok constraints as bytes, for the constraint tests: where the corpus ragdolls' limits and
pivots sit in their objects, where a body puts a pivot (its quaternion written out here), and
constraint atoms built by hand."""

import struct

import numpy as np
from support import corpus_bytes, corpus_files_holding

from precombined_nif.core.havok import GAME_UNITS, RawObject
from precombined_nif.core.havok.tagfile import MAGIC

# Fallout 4's ragdolls (packfiles); Starfield's are Havok tagfiles, not decoded.
RAGDOLLS = [path for path in corpus_files_holding("**/*.nif", b"bhkRagdollSystem") if MAGIC not in corpus_bytes(path)]

# offsets in the objects: transform A's and B's translations, then the limits
TRANSLATION_A, TRANSLATION_B = 0x60, 0xA0
RAGDOLL_LIMITS = {"max_friction_torque": 0x128, "twist_min": 0x138, "twist_max": 0x13C, "cone_max": 0x15C,
                  "plane_min": 0x178, "plane_max": 0x17C}  # fmt: skip
HINGE_LIMITS = {"max_friction_torque": 0xF0, "min_angle": 0xFC, "max_angle": 0x100}


def quaternion_rotation(x, y, z, w):
    """Rotation matrix of an (x, y, z, w) quaternion, written out here."""
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def pivot(body, translation):
    """Where a body puts a pivot given in its space (game units)."""
    return (np.array(body.position[:3]) + quaternion_rotation(*body.orientation) @ translation) * GAME_UNITS


def atom(code, payload, size):
    body = struct.pack("<H", code) + payload
    return body + bytes(size - len(body))


def transforms(pivot_a, pivot_b):
    identity = struct.pack("<12f", 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0)
    return atom(2, bytes(14) + identity + struct.pack("<4f", *pivot_a, 0) + identity + struct.pack("<4f", *pivot_b, 0), 0x90)


def built(class_name, atoms):
    return RawObject(class_name, bytes(0x20) + b"".join(atoms))
