"""What a shape's material is made of, in codec terms: the shader and property blocks a shape
uses, their fields as plain values that survive a trip through Blender custom properties, the
few values a node tree shows ("the look") and the way back, and texture paths resolved
case-insensitively under game Data folders. Pure Python: no bpy."""

import os
from pathlib import Path

import numpy as np

from ..data_paths import data_relative
from ..stream import WriteStream
from . import versions
from .block import class_for
from .blocks.properties import NiAlphaProperty, NiMaterialProperty, NiSpecularProperty, NiStencilProperty
from .header import Header
from .blocks.shaders import (
    BSEffectShaderProperty,
    BSLightingShaderProperty,
    BSShaderPPLightingProperty,
    BSShaderTextureSet,
)

SHADER_TYPES = ("BSLightingShaderProperty", "BSEffectShaderProperty", "BSShaderPPLightingProperty")
# Roles of the blocks a material describes, by block type (FO3/FNV keep them in `properties`).
ROLES = {
    "BSLightingShaderProperty": "shader",
    "BSEffectShaderProperty": "shader",
    "BSShaderPPLightingProperty": "shader",
    "NiAlphaProperty": "alpha",
    "NiMaterialProperty": "material",
    "NiStencilProperty": "stencil",
    "NiSpecularProperty": "specular",
}
ROLE_ORDER = ("shader", "material", "alpha", "stencil", "specular")
REF_FIELDS = frozenset(("texture_set", "controller", "extra_data"))
INT32 = (-(1 << 31), (1 << 31) - 1)

DOUBLE_SIDED = 0x10  # shader flags 2 bit 4, Skyrim and Fallout 4
VERTEX_COLORS = 0x20  # shader flags 2 bit 5, Skyrim
SKINNED = 0x2  # shader flags 1 bit 1, every game
ALPHA_BLEND = 0x1
ALPHA_TEST = 0x200
STENCIL_DRAW_MODE = 0x0C00
STENCIL_DRAW_BOTH = 0x0C00
STENCIL_DRAW_CCW = 0x0400

# Texture slot of each role the node tree shows: an index into the texture set, or the name of
# the effect shader's own texture field.
SLOTS = {
    ("BSLightingShaderProperty", True): {"diffuse": 0, "normal": 1, "glow": 2, "specular": 7},
    ("BSLightingShaderProperty", False): {"diffuse": 0, "normal": 1, "glow": 2},
    ("BSEffectShaderProperty", True): {"diffuse": "source_texture", "normal": "normal_texture"},
    ("BSEffectShaderProperty", False): {"diffuse": "source_texture"},
    ("BSShaderPPLightingProperty", False): {"diffuse": 0, "normal": 1, "glow": 2},
}
TEXTURE_SET_SIZE = {"FO4": 10, "FO3": 6, "SSE": 9, "SKYRIM": 9, "FO76": 13}


# -- the blocks of a shape's material -----------------------------------------------------------
def material_blocks(nif, shape):
    """{role: block index} of the material blocks ``shape`` uses (roles from ``ROLES``)."""
    blocks = nif.blocks
    if versions.up_to_fo3(nif.header.bs_version):
        candidates = np.asarray(getattr(shape, "properties", ())).tolist()
    else:
        candidates = [getattr(shape, "shader_property", -1), getattr(shape, "alpha_property", -1)]
    found = {}
    for index in candidates:
        if 0 <= index < len(blocks):
            role = ROLES.get(blocks[index].type_name)
            if role is not None and role not in found:
                found[role] = index
    return found


def material_key(found):
    """Shapes whose material blocks are the same share one material."""
    return tuple(found.get(role, -1) for role in ROLE_ORDER)


def read_record(nif, found):
    """The material record of the blocks ``found`` (``material_blocks``): {role: {"type": type
    name, field: value}, "textures": [paths]}."""
    record = {}
    for role, index in found.items():
        block = nif.blocks[index]
        record[role] = {"type": block.type_name, **current_fields(block)}
    if "shader" in found:
        record["textures"] = texture_list(nif, nif.blocks[found["shader"]])
    return record


def record_to_props(record):
    """A record as custom-property values (ID properties cannot hold an empty list)."""
    return {
        role: (list(value) or [""]) if role == "textures" else {"type": value["type"], **encode_values(value)}
        for role, value in record.items()
    }


def record_from_props(props):
    """``record_to_props`` undone (``props`` as plain dicts and lists)."""
    return {
        role: [str(path) for path in value] if role == "textures" else {"type": value["type"], **decode_fields(value["type"], value)}
        for role, value in props.items()
    }


def texture_list(nif, shader):
    """The texture paths of a shader's texture set (empty when it has none)."""
    index = getattr(shader, "texture_set", -1)
    if 0 <= index < len(nif.blocks) and isinstance(nif.blocks[index], BSShaderTextureSet):
        return [str(path) for path in nif.blocks[index].textures]
    return []


# -- block fields as custom-property values -------------------------------------------------------
def encode_fields(block):
    """The block's own fields (block references left out) as values Blender custom properties
    hold exactly (``encode_values``)."""
    return encode_values(vars(block))


def encode_values(fields):
    """Field values as custom-property values: floats stay doubles (exact for f32), integers
    outside int32 and flag words become hex strings, tuples float lists, CRC flag lists lists
    of hex strings."""
    out = {}
    for key, value in fields.items():
        if key in REF_FIELDS or key in ("type", "type_name", "trailing") or value is None:
            continue
        if isinstance(value, np.ndarray):
            out[key] = [f"0x{int(v):08X}" for v in value.tolist()]
        elif isinstance(value, bool) or not isinstance(value, (int, float, str, tuple)):
            continue  # nested structures (Fallout 76 extras) stay in the template only
        elif isinstance(value, int) and ("flags" in key or not INT32[0] <= value <= INT32[1]):
            out[key] = f"0x{value:X}"
        elif isinstance(value, tuple):
            if all(isinstance(v, (int, float)) for v in value):
                out[key] = [float(v) for v in value]
        else:
            out[key] = str(value) if isinstance(value, str) else value
    return out


def decode_fields(type_name, props):
    """Custom-property values back to field values, typed by the block class's defaults;
    keys the block type does not have are ignored."""
    cls = class_for(type_name)
    out = {}
    for key, value in props.items():
        if key in REF_FIELDS or not hasattr(cls, key) or key.startswith("_"):
            continue
        default = getattr(cls, key)
        if isinstance(value, str) and value.startswith("0x") and not isinstance(default, str) and default is not None:
            out[key] = int(value, 16)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value) and value:
            out[key] = np.array([int(v, 16) for v in value], dtype=np.uint32)
        elif isinstance(default, tuple):
            out[key] = tuple(float(v) for v in value)
        elif isinstance(default, float):
            out[key] = float(value)
        elif isinstance(default, int):
            out[key] = int(value)
        else:
            out[key] = value
    return out


def apply_fields(block, values):
    """Set the fields that differ (equal ones are left alone, so string-table indices and
    arrays read from the file stay as they were). Returns True when anything changed."""
    changed = False
    for key, value in values.items():
        current = getattr(block, key, None)
        if isinstance(current, np.ndarray) or isinstance(value, np.ndarray):
            same = np.array_equal(np.asarray(current), np.asarray(value))
        else:
            same = current == value
        if not same:
            setattr(block, key, value)
            changed = True
    return changed


def current_fields(block):
    """The block's fields as ``decode_fields`` returns them."""
    return decode_fields(block.type_name, encode_fields(block))


def default_entry(type_name, bs_version, **fields):
    """A record entry for a new block of ``type_name`` with every field of that stream version
    (a block made in code only holds what was passed in until it is synced once)."""
    block = BLOCK_CLASSES[type_name](**fields)
    block.sync(WriteStream(Header(bs_version=bs_version)))
    return {"type": type_name, **current_fields(block)}


# -- the look: what a node tree shows ---------------------------------------------------------------
def slots_for(shader_type, fo4):
    return SLOTS.get((shader_type, fo4 if shader_type != "BSShaderPPLightingProperty" else False), {})


# Skyrim's glossiness is a Blinn-Phong specular power (nif.xml: "the material specular power",
# 0 to 999); Blender's roughness r has the microfacet width alpha = r^2, and the usual Blinn-Phong
# to Beckmann match is alpha = sqrt(2 / (power + 2)).
MAX_GLOSSINESS = 999.0


def gloss_roughness(glossiness):
    power = min(max(float(glossiness), 0.0), MAX_GLOSSINESS)
    return (2.0 / (power + 2.0)) ** 0.25


def roughness_gloss(roughness):
    smallest = gloss_roughness(MAX_GLOSSINESS)
    return 2.0 / max(float(roughness), smallest) ** 4 - 2.0


def look(record, bs_version):
    """The values a node tree shows, from a material record: {"shader": {"type": name, field:
    value}, "textures": [paths], "alpha"/"material"/"stencil": {field: value}}."""
    fo4 = versions.fo4_or_later(bs_version)
    shader = record.get("shader") or {}
    kind = shader.get("type")
    out = {"textures": {}, "two_sided": False}
    textures = record.get("textures") or []
    for role, slot in slots_for(kind, fo4).items():
        path = shader.get(slot, "") if isinstance(slot, str) else (textures[slot] if slot < len(textures) else "")
        out["textures"][role] = path
    # A Fallout 76 shader named after its material file holds none of these fields.
    if kind == "BSLightingShaderProperty" and "emissive_color" in shader:
        out["emission"] = tuple(shader["emissive_color"])
        out["emission_strength"] = shader["emissive_multiple"]
        out["alpha"] = shader["alpha"]
        if fo4:
            out["roughness"] = 1.0 - shader["smoothness"]
        elif "glossiness" in shader:
            out["roughness"] = gloss_roughness(shader["glossiness"])
    elif kind == "BSEffectShaderProperty" and "base_color" in shader:
        out["emission"] = tuple(shader["base_color"][:3])
        out["emission_strength"] = shader["base_color_scale"]
        out["alpha"] = shader["base_color"][3]
    if "shader_flags_2" in shader and kind != "BSShaderPPLightingProperty":  # words, not CRC lists (bs >= 132)
        out["two_sided"] = bool(shader["shader_flags_2"] & DOUBLE_SIDED)
    material = record.get("material")
    if material is not None:
        out["emission"] = tuple(material["emissive_color"])
        out["emission_strength"] = material["emissive_mult"]
        out["alpha"] = material["alpha"]
    stencil = record.get("stencil")
    if stencil is not None:
        out["two_sided"] = stencil["flags"] & STENCIL_DRAW_MODE == STENCIL_DRAW_BOTH
    alpha = record.get("alpha")
    out["blend"] = bool(alpha and alpha["flags"] & ALPHA_BLEND)
    out["alpha_test"] = bool(alpha and alpha["flags"] & ALPHA_TEST)
    out["threshold"] = alpha["threshold"] if alpha else 128
    return out


def same_value(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_texture(a[k], b[k]) for k in a)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return len(a) == len(b) and all(abs(x - y) <= 1e-6 for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-6
    return a == b


def changed_look(record, shown, bs_version, expected=None):
    """The entries of ``shown`` (read from a node tree) that differ from what ``record`` shows
    (or ``expected``, the look the tree was built from): an untouched material changes nothing,
    so float32 sockets never disturb exact values."""
    if expected is None:
        expected = look(record, bs_version)
    changes = {key: value for key, value in shown.items() if key in expected and not same_value(expected[key], value)}
    if "textures" in changes:
        changes["textures"] = {
            role: path
            for role, path in shown["textures"].items()
            if role in expected["textures"] and not same_texture(expected["textures"][role], path)
        }
        if not changes["textures"]:  # only roles the tree does not show differ
            del changes["textures"]
    return changes


def apply_look(record, changes, bs_version):
    """Write look values back into the record's fields, adding the alpha / stencil entries
    they need."""
    fo4 = versions.fo4_or_later(bs_version)
    shader = record.get("shader") or {}
    kind = shader.get("type")
    material = record.get("material")
    for role, path in changes.get("textures", {}).items():
        slot = slots_for(kind, fo4).get(role)
        if isinstance(slot, str):
            shader[slot] = path
        elif slot is not None:
            textures = record.setdefault("textures", [])
            textures.extend([""] * (slot + 1 - len(textures)))
            textures[slot] = path
    color_owner, color_field, scale_field = None, None, None
    if material is not None:
        color_owner, color_field, scale_field = material, "emissive_color", "emissive_mult"
    elif kind == "BSLightingShaderProperty" and "emissive_color" in shader:
        color_owner, color_field, scale_field = shader, "emissive_color", "emissive_multiple"
    if "emission" in changes and color_owner is not None:
        color_owner[color_field] = tuple(float(v) for v in changes["emission"])
    if "emission_strength" in changes and color_owner is not None:
        color_owner[scale_field] = float(changes["emission_strength"])
    if kind == "BSEffectShaderProperty" and "base_color" in shader:
        r, g, b, a = shader["base_color"]
        if "emission" in changes:
            r, g, b = (float(v) for v in changes["emission"])
        if "alpha" in changes:
            a = float(changes["alpha"])
        shader["base_color"] = (r, g, b, a)
        if "emission_strength" in changes:
            shader["base_color_scale"] = float(changes["emission_strength"])
    if "alpha" in changes:
        if material is not None:
            material["alpha"] = float(changes["alpha"])
        elif kind == "BSLightingShaderProperty":
            shader["alpha"] = float(changes["alpha"])
    if "roughness" in changes and kind == "BSLightingShaderProperty":
        if fo4:
            shader["smoothness"] = 1.0 - float(changes["roughness"])
        elif "glossiness" in shader:
            shader["glossiness"] = roughness_gloss(float(changes["roughness"]))
    if "two_sided" in changes:
        two_sided = changes["two_sided"]
        if "shader_flags_2" in shader and kind != "BSShaderPPLightingProperty":
            flags = shader["shader_flags_2"]
            shader["shader_flags_2"] = flags | DOUBLE_SIDED if two_sided else flags & ~DOUBLE_SIDED
        elif versions.up_to_fo3(bs_version):  # later shaders without flag words (FO76's) leave it to their material file
            stencil = record.get("stencil")
            if stencil is None and two_sided:
                stencil = record["stencil"] = default_entry("NiStencilProperty", bs_version)
            if stencil is not None:
                mode = STENCIL_DRAW_BOTH if two_sided else STENCIL_DRAW_CCW
                stencil["flags"] = stencil["flags"] & ~STENCIL_DRAW_MODE | mode
    if {"blend", "alpha_test", "threshold"} & changes.keys():
        alpha = record.get("alpha")
        if alpha is None:
            alpha = record["alpha"] = default_entry("NiAlphaProperty", bs_version)
            alpha["flags"] &= ~(ALPHA_BLEND | ALPHA_TEST)
        if "blend" in changes:
            alpha["flags"] = alpha["flags"] | ALPHA_BLEND if changes["blend"] else alpha["flags"] & ~ALPHA_BLEND
        if "alpha_test" in changes:
            alpha["flags"] = alpha["flags"] | ALPHA_TEST if changes["alpha_test"] else alpha["flags"] & ~ALPHA_TEST
        if "threshold" in changes:
            alpha["threshold"] = max(0, min(255, int(round(changes["threshold"]))))
    return record


def new_record(game, skinned=False, colors=False, material_path=None):
    """A default material for a new shape: the shader vanilla files of the game use (Fallout 4
    lighting shader with specular, cast shadows, ZBuffer test and write; Fallout 3 / New Vegas
    per-pixel lighting with a NiMaterialProperty; Skyrim SE lighting shader as its statics and
    armour have it: specular, receive and cast shadows, ZBuffer test and write, vertex colours
    used, glossiness 80, wrapped textures; Skyrim LE's the same, vertex colours used only by
    shapes having them (``colors``), as its statics have it; Fallout 76's named after its
    ``material_path``, the material file holding everything else)."""
    bs_version = versions.WRITTEN[game][1]
    if game == "FO76":
        record = {"shader": default_entry("BSLightingShaderProperty", bs_version, name=material_path)}
    elif game == "FO4":
        record = {"shader": default_entry("BSLightingShaderProperty", bs_version, shader_flags_1=0x80400201, shader_flags_2=0x1)}
    elif game in ("SSE", "SKYRIM"):
        flags_2 = 0x8001 | VERTEX_COLORS if game == "SSE" or colors else 0x8001
        record = {"shader": default_entry("BSLightingShaderProperty", bs_version, shader_flags_1=0x82400301, shader_flags_2=flags_2)}
    else:
        record = {
            "shader": default_entry(
                "BSShaderPPLightingProperty", bs_version, shade_flags=1, shader_type=1, shader_flags_1=0x82000001, shader_flags_2=0x1
            ),
            "material": default_entry("NiMaterialProperty", bs_version, specular_color=(0.0, 0.0, 0.0)),
        }
    if skinned and "shader_flags_1" in record["shader"]:
        record["shader"]["shader_flags_1"] |= SKINNED
    record["textures"] = [""] * TEXTURE_SET_SIZE[game]
    return record


BLOCK_CLASSES = {
    cls.type_names[0]: cls
    for cls in (
        BSLightingShaderProperty,
        BSEffectShaderProperty,
        BSShaderPPLightingProperty,
        NiAlphaProperty,
        NiMaterialProperty,
        NiStencilProperty,
        NiSpecularProperty,
    )
}


# -- texture paths ------------------------------------------------------------------------------------
def texture_key(path):
    """A texture path as the games compare them: case-insensitive, either slash, relative to
    Data (the Creation Kit's absolute paths too), "textures\\" optional."""
    parts = [p for p in data_relative(path).lower().split("\\") if p]
    if parts and parts[0] == "textures":
        parts = parts[1:]
    return "/".join(parts)


def same_texture(a, b):
    return texture_key(a or "") == texture_key(b or "")


def game_texture_path(file_path, data_folders=()):
    """The path a NIF stores for a texture file on disk: from its "textures" folder on, with
    backslashes; None when the file is neither under a "textures" folder nor a Data folder."""
    parts = Path(os.path.abspath(file_path)).parts
    for index in range(len(parts) - 1, -1, -1):
        if parts[index].lower() == "textures":
            return "\\".join(parts[index:])
    for folder in data_folders:
        try:
            relative = Path(os.path.abspath(file_path)).relative_to(os.path.abspath(folder))
        except ValueError:
            continue
        return "\\".join(relative.parts)
    return None


class TextureFinder:
    """Finds texture files under Data folders whatever the case of the stored path and of the
    names on disk (each directory is listed once)."""

    def __init__(self, data_folders):
        self.folders = [Path(folder) for folder in data_folders if folder]
        self._listings = {}

    def _entries(self, directory):
        entries = self._listings.get(directory)
        if entries is None:
            try:
                names = os.listdir(directory)
            except OSError:
                names = []
            entries = self._listings[directory] = {}
            for name in sorted(names):
                entries.setdefault(name.lower(), name)
        return entries

    def find(self, path):
        """The file for a stored texture path, or None."""
        key = texture_key(path)
        if not key:
            return None
        return self.find_parts(["textures", *key.split("/")], key.split("/"))

    def find_parts(self, *candidates):
        """The first loose file, folder by folder, at one of the ``candidates`` (lists of
        lower-case path parts), or None."""
        for folder in self.folders:
            for parts in candidates:
                found = self._walk(folder, parts)
                if found is not None:
                    return found
        return None

    def _walk(self, folder, parts):
        current = folder
        for index, part in enumerate(parts):
            name = self._entries(current).get(part)
            if name is None:
                return None
            current = current / name
            if index < len(parts) - 1 and not current.is_dir():
                return None
        return current if current.is_file() else None
