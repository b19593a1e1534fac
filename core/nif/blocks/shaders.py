"""Shader properties and texture sets: BSLightingShaderProperty, BSEffectShaderProperty
(Skyrim and later), BSShaderPPLightingProperty and BSShaderNoLightingProperty (Fallout 3 / New
Vegas), BSShaderTextureSet."""

import math

from .. import versions
from ..block import Block, block_class
from .objects import NiObjectNET

FLT_MAX = 3.4028234663852886e38


class BSShaderProperty(NiObjectNET):
    """Up to FO3/FNV (bs <= 34) the shader flags live in this common base."""

    shade_flags = 0
    shader_type = 0
    shader_flags_1 = 0
    shader_flags_2 = 0
    environment_map_scale = 1.0

    def sync(self, s):
        super().sync(s)
        if versions.up_to_fo3(s.context.bs_version):
            self.shade_flags = s.u16(self.shade_flags)
            self.shader_type = s.u32(self.shader_type)
            self.shader_flags_1 = s.u32(self.shader_flags_1)
            self.shader_flags_2 = s.u32(self.shader_flags_2)
            self.environment_map_scale = s.f32(self.environment_map_scale)


@block_class("BSShaderPPLightingProperty")
class BSShaderPPLightingProperty(BSShaderProperty):
    texture_clamp_mode = 3
    texture_set = -1
    refraction_strength = 0.0
    refraction_fire_period = 0
    parallax_max_passes = 4.0
    parallax_scale = 1.0
    emissive_color = (0.0, 0.0, 0.0, 0.0)

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if versions.up_to_fo3(bs):
            self.texture_clamp_mode = s.u32(self.texture_clamp_mode)
        self.texture_set = s.ref(self.texture_set)
        if bs > 14:
            self.refraction_strength = s.f32(self.refraction_strength)
            self.refraction_fire_period = s.i32(self.refraction_fire_period)
        if bs > 24:
            self.parallax_max_passes = s.f32(self.parallax_max_passes)
            self.parallax_scale = s.f32(self.parallax_scale)
        if versions.after_fo3(bs):
            self.emissive_color = s.vec4(self.emissive_color)


@block_class("BSShaderNoLightingProperty", fallback_raw=True)
class BSShaderNoLightingProperty(BSShaderProperty):
    """FO3/FNV unlit surfaces (glow, UI, effects): one texture file named inline, and alpha
    falling off with the view angle (bs > 26)."""

    texture_clamp_mode = 3
    file_name = ""
    falloff = (1.0, 0.0, 1.0, 0.0)  # start angle, stop angle, start opacity, stop opacity

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if versions.up_to_fo3(bs):
            self.texture_clamp_mode = s.u32(self.texture_clamp_mode)
        self.file_name = s.sized_string(self.file_name)
        if bs > 26:
            self.falloff = s.floats(self.falloff, 4)


def sync_flag_words(shader, s):
    """Two u32 shader flag words: Skyrim and FO4 (stream 130 only)."""
    if not versions.after_fo4_release(s.context.bs_version):
        shader.shader_flags_1 = s.u32(shader.shader_flags_1)
        shader.shader_flags_2 = s.u32(shader.shader_flags_2)


def sync_flag_lists(shader, s):
    """Later streams name their flags by CRC32 lists (bs >= 132; a second list from 152)."""
    bs = s.context.bs_version
    n1 = s.count(len(shader.sf1), item_size=4, what="shader flags") if bs >= 132 else 0
    n2 = s.count(len(shader.sf2), item_size=4, what="shader flags") if bs >= 152 else 0
    if bs >= 132:
        shader.sf1 = s.array(shader.sf1, "u4", n1)
    if bs >= 152:
        shader.sf2 = s.array(shader.sf2, "u4", n2)


class SkyrimShaderProperty(NiObjectNET):
    shader_flags_1 = 0
    shader_flags_2 = 0
    sf1 = ()
    sf2 = ()
    uv_offset = (0.0, 0.0)
    uv_scale = (1.0, 1.0)


@block_class("BSLightingShaderProperty")
class BSLightingShaderProperty(SkyrimShaderProperty):
    shader_type = 0
    texture_set = -1
    emissive_color = (0.0, 0.0, 0.0)
    emissive_multiple = 1.0
    root_material = None
    texture_clamp_mode = 3
    alpha = 1.0
    refraction_strength = 0.0
    glossiness = 80.0
    smoothness = 1.0
    specular_color = (1.0, 1.0, 1.0)
    specular_strength = 1.0
    lighting_effect_1 = 0.3
    lighting_effect_2 = 2.0
    subsurface_rolloff = 0.0
    rimlight_power = FLT_MAX
    backlight_power = 0.0
    grayscale_to_palette_scale = 1.0
    fresnel_power = 5.0
    wetness = ()
    translucency = None
    texture_arrays = None
    environment_map_scale = 1.0
    use_ssr = 0
    wetness_use_ssr = 0
    skin_tint_color = (1.0, 1.0, 1.0)
    skin_tint_alpha = 1.0
    hair_tint_color = (1.0, 1.0, 1.0)
    max_passes = 4.0
    parallax_scale = 1.0
    parallax_inner_layer_thickness = 5.0
    parallax_refraction_scale = 0.25
    parallax_inner_layer_texture_scale = (1.0, 1.0)
    parallax_envmap_strength = 1.0
    sparkle_parameters = (0.0, 0.0, 0.0, 0.0)
    eye_cubemap_scale = 1.3
    left_eye_reflection_center = (0.0, 0.0, 0.0)
    right_eye_reflection_center = (0.0, 0.0, 0.0)

    def sync(self, s):
        bs = s.context.bs_version
        if versions.skyrim_to_fo4(bs):  # stored before the name (NiObjectNET) in these streams
            self.shader_type = s.u32(self.shader_type)
        super().sync(s)
        if versions.fo76_or_later(bs) and self.name:  # FO76: a material file replaces every other field
            return
        sync_flag_words(self, s)
        if versions.fo76_or_later(bs):
            self.shader_type = s.u32(self.shader_type)
        sync_flag_lists(self, s)
        self.uv_offset = (s.f32(self.uv_offset[0]), s.f32(self.uv_offset[1]))
        self.uv_scale = (s.f32(self.uv_scale[0]), s.f32(self.uv_scale[1]))
        self.texture_set = s.ref(self.texture_set)
        self.emissive_color = s.vec3(self.emissive_color)
        self.emissive_multiple = s.f32(self.emissive_multiple)
        if versions.fo4_or_later(bs):
            self.root_material = s.string(self.root_material)
        self.texture_clamp_mode = s.u32(self.texture_clamp_mode)
        self.alpha = s.f32(self.alpha)
        self.refraction_strength = s.f32(self.refraction_strength)
        if versions.before_fo4(bs):
            self.glossiness = s.f32(self.glossiness)
        else:
            self.smoothness = s.f32(self.smoothness)
        self.specular_color = s.vec3(self.specular_color)
        self.specular_strength = s.f32(self.specular_strength)
        if versions.before_fo4(bs):
            self.lighting_effect_1 = s.f32(self.lighting_effect_1)
            self.lighting_effect_2 = s.f32(self.lighting_effect_2)
        fo4 = versions.fo4(bs)
        if fo4:
            self.subsurface_rolloff = s.f32(self.subsurface_rolloff)
            self.rimlight_power = s.f32(self.rimlight_power)
            if math.isfinite(self.rimlight_power) and self.rimlight_power >= FLT_MAX:
                self.backlight_power = s.f32(self.backlight_power)
        if versions.fo4_or_later(bs):
            self.grayscale_to_palette_scale = s.f32(self.grayscale_to_palette_scale)
            self.fresnel_power = s.f32(self.fresnel_power)
            count = 5 + versions.fo4_release(bs) + versions.after_fo4_release(bs) + versions.fo76_or_later(bs)
            self.wetness = s.floats(self.wetness or (-1.0,) * count, count)
        if versions.fo76(bs):
            self._sync_fo76_extras(s)
        kind = self.shader_type
        if versions.up_to_fo4(bs) and kind == 1:
            self.environment_map_scale = s.f32(self.environment_map_scale)
        if fo4 and kind == 1:
            self.use_ssr = s.bool8(self.use_ssr)
            self.wetness_use_ssr = s.bool8(self.wetness_use_ssr)
        if versions.fo76_or_later(bs) and kind == 4:
            self.skin_tint_color = s.vec4(self.skin_tint_color)
        if versions.fo76_or_later(bs) and kind == 5:
            self.hair_tint_color = s.vec3(self.hair_tint_color)
        if versions.up_to_fo4(bs) and kind == 5:
            self.skin_tint_color = s.vec3(self.skin_tint_color)
        if fo4 and kind == 5:
            self.skin_tint_alpha = s.f32(self.skin_tint_alpha)
        if versions.up_to_fo4(bs) and kind == 6:
            self.hair_tint_color = s.vec3(self.hair_tint_color)
        if kind == 7:
            self.max_passes = s.f32(self.max_passes)
            self.parallax_scale = s.f32(self.parallax_scale)
        if kind == 11:
            self.parallax_inner_layer_thickness = s.f32(self.parallax_inner_layer_thickness)
            self.parallax_refraction_scale = s.f32(self.parallax_refraction_scale)
            scale = self.parallax_inner_layer_texture_scale
            self.parallax_inner_layer_texture_scale = (s.f32(scale[0]), s.f32(scale[1]))
            self.parallax_envmap_strength = s.f32(self.parallax_envmap_strength)
        if kind == 14:
            self.sparkle_parameters = s.vec4(self.sparkle_parameters)
        if kind == 16:
            self.eye_cubemap_scale = s.f32(self.eye_cubemap_scale)
            self.left_eye_reflection_center = s.vec3(self.left_eye_reflection_center)
            self.right_eye_reflection_center = s.vec3(self.right_eye_reflection_center)

    def _sync_fo76_extras(self, s):
        """Translucency and texture arrays (Fallout 76 only)."""
        if s.bool8(self.translucency is not None):
            t = self.translucency or ((0.0,) * 3, 0.0, 0.0, 0, 0)
            self.translucency = (s.vec3(t[0]), s.f32(t[1]), s.f32(t[2]), s.bool8(t[3]), s.bool8(t[4]))
        if s.bool8(self.texture_arrays is not None):
            n = s.count(len(self.texture_arrays), item_size=4, what="texture arrays")
            self.texture_arrays = s.repeat(self.texture_arrays, n, lambda textures: self._sync_strings(s, textures))

    @staticmethod
    def _sync_strings(s, textures):
        n = s.count(len(textures or ()), item_size=4, what="textures")
        return s.repeat(textures, n, s.sized_string)


@block_class("BSEffectShaderProperty")
class BSEffectShaderProperty(SkyrimShaderProperty):
    source_texture = ""
    texture_clamp_mode = 3
    lighting_influence = 255
    env_map_min_lod = 0
    unused_byte = 0
    falloff_start_angle = 1.0
    falloff_stop_angle = 1.0
    falloff_start_opacity = 0.0
    falloff_stop_opacity = 0.0
    refraction_power = 0.0
    base_color = (1.0, 1.0, 1.0, 1.0)
    base_color_scale = 1.0
    soft_falloff_depth = 100.0
    greyscale_texture = ""
    env_map_texture = ""
    normal_texture = ""
    env_mask_texture = ""
    environment_map_scale = 1.0
    reflectance_texture = ""
    lighting_texture = ""
    emittance_color = (0.0, 0.0, 0.0)
    emit_gradient_texture = ""
    luminance = (100.0, 13.5, 2.0, 3.0)

    def sync(self, s):
        super().sync(s)
        bs = s.context.bs_version
        if versions.fo76_or_later(bs) and self.name:
            return
        sync_flag_words(self, s)
        sync_flag_lists(self, s)
        self.uv_offset = (s.f32(self.uv_offset[0]), s.f32(self.uv_offset[1]))
        self.uv_scale = (s.f32(self.uv_scale[0]), s.f32(self.uv_scale[1]))
        self.source_texture = s.sized_string(self.source_texture)
        self.texture_clamp_mode = s.u8(self.texture_clamp_mode)
        self.lighting_influence = s.u8(self.lighting_influence)
        self.env_map_min_lod = s.u8(self.env_map_min_lod)
        self.unused_byte = s.u8(self.unused_byte)
        self.falloff_start_angle = s.f32(self.falloff_start_angle)
        self.falloff_stop_angle = s.f32(self.falloff_stop_angle)
        self.falloff_start_opacity = s.f32(self.falloff_start_opacity)
        self.falloff_stop_opacity = s.f32(self.falloff_stop_opacity)
        if versions.fo76(bs):
            self.refraction_power = s.f32(self.refraction_power)
        self.base_color = s.vec4(self.base_color)
        self.base_color_scale = s.f32(self.base_color_scale)
        self.soft_falloff_depth = s.f32(self.soft_falloff_depth)
        self.greyscale_texture = s.sized_string(self.greyscale_texture)
        if versions.fo4_or_later(bs):
            self.env_map_texture = s.sized_string(self.env_map_texture)
            self.normal_texture = s.sized_string(self.normal_texture)
            self.env_mask_texture = s.sized_string(self.env_mask_texture)
            self.environment_map_scale = s.f32(self.environment_map_scale)
        if versions.fo76_or_later(bs):
            self.reflectance_texture = s.sized_string(self.reflectance_texture)
            self.lighting_texture = s.sized_string(self.lighting_texture)
            self.emittance_color = s.vec3(self.emittance_color)
            self.emit_gradient_texture = s.sized_string(self.emit_gradient_texture)
            self.luminance = s.vec4(self.luminance)


@block_class("BSShaderTextureSet")
class BSShaderTextureSet(Block):
    """Texture paths by slot: 0 diffuse, 1 normal, 2 glow/skin, 3 height, 4 environment,
    5 environment mask, 6 inner layer, 7 specular/back light (FO4: smoothness/specular)."""

    textures = ()

    def sync(self, s):
        n = s.count(len(self.textures), item_size=4, what="textures")
        self.textures = s.repeat(self.textures, n, s.sized_string)
