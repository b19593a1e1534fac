"""Fallout 3 / New Vegas bhkNiTriStripsShape collision (triangle strips in NiTriStripsData
blocks) packed by hand and read back with struct, apart from the product's decoders (nif.xml's
layouts for 20.2.0.7, bs 34, little-endian): the corpus holds no such shape.

nif.xml: bhkNiTriStripsShape = Material (uint), Radius (float), Unused (20 bytes), Grow By
(uint), Scale (Vector4), Num Strips Data + refs, Num Filters + HavokFilter (4 bytes) each.
NiTriStripsData (bs 34) = NiGeometryData (Group ID, Num Vertices, Keep / Compress Flags, Has
Vertices, Vertices, BS Data Flags, Has Normals, Bounding Sphere, Has Vertex Colors, Consistency
Flags, Additional Data), Num Triangles, Num Strips, Strip Lengths, Has Points, Points.

Unlike the other shapes, the strips' vertices are in game units, not Havok units: NifSkope draws
a bhkNiTriStripsShape with glScalef(1/7) inside the Havok scale it applies to every shape
(gl/glnode.cpp, drawHvkShape), i.e. the vertices unscaled."""

import struct

import numpy as np
from raw_havok import Reader, block_bytes, pack_body, pack_collision

from precombined_nif.core.nif import NifFile


def pack_strips_data(vertices, strips):
    vertices = np.asarray(vertices, np.float64)
    centre = vertices.mean(axis=0)
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    out = struct.pack("<iHBBB", 0, len(vertices), 0, 0, 1)
    out += struct.pack(f"<{3 * len(vertices)}f", *vertices.ravel())
    out += struct.pack("<HB4fBHi", 0, 0, *centre, radius, 0, 0, -1)  # no UVs, normals or colours
    out += struct.pack("<HH", sum(len(s) - 2 for s in strips), len(strips))
    out += struct.pack(f"<{len(strips)}H", *map(len, strips))
    out += struct.pack("<B", 1)
    for strip in strips:
        out += struct.pack(f"<{len(strip)}H", *strip)
    return out


def pack_strips_shape(material, radius, scale, data, layer=1):
    n = len(data)
    out = struct.pack("<If20xI4f", material, radius, 1, *scale)
    out += struct.pack(f"<I{n}i", n, *data)
    return out + struct.pack("<I", n) + struct.pack("<BBH", layer, 0, 0) * n


def read_strips_shape(raw):
    """material, radius, scale (x, y, z), strips data block indices."""
    r = Reader(raw)
    material, radius = r.take("If")
    r.at += 20 + 4
    scale = np.array(r.take("4f")[:3])
    n = r.take("I")
    return dict(material=material, radius=radius, scale=scale, data=list(np.atleast_1d(r.take(f"{n}i"))) if n else [])


def read_strips_data(raw):
    """(vertices (n, 3), [strip point lists]) of a NiTriStripsData (bs 34)."""
    r = Reader(raw)
    _group, count, _keep, _compress, has_vertices = r.take("iHBBB")
    vertices = np.array(r.take(f"{3 * count}f"), np.float64).reshape(count, 3) if has_vertices else np.zeros((0, 3))
    flags, has_normals = r.take("HB")
    if has_normals:
        r.at += 12 * count * (3 if flags & 4096 else 1)
    r.take("4f")  # bounding sphere
    if r.take("B"):
        r.at += 16 * count
    r.at += 8 * count * (flags & 1)
    r.take("Hi")  # consistency, additional data
    r.take("H")  # num triangles
    n = r.take("H")
    lengths = np.atleast_1d(r.take(f"{n}H")) if n else []
    assert r.take("B")  # has points
    return vertices, [list(np.atleast_1d(r.take(f"{length}H"))) for length in lengths]


def strip_triangles(strips):
    """Triangles of strips: the k-th is (s[k], s[k+1], s[k+2]), its first two swapped for odd k
    so that every triangle winds the same way; those naming a vertex twice are not triangles."""
    out = []
    for strip in strips:
        for k in range(len(strip) - 2):
            a, b, c = strip[k : k + 3]
            if len({a, b, c}) == 3:
                out.append((b, a, c) if k % 2 else (a, b, c))
    return out


STRIPS_NODE = 7  # ##nmBar
STRIPS_SCALE = (1.5, 1.0, 0.5)
STRIPS_MATERIAL = 6
# two NiTriStripsData blocks: a quad strip with a degenerate bridge to a second quad, and a fan-like strip
STRIPS_VERTICES = [
    np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0], [4, 4, 1], [8, 0, 2], [8, 4, 2]], np.float64),
    np.array([[0, 0, 6], [3, 0, 6], [0, 3, 7], [3, 3, 8], [1.5, 6, 9]], np.float64),
]
STRIPS = [[[0, 1, 2, 3, 3, 1, 1, 4, 3, 5]], [[0, 1, 2, 3, 4]]]
STRIPS_TRANSLATION = (0.5, -0.25, 1.0)  # Havok units
STRIPS_ROTATION = (0.0, np.sin(np.radians(25)), 0.0, np.cos(np.radians(25)))  # x, y, z, w


def strips_shape_file(source):
    """A New Vegas file (``source``: 9mmscp.nif's path) whose node STRIPS_NODE gets a
    bhkRigidBodyT (moved and turned) holding a bhkNiTriStripsShape of two NiTriStripsData."""
    from precombined_nif.core.nif import RawBlock

    data = source.read_bytes()
    nif = NifFile.from_bytes(data)

    def add(type_name, payload):
        nif.blocks.append(RawBlock(type_name, payload))
        return len(nif.blocks) - 1

    strips = [add("NiTriStripsData", pack_strips_data(v, s)) for v, s in zip(STRIPS_VERTICES, STRIPS)]
    shape = add("bhkNiTriStripsShape", pack_strips_shape(STRIPS_MATERIAL, 0.1, (*STRIPS_SCALE, 0.0), strips))
    payload, kind = pack_body(block_bytes(data)[5][1], shape, rigid_t=True, translation=STRIPS_TRANSLATION, rotation=STRIPS_ROTATION)
    body = add(kind, payload)
    nif.blocks[STRIPS_NODE].collision_object = add("bhkCollisionObject", pack_collision(STRIPS_NODE, body))
    return nif.to_bytes()
