"""The abstract bases every scene-graph block shares: NiObjectNET and NiAVObject."""

from .. import versions
from ..block import Block

IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


class NiObjectNET(Block):
    """Name, extra data list and controller."""

    name = None
    extra_data = ()
    controller = -1

    def sync(self, s):
        self.name = s.string(self.name)
        self.extra_data = s.ref_list(self.extra_data)
        self.controller = s.ref(self.controller)


class NiAVObject(NiObjectNET):
    """A placed object: flags and transform. ``rotation`` holds the nine floats in file order,
    the rows of R (world = T + R * s * v)."""

    flags = 0xE
    translation = (0.0, 0.0, 0.0)
    rotation = IDENTITY
    scale = 1.0
    properties = ()
    collision_object = -1

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        self.flags = s.u32(self.flags) if bs > 26 else s.u16(self.flags)
        self.translation = s.vec3(self.translation)
        self.rotation = s.mat33(self.rotation)
        self.scale = s.f32(self.scale)
        if versions.up_to_fo3(bs):
            self.properties = s.ref_list(self.properties)
        self.collision_object = s.ref(self.collision_object)
