"""Fallout 3 / New Vegas (bs <= 34) and Skyrim LE / SE (bs 83 / 100) Havok collision:
bhkCollisionObject (and the skeletons' bhkBlendCollisionObject), bhkRigidBody(T) with its 550/660
or (Skyrim) 2010 construction info, and the shapes a body holds (nif.xml's layouts for 20.2.0.7): convex
primitives (sphere, box, capsule, convex vertices), shape lists, transforms, triangle meshes
(bhkNiTriStripsShape, bhkPackedNiTriStripsShape + hkPackedNiTriStripsData) and the MOPP tree
around a packed mesh (Skyrim's compressed meshes: compressed_mesh.py). Unused padding is kept as
its bytes. Lengths and positions are in Havok units: one is 6.999125 game units in FO3/FNV
(FORMAT-NOTES section 8) and 69.99125 in Skyrim (``havok_scale``; the corpus files' collision
bounds meet their meshes at that factor, tests/test_skyrim_havok.py)."""

import numpy as np

from ...errors import FormatError
from .. import versions
from ..block import Block, block_class

GAME_UNITS = 6.999125  # game units per Havok unit in FO3/FNV (FORMAT-NOTES section 8)
SKYRIM_GAME_UNITS = 69.99125  # in Skyrim LE and SE, as in FO4


def havok_scale(bs_version):
    """Game units per Havok unit in a file of this bs version."""
    return GAME_UNITS if versions.up_to_fo3(bs_version) else SKYRIM_GAME_UNITS


def uses_bhk_bodies(bs_version):
    """Whether a file's collision is bhkCollisionObject / bhkRigidBody blocks (FO3 to Skyrim SE)."""
    return versions.before_fo4(bs_version)  # from FO4 on: a bhkNPCollisionObject holding a packfile

# hkWorldObjectCinfo::Property: data, size, capacity and flags.
EMPTY_PROPERTY = (0, 0, 0x80000000)


def sync_property(s, value):
    return tuple(s.u32(v) for v in value)


def sync_filter(s, value):
    """HavokFilter: layer (u8), flags and part number (u8), group (u16)."""
    layer, flags, group = value
    return (s.u8(layer), s.u8(flags), s.u16(group))


class bhkWorldObject(Block):
    """What rigid bodies and phantoms start with: shape, filter, construction info (padding kept
    as its bytes, broad phase type, property)."""

    shape = -1
    havok_filter = (0, 0, 0)
    unused_world_1 = b"\0" * 4
    broad_phase = 1
    unused_world_2 = b"\0" * 3
    world_property = EMPTY_PROPERTY

    def sync(self, s):
        self.shape = s.ref(self.shape)
        self.havok_filter = sync_filter(s, self.havok_filter)
        self.unused_world_1 = s.raw(self.unused_world_1, 4)
        self.broad_phase = s.u8(self.broad_phase)
        self.unused_world_2 = s.raw(self.unused_world_2, 3)
        self.world_property = sync_property(s, self.world_property)


# Phantoms' (bhkPCollisionObject, bhkSPCollisionObject) have a phantom for a body (legacy_constraints).
@block_class("bhkCollisionObject", "bhkPCollisionObject", "bhkSPCollisionObject")
class bhkCollisionObject(Block):
    target = -1
    flags = 1
    body = -1

    def sync(self, s):
        self.target = s.ref(self.target)
        self.flags = s.u16(self.flags)
        self.body = s.ref(self.body)


@block_class("bhkBlendCollisionObject")
class bhkBlendCollisionObject(bhkCollisionObject):
    """A skeleton bone's collision (ragdoll): a bhkCollisionObject with blending gains."""

    heir_gain = 1.0
    vel_gain = 1.0
    unknown_floats = ()  # bs < 9 only

    def sync(self, s):
        super().sync(s)
        self.heir_gain = s.f32(self.heir_gain)
        self.vel_gain = s.f32(self.vel_gain)
        if versions.oblivion(s.context.bs_version):
            self.unknown_floats = s.floats(self.unknown_floats, 2)


@block_class("bhkRigidBody", "bhkRigidBodyT")
class bhkRigidBody(bhkWorldObject):
    """bhkWorldObject (shape, filter, world object info), bhkEntity (response, callback delay),
    bhkRigidBodyCInfo550_660 (FO3/FNV) or bhkRigidBodyCInfo2010 (Skyrim: the ``unknown_int_1``,
    time and gravity factor, rolling friction and the four bytes before the padding more),
    constraints and body flags (u16 from bs 76)."""

    collision_response = 1
    unused_entity = 0
    callback_delay = 0xFFFF
    unused_1 = b"\0" * 4
    body_filter = (0, 0, 0)
    unused_2 = b"\0" * 4
    unknown_int_1 = 0
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
    time_factor = 1.0
    gravity_factor = 1.0
    friction = 0.5
    rolling_friction = 0.0
    restitution = 0.4
    max_linear_velocity = 104.4
    max_angular_velocity = 31.57
    penetration_depth = 0.15
    motion_system = 1
    deactivator_type = 1
    solver_deactivation = 1
    quality_type = 1
    auto_remove_level = 0
    response_modifier_flags = 0
    shape_keys_in_contact = 3
    force_collided_onto_ppu = 0
    unused_5 = b"\0" * 12
    constraints = ()
    body_flags = 0
    later_info = b""  # bs 35-82 and FO4's: the construction info and what follows, not decoded
    later_big_endian = False

    def sync(self, s):
        super().sync(s)
        self.collision_response = s.u8(self.collision_response)
        self.unused_entity = s.u8(self.unused_entity)
        self.callback_delay = s.u16(self.callback_delay)
        bs = s.context.bs_version
        if versions.between_fo3_and_skyrim(bs) or versions.fo4_or_later(bs):
            self._sync_later_info(s)
            return
        skyrim = versions.skyrim_or_later(bs)
        self.unused_1 = s.raw(self.unused_1, 4)
        self.body_filter = sync_filter(s, self.body_filter)
        self.unused_2 = s.raw(self.unused_2, 4)
        if skyrim:
            self.unknown_int_1 = s.u32(self.unknown_int_1)
        self.body_response = s.u8(self.body_response)
        self.unused_3 = s.u8(self.unused_3)
        self.body_callback_delay = s.u16(self.body_callback_delay)
        if not skyrim:  # 2010 has no padding here
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
        if skyrim:
            self.time_factor = s.f32(self.time_factor)
            self.gravity_factor = s.f32(self.gravity_factor)
        self.friction = s.f32(self.friction)
        if skyrim:
            self.rolling_friction = s.f32(self.rolling_friction)
        self.restitution = s.f32(self.restitution)
        self.max_linear_velocity = s.f32(self.max_linear_velocity)
        self.max_angular_velocity = s.f32(self.max_angular_velocity)
        self.penetration_depth = s.f32(self.penetration_depth)
        self.motion_system = s.u8(self.motion_system)
        self.deactivator_type = s.u8(self.deactivator_type)
        self.solver_deactivation = s.u8(self.solver_deactivation)
        self.quality_type = s.u8(self.quality_type)
        if skyrim:
            self.auto_remove_level = s.u8(self.auto_remove_level)
            self.response_modifier_flags = s.u8(self.response_modifier_flags)
            self.shape_keys_in_contact = s.u8(self.shape_keys_in_contact)
            self.force_collided_onto_ppu = s.bool8(self.force_collided_onto_ppu)
        self.unused_5 = s.raw(self.unused_5, 12)
        self.constraints = s.ref_list(self.constraints)
        self.body_flags = s.u16(self.body_flags) if bs >= 76 else s.u32(self.body_flags)

    def _sync_later_info(self, s):
        if s.reading:
            self.later_big_endian = s.big_endian
        elif s.big_endian != self.later_big_endian:
            raise FormatError(f"cannot change the byte order of a bs {s.context.bs_version} {self.type_name}: only the FO3/FNV and Skyrim layouts are decoded")
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


def filter_dtype(s):
    """HavokFilter as a numpy record (lists of filters)."""
    return np.dtype([("layer", "u1"), ("flags", "u1"), ("group", s.dtype("u2"))])


def sync_transform(s, value):
    """A Matrix44 as Havok stores an hkTransform: the rotation's three columns, then the
    translation, each four floats. Kept as the 16 floats in file order; ``transform_matrix``
    gives the 4x4 matrix."""
    return s.floats(value, 16)


def transform_matrix(values):
    """The 4x4 matrix (column vectors, translation in the last column) of stored Matrix44 floats."""
    matrix = np.array(values, np.float64).reshape(4, 4).T
    matrix[3] = (0.0, 0.0, 0.0, 1.0)
    return matrix


def transform_values(matrix, stored=(0.0,) * 16):
    """Matrix44 floats of a 4x4 matrix; the w entries of the columns keep the stored ones."""
    columns = np.array(matrix, np.float64).T.copy()
    columns[:, 3] = np.array(stored, np.float64).reshape(4, 4)[:, 3]
    return tuple(float(v) for v in columns.reshape(-1))


IDENTITY_TRANSFORM = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)


@block_class("bhkSphereShape")
class bhkSphereShape(Block):
    """A sphere about the origin of its space; ``radius`` is its size."""

    material = 0
    radius = 0.5

    def sync(self, s):
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)


@block_class("bhkBoxShape")
class bhkBoxShape(Block):
    """A box about the origin: ``dimensions`` are its half extents; ``radius`` a shell around it."""

    material = 0
    radius = 0.05
    unused_1 = b"\0" * 8
    dimensions = (0.5, 0.5, 0.5)
    unused_float = 0.0

    def sync(self, s):
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.unused_1 = s.raw(self.unused_1, 8)
        self.dimensions = s.vec3(self.dimensions)
        self.unused_float = s.f32(self.unused_float)


@block_class("bhkCapsuleShape")
class bhkCapsuleShape(Block):
    """The segment ``first``-``second`` grown by ``radius`` (the per-end radii repeat it)."""

    material = 0
    radius = 0.5
    unused_1 = b"\0" * 8
    first = (0.0, 0.0, 0.0)
    first_radius = 0.5
    second = (0.0, 0.0, 1.0)
    second_radius = 0.5

    def sync(self, s):
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.unused_1 = s.raw(self.unused_1, 8)
        self.first = s.vec3(self.first)
        self.first_radius = s.f32(self.first_radius)
        self.second = s.vec3(self.second)
        self.second_radius = s.f32(self.second_radius)


@block_class("bhkTransformShape", "bhkConvexTransformShape")
class bhkTransformShape(Block):
    """``shape`` placed by ``transform`` (see sync_transform)."""

    shape = -1
    material = 0
    radius = 0.0
    unused_1 = b"\0" * 8
    transform = IDENTITY_TRANSFORM

    def sync(self, s):
        self.shape = s.ref(self.shape)
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.unused_1 = s.raw(self.unused_1, 8)
        self.transform = sync_transform(s, self.transform)

    @property
    def matrix(self):
        return transform_matrix(self.transform)


@block_class("bhkListShape")
class bhkListShape(Block):
    sub_shapes = ()
    material = 0
    child_shape_property = EMPTY_PROPERTY
    child_filter_property = EMPTY_PROPERTY
    filters = ()  # HavokFilter per sub shape, zeroed in the game's files

    def sync(self, s):
        self.sub_shapes = s.ref_list(self.sub_shapes)
        self.material = s.u32(self.material)
        self.child_shape_property = sync_property(s, self.child_shape_property)
        self.child_filter_property = sync_property(s, self.child_filter_property)
        self.filters = s.counted_array(self.filters, filter_dtype(s), what="filters")


@block_class("bhkConvexListShape")
class bhkConvexListShape(Block):
    sub_shapes = ()
    material = 0
    radius = 0.0
    unknown_int = 0
    unknown_float = 0.0
    child_shape_property = EMPTY_PROPERTY
    use_cached_aabb = 0
    closest_point_min_distance = 0.0

    def sync(self, s):
        self.sub_shapes = s.ref_list(self.sub_shapes)
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.unknown_int = s.u32(self.unknown_int)
        self.unknown_float = s.f32(self.unknown_float)
        self.child_shape_property = sync_property(s, self.child_shape_property)
        self.use_cached_aabb = s.bool8(self.use_cached_aabb)
        self.closest_point_min_distance = s.f32(self.closest_point_min_distance)


@block_class("bhkNiTriStripsShape")
class bhkNiTriStripsShape(Block):
    """Triangles of NiTriStripsData blocks (``strips_data``), scaled by ``scale``."""

    material = 0
    radius = 0.1
    unused_1 = b"\0" * 20
    grow_by = 1
    scale = (1.0, 1.0, 1.0, 0.0)
    strips_data = ()
    filters = ()

    def sync(self, s):
        self.material = s.u32(self.material)
        self.radius = s.f32(self.radius)
        self.unused_1 = s.raw(self.unused_1, 20)
        self.grow_by = s.u32(self.grow_by)
        self.scale = s.vec4(self.scale)
        self.strips_data = s.ref_list(self.strips_data)
        self.filters = s.counted_array(self.filters, filter_dtype(s), what="filters")


@block_class("bhkPackedNiTriStripsShape")
class bhkPackedNiTriStripsShape(Block):
    user_data = 0
    unused_1 = b"\0" * 4
    radius = 0.1
    unused_2 = b"\0" * 4
    scale = (1.0, 1.0, 1.0, 0.0)
    radius_copy = 0.1
    scale_copy = (1.0, 1.0, 1.0, 0.0)
    data = -1

    def sync(self, s):
        self.user_data = s.u32(self.user_data)
        self.unused_1 = s.raw(self.unused_1, 4)
        self.radius = s.f32(self.radius)
        self.unused_2 = s.raw(self.unused_2, 4)
        self.scale = s.vec4(self.scale)
        self.radius_copy = s.f32(self.radius_copy)
        self.scale_copy = s.vec4(self.scale_copy)
        self.data = s.ref(self.data)


def sub_shape_dtype(s):
    """hkSubPartData: the filter, how many of the vertices (in order) it holds, its material."""
    return np.dtype([("layer", "u1"), ("flags", "u1"), ("group", s.dtype("u2")),
                     ("num_vertices", s.dtype("u4")), ("material", s.dtype("u4"))])


@block_class("hkPackedNiTriStripsData")
class hkPackedNiTriStripsData(Block):
    """``triangles``: (n, 4) u16, three vertex indices and the welding info. ``vertices``: (n, 3)
    float32, or half floats when ``compressed`` (Xbox 360 files, FORMAT-NOTES section 7)."""

    triangles = np.zeros((0, 4), np.uint16)
    compressed = 0
    vertices = np.zeros((0, 3), np.float32)
    sub_shapes = ()

    def sync(self, s):
        self.triangles = s.counted_array(self.triangles, np.dtype((s.dtype("u2"), (4,))), what="triangles")
        n = s.count(len(self.vertices), item_size=6, what="vertices")
        self.compressed = s.bool8(self.compressed)
        code = "f2" if self.compressed else "f4"
        self.vertices = s.array(self.vertices, np.dtype((s.dtype(code), (3,))), n)
        self.sub_shapes = s.counted_array(self.sub_shapes, sub_shape_dtype(s), kind="u16", what="sub shapes")

    def decompress(self):
        """Store the vertices as float32 (what PC files hold)."""
        self.vertices = np.asarray(self.vertices, np.float32)
        self.compressed = 0


@block_class("bhkMoppBvTreeShape")
class bhkMoppBvTreeShape(Block):
    """A shape collection with its MOPP code: a Havok-proprietary bounding volume tree over the
    collection's triangles, kept as its bytes (``offset``: the tree's origin and quantisation)."""

    shape = -1
    unused_1 = b"\0" * 12
    scale = 1.0
    offset = (0.0, 0.0, 0.0, 0.0)
    build_type = 1  # bs > 34 only
    code = b""

    def sync(self, s):
        self.shape = s.ref(self.shape)
        self.unused_1 = s.raw(self.unused_1, 12)
        self.scale = s.f32(self.scale)
        size = s.count(len(self.code), what="MOPP code")
        self.offset = s.vec4(self.offset)
        if versions.after_fo3(s.context.bs_version):
            self.build_type = s.u8(self.build_type)
        self.code = s.raw(self.code, size)
