"""BSTriShape read straight from a NIF's bytes with struct, apart from the product's decoders
(nif.xml's layouts, 20.2.0.7, little-endian): the fields after NiAVObject and the vertex buffer
the vertex desc lays out, for the shapes holding their vertices (Fallout 4 and 76, Skyrim SE
statics; Skyrim SE's skinned shapes keep theirs in the partition: tests/sse_raw.py).

After NiAVObject: bound sphere (4f), [bs 155: the bound box, 6f], skin, shader and alpha refs,
vertex desc (u64), triangle count (u32 from bs 130, else u16), vertex count (u16), data size
(u32), the vertices, the triangles (3 u16), [bs 100: a particle data size (u32) + data].

The vertex desc: its low nibbles give the vertex size and, in 4-byte units, where each
attribute starts (2 UV, 4 normal, 5 tangent, 6 colour, 7 skin); bits 44 on, which attributes
there are (0x2 UV, 0x8 normal, 0x10 tangent, 0x20 colours, 0x40 skin, 0x400 full precision).
Positions: 3 floats (+ the bitangent's x) in Skyrim SE and at full precision, else 4 halves.
Normals and tangents: 3 bytes mapped to -1..1 (+ a bitangent component); colours 4 bytes;
skin: 4 half weights, then 4 bone bytes."""

import struct

import numpy as np
from nif_rewriter import RawNif

VERTEX, UV, NORMAL, TANGENT, COLORS, SKINNED, FULL_PRECISION = 0x1, 0x2, 0x8, 0x10, 0x20, 0x40, 0x400


def vertex_buffer(buffer, desc, float_positions):
    """{"positions", "uvs", "normals", "tangents", "colors", "weights", "bones"} (float64 arrays,
    bones uint8; None when the desc has no such attribute) of a (count, stride) uint8 buffer."""
    flags = desc >> 44
    count = len(buffer)

    def field(nibble, dtype, n):
        offset = ((desc >> (4 * nibble)) & 0xF) * 4
        size = np.dtype(dtype).itemsize * n
        return np.ascontiguousarray(buffer[:, offset : offset + size]).view(dtype).reshape(count, n)

    position_type = np.dtype("<f4" if float_positions else "<f2")
    positions = np.ascontiguousarray(buffer[:, : 3 * position_type.itemsize]).view(position_type) if flags & VERTEX else None
    out = {"positions": None if positions is None else positions.astype(np.float64)}
    out["uvs"] = field(2, "<f2", 2).astype(np.float64) if flags & UV else None
    out["normals"] = field(4, "u1", 3) / 255 * 2 - 1 if flags & NORMAL else None
    out["tangents"] = field(5, "u1", 3) / 255 * 2 - 1 if flags & TANGENT else None
    out["colors"] = field(6, "u1", 4) / 255 if flags & COLORS else None
    out["weights"] = out["bones"] = None
    if flags & SKINNED:
        out["weights"] = field(7, "<f2", 4).astype(np.float64)
        offset = ((desc >> 28) & 0xF) * 4 + 8
        out["bones"] = np.ascontiguousarray(buffer[:, offset : offset + 4])
    return out


def shape_fields(nif, index):
    """({"flags" (NiAVObject's), "sphere" (centre xyz, radius), "box" (bs 155's 6 floats, else
    None), "skin", "shader", "alpha", "desc", "counts" (triangles, vertices as stored), "size"
    (the data size)}, where the vertices start) of any BSTriShape type."""
    block = nif.blocks[index]
    at = nif.av_offsets(index)["end"]
    out = {"flags": nif.flags(index), "sphere": struct.unpack_from("<4f", block, at), "box": None}
    at += 16
    if nif.bs_version == 155:
        out["box"] = struct.unpack_from("<6f", block, at)
        at += 24
    out["skin"], out["shader"], out["alpha"], out["desc"] = struct.unpack_from("<3iQ", block, at)
    at += 20
    triangle_format = "<I" if nif.bs_version >= 130 else "<H"
    (triangles,) = struct.unpack_from(triangle_format, block, at)
    at += struct.calcsize(triangle_format)
    vertices, out["size"] = struct.unpack_from("<HI", block, at)
    out["counts"] = (triangles, vertices)
    return out, at + 6


def bs_tri_shape(nif, index):
    """shape_fields with "triangles" and vertex_buffer's arrays, of a BSTriShape holding its
    vertices (the whole block read)."""
    block = nif.blocks[index]
    out, at = shape_fields(nif, index)
    desc, size = out["desc"], out["size"]
    triangles, vertices = out["counts"]
    stride = (desc & 0xF) * 4
    assert size == stride * vertices + 6 * triangles and size  # inline vertices
    buffer = np.frombuffer(bytes(block[at : at + stride * vertices]), np.uint8).reshape(vertices, stride)
    at += stride * vertices
    out["triangles"] = np.frombuffer(bytes(block[at : at + 6 * triangles]), "<u2").reshape(-1, 3).astype(np.int64)
    at += 6 * triangles
    if nif.bs_version == 100:
        (particles,) = struct.unpack_from("<I", block, at)
        at += 4 + particles
    assert at == len(block)
    out.update(vertex_buffer(buffer, desc, nif.bs_version == 100 or bool((desc >> 44) & FULL_PRECISION)))
    return out


def lighting_shader(nif, index):
    """{"name", "shader_type", "flags" (the two u32 words), "texture_set", "size"} of a
    BSLightingShaderProperty of Skyrim (bs 83, 100: its type before NiObjectNET) or Fallout 76
    (bs 155: named after a material file, it holds nothing else: type, flags and texture set
    None). NiObjectNET: name (string index), extra data count + refs, controller."""
    block = nif.blocks[index]
    at = 0
    shader_type = None
    if nif.bs_version < 155:
        (shader_type,) = struct.unpack_from("<I", block, at)
        at += 4
    name, extra = struct.unpack_from("<iI", block, at)
    at += 8 + 4 * extra + 4
    out = {"name": nif.strings[name] if name >= 0 else None, "shader_type": shader_type, "flags": None,
           "texture_set": None, "size": len(block)}
    if nif.bs_version == 155 and name >= 0:
        return out
    out["flags"] = struct.unpack_from("<2I", block, at)
    (out["texture_set"],) = struct.unpack_from("<i", block, at + 8 + 16)  # after the flags, UV offset and scale
    return out


def texture_set(nif, index):
    """The texture paths of a BSShaderTextureSet (count, sized strings)."""
    block = nif.blocks[index]
    (count,) = struct.unpack_from("<I", block)
    at, paths = 4, []
    for _ in range(count):
        (size,) = struct.unpack_from("<I", block, at)
        paths.append(bytes(block[at + 4 : at + 4 + size]).decode("latin-1"))
        at += 4 + size
    assert at == len(block)
    return paths


PLAIN_SHAPES = ("BSTriShape", "BSSubIndexTriShape")  # not LOD or dynamic ones: their descs differ


def vanilla_desc(paths, flags):
    """The vertex desc the first plain shape of these files with these attribute flags holds."""
    for path in paths:
        nif = RawNif.read(path)
        for index in (i for name in PLAIN_SHAPES for i in nif.indices_of(name)):
            desc = shape_fields(nif, index)[0]["desc"]
            if desc >> 44 == flags:
                return desc
    raise AssertionError(f"no shape with flags 0x{flags:X} in {len(paths)} files")
