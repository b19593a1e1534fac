"""Starfield files read and written with ``struct``, apart from the product's codecs: the .mesh
layout as NifSkope's fo76utils fork and nifly describe it (versions 0 to 2), with values
decoded here (positions times scale / 32767, UDEC3 fields (x + 1) * 511.5, half-float UVs), so
tests compare the product's decoding with an independent one and build the versions the corpus
lacks; and NIF surgery turning a corpus NIF's external mesh into inline geometry."""

import struct

import pytest
from nif_rewriter import RawNif

from precombined_nif.core.errors import FormatError

SF = "pynifly/tests/tests/SF"


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def u32(self):
        return self.take("I")[0]

    def rows(self, fmt, count):
        return [self.take(fmt) for _ in range(count)]


def udec3(value):
    return tuple(((value >> shift) & 0x3FF) / 511.5 - 1.0 for shift in (0, 10, 20))


def read_mesh(data):
    """Every field of a .mesh, positions and normals decoded."""
    r = Reader(data)
    mesh = {"version": r.u32()}
    mesh["triangles"] = r.rows("3H", r.u32() // 3)
    mesh["scale"], mesh["per_vertex"] = r.take("fI")
    mesh["raw_positions"] = r.rows("3h", r.u32())
    mesh["positions"] = [tuple(v * mesh["scale"] / 32767 for v in p) for p in mesh["raw_positions"]]
    mesh["uvs"] = r.rows("2e", r.u32())
    mesh["uvs2"] = r.rows("2e", r.u32())
    mesh["colors"] = r.rows("4B", r.u32())  # B, G, R, A
    mesh["raw_normals"] = [n for (n,) in r.rows("I", r.u32())]
    mesh["normals"] = [udec3(n) for n in mesh["raw_normals"]]
    mesh["raw_tangents"] = [t for (t,) in r.rows("I", r.u32())]
    mesh["tangents"] = [udec3(t) for t in mesh["raw_tangents"]]
    mesh["weights"] = r.rows("2H", r.u32())  # (bone, weight)
    mesh["lods"] = [r.rows("3H", r.u32() // 3) for _ in range(r.u32())] if mesh["version"] >= 1 else []
    if r.at == len(data):
        mesh["meshlets"] = mesh["culling"] = None
    else:
        mesh["meshlets"] = r.rows("4I", r.u32())
        mesh["culling"] = r.rows("6f", r.u32())  # v2: centre, extent; v0/v1: sphere, cone bytes as a float, apex
    assert r.at == len(data), "bytes after the culling data"
    return mesh


def read_morphs(data):
    """Names and {(morph, vertex): (position delta, normal delta)} read with struct."""
    r = Reader(data)
    assert r.take("4s")[0] == b"MDAT"
    axes, vertex_count, morph_count = r.take("3I")
    names = [r.take(f"{r.u32()}s")[0].decode() for _ in range(morph_count)]
    row_count, listed = r.take("2I")
    rows = r.rows("3eHII", row_count)
    deltas = {}
    for vertex in range(listed):
        first, *mask = r.take("5I")
        bits = [j for j in range(128) if mask[j // 32] >> (j % 32) & 1]
        for rank, morph in enumerate(bits):
            x, y, z, _, normal, _ = rows[first + rank]
            deltas[morph, vertex] = ((x, y, z), udec3(normal))
    assert r.at == len(data) and axes == 3 and vertex_count == listed
    return names, vertex_count, deltas


def count_offsets(kind, data):
    """Where a file's u32 counts (and, in a .mesh, the weights per vertex) lie: ``kind`` "sf-mesh",
    "sf-morphs" or "sf-material" (text: its first hundred line starts)."""
    if kind == "sf-material":
        return [i + 1 for i, byte in enumerate(data) if byte == 0x0A][:100]
    r = Reader(data)
    if kind == "sf-morphs":
        found = [4, 8, 12]
        r.at = 16
        for _ in range(struct.unpack_from("<I", data, 12)[0]):
            found.append(r.at)
            r.at += 4 + r.u32()
        return found + [r.at, r.at + 4]
    found = []

    def count(size):
        found.append(r.at)
        n = r.u32()
        r.at += n * size
        return n

    r.at = 4
    count(2)
    found.append(r.at + 4)  # weights per vertex
    r.at += 8
    for size in (6, 4, 4, 4, 4, 4, 4):  # positions, UVs, second UVs, colours, normals, tangents, weights
        count(size)
    for _ in range(count(0)):  # LODs
        count(2)
    count(16)
    count(24)
    return found


def write_mesh(version, triangles, scale, positions, normals, tangents, uvs=(), weights=(), per_vertex=0, lods=(),
               meshlets=(), culling=(), colors=(), uvs2=(), tail=True):
    """A .mesh from raw values: ``positions`` int16 triples, ``normals``/``tangents`` u32 UDEC3,
    ``weights`` (bone, weight) pairs, ``culling`` six floats per meshlet; ``tail``: meshlets and
    culling present."""
    out = struct.pack("<II", version, 3 * len(triangles)) + b"".join(struct.pack("<3H", *t) for t in triangles)
    out += struct.pack("<fII", scale, per_vertex, len(positions)) + b"".join(struct.pack("<3h", *p) for p in positions)
    for rows, fmt in ((uvs, "2e"), (uvs2, "2e"), (colors, "4B")):
        out += struct.pack("<I", len(rows)) + b"".join(struct.pack("<" + fmt, *row) for row in rows)
    for values in (normals, tangents):
        out += struct.pack("<I", len(values)) + b"".join(struct.pack("<I", v) for v in values)
    out += struct.pack("<I", len(weights)) + b"".join(struct.pack("<2H", *w) for w in weights)
    if version >= 1:
        out += struct.pack("<I", len(lods))
        for lod in lods:
            out += struct.pack("<I", 3 * len(lod)) + b"".join(struct.pack("<3H", *t) for t in lod)
    if tail:
        out += struct.pack("<I", len(meshlets)) + b"".join(struct.pack("<4I", *m) for m in meshlets)
        out += struct.pack("<I", len(culling)) + b"".join(struct.pack("<6f", *c) for c in culling)
    return out


def packed_udec3(x, y, z, top):
    return sum(round((c + 1.0) * 511.5) << shift for c, shift in ((x, 0), (y, 10), (z, 20))) | top << 30


def inline_geometry(corpus, name="naked_f.nif"):
    """(internal NIF bytes, mesh bytes): the corpus NIF with its BSGeometry flag 0x200 set and its
    LOD 0 mesh name (u32 length + 41 characters, the block's last field before three empty
    slot bytes) replaced by the .mesh bytes it names."""
    raw = RawNif.read(corpus / SF / name)
    (index,) = raw.indices_of("BSGeometry")
    block = raw.blocks[index]
    flags_at = raw.av_offsets(index)["transform"] - 4  # the u32 flags before the transform
    struct.pack_into("<I", block, flags_at, struct.unpack_from("<I", block, flags_at)[0] | 0x200)
    name_at = len(block) - 3 - 45
    (length,) = struct.unpack_from("<I", block, name_at)
    assert length == 41
    mesh_name = block[name_at + 4:name_at + 45].decode()
    mesh = (corpus / SF / "geometries" / mesh_name.replace("\\", "/")).with_suffix(".mesh").read_bytes()
    raw.blocks[index] = block[:name_at] + mesh + block[name_at + 45:]
    return raw.to_bytes(), mesh


def refusal(reader, path, data):
    """The message of the FormatError ``reader.read`` raises for ``data`` written at ``path``."""
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        reader.read(path)
    return str(caught.value)


# -- NIF fields by struct (a RawNif's block bytes) ---------------------------------------------
def transform(raw, index):
    """A node's or shape's 4x4 local transform (world = T + R * s * v, R's rows as stored)."""
    values = struct.unpack_from("<13f", raw.blocks[index], raw.av_offsets(index)["transform"])
    matrix = [[values[3 + 3 * row + col] * values[12] for col in range(3)] + [values[row]] for row in range(3)]
    return matrix + [[0.0, 0.0, 0.0, 1.0]]


def bone_binds(raw, index):
    """The 4x4 bind transforms (skin space to bone space) of a BSSkin::BoneData block."""
    block = raw.blocks[index]
    (count,) = struct.unpack_from("<I", block, 0)
    binds = []
    for bone in range(count):
        values = struct.unpack_from("<17f", block, 4 + 68 * bone)  # sphere centre, radius, rotation rows, translation, scale
        rotation, translation, scale = values[4:13], values[13:16], values[16]
        binds.append([[rotation[3 * row + col] * scale for col in range(3)] + [translation[row]] for row in range(3)]
                     + [[0.0, 0.0, 0.0, 1.0]])
    return binds


def skin_attach_names(raw, index):
    """The bone names a SkinAttach block lists (after its name's string index)."""
    block = raw.blocks[index]
    (count,) = struct.unpack_from("<I", block, 4)
    names, at = [], 8
    for _ in range(count):
        (size,) = struct.unpack_from("<I", block, at)
        names.append(block[at + 4:at + 4 + size].decode("latin-1"))
        at += 4 + size
    return names


def node_placements(raw):
    """{node name: 4x4 placement in the first root's space} of every named NiNode under it."""
    import numpy as np

    found = {}

    def visit(index, above):
        if raw.type_of(index) != "NiNode":
            return
        here = above @ np.array(transform(raw, index))
        found.setdefault(raw.node_name(index), here)
        for child in raw.node_children(index):
            if child >= 0:
                visit(child, here)

    root = raw.roots()[0]
    for child in raw.node_children(root):
        visit(child, np.eye(4))
    return found


def geometry_slots(raw, index):
    """A BSGeometry's four LOD slots: None, or (triangles, vertices, flags, mesh name) of an
    external one (after bounds, three refs: 52 bytes past NiAVObject's fields)."""
    block, at = raw.blocks[index], raw.av_offsets(index)["end"] + 52
    slots = []
    for _ in range(4):
        if block[at]:
            triangles, vertices, flags, length = struct.unpack_from("<4I", block, at + 1)
            slots.append((triangles // 3, vertices, flags, block[at + 17:at + 17 + length].decode()))
            at += 17 + length
        else:
            slots.append(None)
            at += 1
    assert at == len(block)
    return slots


def mesh_file(folder, name):
    """The .mesh a slot names, under the Data folder ``folder``."""
    parts = [part for part in name.replace("/", "\\").split("\\") if part]
    return folder.joinpath("geometries", *parts[:-1], parts[-1] + ".mesh")


def beside_file(nif, name):
    """The .mesh a slot names, beside the NIF ``nif`` (its folder standing for ``geometries``)."""
    parts = [part for part in name.replace("/", "\\").split("\\") if part]
    return nif.parent.joinpath(*parts[:-1], parts[-1] + ".mesh")


def name_first_slot(raw, index, name, triangles, vertices):
    """Make the BSGeometry ``index``'s LOD 0 the external .mesh ``name`` of these counts (the
    other three slots empty)."""
    block, at = raw.blocks[index], raw.av_offsets(index)["end"] + 52
    (flags,) = struct.unpack_from("<I", block, at + 9)
    raw.blocks[index] = block[:at] + struct.pack("<B4I", 1, 3 * triangles, vertices, flags, len(name)) + name.encode() + bytes(3)


def shared_lod_mesh():
    """(mesh bytes, values): a .mesh (version 1) of a 4 x 4 vertex height field, 18 triangles,
    and two triangle lists over the same vertices (LOD 1: the four corners and the middle row's
    ends; LOD 2: one triangle of corners), each vertex weighted to bone 0; ``values`` holds
    what was written (raw positions, triangles, LODs, UVs, normals, tangents, weights)."""
    import numpy as np

    xs, ys = np.meshgrid(np.arange(4), np.arange(4), indexing="xy")
    heights = np.round(3000 * np.sin(xs * 0.9) * np.cos(ys * 0.6)).astype(int)
    positions = [(int(x) * 8000, int(y) * 8000, int(z)) for x, y, z in zip(xs.ravel(), ys.ravel(), heights.ravel())]
    triangles = []
    for y in range(3):
        for x in range(3):
            a, b, c, d = 4 * y + x, 4 * y + x + 1, 4 * y + x + 4, 4 * y + x + 5
            triangles += [(a, b, d), (a, d, c)]
    lods = [[(0, 3, 7), (0, 7, 4), (4, 7, 15), (4, 15, 12)], [(0, 3, 15)]]
    # normals of the height field (central differences), tangents along +x
    grid = heights.astype(float) / 32767
    dx, dy = np.gradient(grid, 8000 / 32767, axis=1), np.gradient(grid, 8000 / 32767, axis=0)
    normals = np.stack([-dx, -dy, np.ones_like(grid)], axis=-1).reshape(-1, 3)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    packed_normals = [packed_udec3(*n, 1) for n in normals]
    packed_tangents = [packed_udec3(1.0, 0.0, 0.0, 3)] * 16
    uvs = [(x / 3, y / 3) for x, y in zip(xs.ravel(), ys.ravel())]
    weights = [(0, 65535)] * 16
    data = write_mesh(1, triangles, 1.0, positions, packed_normals, packed_tangents, uvs=uvs, weights=weights,
                      per_vertex=1, lods=lods, tail=False)
    return data, {"raw_positions": positions, "triangles": triangles, "lods": lods, "uvs": uvs, "weights": weights}
