"""Classic NiProperty blocks Bethesda files still use: NiAlphaProperty, NiMaterialProperty,
NiStencilProperty, NiSpecularProperty."""

from ..block import block_class
from .objects import NiObjectNET


@block_class("NiAlphaProperty")
class NiAlphaProperty(NiObjectNET):
    """Flags bit 0: blending, bits 1-4/5-8: source/destination blend modes, bit 9: alpha test,
    bits 10-12: test function."""

    flags = 4844
    threshold = 128

    def sync(self, s):
        super().sync(s)
        self.flags = s.u16(self.flags)
        self.threshold = s.u8(self.threshold)


@block_class("NiMaterialProperty")
class NiMaterialProperty(NiObjectNET):
    ambient_color = (1.0, 1.0, 1.0)
    diffuse_color = (1.0, 1.0, 1.0)
    specular_color = (1.0, 1.0, 1.0)
    emissive_color = (0.0, 0.0, 0.0)
    glossiness = 10.0
    alpha = 1.0
    emissive_mult = 1.0

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if bs < 26:
            self.ambient_color = s.vec3(self.ambient_color)
            self.diffuse_color = s.vec3(self.diffuse_color)
        self.specular_color = s.vec3(self.specular_color)
        self.emissive_color = s.vec3(self.emissive_color)
        self.glossiness = s.f32(self.glossiness)
        self.alpha = s.f32(self.alpha)
        if bs > 21:
            self.emissive_mult = s.f32(self.emissive_mult)


@block_class("NiStencilProperty")
class NiStencilProperty(NiObjectNET):
    """Flags bits 10-11: draw mode (0 application default, 1 counter-clockwise only, 2 clockwise
    only, 3 both sides: how Fallout 3 / New Vegas marks two-sided geometry)."""

    flags = 19840  # test greater, pass increment, draw both
    stencil_ref = 0
    stencil_mask = 0xFFFFFFFF

    def sync(self, s):
        super().sync(s)
        self.flags = s.u16(self.flags)
        self.stencil_ref = s.u32(self.stencil_ref)
        self.stencil_mask = s.u32(self.stencil_mask)


@block_class("NiSpecularProperty")
class NiSpecularProperty(NiObjectNET):
    """Flags bit 0: specular lighting on."""

    flags = 1

    def sync(self, s):
        super().sync(s)
        self.flags = s.u16(self.flags)
