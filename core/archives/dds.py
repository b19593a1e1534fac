"""The .dds header a BA2 DX10 entry lacks: the archive keeps only the texture's size, mip count
and DXGI format, so extraction writes the header back. Formats older tools read get the legacy
header (FourCC or channel masks, as the game's own loose files have); the others (sRGB, BC6H,
BC7, float formats) need the DX10 extension header."""

import struct

# DDS_HEADER flags, pixel-format flags and caps (Microsoft's DDS reference).
DDSD_CAPS, DDSD_HEIGHT, DDSD_WIDTH, DDSD_PITCH = 0x1, 0x2, 0x4, 0x8
DDSD_PIXELFORMAT, DDSD_MIPMAPCOUNT, DDSD_LINEARSIZE = 0x1000, 0x20000, 0x80000
DDPF_ALPHAPIXELS, DDPF_ALPHA, DDPF_FOURCC, DDPF_RGB, DDPF_LUMINANCE = 0x1, 0x2, 0x4, 0x40, 0x20000
DDSCAPS_COMPLEX, DDSCAPS_TEXTURE, DDSCAPS_MIPMAP = 0x8, 0x1000, 0x400000
DDSCAPS2_CUBEMAP_ALL_FACES = 0xFE00
DIMENSION_TEXTURE2D, MISC_TEXTURECUBE = 3, 0x4

# DXGI format -> (block bytes for 4x4-block formats or bits per pixel, is block-compressed,
#                 legacy pixel format (flags, fourcc, bit count, r, g, b, a masks) or None for DX10)
_FOURCC = DDPF_FOURCC


def _fourcc(code):
    return (_FOURCC, int.from_bytes(code, "little"), 0, 0, 0, 0, 0)


FORMATS = {
    2: ("R32G32B32A32_FLOAT", 128, False, None),
    10: ("R16G16B16A16_FLOAT", 64, False, None),
    11: ("R16G16B16A16_UNORM", 64, False, None),
    24: ("R10G10B10A2_UNORM", 32, False, None),
    28: ("R8G8B8A8_UNORM", 32, False, (DDPF_RGB | DDPF_ALPHAPIXELS, 0, 32, 0xFF, 0xFF00, 0xFF0000, 0xFF000000)),
    29: ("R8G8B8A8_UNORM_SRGB", 32, False, None),
    41: ("R32_FLOAT", 32, False, None),
    49: ("R8G8_UNORM", 16, False, None),
    56: ("R16_UNORM", 16, False, None),
    61: ("R8_UNORM", 8, False, (DDPF_LUMINANCE, 0, 8, 0xFF, 0, 0, 0)),
    65: ("A8_UNORM", 8, False, (DDPF_ALPHA, 0, 8, 0, 0, 0, 0xFF)),
    71: ("BC1_UNORM", 8, True, _fourcc(b"DXT1")),
    72: ("BC1_UNORM_SRGB", 8, True, None),
    74: ("BC2_UNORM", 16, True, _fourcc(b"DXT3")),
    75: ("BC2_UNORM_SRGB", 16, True, None),
    77: ("BC3_UNORM", 16, True, _fourcc(b"DXT5")),
    78: ("BC3_UNORM_SRGB", 16, True, None),
    80: ("BC4_UNORM", 8, True, _fourcc(b"BC4U")),
    81: ("BC4_SNORM", 8, True, _fourcc(b"BC4S")),
    83: ("BC5_UNORM", 16, True, _fourcc(b"ATI2")),
    84: ("BC5_SNORM", 16, True, _fourcc(b"BC5S")),
    87: ("B8G8R8A8_UNORM", 32, False, (DDPF_RGB | DDPF_ALPHAPIXELS, 0, 32, 0xFF0000, 0xFF00, 0xFF, 0xFF000000)),
    88: ("B8G8R8X8_UNORM", 32, False, (DDPF_RGB, 0, 32, 0xFF0000, 0xFF00, 0xFF, 0)),
    91: ("B8G8R8A8_UNORM_SRGB", 32, False, None),
    95: ("BC6H_UF16", 16, True, None),
    96: ("BC6H_SF16", 16, True, None),
    98: ("BC7_UNORM", 16, True, None),
    99: ("BC7_UNORM_SRGB", 16, True, None),
}

_HEADER = struct.Struct("<4s7I44x8I5I")  # magic, size..mip count, reserved, pixel format, caps
_DX10 = struct.Struct("<5I")


def top_level_size(dxgi_format, width, height):
    """Bytes of the largest mip level: the header's pitch (one row) or linear size."""
    _name, size, compressed, _legacy = FORMATS[dxgi_format]
    if compressed:
        return max(1, (width + 3) // 4) * max(1, (height + 3) // 4) * size
    return (width * size + 7) // 8


def dds_header(dxgi_format, width, height, mip_count, cubemap):
    """The complete header (magic, DDS_HEADER and the DX10 header when the format needs it).
    ``dxgi_format`` must be a key of FORMATS."""
    _name, _size, compressed, legacy = FORMATS[dxgi_format]
    flags = DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT | DDSD_MIPMAPCOUNT
    flags |= DDSD_LINEARSIZE if compressed else DDSD_PITCH
    caps = DDSCAPS_TEXTURE
    if mip_count > 1:
        caps |= DDSCAPS_COMPLEX | DDSCAPS_MIPMAP
    caps2 = 0
    if cubemap:
        caps |= DDSCAPS_COMPLEX
        caps2 = DDSCAPS2_CUBEMAP_ALL_FACES
    pixel_format = legacy if legacy is not None else _fourcc(b"DX10")
    header = _HEADER.pack(
        b"DDS ", 124, flags, height, width, top_level_size(dxgi_format, width, height), 0, mip_count,
        32, *pixel_format, caps, caps2, 0, 0, 0,
    )
    if legacy is None:
        header += _DX10.pack(dxgi_format, DIMENSION_TEXTURE2D, MISC_TEXTURECUBE if cubemap else 0, 1, 0)
    return header


def format_name(header):
    """The pixel format a .dds file's first bytes name (DXGI name, FourCC or bit count), for
    messages; None when ``header`` is not a DDS header."""
    if len(header) < 128 or header[:4] != b"DDS ":
        return None
    flags, fourcc, bits = struct.unpack_from("<I4sI", header, 80)
    if fourcc == b"DX10" and len(header) >= 148:
        dxgi = struct.unpack_from("<I", header, 128)[0]
        return FORMATS[dxgi][0] if dxgi in FORMATS else f"DXGI format {dxgi}"
    if flags & DDPF_FOURCC:
        return fourcc.decode("ascii", "replace")
    return f"uncompressed {bits}-bit"
