"""Fallout 4 material files: BGSM (lighting) and BGEM (effect), as written by the Creation Kit
and Material Editor, every version. One ``sync`` per kind describes the fields in file order
(names and version conditions as in ousnius' Material Editor); reading and writing share it,
so a file writes back byte for byte. Values are kept as read: booleans as their byte."""


from ..errors import FormatError
from ..files import read_bytes, write_replacing
from ..stream import ReadStream, ShortString, WriteStream, decode_text, encode_text

MAGICS = {b"BGSM": "BGSM", b"BGEM": "BGEM"}
MAX_VERSION = 22

# Texture slots of each kind by version range, in file order.
BGSM_TEXTURES_OLD = ("diffuse", "normal", "smooth_spec", "greyscale", "envmap", "glow", "inner_layer", "wrinkles", "displacement")
BGSM_TEXTURES_NEW = ("diffuse", "normal", "smooth_spec", "greyscale", "glow", "wrinkles", "specular", "lighting", "flow")
BGEM_TEXTURES = ("base", "grayscale", "envmap", "normal", "envmap_mask")
BGEM_TEXTURES_NEW = ("specular", "lighting", "glow")

# Texture slot each role of a node tree (core.nif.materials.look) shows, per kind.
ROLE_SLOTS = {
    "BGSM": {"diffuse": "diffuse", "normal": "normal", "specular": "smooth_spec", "glow": "glow", "palette": "greyscale"},
    "BGEM": {"diffuse": "base", "normal": "normal", "specular": None, "glow": "glow", "palette": "grayscale"},
}

# The three alpha blend fields -> mode (Material Editor's table).
BLEND_MODES = {(0, 6, 7): "none", (1, 6, 7): "standard", (1, 6, 0): "additive", (1, 4, 1): "multiplicative"}


def _string(s, value):
    """u32 length (counting the NUL) + text + NUL; a string without its NUL is kept as read."""
    if s.reading:
        raw = s.raw(size=s.count(what="string"))
        terminated = raw.endswith(b"\0")
        return ShortString(decode_text(raw[:-1] if terminated else raw), terminated)
    raw = encode_text(value) + (b"\0" if getattr(value, "terminated", True) else b"")
    s.u32(len(raw))
    s.raw(raw)
    return value


class MaterialFile:
    """A BGSM or BGEM file: ``kind``, ``version``, ``fields`` {name: value} and ``textures``
    {slot: path}."""

    def __init__(self, kind="BGSM", version=2, fields=None, textures=None, path=None):
        self.kind = kind
        self.version = version
        self.fields = dict(fields or {})
        self.textures = dict(textures or {})
        self.path = path

    # -- one description for both directions ---------------------------------------------------
    def sync(self, s):
        v = self.version
        fields = self.fields

        def field(name, kind):
            fields[name] = getattr(s, kind)(fields.get(name))
            return fields[name]

        def texture(slot):
            self.textures[slot] = _string(s, self.textures.get(slot, ""))

        field("tile_flags", "u32")
        for name in ("u_offset", "v_offset", "u_scale", "v_scale", "alpha"):
            field(name, "f32")
        field("alpha_blend_0", "u8")
        field("alpha_blend_1", "u32")
        field("alpha_blend_2", "u32")
        field("alpha_test_ref", "u8")
        for name in ("alpha_test", "z_buffer_write", "z_buffer_test", "screen_space_reflections",
                     "wetness_control_ssr", "decal", "two_sided", "decal_no_fade", "non_occluder",
                     "refraction", "refraction_falloff"):
            field(name, "bool8")
        field("refraction_power", "f32")
        if v < 10:
            field("environment_mapping", "bool8")
            field("environment_mapping_mask_scale", "f32")
        else:
            field("depth_bias", "bool8")
        field("grayscale_to_palette_color", "bool8")
        if v >= 6:
            field("mask_writes", "u8")
        if self.kind == "BGSM":
            self._sync_bgsm(s, field, texture)
        else:
            self._sync_bgem(s, field, texture)

    def _sync_bgsm(self, s, field, texture):
        v = self.version
        for slot in BGSM_TEXTURES_OLD if v <= 2 else BGSM_TEXTURES_NEW:
            texture(slot)
        if v >= 17:
            texture("distance_field_alpha")
        field("enable_editor_alpha_ref", "bool8")
        if v >= 8:
            for name in ("translucency", "translucency_thick_object", "translucency_mix_albedo"):
                field(name, "bool8")
            field("translucency_subsurface_color", "vec3")
            field("translucency_transmissive_scale", "f32")
            field("translucency_turbulence", "f32")
        else:
            field("rim_lighting", "bool8")
            field("rim_power", "f32")
            field("back_light_power", "f32")
            field("subsurface_lighting", "bool8")
            field("subsurface_lighting_rolloff", "f32")
        field("specular_enabled", "bool8")
        field("specular_color", "vec3")
        for name in ("specular_mult", "smoothness", "fresnel_power", "wetness_spec_scale",
                     "wetness_spec_power_scale", "wetness_spec_min_var"):
            field(name, "f32")
        if v < 10:
            field("wetness_env_map_scale", "f32")
        field("wetness_fresnel_power", "f32")
        field("wetness_metalness", "f32")
        if v > 2:
            field("pbr", "bool8")
            if v >= 9:
                field("custom_porosity", "bool8")
                field("porosity_value", "f32")
        self.fields["root_material_path"] = _string(s, self.fields.get("root_material_path", ""))
        field("aniso_lighting", "bool8")
        if field("emit_enabled", "bool8"):
            field("emittance_color", "vec3")
        field("emittance_mult", "f32")
        field("model_space_normals", "bool8")
        field("external_emittance", "bool8")
        if v >= 12:
            field("lum_emittance", "f32")
        if v >= 13:
            field("use_adaptive_emissive", "bool8")
            for name in ("adaptive_exposure_offset", "final_exposure_min", "final_exposure_max"):
                field(name, "f32")
        if v < 8:
            field("back_lighting", "bool8")
        for name in ("receive_shadows", "hide_secret", "cast_shadows", "dissolve_fade", "assume_shadowmask", "glowmap"):
            field(name, "bool8")
        if v < 7:
            field("environment_mapping_window", "bool8")
            field("environment_mapping_eye", "bool8")
        field("hair", "bool8")
        field("hair_tint_color", "vec3")
        for name in ("tree", "facegen", "skin_tint", "tessellate"):
            field(name, "bool8")
        if v < 3:
            for name in ("displacement_bias", "displacement_scale", "tessellation_pn_scale",
                         "tessellation_base_factor", "tessellation_fade_distance"):
                field(name, "f32")
        field("grayscale_to_palette_scale", "f32")
        if v >= 1:
            field("skew_specular_alpha", "bool8")
        if v >= 3:
            if field("terrain", "bool8"):
                if v == 3:
                    field("terrain_unknown", "u32")
                for name in ("terrain_threshold_falloff", "terrain_tiling_distance", "terrain_rotation_angle"):
                    field(name, "f32")

    def _sync_bgem(self, s, field, texture):
        v = self.version
        for slot in BGEM_TEXTURES:
            texture(slot)
        if v >= 11:
            for slot in BGEM_TEXTURES_NEW:
                texture(slot)
        if v >= 10:
            field("environment_mapping", "bool8")
            field("environment_mapping_mask_scale", "f32")
        for name in ("blood_enabled", "effect_lighting_enabled", "falloff_enabled", "falloff_color_enabled",
                     "grayscale_to_palette_alpha", "soft_enabled"):
            field(name, "bool8")
        field("base_color", "vec3")
        for name in ("base_color_scale", "falloff_start_angle", "falloff_stop_angle", "falloff_start_opacity",
                     "falloff_stop_opacity", "lighting_influence"):
            field(name, "f32")
        field("envmap_min_lod", "u8")
        field("soft_depth", "f32")
        if v >= 11:
            field("emittance_color", "vec3")
        if v >= 15:
            for name in ("adaptive_exposure_offset", "final_exposure_min", "final_exposure_max"):
                field(name, "f32")
        if v >= 16:
            field("glowmap", "bool8")
        if v >= 20:
            field("effect_pbr_specular", "bool8")

    # -- files --------------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data, path=None):
        try:
            kind = MAGICS.get(bytes(data[:4]))
            if kind is None:
                raise FormatError(f"not a BGSM or BGEM material file (magic {bytes(data[:4])!r})")
            s = ReadStream(memoryview(data)[4:], base=4)
            material = cls(kind, s.u32(), path=path)
            if material.version > MAX_VERSION:
                raise FormatError(f"{kind} version {material.version} is not known (up to {MAX_VERSION})")
            material.sync(s)
            if s.remaining:
                raise s.error(f"{s.remaining} bytes left after the {kind} fields")
        except FormatError as error:
            raise error.located(path=path) from None
        return material

    @classmethod
    def read(cls, path):
        return cls.from_bytes(read_bytes(path), path)

    def to_bytes(self):
        s = WriteStream()
        s.raw(self.kind.encode())
        s.u32(self.version)
        self.sync(s)
        return bytes(s.out)

    def write(self, path):
        write_replacing(path, self.to_bytes())

    # -- what a Blender material shows ---------------------------------------------------------
    def apply_look(self, changes):
        """Write back the entries of ``changes`` (in look()'s terms) a material file holds:
        textures (Data-relative, "textures/" left out as the files store them), two-sidedness,
        alpha and alpha test."""
        for role, path in changes.get("textures", {}).items():
            slot = ROLE_SLOTS[self.kind].get(role)
            if slot in self.textures:
                path = str(path or "").replace("\\", "/")
                self.textures[slot] = path[len("textures/"):] if path.lower().startswith("textures/") else path
        fields = self.fields
        for key, field in (("two_sided", "two_sided"), ("alpha_test", "alpha_test")):
            if key in changes:
                fields[field] = int(bool(changes[key]))
        if "threshold" in changes:
            fields["alpha_test_ref"] = int(changes["threshold"])
        if "alpha" in changes:
            fields["alpha"] = float(changes["alpha"])

    @property
    def blend_mode(self):
        key = (self.fields["alpha_blend_0"], self.fields["alpha_blend_1"], self.fields["alpha_blend_2"])
        return BLEND_MODES.get(key, "standard" if key[0] else "none")

    def look(self):
        """What a node tree shows, in the terms of core.nif.materials.look."""
        f = self.fields
        lighting = self.kind == "BGSM"
        textures = self.textures
        out = {
            "textures": {role: textures.get(slot, "") if slot else "" for role, slot in ROLE_SLOTS[self.kind].items()},
            "two_sided": bool(f["two_sided"]),
            "blend": self.blend_mode != "none",
            "alpha_test": bool(f["alpha_test"]),
            "threshold": f["alpha_test_ref"],
            "alpha": f["alpha"],
            "uv_offset": (f["u_offset"], f["v_offset"]),
            "uv_scale": (f["u_scale"], f["v_scale"]),
            "grayscale_to_palette": bool(f["grayscale_to_palette_color"]),
        }
        if lighting:
            out["roughness"] = 1.0 - f["smoothness"]
            if f["emit_enabled"]:
                out["emission"] = tuple(f["emittance_color"])
                out["emission_strength"] = f["emittance_mult"]
        else:
            out["emission"] = tuple(f["base_color"])
            out["emission_strength"] = f["base_color_scale"]
        return out

