"""Models the Creation Kit's precombine rules judge, built from nifly's Fallout 4 golden static
(two BSTriShapes, 'cylinder_1' block 3 and 'cylinder_2' block 6, under the root; shaders in
blocks 4 and 7) by struct edits (nif_rewriter.RawNif), apart from the product's reader and
writer: each breaks one rule, and the golden file is their unbroken twin. Byte layouts:
FORMAT-NOTES sections 3 and 4 (BSVertexDesc, BSTriShape), nif.xml (BSXFlags, NiBillboardNode)."""

import struct

import numpy as np
from nif_rewriter import STATIC, RawNif

SHAPE, OTHER_SHAPE, SHADER = 3, 6, 4
FULL_PRECISION = 0x400 << 44
OFFSET_NIBBLES = (2, 3, 4, 5, 6, 7, 8, 9)  # UV1, UV2, normal, tangent, colour, skin, land, eye


def golden(corpus):
    return RawNif.read(corpus / STATIC)


def shape_fields(nif, index):
    """Offset of the vertex desc in a BSTriShape's bytes (after NiAVObject, the bounding sphere and
    the skin, shader and alpha links) and the fields from it: desc, triangles, vertices, data size."""
    at = nif.av_offsets(index)["end"] + 16 + 12
    return at, struct.unpack_from("<QIHI", nif.blocks[index], at)


def set_link(nif, index, field, value):
    """A BSTriShape's skin (0), shader (1) or alpha (2) link."""
    struct.pack_into("<i", nif.blocks[index], nif.av_offsets(index)["end"] + 16 + 4 * field, value)


def full_precision(nif, index):
    """The shape's vertices as 32-bit floats: each 8-byte half position (xyz, bitangent x) becomes
    16 bytes, every attribute offset and the stride grow by two 4-byte units, FULL_PRECISION set."""
    at, (desc, triangles, vertices, size) = shape_fields(nif, index)
    stride = (desc & 0xF) * 4
    block = nif.blocks[index]
    data = np.frombuffer(bytes(block[at + 18:at + 18 + vertices * stride]), np.uint8).reshape(vertices, stride)
    positions = data[:, :8].copy().view("<f2").astype("<f4")
    widened = np.concatenate([positions.view(np.uint8), data[:, 8:]], axis=1)
    new_desc = desc + 2 | FULL_PRECISION
    for nibble in OFFSET_NIBBLES:
        if desc >> 4 * nibble & 0xF:
            new_desc += 2 << 4 * nibble
    geometry = widened.tobytes() + bytes(block[at + 18 + vertices * stride:at + 18 + size])
    block[at:at + 18 + size] = struct.pack("<QIHI", new_desc, triangles, vertices, len(geometry)) + geometry
    return new_desc


def no_vertices(nif, index):
    """The shape without vertices or triangles (data size 0)."""
    at, (desc, _, _, size) = shape_fields(nif, index)
    nif.blocks[index][at:at + 18 + size] = struct.pack("<QIHI", desc, 0, 0, 0)


def cut(nif, index, count):
    """The block's last ``count`` bytes dropped (its size in the header follows)."""
    del nif.blocks[index][-count:]


def add_bsx(nif, value):
    """A BSXFlags block (NiIntegerExtraData: name, u32) in the root's extra data list."""
    bsx = nif.add_block("BSXFlags", struct.pack("<iI", nif.string_index("BSX"), value))
    root = nif.blocks[0]
    at = 4
    (count,) = struct.unpack_from("<I", root, at)
    root[at:at + 4 + 4 * count] = struct.pack(f"<I{count + 1}i", count + 1, *struct.unpack_from(f"<{count}i", root, at + 4), bsx)
    return bsx


def billboard(nif, index):
    """A node made a NiBillboardNode: NiNode's fields, then a u16 billboard mode."""
    nif.set_type(index, "NiBillboardNode")
    nif.blocks[index] += struct.pack("<H", 0)


def rename(nif, index, name):
    struct.pack_into("<i", nif.blocks[index], nif.av_offsets(index)["name"], nif.string_index(name))


def write(nif, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(nif.to_bytes())
    return path
