"""Test-side writer of precombined cells, straight from FORMAT-NOTES section 5 and
CSG-NOTES with struct (independent of the codec), and the values it wrote."""

import math
import struct
import zlib

import numpy as np

STRIDE20_DESC = 0x0001B00000430205  # half pos + bt.x, half uv, normal + bt.y, tangent + bt.z


def rotation_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]


def make_object(index, instance_count):
    """Deterministic geometry and placements for record ``index``."""
    rng = np.random.default_rng(index)
    count = 4 + index
    positions = np.round(rng.uniform(-50, 50, (count, 3)) * 8) / 8  # exact in half precision
    uvs = np.round(rng.uniform(0, 1, (count, 2)) * 256) / 256
    normal_bytes = rng.integers(0, 256, (count, 4), dtype=np.uint8)
    tangent_bytes = rng.integers(0, 256, (count, 4), dtype=np.uint8)
    lods = [
        [(0, 1, 2)] + [(i, i + 1, i + 2) for i in range(1, count - 2)],
        [(0, 1, 2), (0, 2, 3)],
        [(0, 1, 3)],
    ]
    instances = []
    for k in range(instance_count):
        instances.append(
            {
                "grayscale": 1.0 - 0.125 * k,
                "rotation": rotation_z(0.3 * k + index),
                "translation": [100.0 * k, -20.0 * index, 3.5],
                "scale": 1.0 + 0.5 * k,
                "bound_center": [1.0, 2.0, 3.0],
                "bound_radius": 40.0 + k,
            }
        )
    return {
        "positions": positions,
        "uvs": uvs,
        "normal_bytes": normal_bytes,
        "tangent_bytes": tangent_bytes,
        "lods": lods,
        "instances": instances,
    }


def vertex_bytes(obj):
    out = b""
    for p, uv, n, t in zip(obj["positions"], obj["uvs"], obj["normal_bytes"], obj["tangent_bytes"]):
        out += struct.pack("<4e", *p, 0.5) + struct.pack("<2e", *uv) + bytes(n) + bytes(t)
    return out


def triangle_bytes(obj):
    return b"".join(struct.pack("<3H", *tri) for lod in obj["lods"] for tri in lod)


def record_header(obj, desc):
    counts = [len(lod) for lod in obj["lods"]]
    offsets = [0, 3 * counts[0], 3 * (counts[0] + counts[1])]
    out = struct.pack("<II", len(obj["positions"]), 3)
    for c, o in zip(counts, offsets):
        out += struct.pack("<II", c, o)
    out += struct.pack("<I", len(obj["instances"]))
    for inst in obj["instances"]:
        out += struct.pack("<f", inst["grayscale"])
        out += struct.pack("<9f", *[v for row in inst["rotation"] for v in row])  # rows, before translation
        out += struct.pack("<3f", *inst["translation"]) + struct.pack("<f", inst["scale"])
        out += struct.pack("<3f", *inst["bound_center"]) + struct.pack("<f", inst["bound_radius"])
    return out + struct.pack("<Q", desc)


def block_bytes(objects, layout, name_index=-1, hashes=None, offsets=None, desc=STRIDE20_DESC):
    """A BSPackedCombined(Shared)GeomDataExtra body: NiExtraData name, header, [objects],
    records (inline or baked: with geometry; external: headers only)."""
    total_v = sum(len(o["positions"]) for o in objects)
    total_t = sum(len(lod) for o in objects for lod in o["lods"])
    out = struct.pack("<i", name_index) + struct.pack("<Q", desc)
    out += struct.pack("<5I", total_v, total_t, 7, 9, len(objects))
    if layout != "baked":
        for i in range(len(objects)):
            out += struct.pack("<II", (hashes or [0xDDF19A67] * len(objects))[i], (offsets or [0] * len(objects))[i])
    for obj in objects:
        out += record_header(obj, desc)
        if layout != "external":
            out += vertex_bytes(obj) + triangle_bytes(obj)
    return out


def geometry_space(objects):
    """Concatenated record geometry and each record's data offset."""
    space, offsets = b"", []
    for obj in objects:
        offsets.append(len(space))
        space += vertex_bytes(obj) + triangle_bytes(obj)
    return space, offsets


def rows_bytes(objects, offsets, desc):
    return b"".join(
        struct.pack("<IQII", off, desc, len(o["positions"]), 3 * sum(len(lod) for lod in o["lods"]))
        for o, off in zip(objects, offsets)
    )


def csg_bytes(objects, space, offsets, desc=STRIDE20_DESC, chunk=0x10000):
    chunks = [zlib.compress(space[i : i + chunk]) for i in range(0, len(space), chunk)]
    rows = rows_bytes(objects, offsets, desc)
    header_size = 12 + 8 * len(chunks) + len(rows)
    table, position = b"", header_size
    for c in chunks:
        table += struct.pack("<II", len(c), position)
        position += len(c)
    return b"bcsg" + struct.pack("<II", len(objects), len(chunks)) + table + rows + b"".join(chunks)


def psg_bytes(objects, space, offsets, desc=STRIDE20_DESC):
    return b"bpsg" + struct.pack("<I", len(objects)) + rows_bytes(objects, offsets, desc) + space
