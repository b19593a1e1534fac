"""Starfield chargen and performance morphs (``morph.dat``): per-vertex deltas of a .mesh's
vertices, one set per named morph, stored sparsely.

Layout (little-endian; StarfieldMeshConverter's MorphIO describes it, the corpus file agrees):
``MDAT``, u32 axes (3), u32 vertex count, u32 morph count, the morph names (u32 length + text),
u32 row count, u32 vertex count again, the rows (16 bytes: position delta as three float16, the
target vertex colour as RGB565, normal and tangent deltas as UDEC3 u32s like a .mesh's), then
per vertex its first row and a 128-bit mask of the morphs moving it (bit j: morph j), whose rows
follow in morph order. Position deltas are in the .mesh's units."""

import numpy as np

from ..errors import FormatError
from ..files import SyncedFile
from .mesh import decode_udec3, encode_udec3

MAGIC = b"MDAT"
MAX_MORPHS = 128
UDEC3_TOP = 1  # the top bits of every normal and tangent delta of the corpus file
ROW = np.dtype([("delta", "<f2", 3), ("color", "<u2"), ("normal", "<u4"), ("tangent", "<u4")])
VERTEX = np.dtype([("first", "<u4"), ("mask", "<u4", 4)])
NEUTRAL_COLOR = 0xBDF7  # every row's colour in the corpus file


def _morph_bits(vertices):
    """(vertex count, 128) booleans: which morphs move each vertex."""
    masks = np.ascontiguousarray(vertices["mask"]).view(np.uint8).reshape(len(vertices), 16)
    return np.unpackbits(masks, axis=1, bitorder="little").astype(bool)


class MorphFile(SyncedFile):
    """``names``, ``rows`` (ROW array) and ``vertices`` (VERTEX array) as stored."""

    def __init__(self, names=(), rows=None, vertices=None, axes=3):
        self.axes = axes
        self.names = list(names)
        self.rows = np.zeros(0, ROW) if rows is None else rows
        self.vertices = np.zeros(0, VERTEX) if vertices is None else vertices

    def sync(self, s):
        magic = s.raw(MAGIC, 4)
        if magic != MAGIC:
            raise s.error(f"not a morph file (magic {bytes(magic)!r}, not MDAT)", 0)
        self.axes = s.u32(self.axes)
        vertex_count = s.u32(len(self.vertices))
        count = s.count(len(self.names), item_size=4, what="morph names")
        self.names = s.repeat(self.names, count, s.sized_string)
        row_count = s.u32(len(self.rows))
        listed = s.u32(len(self.vertices))
        if s.reading:
            s.need(row_count * ROW.itemsize + listed * VERTEX.itemsize, f"{row_count} morph rows and {listed} vertices")
        self.rows = s.array(self.rows, ROW, row_count)
        self.vertices = s.array(self.vertices, VERTEX, listed)
        if s.reading:
            if vertex_count != len(self.vertices):
                raise s.error(f"says {vertex_count} vertices, then lists {len(self.vertices)}")
            self.check()

    def check(self):
        if len(self.names) > MAX_MORPHS:
            raise FormatError(f"{len(self.names)} morphs: a vertex's mask names at most {MAX_MORPHS}")
        bits = _morph_bits(self.vertices)
        if bits[:, len(self.names):].any():
            raise FormatError(f"a vertex is moved by a morph past the {len(self.names)} named")
        ends = self.vertices["first"].astype(np.int64) + bits.sum(axis=1)
        moved = bits.any(axis=1)
        if moved.any() and ends[moved].max() > len(self.rows):
            vertex = int(np.flatnonzero(moved & (ends > len(self.rows)))[0])
            raise FormatError(f"vertex {vertex}'s morph rows run past the {len(self.rows)} rows")

    # -- per morph -----------------------------------------------------------------------------
    def _placed(self, values):
        """(morphs, vertices, ...) float32: each row's ``values`` at its morph and vertex, zero
        where a morph leaves a vertex alone."""
        bits = _morph_bits(self.vertices)[:, :len(self.names)]
        vertex, morph = np.nonzero(bits)  # vertex by vertex, morphs in order: the rows' order
        rank = np.cumsum(bits, axis=1)[vertex, morph] - 1
        rows = self.vertices["first"][vertex].astype(np.int64) + rank
        out = np.zeros((len(self.names), len(self.vertices), *values.shape[1:]), np.float32)
        out[morph, vertex] = values[rows]
        return out

    @property
    def deltas(self):
        """(morphs, vertices, 3) float32 position deltas."""
        return self._placed(self.rows["delta"].astype(np.float32))

    @property
    def normal_deltas(self):
        return self._placed(decode_udec3(self.rows["normal"]))

    @property
    def tangent_deltas(self):
        return self._placed(decode_udec3(self.rows["tangent"]))

    @classmethod
    def from_deltas(cls, names, deltas, normal_deltas=None, tangent_deltas=None):
        """Rows for every (vertex, morph) whose position delta is not zero once stored as
        float16 (normal and tangent deltas, (morphs, vertices, 3), default zero; colours the
        corpus file's)."""
        deltas = np.asarray(deltas, np.float32)
        morphs, count = deltas.shape[:2]
        if morphs > MAX_MORPHS:
            raise FormatError(f"{morphs} morphs: a vertex's mask names at most {MAX_MORPHS}")
        if not np.isfinite(deltas).all():
            raise FormatError("a morph delta is not a finite number")
        halves = deltas.astype(np.float16)
        moves = (halves != 0).any(axis=2).T  # (vertices, morphs)
        vertex, morph = np.nonzero(moves)
        rows = np.zeros(len(vertex), ROW)
        rows["delta"] = halves[morph, vertex]
        rows["color"] = NEUTRAL_COLOR
        for name, values in (("normal", normal_deltas), ("tangent", tangent_deltas)):
            values = np.zeros((morphs, count, 3)) if values is None else np.asarray(values)
            rows[name] = encode_udec3(values[morph, vertex], UDEC3_TOP)
        vertices = np.zeros(count, VERTEX)
        per_vertex = moves.sum(axis=1)
        vertices["first"] = np.concatenate([[0], np.cumsum(per_vertex)[:-1]])
        bits = np.zeros((count, MAX_MORPHS), np.uint8)
        bits[:, :morphs] = moves
        vertices["mask"] = np.packbits(bits, axis=1, bitorder="little").view("<u4")
        return cls(names, rows, vertices)
