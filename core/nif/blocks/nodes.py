"""NiNode and every node type deriving from it in nif.xml for 20.2.0.7 (FO3/FNV to FO76), and
the data blocks their fields point at (NiLODNode's LOD data, BSMultiBoundNode's bound)."""

import numpy as np

from ...errors import FormatError
from .. import versions
from ..block import Block, block_class
from .objects import IDENTITY, NiAVObject


# No fields of their own. NiBone and CsNiNode carry no version limit in nif.xml; RootCollisionNode,
# NiBSAnimationNode and NiBSParticleNode are older Bethesda nodes nif.xml dates before 20.2.0.7,
# read as nodes too so a file holding one still shows its children.
@block_class(
    "NiNode", "BSFadeNode", "BSLeafAnimNode", "RootCollisionNode", "NiBone", "CsNiNode", "NiBSAnimationNode",
    "NiBSParticleNode",
)
class NiNode(NiAVObject):
    children = ()
    effects = ()

    def sync(self, s):
        super().sync(s)
        self.children = s.ref_list(self.children)
        if versions.before_fo4(s.context.bs_version):
            self.effects = s.ref_list(self.effects)


@block_class("BSValueNode")
class BSValueNode(NiNode):
    value = 0
    value_flags = 0

    def sync(self, s):
        super().sync(s)
        self.value = s.u32(self.value)
        self.value_flags = s.u8(self.value_flags)


@block_class("BSOrderedNode")
class BSOrderedNode(NiNode):
    alpha_sort_bound = (0.0, 0.0, 0.0, 0.0)
    static_bound = 1

    def sync(self, s):
        super().sync(s)
        self.alpha_sort_bound = s.vec4(self.alpha_sort_bound)
        self.static_bound = s.bool8(self.static_bound)


@block_class("BSMultiBoundNode")
class BSMultiBoundNode(NiNode):
    multi_bound = -1
    culling_mode = 0

    def sync(self, s):
        super().sync(s)
        self.multi_bound = s.ref(self.multi_bound)
        if versions.skyrim_or_later(s.context.bs_version):
            self.culling_mode = s.u32(self.culling_mode)


class DistantObjectInstance:
    """BSDistantObjectInstance: a resource (file and folder hashes, extension) placed by
    ``transforms`` (4x4 matrices), with 12-byte records of unknown meaning."""

    def __init__(self, file_hash=0, extension=b"\0\0\0\0", directory_hash=0, unknown_data=(), transforms=()):
        self.file_hash = file_hash
        self.extension = extension
        self.directory_hash = directory_hash
        self.unknown_data = unknown_data
        self.transforms = transforms

    def sync(self, s):
        self.file_hash = s.u32(self.file_hash)
        self.extension = s.raw(self.extension, 4)
        self.directory_hash = s.u32(self.directory_hash)
        unknown = np.dtype([("unknown_1", s.dtype("u8")), ("unknown_2", s.dtype("u4"))])
        self.unknown_data = s.counted_array(self.unknown_data, unknown, what="distant object data")
        matrix = np.dtype((s.dtype("f4"), (4, 4)))
        self.transforms = s.counted_array(self.transforms, matrix, what="instance transforms")


def _shader_texture_array(s, value):
    """BSShaderTextureArray as (unknown byte, [texture array: [texture names]])."""
    unknown, arrays = value if value is not None else (None, None)
    unknown = s.u8(unknown)
    count = s.count(len(arrays or ()), item_size=4, what="texture arrays")

    def names(value):
        return s.repeat(value, s.count(len(value or ()), item_size=4, what="texture names"), s.sized_string)

    return (unknown, s.repeat(arrays, count, names))


@block_class("BSDistantObjectInstancedNode")
class BSDistantObjectInstancedNode(BSMultiBoundNode):
    """Fallout 76: instances of distant objects, and three shader texture arrays."""

    instances = ()
    texture_arrays = ((1, ()), (1, ()), (1, ()))

    def sync(self, s):
        super().sync(s)
        count = s.count(len(self.instances), item_size=20, what="distant object instances")
        self.instances = s.items(self.instances, DistantObjectInstance, count, min_size=20)
        if not s.reading and len(self.texture_arrays) != 3:
            raise FormatError(f"{len(self.texture_arrays)} shader texture arrays where 3 are stored")
        self.texture_arrays = s.repeat(self.texture_arrays, 3, lambda value: _shader_texture_array(s, value))


@block_class("BSRangeNode", "BSBlastNode", "BSDamageStage", "BSDebrisNode")
class BSRangeNode(NiNode):
    min = 0
    max = 0
    current = 0

    def sync(self, s):
        super().sync(s)
        self.min = s.u8(self.min)
        self.max = s.u8(self.max)
        self.current = s.u8(self.current)


@block_class("BSTreeNode")
class BSTreeNode(NiNode):
    bones_1 = ()
    bones_2 = ()

    def sync(self, s):
        super().sync(s)
        self.bones_1 = s.ref_list(self.bones_1)
        self.bones_2 = s.ref_list(self.bones_2)


@block_class("NiBillboardNode")
class NiBillboardNode(NiNode):
    """Turned to face the camera (``billboard_mode``: 0 always face camera, 1 rotate about up,
    2 rigid face camera, 3 always face centre, ...)."""

    billboard_mode = 0

    def sync(self, s):
        super().sync(s)
        self.billboard_mode = s.u16(self.billboard_mode)


@block_class("NiSwitchNode", "NiLODNode")
class NiSwitchNode(NiNode):
    """Draws one child (``index``); NiLODNode picks it by distance through its LOD data."""

    switch_flags = 3
    index = 0
    lod_level_data = -1

    def sync(self, s):
        super().sync(s)
        self.switch_flags = s.u16(self.switch_flags)
        self.index = s.u32(self.index)
        if self.type_name == "NiLODNode":
            self.lod_level_data = s.ref(self.lod_level_data)


@block_class("NiSortAdjustNode")
class NiSortAdjustNode(NiNode):
    sorting_mode = 0

    def sync(self, s):
        super().sync(s)
        self.sorting_mode = s.u32(self.sorting_mode)


@block_class("BSMasterParticleSystem")
class BSMasterParticleSystem(NiNode):
    max_emitter_objects = 20
    particle_systems = ()

    def sync(self, s):
        super().sync(s)
        self.max_emitter_objects = s.u16(self.max_emitter_objects)
        self.particle_systems = s.ref_list(self.particle_systems)


@block_class("NiRoomGroup")
class NiRoomGroup(NiNode):
    """A set of connected rooms (Gamebryo's portal culling). ``shell`` and ``rooms`` are
    pointers, walked as references so renumbering keeps them."""

    shell = -1
    rooms = ()

    def sync(self, s):
        super().sync(s)
        self.shell = s.ref(self.shell)
        self.rooms = s.ref_list(self.rooms)


@block_class("NiRoom")
class NiRoom(NiNode):
    """A cell of the portal culling: its wall planes (normal, constant) and pointers to the
    portals into and out of it and to the objects it holds."""

    wall_planes = ()
    in_portals = ()
    out_portals = ()
    fixtures = ()

    def sync(self, s):
        super().sync(s)
        self.wall_planes = s.counted_array(self.wall_planes, np.dtype((s.dtype("f4"), (4,))), what="wall planes")
        self.in_portals = s.ref_list(self.in_portals)
        self.out_portals = s.ref_list(self.out_portals)
        self.fixtures = s.ref_list(self.fixtures)


# -- what node fields point at -------------------------------------------------------------


@block_class("NiRangeLODData")
class NiRangeLODData(Block):
    """NiLODNode's child choice by distance: ``levels`` holds (near, far) per child."""

    center = (0.0, 0.0, 0.0)
    levels = ()

    def sync(self, s):
        self.center = s.vec3(self.center)
        self.levels = s.counted_array(self.levels, np.dtype((s.dtype("f4"), (2,))), what="LOD ranges")


@block_class("NiScreenLODData")
class NiScreenLODData(Block):
    """NiLODNode's child choice by the screen share of a bound (centre and radius each)."""

    bound = (0.0, 0.0, 0.0, 0.0)
    world_bound = (0.0, 0.0, 0.0, 0.0)
    proportions = ()

    def sync(self, s):
        self.bound = s.vec4(self.bound)
        self.world_bound = s.vec4(self.world_bound)
        self.proportions = s.counted_array(self.proportions, "f4", what="screen proportions")


@block_class("BSMultiBound")
class BSMultiBound(Block):
    data = -1

    def sync(self, s):
        self.data = s.ref(self.data)


@block_class("BSMultiBoundOBB")
class BSMultiBoundOBB(Block):
    center = (0.0, 0.0, 0.0)
    size = (0.0, 0.0, 0.0)
    rotation = IDENTITY

    def sync(self, s):
        self.center = s.vec3(self.center)
        self.size = s.vec3(self.size)
        self.rotation = s.mat33(self.rotation)


@block_class("BSMultiBoundAABB")
class BSMultiBoundAABB(Block):
    position = (0.0, 0.0, 0.0)
    extent = (0.0, 0.0, 0.0)

    def sync(self, s):
        self.position = s.vec3(self.position)
        self.extent = s.vec3(self.extent)


@block_class("BSMultiBoundSphere")
class BSMultiBoundSphere(Block):
    center = (0.0, 0.0, 0.0)
    radius = 0.0

    def sync(self, s):
        self.center = s.vec3(self.center)
        self.radius = s.f32(self.radius)
