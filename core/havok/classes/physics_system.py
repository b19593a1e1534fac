"""hknpPhysicsSystemData and hknpRagdollData: what a bhkPhysicsSystem / bhkRagdollSystem holds.

hknpPhysicsSystemData (0x78, padded to 0x80): hkReferencedObject (16 bytes), then hkArrays of
materials (0x50), motion properties (0x40), motion cinfos (0x70), body cinfos (0x60),
constraint cinfos (0x18) and referenced objects (8-byte pointers), then the name (hkStringPtr).
hknpRagdollData adds a skeleton pointer (+0x78) and the bone-to-body map (+0x80, i32).
"""

import numpy as np

from ...errors import FormatError
from ..objects import POINTER, HavokObject, havok_class

STATIC_MOTION = 0x7FFFFFFF  # motion id of a static body
NO_BODY = 0x7FFFFFFF
# every material of the game's files holds this just-below-FLT_MAX value (0x7F7FFFEE)
GAME_MAX_CONTACT_IMPULSE = float(np.array(0x7F7FFFEE, np.uint32).view(np.float32))


def half_to_float(value):
    """hkHalf16: the upper 16 bits of a float32."""
    return float(np.array(int(value) << 16, np.uint32).view(np.float32))


def float_to_half(value):
    """Rounded to the nearest hkHalf16, as the game's files are (0.4 is 0x3ECD, not 0x3ECC)."""
    bits = int(np.array(value, np.float32).view(np.uint32))
    return min((bits + 0x8000) >> 16, 0xFFFF)


class Material:
    """hknpMaterial (0x50)."""

    size = 0x50

    def __init__(self):
        self.name = None
        self.is_exclusive = 0
        self.flags = 0
        self.trigger_type = 0
        self.trigger_manifold_tolerance = 0xFF
        self.dynamic_friction = float_to_half(0.5)
        self.static_friction = float_to_half(0.5)
        self.restitution = float_to_half(0.4)
        self.friction_combine_policy = 1
        self.restitution_combine_policy = 2
        self.welding_tolerance = 0x3D4C
        self.max_contact_impulse = GAME_MAX_CONTACT_IMPULSE
        self.fraction_of_clipped_impulse_to_apply = 1.0
        self.mass_changer_category = 0
        self.mass_changer_heavy_object_factor = float_to_half(1.0)
        self.soft_contact_force_factor = 0
        self.soft_contact_damp_factor = 0
        self.soft_contact_separation_velocity = 0
        self.surface_velocity = None
        self.disabling_collisions_distance = float_to_half(5.0)
        self.user_data = 0
        self.is_shared = 0
        self.padding = bytes(17)

    @property
    def friction(self):
        return half_to_float(self.dynamic_friction)

    @friction.setter
    def friction(self, value):
        self.dynamic_friction = self.static_friction = float_to_half(value)

    @property
    def bounciness(self):
        return half_to_float(self.restitution)

    @bounciness.setter
    def bounciness(self, value):
        self.restitution = float_to_half(value)

    def sync(self, s):
        self.name = s.string_ptr(self.name)
        self.is_exclusive = s.u32(self.is_exclusive)
        self.flags = s.i32(self.flags)
        self.trigger_type = s.u8(self.trigger_type)
        self.trigger_manifold_tolerance = s.u8(self.trigger_manifold_tolerance)
        self.dynamic_friction = s.u16(self.dynamic_friction)
        self.static_friction = s.u16(self.static_friction)
        self.restitution = s.u16(self.restitution)
        self.friction_combine_policy = s.u8(self.friction_combine_policy)
        self.restitution_combine_policy = s.u8(self.restitution_combine_policy)
        self.welding_tolerance = s.u16(self.welding_tolerance)
        self.max_contact_impulse = s.f32(self.max_contact_impulse)
        self.fraction_of_clipped_impulse_to_apply = s.f32(self.fraction_of_clipped_impulse_to_apply)
        self.mass_changer_category = s.u8(self.mass_changer_category)
        pad = s.raw(self.padding[0:1], 1)
        self.mass_changer_heavy_object_factor = s.u16(self.mass_changer_heavy_object_factor)
        self.soft_contact_force_factor = s.u16(self.soft_contact_force_factor)
        self.soft_contact_damp_factor = s.u16(self.soft_contact_damp_factor)
        self.soft_contact_separation_velocity = s.u8(self.soft_contact_separation_velocity)
        pad += s.raw(self.padding[1:4], 3)
        self.surface_velocity = s.pointer(self.surface_velocity)
        self.disabling_collisions_distance = s.u16(self.disabling_collisions_distance)
        pad += s.raw(self.padding[4:10], 6)
        self.user_data = s.u64(self.user_data)
        self.is_shared = s.u8(self.is_shared)
        self.padding = pad + s.raw(self.padding[10:], 7)


# hknpMotionProperties (0x40): no pointers, so a plain record array.
MOTION_PROPERTIES = np.dtype(
    [
        ("is_exclusive", "<u4"),
        ("flags", "<u4"),
        ("gravity_factor", "<f4"),
        ("time_factor", "<f4"),
        ("max_linear_speed", "<f4"),
        ("max_angular_speed", "<f4"),
        ("linear_damping", "<f4"),
        ("angular_damping", "<f4"),
        ("solver_stabilization_speed_threshold", "<f4"),
        ("solver_stabilization_speed_reduction", "<f4"),
        ("max_distance_squared", "<f4"),
        ("max_rotation_squared", "<f4"),
        ("inverse_block_size", "<f4"),
        ("pathing_upper_threshold", "<i2"),
        ("pathing_lower_threshold", "<i2"),
        ("deactivation", "u1", 5),  # frequency passes and four squared velocity scales
        ("padding", "V3"),
    ]
)

# hknpMotionCinfo (0x70): mass, inertia and centre of mass of one dynamic or keyframed body.
MOTION_CINFO = np.dtype(
    [
        ("motion_properties_id", "<u2"),
        ("enable_deactivation", "u1"),
        ("padding0", "V1"),
        ("inverse_mass", "<f4"),
        ("mass_factor", "<f4"),
        ("max_linear_acceleration_distance_per_step", "<f4"),
        ("max_rotation_to_prevent_tunneling", "<f4"),
        ("padding1", "V12"),
        ("inverse_inertia_local", "<f4", 4),
        ("center_of_mass_world", "<f4", 4),
        ("orientation", "<f4", 4),
        ("linear_velocity", "<f4", 4),
        ("angular_velocity", "<f4", 4),
    ]
)
assert MOTION_PROPERTIES.itemsize == 0x40 and MOTION_CINFO.itemsize == 0x70


class BodyCinfo:
    """hknpBodyCinfo (0x60)."""

    size = 0x60

    def __init__(self):
        self.shape = None
        self.reserved_body_id = NO_BODY
        self.motion_id = STATIC_MOTION
        self.quality_id = 0xFF
        self.material_id = 0
        self.collision_filter_info = 0
        self.flags = 0
        self.collision_look_ahead_distance = 0.0
        self.name = None
        self.user_data = 0
        self.position = (0.0, 0.0, 0.0, 0.0)
        self.orientation = (0.0, 0.0, 0.0, 1.0)
        self.spu_flags = 0
        self.local_frame = None
        self.padding = bytes(8)

    @property
    def layer(self):
        return self.collision_filter_info & 0xFF

    def sync(self, s):
        self.shape = s.pointer(self.shape)
        self.reserved_body_id = s.u32(self.reserved_body_id)
        self.motion_id = s.u32(self.motion_id)
        self.quality_id = s.u8(self.quality_id)
        pad = s.raw(self.padding[0:1], 1)
        self.material_id = s.u16(self.material_id)
        self.collision_filter_info = s.u32(self.collision_filter_info)
        self.flags = s.i32(self.flags)
        self.collision_look_ahead_distance = s.f32(self.collision_look_ahead_distance)
        self.name = s.string_ptr(self.name)
        self.user_data = s.u64(self.user_data)
        self.position = s.vec4(self.position)
        self.orientation = s.vec4(self.orientation)
        self.spu_flags = s.u8(self.spu_flags)
        self.padding = pad + s.raw(self.padding[1:], 7)
        self.local_frame = s.pointer(self.local_frame)


class ConstraintCinfo:
    """hknpConstraintCinfo (0x18): the constraint data object and the two bodies it joins."""

    size = 0x18

    def __init__(self):
        self.constraint_data = None
        self.body_a = 0
        self.body_b = 0
        self.flags = 0
        self.padding = bytes(7)

    def sync(self, s):
        self.constraint_data = s.pointer(self.constraint_data)
        self.body_a = s.u32(self.body_a)
        self.body_b = s.u32(self.body_b)
        self.flags = s.u8(self.flags)
        self.padding = s.raw(self.padding, 7)


@havok_class("hknpPhysicsSystemData")
class PhysicsSystemData(HavokObject):
    kind = "physics"

    def __init__(self):
        self.reference = bytes(16)  # hkReferencedObject: vtable slot and reference count
        self.materials = []
        self.motion_properties = np.zeros(0, MOTION_PROPERTIES)
        self.motion_cinfos = np.zeros(0, MOTION_CINFO)
        self.bodies = []
        self.constraints = []
        self.referenced_objects = []
        self.name = None

    def motion_of(self, body):
        """The body's motion cinfo (a record of ``motion_cinfos``), None for a static body."""
        if body.motion_id == STATIC_MOTION:
            return None
        if body.motion_id >= len(self.motion_cinfos):
            raise FormatError(f"body motion {body.motion_id} but only {len(self.motion_cinfos)} motion cinfos")
        return self.motion_cinfos[body.motion_id]

    def motion_type(self, body):
        """"static", "keyframed" (a motion of infinite mass) or "dynamic"."""
        motion = self.motion_of(body)
        if motion is None:
            return "static"
        return "keyframed" if motion["inverse_mass"] == 0 else "dynamic"

    def mass(self, body):
        motion = self.motion_of(body)
        if motion is None or motion["inverse_mass"] == 0:
            return 0.0
        return 1.0 / float(motion["inverse_mass"])

    def material_of(self, body):
        if body.material_id >= len(self.materials):
            raise FormatError(f"body material {body.material_id} but only {len(self.materials)} materials")
        return self.materials[body.material_id]

    def _check_bodies(self, s, at):
        for number, body in enumerate(self.bodies):
            if body.material_id >= len(self.materials):
                raise s.error(f"body {number}: material {body.material_id} of {len(self.materials)}", at)
            if body.motion_id != STATIC_MOTION and body.motion_id >= len(self.motion_cinfos):
                raise s.error(f"body {number}: motion {body.motion_id} of {len(self.motion_cinfos)}", at)

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.materials = s.hk_array(self.materials, Material, what="materials")
        self.motion_properties = s.hk_array(self.motion_properties, MOTION_PROPERTIES, what="motion properties")
        self.motion_cinfos = s.hk_array(self.motion_cinfos, MOTION_CINFO, what="motion cinfos")
        bodies_at = s.pos
        self.bodies = s.hk_array(self.bodies, BodyCinfo, what="body cinfos")
        if s.reading:
            self._check_bodies(s, bodies_at)
        self.constraints = s.hk_array(self.constraints, ConstraintCinfo, what="constraint cinfos")
        self.referenced_objects = s.hk_array(self.referenced_objects, POINTER, what="referenced objects")
        self.name = s.string_ptr(self.name)


@havok_class("hknpRagdollData")
class RagdollData(PhysicsSystemData):
    kind = "ragdoll"

    def __init__(self):
        super().__init__()
        self.skeleton = None
        self.bone_to_body = np.zeros(0, "<i4")

    def sync(self, s):
        super().sync(s)
        self.skeleton = s.pointer(self.skeleton)
        self.bone_to_body = s.hk_array(self.bone_to_body, np.dtype("<i4"), what="bone to body map")
