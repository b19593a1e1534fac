"""MOPP trees of the corpus read straight from a NIF's bytes with struct, apart from the
product's block decoders (nif.xml's layouts): bhkMoppBvTreeShape's code and space, and the
triangles of the shape under it with the leaf ID (shape key) the game gives each: the
triangle's index for packed strips, with the index of the sub shape holding its first vertex
in the top byte (as vault74's New Vegas static collection has them); for Skyrim's compressed meshes the big triangle's index,
or (chunk + 1) << bits-per-w-index | winding << bits-per-index | the triangle's first index
position in its chunk (a strip's k-th triangle starts at its k-th index and has winding k & 1,
a flat list's triangles at multiples of three after the strips)."""

import struct

import numpy as np

from raw_havok import Reader, block_bytes


def mopp_blocks(data):
    """[(block index, code, origin (3,), scale, shape type name, shape bytes, blocks)] of a file."""
    raw = block_bytes(data)
    found = []
    for index, (type_name, payload) in raw.items():
        if type_name != "bhkMoppBvTreeShape":
            continue
        r = Reader(payload)
        shape = r.take("i")
        r.at += 12 + 4
        size = r.take("I")
        offset = r.take("4f")
        r.at = len(payload) - size
        found.append((index, payload[r.at :], np.array(offset[:3]), offset[3], raw[shape][0], raw[shape][1], raw))
    return found


def shape_triangles(type_name, payload, raw):
    """(vertices (n, 3), triangles (m, 3), leaf IDs (m,), radius) of the shape under a MOPP."""
    r = Reader(payload)
    if type_name == "bhkCompressedMeshShape":
        r.at = 8
        radius = r.take("f")
        r.at = 4 + 4 + 4 + 4 + 16 + 4 + 16
        return compressed_mesh(raw[r.take("i")][1]) + (radius,)
    if type_name == "bhkPackedNiTriStripsShape":
        r.at = 8
        radius = r.take("f")
        r.at = 4 + 4 + 4 + 4 + 16 + 4 + 16
        return packed_data(raw[r.take("i")][1]) + (radius,)
    raise ValueError(type_name)


def packed_data(payload):
    r = Reader(payload)
    count = r.take("I")
    triangles = np.array(struct.unpack_from(f"<{4 * count}H", payload, 4), np.int64).reshape(-1, 4)[:, :3]
    r.at = 4 + 8 * count
    n = r.take("I")
    compressed = r.take("B")
    vertices = np.frombuffer(payload, "<f2" if compressed else "<f4", 3 * n, r.at).reshape(-1, 3).astype(np.float64)
    r.at += (2 if compressed else 4) * 3 * n
    ends, total = [], 0
    for _ in range(r.take("H")):
        r.take("BBH")
        total += r.take("I")
        r.take("I")
        ends.append(total)
    keys = [sum(first >= end for end in ends) << 24 | i for i, first in enumerate(triangles[:, 0].tolist())]
    return vertices, triangles, np.array(keys, np.uint32)


def _rotate(q, v):
    """Vectors ``v`` (n, 3) turned by the quaternion (x, y, z, w)."""
    u, w = np.array(q[:3]), q[3]
    return 2 * (u @ v.T)[:, None] * u + (w * w - u @ u) * v + 2 * w * np.cross(u, v)


def compressed_mesh(payload):
    r = Reader(payload)
    bits_index, bits_w_index = r.take("I"), r.take("I")
    r.at += 4 + 4 + 4 + 32
    r.at += 2  # welding and material types
    for size in (4, 4, 4, 8):  # materials 32, 16 and 8, chunk materials
        count = r.take("I")
        r.at += size * count
    r.take("I")  # named materials
    transforms = [(r.take("4f")[:3], r.take("4f")) for _ in range(r.take("I"))]
    big_vertices = np.array([r.take("4f")[:3] for _ in range(r.take("I"))], np.float64).reshape(-1, 3)
    vertices = [big_vertices]
    triangles, keys = [], []
    count = r.take("I")
    for i in range(count):
        a, b, c = r.take("3H")
        r.take("I"), r.take("H")
        triangles.append((a, b, c))
        keys.append(i)
    base = len(big_vertices)
    for chunk in range(r.take("I")):
        translation = np.array(r.take("4f")[:3])
        r.take("I"), r.take("H")
        transform = r.take("H")
        n = r.take("I") // 3
        local = np.array(struct.unpack_from(f"<{3 * n}H", payload, r.at), np.float64).reshape(-1, 3) * 0.001 + translation
        r.at += 6 * n
        indices = struct.unpack_from(f"<{r.take('I')}H", payload, r.at)
        r.at += 2 * len(indices)
        strips = struct.unpack_from(f"<{r.take('I')}H", payload, r.at)
        r.at += 2 * len(strips)
        welding = r.take("I")
        r.at += 2 * welding
        if transform != 0xFFFF:
            t, q = transforms[transform]
            local = _rotate(q, local) + t
        vertices.append(local)
        head = (chunk + 1) << bits_w_index
        start = 0
        for length in strips:
            for k in range(length - 2):
                a, b, c = indices[start + k : start + k + 3]
                triangles.append((a + base, b + base, c + base) if k % 2 == 0 else (a + base, c + base, b + base))
                keys.append(head | (k & 1) << bits_index | (start + k))
            start += length
        for k in range(start, len(indices) - 2, 3):
            triangles.append(tuple(v + base for v in indices[k : k + 3]))
            keys.append(head | k)
        base += n
    return np.concatenate(vertices), np.array(triangles, np.int64).reshape(-1, 3), np.array(keys, np.uint32)
