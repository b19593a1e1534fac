"""NiCamera: a placed camera (a Starfield skeleton holds one). Import does not show it; decoded
for its scene reference (core.nif.refs) and written back as it was."""

from ..block import block_class
from .objects import NiAVObject


@block_class("NiCamera", fallback_raw=True)
class NiCamera(NiAVObject):
    camera_flags = 0
    frustum = (-0.63707, 0.63707, 0.385714, -0.385714, 1.0, 5000.0)  # left, right, top, bottom, near, far
    orthographic = 0
    viewport = (0.0, 1.0, 1.0, 0.0)  # left, right, top, bottom
    lod_adjust = 1.0
    scene = -1
    num_screen_polygons = 0  # deprecated: always 0
    num_screen_textures = 0

    def sync(self, s):
        super().sync(s)
        self.camera_flags = s.u16(self.camera_flags)
        self.frustum = s.floats(self.frustum, 6)
        self.orthographic = s.bool8(self.orthographic)
        self.viewport = s.floats(self.viewport, 4)
        self.lod_adjust = s.f32(self.lod_adjust)
        self.scene = s.ref(self.scene)
        self.num_screen_polygons = s.u32(self.num_screen_polygons)
        self.num_screen_textures = s.u32(self.num_screen_textures)
