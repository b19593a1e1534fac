"""Fallout 3 / New Vegas Havok collision (bs <= 34): bhkCollisionObject, bhkRigidBody(T) with its
550/660 construction info, and bhkConvexVerticesShape. Unused padding is kept as its bytes."""

import numpy as np

from ...errors import FormatError
from ..block import Block, block_class

# hkWorldObjectCinfo::Property: data, size, capacity and flags.
EMPTY_PROPERTY = (0, 0, 0x80000000)


def sync_property(s, value):
    return tuple(s.u32(v) for v in value)


def sync_filter(s, value):
    """HavokFilter: layer (u8), flags and part number (u8), group (u16)."""
    layer, flags, group = value
    return (s.u8(layer), s.u8(flags), s.u16(group))


@block_class("bhkCollisionObject")
class bhkCollisionObject(Block):
    target = -1
    flags = 1
    body = -1

    def sync(self, s):
        self.target = s.ref(self.target)
        self.flags = s.u16(self.flags)
        self.body = s.ref(self.body)


@block_class("bhkRigidBody", "bhkRigidBodyT")
class bhkRigidBody(Block):
    """bhkWorldObject (shape, filter, world object info), bhkEntity (response, callback delay),
    bhkRigidBodyCInfo550_660, constraints and body flags."""

    shape = -1
    havok_filter = (0, 0, 0)
    unused_world_1 = b"\0" * 4
    broad_phase = 1
    unused_world_2 = b"\0" * 3
    world_property = EMPTY_PROPERTY
    collision_response = 1
    unused_entity = 0
    callback_delay = 0xFFFF
    unused_1 = b"\0" * 4
    body_filter = (0, 0, 0)
    unused_2 = b"\0" * 4
    body_response = 1
    unused_3 = 0
    body_callback_delay = 0xFFFF
    unused_4 = b"\0" * 4
    translation = (0.0, 0.0, 0.0, 0.0)
    rotation = (0.0, 0.0, 0.0, 1.0)  # hkQuaternion: x, y, z, w
    linear_velocity = (0.0, 0.0, 0.0, 0.0)
    angular_velocity = (0.0, 0.0, 0.0, 0.0)
    inertia = (0.0,) * 12  # hkMatrix3: three rows of four
    center = (0.0, 0.0, 0.0, 0.0)
    mass = 1.0
    linear_damping = 0.1
    angular_damping = 0.05
    friction = 0.5
    restitution = 0.4
    max_linear_velocity = 104.4
    max_angular_velocity = 31.57
    penetration_depth = 0.15
    motion_system = 1
    deactivator_type = 1
    solver_deactivation = 1
    quality_type = 1
    unused_5 = b"\0" * 12
    constraints = ()
    body_flags = 0
    later_info = b""  # bs > 34: the later construction info and what follows, not decoded
    later_big_endian = False

    def sync(self, s):
        self.shape = s.ref(self.shape)
        self.havok_filter = sync_filter(s, self.havok_filter)
        self.unused_world_1 = s.raw(self.unused_world_1, 4)
        self.broad_phase = s.u8(self.broad_phase)
        self.unused_world_2 = s.raw(self.unused_world_2, 3)
        self.world_property = sync_property(s, self.world_property)
        self.collision_response = s.u8(self.collision_response)
        self.unused_entity = s.u8(self.unused_entity)
        self.callback_delay = s.u16(self.callback_delay)
        if s.context.bs_version > 34:
            self._sync_later_info(s)
            return
        self.unused_1 = s.raw(self.unused_1, 4)
        self.body_filter = sync_filter(s, self.body_filter)
        self.unused_2 = s.raw(self.unused_2, 4)
        self.body_response = s.u8(self.body_response)
        self.unused_3 = s.u8(self.unused_3)
        self.body_callback_delay = s.u16(self.body_callback_delay)
        self.unused_4 = s.raw(self.unused_4, 4)
        self.translation = s.vec4(self.translation)
        self.rotation = s.vec4(self.rotation)
        self.linear_velocity = s.vec4(self.linear_velocity)
        self.angular_velocity = s.vec4(self.angular_velocity)
        self.inertia = s.floats(self.inertia, 12)
        self.center = s.vec4(self.center)
        self.mass = s.f32(self.mass)
        self.linear_damping = s.f32(self.linear_damping)
        self.angular_damping = s.f32(self.angular_damping)
        self.friction = s.f32(self.friction)
        self.restitution = s.f32(self.restitution)
        self.max_linear_velocity = s.f32(self.max_linear_velocity)
        self.max_angular_velocity = s.f32(self.max_angular_velocity)
        self.penetration_depth = s.f32(self.penetration_depth)
        self.motion_system = s.u8(self.motion_system)
        self.deactivator_type = s.u8(self.deactivator_type)
        self.solver_deactivation = s.u8(self.solver_deactivation)
        self.quality_type = s.u8(self.quality_type)
        self.unused_5 = s.raw(self.unused_5, 12)
        self.constraints = s.ref_list(self.constraints)
        self.body_flags = s.u32(self.body_flags)

    def _sync_later_info(self, s):
        if s.reading:
            self.later_big_endian = s.big_endian
        elif s.big_endian != self.later_big_endian:
            raise FormatError(f"cannot change the byte order of a bs {s.context.bs_version} {self.type_name}: only the FO3/FNV layout is decoded")
        self.later_info = s.raw(self.later_info, s.remaining if s.reading else len(self.later_info))


@block_class("bhkConvexVerticesShape")
class bhkConvexVerticesShape(Block):
    """Vertices (w = 0) and half spaces (normal, -distance), both as four floats."""

    material = 0
    radius = 0.05
    vertices_property = EMPTY_PROPERTY
    normals_property = EMPTY_PROPERTY
    vertices = ()
    normals = ()

    def sync(self, s):
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.vertices_property = sync_property(s, self.vertices_property)
        self.normals_property = sync_property(s, self.normals_property)
        vec4 = np.dtype((s.dtype("f4"), (4,)))
        self.vertices = s.counted_array(self.vertices, vec4, what="vertices")
        self.normals = s.counted_array(self.normals, vec4, what="normals")
