"""Both .tri layouts read and written with ``struct`` alone, as the public descriptions give them
(FaceGen's SDK file-format notes; BodySlide's TriFile.cpp), sharing nothing with the product's
codec: the tests check the codec's decoded values against these."""

import struct

import numpy as np


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def label(self, width=1):
        (n,) = self.take("I")
        raw = self.data[self.pos : self.pos + n * width]
        self.pos += n * width
        return raw.decode("utf-16-le" if width == 2 else "latin-1").rstrip("\0")

    def name(self):
        (n,) = self.take("B")
        raw = self.data[self.pos : self.pos + n]
        self.pos += n
        return raw.decode("latin-1")


def facegen(data):
    """{'counts': header counts, 'vertices': [(x, y, z)], 'triangles', 'quads', 'uvs' (None without),
    'uv_triangles', 'uv_quads' (None when per vertex), 'morphs': {name: [(dx, dy, dz)] per vertex},
    'modifiers': {name: {index: (dx, dy, dz)}}} with offsets in float32 as the game computes them."""
    r = Reader(data)
    assert r.data[:8] == b"FRTRI003"
    r.pos = 8
    v, t, q, lv, ls, x, ext, md, ms, k = r.take("10I")
    r.pos += 16
    vertices = np.array(r.take(f"{3 * v}f"), np.float32).reshape(-1, 3)
    targets = np.array(r.take(f"{3 * k}f"), np.float32).reshape(-1, 3)
    triangles = np.array(r.take(f"{3 * t}I"), np.int64).reshape(-1, 3)
    quads = np.array(r.take(f"{4 * q}I"), np.int64).reshape(-1, 4)
    width = 2 if ext & 2 else 1
    labelled = [(r.take("I")[0], r.label(width)) for _ in range(lv)]
    points = [(r.take("I3f"), r.label(width)) for _ in range(ls)]
    uvs = uv_triangles = uv_quads = None
    if x:
        uvs = np.array(r.take(f"{2 * x}f"), np.float32).reshape(-1, 2)
        uv_triangles = np.array(r.take(f"{3 * t}I"), np.int64).reshape(-1, 3)
        uv_quads = np.array(r.take(f"{4 * q}I"), np.int64).reshape(-1, 4)
    elif ext & 1:
        uvs = np.array(r.take(f"{2 * v}f"), np.float32).reshape(-1, 2)
    morphs = {}
    for _ in range(md):
        name = r.label(width)
        (scale,) = r.take("f")
        values = np.array(r.take(f"{3 * v}h"), np.float32).reshape(-1, 3)
        morphs[name] = values * np.float32(scale)
    modifiers, used = {}, 0
    for _ in range(ms):
        name = r.label(width)
        (count,) = r.take("I")
        indices = r.take(f"{count}I")
        modifiers[name] = {i: targets[used + n] - vertices[i] for n, i in enumerate(indices)}
        used += count
    return {"counts": (v, t, q, lv, ls, x, ext, md, ms, k), "vertices": vertices, "morphs": morphs,
            "modifiers": modifiers, "labelled": labelled, "points": points, "end": r.pos, "triangles": triangles,
            "quads": quads, "uvs": uvs, "uv_triangles": uv_triangles, "uv_quads": uv_quads}


def bodyslide(data):
    """{shape name: {morph name: {vertex index: (dx, dy, dz)}}} of the position section, and
    the texture-coordinate section the same way (None when absent)."""
    r = Reader(data)
    assert r.data[:4] == b"PIRT"
    r.pos = 4

    def section(components):
        shapes = {}
        (count,) = r.take("H")
        for _ in range(count):
            shape = shapes.setdefault(r.name(), {})
            (morphs,) = r.take("H")
            for _ in range(morphs):
                name = r.name()
                scale, n = r.take("fH")
                offsets = {}
                for _ in range(n):
                    index, *values = r.take(f"H{components}h")
                    offsets[index] = np.array(values, np.float32) * np.float32(scale)
                shape[name] = offsets
        return shapes

    positions = section(3)
    uvs = section(2) if r.pos < len(data) else None
    return {"shapes": positions, "uv_shapes": uvs, "end": r.pos}


# -- writing, for layouts the corpus lacks ------------------------------------------------------
def label_bytes(text, wide=False, nul=True):
    body = (text + "\0" * nul).encode("utf-16-le" if wide else "latin-1")
    return struct.pack("<I", len(body) // (2 if wide else 1)) + body


def facegen_bytes(vertices, triangles, *, quads=(), uvs=None, uv_triangles=None, uv_quads=(), morphs=(), modifiers=(),
                  labelled=(), points=(), wide=False, per_vertex_uvs=False, nul=True):
    """``morphs``: (name, scale, [(i16 x3) per vertex]); ``modifiers``: (name, [index], [(x, y, z) target])."""
    vertices = list(vertices)
    targets = [p for _, _, positions in modifiers for p in positions]
    x = 0 if uvs is None or per_vertex_uvs else len(uvs)
    ext = (1 if uvs is not None else 0) | (2 if wide else 0)
    out = b"FRTRI003" + struct.pack("<10I", len(vertices), len(triangles), len(quads), len(labelled), len(points), x, ext,
                                    len(morphs), len(modifiers), len(targets)) + bytes(16)
    for p in vertices + targets:
        out += struct.pack("<3f", *p)
    for f in triangles:
        out += struct.pack("<3I", *f)
    for f in quads:
        out += struct.pack("<4I", *f)
    for index, text in labelled:
        out += struct.pack("<I", index) + label_bytes(text, wide, nul)
    for triangle, weights, text in points:
        out += struct.pack("<I3f", triangle, *weights) + label_bytes(text, wide, nul)
    if uvs is not None:
        for uv in uvs:
            out += struct.pack("<2f", *uv)
        if not per_vertex_uvs:
            for f in uv_triangles:
                out += struct.pack("<3I", *f)
            for f in uv_quads:
                out += struct.pack("<4I", *f)
    for name, scale, values in morphs:
        out += label_bytes(name, wide, nul) + struct.pack("<f", scale)
        for value in values:
            out += struct.pack("<3h", *value)
    for name, indices, _ in modifiers:
        out += label_bytes(name, wide, nul) + struct.pack(f"<I{len(indices)}I", len(indices), *indices)
    return out


def bodyslide_bytes(shapes, uv_shapes=None):
    """``shapes``: [(shape name, [(morph name, scale, [(index, (i16, i16, i16))])])]."""

    def section(shapes, components):
        out = struct.pack("<H", len(shapes))
        for shape, morphs in shapes:
            out += struct.pack("<B", len(shape)) + shape.encode("latin-1") + struct.pack("<H", len(morphs))
            for name, scale, offsets in morphs:
                out += struct.pack("<B", len(name)) + name.encode("latin-1") + struct.pack("<fH", scale, len(offsets))
                for index, values in offsets:
                    out += struct.pack(f"<H{components}h", index, *values)
        return out

    out = b"PIRT" + section(shapes, 3)
    return out if uv_shapes is None else out + section(uv_shapes, 2)
