"""Constraint data of Fallout 4 physics systems (hk_2014, 64-bit): what joins two bodies.

An hknpConstraintCinfo (classes.physics_system.ConstraintCinfo) points to an hkpConstraintData
object and names its two bodies. The object is an hkReferencedObject (16 bytes), a u64 user
data, then a run of constraint atoms, each starting with its u16 type, in an order fixed by the
class (checked here atom by atom):

- hkpRagdollConstraintData: local transforms, stabilisation, ragdoll motors, angular friction,
  twist limit, cone limit, planes limit (a cone limit atom too), ball and socket;
- hkpLimitedHingeConstraintData: local transforms, stabilisation, angular motor, angular
  friction, angular limit, 2D angular, ball and socket;
- hkpHingeConstraintData: local transforms, stabilisation, 2D angular, ball and socket;
- hkpBallAndSocketConstraintData: local translations, stabilisation, ball and socket.

The first two are checked on the skeletons' ragdolls in the corpus; the last two follow the
same atoms (their layouts are Havok's, not seen in the corpus). Local transforms: for body A
then B, an hkTransform (rotation as three columns of four floats, then the translation, four
floats): the constraint's frame in the body's space, in Havok units; the pivot is its
translation. Twist and hinge axes are the frame's first column. Limits are radians; the
friction is a torque.

The objects stay ``RawObject`` in the packfile (their motor pointers keep their fixups); this
module reads and rewrites their bytes in place, so a constraint of an unknown class or layout
costs only itself. Pointer slots inside atoms are carried as their 8 bytes.
"""

import numpy as np

from ..errors import FormatError
from ..stream import ReadStream, WriteStream

HEADER = 0x20  # hkReferencedObject, the user data, padding to the 16-aligned atoms


IDENTITY = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class Atom:
    """One atom: its u16 type, then its fields; an atom whose fields are not shown keeps them
    as bytes. Class attributes are the defaults of an atom made in code."""

    code = None
    size = None
    name = None

    def __init__(self):
        self.raw = bytes(self.size - 2)

    def sync(self, s):
        at = s.pos
        code = s.u16(self.code)
        if s.reading and code != self.code:
            raise s.error(f"constraint atom of type {code} where the {self.name} atom ({self.code}) belongs", at)
        self.fields(s)

    def fields(self, s):
        self.raw = s.raw(self.raw, self.size - 2)


class LocalTransforms(Atom):
    code, size, name = 2, 0x90, "local transforms"
    padding = bytes(14)
    transform_a = transform_b = IDENTITY

    def fields(self, s):
        self.padding = s.raw(self.padding, 14)
        self.transform_a = s.floats(self.transform_a, 16)
        self.transform_b = s.floats(self.transform_b, 16)


class LocalTranslations(Atom):
    code, size, name = 1, 0x30, "local translations"
    padding = bytes(14)
    translation_a = translation_b = (0.0, 0.0, 0.0, 0.0)

    def fields(self, s):
        self.padding = s.raw(self.padding, 14)
        self.translation_a = s.floats(self.translation_a, 4)
        self.translation_b = s.floats(self.translation_b, 4)


class Stabilization(Atom):
    code, size, name = 0x17, 0x10, "stabilization"


class RagdollMotors(Atom):
    code, size, name = 0x13, 0x60, "ragdoll motors"


class AngularMotor(Atom):
    code, size, name = 0x12, 0x28, "angular motor"


class AngularFriction(Atom):
    code, size, name = 0x11, 0x10, "angular friction"
    head = bytes(6)
    max_friction_torque = 0.0
    tail = bytes(4)

    def fields(self, s):
        self.head = s.raw(self.head, 6)
        self.max_friction_torque = s.f32(self.max_friction_torque)
        self.tail = s.raw(self.tail, 4)


class TwistLimit(Atom):
    """Also the layout of the cone limit atom (type 16): flag bytes, min and max angle, tau."""

    code, size, name = 0x0F, 0x20, "twist limit"
    head = bytes(6)
    min_angle = max_angle = 0.0
    tail = bytes(16)

    def fields(self, s):
        self.head = s.raw(self.head, 6)
        self.min_angle = s.f32(self.min_angle)
        self.max_angle = s.f32(self.max_angle)
        self.tail = s.raw(self.tail, 16)


class ConeLimit(TwistLimit):
    code, name = 0x10, "cone limit"


class AngularLimit(Atom):
    code, size, name = 0x0E, 0x10, "angular limit"
    head = bytes(2)
    min_angle = max_angle = 0.0
    tail = bytes(4)

    def fields(self, s):
        self.head = s.raw(self.head, 2)
        self.min_angle = s.f32(self.min_angle)
        self.max_angle = s.f32(self.max_angle)
        self.tail = s.raw(self.tail, 4)


class TwoDAngular(Atom):
    code, size, name = 0x0C, 0x10, "2D angular"


class BallSocket(Atom):
    code, size, name = 0x05, 0x10, "ball and socket"


# class name: (kind, [(attribute, atom class)])
LAYOUTS = {
    "hkpRagdollConstraintData": ("ragdoll", [
        ("transforms", LocalTransforms), ("stabilization", Stabilization), ("motors", RagdollMotors),
        ("friction", AngularFriction), ("twist", TwistLimit), ("cone", ConeLimit), ("planes", ConeLimit),
        ("ball_socket", BallSocket),
    ]),
    "hkpLimitedHingeConstraintData": ("limited_hinge", [
        ("transforms", LocalTransforms), ("stabilization", Stabilization), ("motor", AngularMotor),
        ("friction", AngularFriction), ("limit", AngularLimit), ("angular", TwoDAngular), ("ball_socket", BallSocket),
    ]),
    "hkpHingeConstraintData": ("hinge", [
        ("transforms", LocalTransforms), ("stabilization", Stabilization), ("angular", TwoDAngular),
        ("ball_socket", BallSocket),
    ]),
    "hkpBallAndSocketConstraintData": ("ball_and_socket", [
        ("pivots", LocalTranslations), ("stabilization", Stabilization), ("ball_socket", BallSocket),
    ]),
}  # fmt: skip

# The limits shown and edited: name -> (atom attribute, field); all radians but the torque.
LIMITS = {
    "ragdoll": {
        "twist_min": ("twist", "min_angle"), "twist_max": ("twist", "max_angle"),
        "cone_max": ("cone", "max_angle"),
        "plane_min": ("planes", "min_angle"), "plane_max": ("planes", "max_angle"),
        "max_friction_torque": ("friction", "max_friction_torque"),
    },
    "limited_hinge": {
        "min_angle": ("limit", "min_angle"), "max_angle": ("limit", "max_angle"),
        "max_friction_torque": ("friction", "max_friction_torque"),
    },
    "hinge": {},
    "ball_and_socket": {},
}  # fmt: skip


class ConstraintData:
    """The decoded bytes of one constraint data object; ``atoms`` by attribute name."""

    def __init__(self, class_name):
        if class_name not in LAYOUTS:
            raise FormatError(f"{class_name} constraints are not known")
        self.class_name = class_name
        self.kind, self.layout = LAYOUTS[class_name]
        self.header = bytes(HEADER)
        self.atoms = {}
        self.padding = b""

    @classmethod
    def from_object(cls, obj):
        """Decode a packfile object (a RawObject of a constraint data class)."""
        data = cls(obj.class_name)
        data.sync(ReadStream(obj.data))
        return data

    def sync(self, s):
        self.header = s.raw(self.header, HEADER)
        for attribute, atom_class in self.layout:
            atom = self.atoms.get(attribute) or atom_class()
            atom.sync(s)
            self.atoms[attribute] = atom
        self.padding = s.raw(self.padding, s.remaining if s.reading else len(self.padding))

    def to_bytes(self):
        s = WriteStream()
        self.sync(s)
        return bytes(s.out)

    # -- what the Blender side shows -------------------------------------------------------
    def frames(self):
        """(frame in body A, frame in body B): 4x4 matrices, translations in Havok units."""
        if "pivots" in self.atoms:
            atom = self.atoms["pivots"]
            return _frame(None, atom.translation_a), _frame(None, atom.translation_b)
        atom = self.atoms["transforms"]
        return _frame(atom.transform_a[:12], atom.transform_a[12:15]), _frame(atom.transform_b[:12], atom.transform_b[12:15])

    def set_frames(self, frame_a, frame_b):
        """Store new frames (4x4, Havok units); the unused fourth floats keep their values."""
        if "pivots" in self.atoms:
            atom = self.atoms["pivots"]
            atom.translation_a = (*map(float, frame_a[:3, 3]), atom.translation_a[3])
            atom.translation_b = (*map(float, frame_b[:3, 3]), atom.translation_b[3])
            return
        atom = self.atoms["transforms"]
        atom.transform_a = _transform(frame_a, atom.transform_a)
        atom.transform_b = _transform(frame_b, atom.transform_b)

    @property
    def limits(self):
        return {name: getattr(self.atoms[atom], field) for name, (atom, field) in LIMITS[self.kind].items()}

    def set_limit(self, name, value):
        atom, field = LIMITS[self.kind][name]
        setattr(self.atoms[atom], field, float(value))


def _frame(columns, translation):
    matrix = np.eye(4)
    if columns is not None:
        matrix[:3, :3] = np.array(columns, np.float64).reshape(3, 4)[:, :3].T
    matrix[:3, 3] = translation[:3]
    return matrix


def _transform(frame, stored):
    """An hkTransform's 16 floats for a 4x4 frame: columns, then the translation."""
    values = list(stored)
    for column in range(3):
        values[4 * column : 4 * column + 3] = map(float, frame[:3, column])
    values[12:15] = map(float, frame[:3, 3])
    return tuple(values)
