"""Starfield geometry files (``.mesh``, versions 0, 1 and 2): one LOD of a BSGeometry, stored as
``Data\\geometries\\<20 hex>\\<20 hex>.mesh`` or inline in the NIF (its BSGeometry flag 0x200).

All little-endian, each array after its u32 count (the triangles' count is of indices):
version, triangles (u16 x 3), scale (f32), weights per vertex, positions (i16 x 3: the position
is ``value * scale / 32767``), UVs and second UVs (f16 x 2), colours (B, G, R, A bytes),
normals and tangents (u32 UDEC3: three 10-bit fields ``(x + 1) * 511.5``, then two bits: 01 in
normals, 11 in tangents whose bitangent is normal x tangent and 00 where it is tangent x
normal), bone weights (``weights per vertex`` pairs of u16 bone, u16 weight / 65535 per
vertex, summing to 65535), LODs (from version 1: triangle lists of the same vertices),
meshlets (vertex count, vertex offset, triangle count, triangle offset) and their culling data
(version 2: the meshlet's box, centre and half extents; before: a bounding sphere, a normal
cone and an apex offset). A standalone file may end after the LODs (no meshlets).

The game names a written file by the SHA1 of its bytes (``mesh_name``), as NifSkope's fo76utils
fork does; the corpus files bear their own SHA1 as their names.
"""

import hashlib

import numpy as np

from ..errors import FormatError
from ..files import SyncedFile

VERSIONS = (0, 1, 2)
POSITION_RANGE = 32767
WEIGHT_SUM = 65535
UDEC3_NORMAL = 1  # the top two bits of every normal in the game's files
UDEC3_BITANGENT = {1: 3, -1: 0}  # a tangent's top two bits by the sign of normal x tangent

TRIANGLE = np.dtype(("<u2", (3,)))
POSITION = np.dtype(("<i2", (3,)))
UV = np.dtype(("<f2", (2,)))
COLOR = np.dtype(("u1", (4,)))  # B, G, R, A
UDEC3 = np.dtype("<u4")
WEIGHT = np.dtype([("bone", "<u2"), ("weight", "<u2")])
MESHLET = np.dtype([("vertex_count", "<u4"), ("vertex_offset", "<u4"), ("triangle_count", "<u4"), ("triangle_offset", "<u4")])
CULL_BOX = np.dtype([("center", "<f4", 3), ("extent", "<f4", 3)])  # version 2
CULL_SPHERE = np.dtype([("center", "<f4", 3), ("radius", "<f4"), ("normal_cone", "u1", 4), ("apex_offset", "<f4")])


def culling_dtype(version):
    return CULL_BOX if version >= 2 else CULL_SPHERE


def _empty(dtype):
    return np.zeros(0, dtype)


class MeshData(SyncedFile):
    """The arrays of a .mesh as stored (``positions`` quantised, ``normals`` packed...); the
    methods below decode and encode them. ``meshlets`` and ``culling`` are None when a file
    ends after its LODs."""

    def __init__(self):
        self.version = 2
        self.triangles = _empty(TRIANGLE)
        self.scale = 1.0
        self.weights_per_vertex = 0
        self.positions = _empty(POSITION)
        self.uvs = _empty(UV)
        self.uvs2 = _empty(UV)
        self.colors = _empty(COLOR)
        self.normals = _empty(UDEC3)
        self.tangents = _empty(UDEC3)
        self.weights = _empty(WEIGHT)
        self.lods = []
        self.meshlets = _empty(MESHLET)
        self.culling = _empty(CULL_BOX)

    # -- one description for both directions --------------------------------------------------
    def sync(self, s):
        self.version = s.u32(self.version)
        if s.reading and self.version not in VERSIONS:
            raise s.error(f".mesh version {self.version} is not supported (0, 1 and 2 are)", s.pos - 4)
        self.triangles = _triangles(s, self.triangles, "triangle")
        self.scale = s.f32(self.scale)
        if s.reading and not 0 < self.scale < float("inf"):
            raise s.error(f"position scale {self.scale} is not a positive number", s.pos - 4)
        self.weights_per_vertex = s.u32(self.weights_per_vertex)
        self.positions = s.counted_array(self.positions, POSITION, what="positions")
        self.uvs = s.counted_array(self.uvs, UV, what="UVs")
        self.uvs2 = s.counted_array(self.uvs2, UV, what="second UVs")
        self.colors = s.counted_array(self.colors, COLOR, what="colours")
        self.normals = s.counted_array(self.normals, UDEC3, what="normals")
        self.tangents = s.counted_array(self.tangents, UDEC3, what="tangents")
        self.weights = s.counted_array(self.weights, WEIGHT, what="bone weights")
        if self.version >= 1:
            count = s.count(len(self.lods), item_size=4, what="LODs")
            self.lods = s.repeat(self.lods, count, lambda lod: _triangles(s, lod, "LOD triangle"))
        if s.reading and s.remaining == 0:
            self.meshlets = self.culling = None
        elif s.reading or self.meshlets is not None:
            self.meshlets = s.counted_array(self.meshlets, MESHLET, what="meshlets")
            self.culling = s.counted_array(self.culling, culling_dtype(self.version), what="meshlet culling data")
        if s.reading:
            self.check(s)

    def check(self, s=None):
        """Refuse arrays that do not describe the same vertices (``s``: the stream read, whose
        offset the error names; before writing, none)."""
        error = s.error if s is not None else (lambda message: FormatError(message))
        count = len(self.positions)
        for name in ("uvs", "uvs2", "colors", "normals", "tangents"):
            if len(getattr(self, name)) not in (0, count):
                raise error(f"holds {len(getattr(self, name))} {name} for {count} vertices")
        if len(self.weights) not in (0, count * self.weights_per_vertex):
            raise error(f"holds {len(self.weights)} bone weights where {count} vertices of "
                        f"{self.weights_per_vertex} weights need {count * self.weights_per_vertex}")
        for what, triangles in (("triangles", self.triangles), *((f"LOD {i + 1}", lod) for i, lod in enumerate(self.lods))):
            if len(triangles) and int(triangles.max()) >= count:
                raise error(f"{what} name vertex {int(triangles.max())} of only {count}")
        if self.meshlets is not None and len(self.culling) != len(self.meshlets):
            raise error(f"holds culling data for {len(self.culling)} of {len(self.meshlets)} meshlets")

    def check_bones(self, bone_count):
        """Refuse weights naming a bone the skin has not (``bone_count`` bones)."""
        named = self.weights["bone"][self.weights["weight"] > 0]
        if len(named) and int(named.max()) >= bone_count:
            raise FormatError(f"a vertex is weighted to bone {int(named.max())} of a skin of {bone_count} bones")

    # -- decoded values ------------------------------------------------------------------------
    @property
    def position_step(self):
        """Game units per quantisation step, as the game computes it (float32 scale / 32767)."""
        return np.float32(self.scale) / np.float32(POSITION_RANGE)

    @property
    def vertices(self):
        """(n, 3) float32 positions."""
        return self.positions.astype(np.float32) * self.position_step

    def set_vertices(self, vertices, scale=None):
        """Quantise positions; ``scale`` by default the smallest power of two (at least 1) the
        largest coordinate fits in, as the corpus files' scales are (2 for a body reaching 1.63,
        1 for a head within 0.26)."""
        vertices = np.asarray(vertices, np.float64).reshape(-1, 3)
        if scale is None:
            largest = float(np.abs(vertices).max()) if len(vertices) else 0.0
            scale = 2.0 ** max(0, int(np.ceil(np.log2(largest)))) if largest > 1.0 else 1.0
        if not np.isfinite(vertices).all():
            raise FormatError("a vertex position is not a finite number")
        self.scale = float(np.float32(scale))
        step = float(self.position_step)
        quantised = np.rint(vertices / step)
        if len(quantised) and np.abs(quantised).max() > POSITION_RANGE:
            raise FormatError(f"a vertex lies beyond the position scale {self.scale}")
        self.positions = quantised.astype(POSITION.base)

    @property
    def vertex_normals(self):
        return decode_udec3(self.normals)

    @property
    def vertex_tangents(self):
        return decode_udec3(self.tangents)

    @property
    def bitangent_signs(self):
        """+1 where the bitangent is normal x tangent (top bits 11), else -1."""
        return np.where(self.tangents >> 30 == UDEC3_BITANGENT[1], 1, -1).astype(np.int8)

    def set_normals(self, normals, tangents=None, signs=None):
        self.normals = encode_udec3(normals, UDEC3_NORMAL)
        if tangents is not None:
            top = np.where(np.asarray(signs) < 0, UDEC3_BITANGENT[-1], UDEC3_BITANGENT[1])
            self.tangents = encode_udec3(tangents, top)

    @property
    def uv(self):
        return self.uvs.astype(np.float32)

    @property
    def rgba(self):
        """(n, 4) float32 colours, red first."""
        return self.colors[:, [2, 1, 0, 3]].astype(np.float32) / 255.0

    def set_rgba(self, rgba):
        values = np.clip(np.rint(np.asarray(rgba, np.float64).reshape(-1, 4) * 255.0), 0, 255).astype(np.uint8)
        self.colors = values[:, [2, 1, 0, 3]]

    @property
    def bone_weights(self):
        """(bones, weights): (n, per vertex) bone indices and float32 weights."""
        per = self.weights_per_vertex
        if per == 0 or len(self.weights) == 0:
            return np.zeros((len(self.positions), 0), np.uint16), np.zeros((len(self.positions), 0), np.float32)
        table = self.weights.reshape(-1, per)
        return table["bone"].copy(), table["weight"].astype(np.float32) / WEIGHT_SUM

    def set_bone_weights(self, bones, weights):
        """(n, k) bone indices and weights (normalised per vertex; quantised so each vertex's
        weights sum to 65535 exactly, as the game's files do)."""
        bones = np.asarray(bones).reshape(len(self.positions), -1)
        self.weights_per_vertex = bones.shape[1]
        table = np.zeros(bones.shape, WEIGHT)
        table["bone"] = bones
        table["weight"] = quantise_weights(weights)
        self.weights = table.reshape(-1)


def _triangles(s, value, what):
    """u32 index count + u16 indices, three per triangle."""
    at = s.pos
    count = s.count(0 if value is None else 3 * len(value), item_size=2, what=f"{what} indices")
    if count % 3:
        raise s.error(f"{what} index count {count} is not a multiple of 3", at)
    return s.array(value, TRIANGLE, count // 3)


def decode_udec3(packed):
    """(n, 3) float32 from UDEC3 u32s: each 10-bit field x maps to x / 511.5 - 1."""
    packed = np.asarray(packed, np.uint32)
    fields = (packed[:, None] >> np.array([0, 10, 20], np.uint32)) & 0x3FF
    return (fields.astype(np.float32) / np.float32(511.5) - np.float32(1.0)).astype(np.float32)


def encode_udec3(vectors, top_bits):
    """UDEC3 u32s of (n, 3) vectors in [-1, 1] with the two top bits ``top_bits`` (a value or one per vector)."""
    vectors = np.asarray(vectors, np.float64).reshape(-1, 3)
    if not np.isfinite(vectors).all():
        raise FormatError("a normal or tangent is not a finite vector")
    fields = np.clip(np.rint((vectors + 1.0) * 511.5), 0, 1023).astype(np.uint32)
    top = np.broadcast_to(np.asarray(top_bits, np.uint32), len(vectors))
    return fields[:, 0] | fields[:, 1] << 10 | fields[:, 2] << 20 | top << 30


def quantise_weights(weights):
    """u16 weights of each row scaled to sum 65535 (largest remainders get the spare units); rows
    of zeros stay zero."""
    weights = np.clip(np.asarray(weights, np.float64), 0.0, None)
    weights = weights.reshape(len(weights), -1)
    totals = weights.sum(axis=1, keepdims=True)
    scaled = np.divide(weights * WEIGHT_SUM, totals, out=np.zeros_like(weights), where=totals > 0)
    units = np.floor(scaled)
    spare = np.where(totals[:, 0] > 0, WEIGHT_SUM - units.sum(axis=1), 0).astype(np.int64)
    order = np.argsort(-(scaled - units), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(weights.shape[1]), axis=1)
    return (units + (ranks < spare[:, None])).astype(np.uint16)


# -- names ----------------------------------------------------------------------------------------
def mesh_name(data):
    """The name a NIF gives the .mesh of these bytes: their SHA1 as 40 lower-case hex digits, a
    backslash after the 20th (the file is ``geometries\\<first 20>\\<last 20>.mesh``)."""
    digest = hashlib.sha1(data).hexdigest()
    return f"{digest[:20]}\\{digest[20:]}"


def mesh_path(name):
    """The Data-relative path of the .mesh a BSGeometry names (``name`` as stored: no folder, no
    suffix, either slash)."""
    parts = [part for part in str(name).replace("/", "\\").split("\\") if part]
    return "\\".join(["geometries", *parts]) + ".mesh"
