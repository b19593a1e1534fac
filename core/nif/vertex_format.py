"""BSVertexDesc: the u64 describing a packed Bethesda vertex, and its numpy layout.

FORMAT-NOTES section 3: stride = (desc & 0xF) * 4; 4-bit offsets in units of 4 bytes for
UV1 (bits 8-11), UV2, normal, tangent, colour, skin, land, eye (bits 36-39); attribute flags
are (desc >> 44) & 0xFFF. Positions are binary16 halves unless FULL_PRECISION is set (or the
file is Skyrim SE, which always uses floats).

The layout is a numpy structured dtype with the fields at the descriptor's own offsets, so a
whole vertex buffer is one ``frombuffer`` and bytes no field covers are carried unchanged.
"""

from functools import lru_cache

import numpy as np

from ..errors import FormatError
from . import versions

VERTEX = 0x1
UV = 0x2
UV2 = 0x4
NORMAL = 0x8
TANGENT = 0x10
COLORS = 0x20
SKINNED = 0x40
LAND = 0x80
EYE = 0x100
INSTANCE = 0x200
FULL_PRECISION = 0x400

FLAG_NAMES = {
    VERTEX: "vertex",
    UV: "uv",
    UV2: "uv2",
    NORMAL: "normal",
    TANGENT: "tangent",
    COLORS: "colors",
    SKINNED: "skinned",
    LAND: "land",
    EYE: "eye",
    INSTANCE: "instance",
    FULL_PRECISION: "full_precision",
}

# (flag, nibble index of its offset, field name, numpy element type, element count)
_ATTRIBUTES = (
    (UV, 2, "uv", "f2", 2),
    (UV2, 3, "uv2", "f2", 2),
    (NORMAL, 4, "normal", "u1", 4),  # xyz + bitangent y
    (TANGENT, 5, "tangent", "u1", 4),  # xyz + bitangent z
    (COLORS, 6, "color", "u1", 4),
    (SKINNED, 7, "bone_weights", "f2", 4),
    (EYE, 9, "eye", "f4", 1),
)
_SIZES = {"uv": 4, "uv2": 4, "normal": 4, "tangent": 4, "color": 4, "bone_weights": 12, "eye": 4}


def flags_of(desc):
    return (desc >> 44) & 0xFFF


def stride_of(desc):
    return (desc & 0xF) * 4


def full_precision(desc, bs_version):
    return versions.before_fo4(bs_version) or bool(flags_of(desc) & FULL_PRECISION)


@lru_cache(maxsize=256)
def vertex_dtype(desc, full, big_endian=False):
    """The structured dtype of one vertex. ``position`` holds xyz and the fourth value
    (bitangent x when tangents are present, otherwise unused bits kept as they are)."""
    order = ">" if big_endian else "<"
    stride = stride_of(desc)
    flags = flags_of(desc)
    names, formats, offsets = [], [], []

    def add(name, fmt, offset, size):
        if offset + size > stride:
            raise FormatError(
                f"vertex desc 0x{desc:016X}: {name} at byte {offset} does not fit a {stride}-byte vertex"
            )
        names.append(name)
        formats.append(fmt)
        offsets.append(offset)

    if flags & VERTEX:
        add("position", (order + ("f4" if full else "f2"), 4), 0, 16 if full else 8)
    for flag, nibble, name, code, count in _ATTRIBUTES:
        if flags & flag and not (flag == TANGENT and not flags & NORMAL):
            offset = ((desc >> (4 * nibble)) & 0xF) * 4
            element = code if code == "u1" else order + code
            add(name, (element, count) if count > 1 else element, offset, _SIZES[name])
            if flag == SKINNED:
                add("bone_indices", ("u1", 4), offset + 8, 4)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": stride})


def build_desc(flags, full):
    """The descriptor the game's tools write for these attributes: position block first, then
    UV, UV2, normal, tangent, colours, skin and eye data, each 4-byte aligned."""
    flags &= VERTEX | UV | UV2 | NORMAL | TANGENT | COLORS | SKINNED | EYE
    if flags & TANGENT and not flags & NORMAL:
        raise FormatError("tangents need normals in a Bethesda vertex")
    if full:
        flags |= FULL_PRECISION
    desc = 0
    offset = (16 if full else 8) if flags & VERTEX else 0
    for flag, nibble, name, _code, _count in _ATTRIBUTES:
        if flags & flag:
            desc |= (offset // 4) << (4 * nibble)
            offset += _SIZES[name]
    if offset // 4 > 0xF:
        raise FormatError(f"a {offset}-byte vertex is larger than a descriptor can describe")
    return desc | (offset // 4) | (flags << 44)


def unorm8_to_signed(values):
    """Bytes 0..255 to floats -1..1 (normals, tangents, bitangent y/z)."""
    out = np.multiply(values, np.float32(2.0 / 255.0), dtype=np.float32)
    out -= np.float32(1.0)
    return out


def signed_to_unorm8(values):
    scaled = (np.clip(np.asarray(values, np.float32), -1.0, 1.0) + 1.0) * 127.5
    return np.rint(scaled).astype(np.uint8)
