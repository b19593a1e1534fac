"""Fallout 3 / New Vegas and Skyrim Havok constraints (bhkConstraint blocks: ragdoll joints,
hinges, springs, rails and their malleable and breakable wrappers; nif.xml's layouts for
20.2.0.7). Each names its two entities (rigid bodies) and a descriptor: the frames as Vector4
rows, the limits as floats, and a motor from Fallout 3 on. Import does not show them; decoded
for their entity references (core.nif.refs) and written back as they were."""

from ..block import Block, block_class

# hkConstraintType -> (Vector4 rows; rows up to bs 16, Oblivion's order; floats; motor after bs 16)
BALL_AND_SOCKET, HINGE, LIMITED_HINGE, PRISMATIC, RAGDOLL, STIFF_SPRING, MALLEABLE = 0, 1, 2, 6, 7, 8, 13
DESCRIPTORS = {
    BALL_AND_SOCKET: (2, 2, 0, False),
    HINGE: (8, 8, 0, False),
    LIMITED_HINGE: (8, 7, 3, True),
    PRISMATIC: (8, 8, 3, True),
    RAGDOLL: (8, 6, 6, True),
    STIFF_SPRING: (2, 2, 1, False),
}
OLD_LAYOUT_BS = 16  # nif.xml's NI_BS_LTE_16: Oblivion's row order, no motor

# hkMotorType -> (floats, bools): position, velocity, spring damper
MOTORS = {0: (0, 0), 1: (6, 1), 2: (4, 2), 3: (4, 1)}


class ConstraintInfo:
    """bhkConstraintCInfo: the entity count as stored (always 2), the two entities, priority."""

    num_entities = 2
    entity_a = -1
    entity_b = -1
    priority = 1

    def sync(self, s):
        self.num_entities = s.u32(self.num_entities)
        self.entity_a = s.ref(self.entity_a)
        self.entity_b = s.ref(self.entity_b)
        self.priority = s.u32(self.priority)


class Motor:
    """bhkConstraintMotorCInfo: a type byte, then its floats and bools."""

    motor_type = 0
    floats = ()
    bools = ()

    def sync(self, s):
        self.motor_type = s.u8(self.motor_type)
        if self.motor_type not in MOTORS:
            raise s.error(f"unknown constraint motor type {self.motor_type}")
        floats, bools = MOTORS[self.motor_type]
        self.floats = s.floats(self.floats, floats)
        self.bools = tuple(s.u8(v) for v in (self.bools if not s.reading else (0,) * bools))


class Descriptor:
    """One constraint kind's data: Vector4 rows, limit floats, motor (``None`` where absent);
    a malleable constraint wraps another (``wrapped``) and adds its strength."""

    rows = ()
    limits = ()
    motor = None
    wrapped = None
    strength = 0.0

    def __init__(self, kind=RAGDOLL):
        self.kind = kind

    def sync(self, s):
        if self.kind == MALLEABLE:
            if s.reading or self.wrapped is None:
                self.wrapped = WrappedConstraint()
            self.wrapped.sync(s)
            self.strength = s.f32(self.strength)
            return
        layout = DESCRIPTORS.get(self.kind)
        if layout is None:
            raise s.error(f"unknown constraint type {self.kind}")
        rows, old_rows, floats, motor = layout
        old = s.context.bs_version <= OLD_LAYOUT_BS
        self.rows = s.floats(self.rows, 4 * (old_rows if old else rows))
        self.limits = s.floats(self.limits, floats)
        if motor and not old:
            if s.reading or self.motor is None:
                self.motor = Motor()
            self.motor.sync(s)


class WrappedConstraint:
    """bhkWrappedConstraintData (and bhkMalleableConstraintCInfo's start): the wrapped kind, its
    own entities, its descriptor."""

    kind = RAGDOLL
    info = None
    descriptor = None

    def sync(self, s):
        self.kind = s.u32(self.kind)
        if s.reading or self.info is None:
            self.info = ConstraintInfo()
        self.info.sync(s)
        if s.reading or self.descriptor is None:
            self.descriptor = Descriptor(self.kind)
        self.descriptor.sync(s)


@block_class(
    "bhkBallAndSocketConstraint",
    "bhkHingeConstraint",
    "bhkLimitedHingeConstraint",
    "bhkPrismaticConstraint",
    "bhkRagdollConstraint",
    "bhkStiffSpringConstraint",
    "bhkMalleableConstraint",
    fallback_raw=True,
)
class bhkConstraint(Block):
    KINDS = {
        "bhkBallAndSocketConstraint": BALL_AND_SOCKET,
        "bhkHingeConstraint": HINGE,
        "bhkLimitedHingeConstraint": LIMITED_HINGE,
        "bhkPrismaticConstraint": PRISMATIC,
        "bhkRagdollConstraint": RAGDOLL,
        "bhkStiffSpringConstraint": STIFF_SPRING,
        "bhkMalleableConstraint": MALLEABLE,
    }
    info = None
    descriptor = None

    def sync(self, s):
        if s.reading or self.info is None:
            self.info = ConstraintInfo()
        self.info.sync(s)
        if s.reading or self.descriptor is None:
            self.descriptor = Descriptor(self.KINDS[self.type_name])
        self.descriptor.sync(s)


@block_class("bhkBreakableConstraint", fallback_raw=True)
class bhkBreakableConstraint(Block):
    """A constraint that stops holding past ``threshold``."""

    info = None
    wrapped = None
    threshold = 0.0
    remove_when_broken = 0

    def sync(self, s):
        if s.reading or self.info is None:
            self.info = ConstraintInfo()
        self.info.sync(s)
        if s.reading or self.wrapped is None:
            self.wrapped = WrappedConstraint()
        self.wrapped.sync(s)
        self.threshold = s.f32(self.threshold)
        self.remove_when_broken = s.bool8(self.remove_when_broken)
