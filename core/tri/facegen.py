"""A FaceGen .tri file (magic ``FRTRI003``): head and eye morphs of Fallout 3 / New Vegas, Skyrim
and Fallout 4 (expressions in ``head.tri``, character-creation morphs in ``headChargen.tri``).

Little-endian. After the magic, ten u32 counts: vertices V, triangles T, quads Q, labelled
vertices LV, labelled surface points LS, texture coordinates X, extension flags (bit 0: texture
coordinates; bit 1: labels of 16-bit characters), difference morphs Md, modifier morphs Ms
(FaceGen's statistical or target morphs) and modifier vertices K; then 16 reserved bytes. Then:
V + K float3 positions (the base mesh, then the modifier morphs' target positions in morph
order), T u32 triangles and Q u32 quads into the V vertices, the labelled vertices (u32 index,
label), the surface points (u32 triangle, three float weights, label), the texture coordinates
(X > 0: X float2, then per triangle and quad the u32 indices of its corners' coordinates; X = 0
with bit 0 set: one float2 per vertex), Md difference morphs (label, float scale, V x three i16:
offset = i16 x scale) and Ms modifier morphs (label, u32 count L, L u32 vertex indices whose
targets are the next L modifier vertices). A label is a u32 character count (with its NUL)
then the characters.

The game moves vertex i of its mesh by morph offset i: a .tri matches its mesh by vertex order.
"""

import numpy as np

from ..errors import FormatError
from ..stream import decode_text, encode_text
from ..files import SyncedFile

MAGIC = b"FRTRI003"
TEXTURES = 0x1  # extension flag: texture coordinates are present
WIDE_LABELS = 0x2  # extension flag: labels are 16-bit characters
RESERVED_SIZE = 16
VEC3 = np.dtype(("<f4", (3,)))
VEC2 = np.dtype(("<f4", (2,)))
TRIANGLE = np.dtype(("<u4", (3,)))
QUAD = np.dtype(("<u4", (4,)))
OFFSETS = np.dtype(("<i2", (3,)))
LABEL_MIN_SIZE = 4


class Label(str):
    """A label, remembering whether it was stored with its NUL (FaceGen's writer always adds
    one), so a label stored without writes back the same way."""

    def __new__(cls, text, terminated=True):
        obj = super().__new__(cls, text)
        obj.terminated = terminated
        return obj


def _label(s, value, wide):
    width = 2 if wide else 1
    raw = None
    if not s.reading:
        raw = _encode_label(value, wide)
    n = s.count(None if raw is None else len(raw) // width, item_size=width, what="label")
    raw = s.raw(raw, size=n * width)
    return _decode_label(raw, wide) if s.reading else value


def _encode_label(text, wide):
    nul = getattr(text, "terminated", True)
    if wide:
        return (text + "\0" * nul).encode("utf-16-le", "surrogatepass")
    return encode_text(text) + b"\0" * nul


def _decode_label(raw, wide):
    text = raw.decode("utf-16-le", "surrogatepass") if wide else decode_text(raw)
    terminated = text.endswith("\0")
    return Label(text[:-1] if terminated else text, terminated)


class LabelledVertex:
    def __init__(self, index=0, label="", wide=False):
        self.index, self.label, self.wide = index, label, wide

    def sync(self, s):
        self.index = s.u32(self.index)
        self.label = _label(s, self.label, self.wide)


class SurfacePoint:
    """A labelled point on a triangle, by barycentric weights."""

    def __init__(self, triangle=0, weights=(0.0, 0.0, 0.0), label="", wide=False):
        self.triangle, self.weights, self.label, self.wide = triangle, weights, label, wide

    def sync(self, s):
        self.triangle = s.u32(self.triangle)
        self.weights = s.vec3(self.weights)
        self.label = _label(s, self.label, self.wide)


class DifferenceMorph:
    """An offset for every vertex: ``values`` (V, 3) int16, the offset being values x ``scale``."""

    kind = "difference"

    def __init__(self, name="", scale=0.0, values=None, num_vertices=0, wide=False):
        self.name = name
        self.scale = scale
        self.values = np.zeros((num_vertices, 3), np.int16) if values is None else values
        self.num_vertices = num_vertices if values is None else len(values)
        self.wide = wide

    def sync(self, s):
        self.name = _label(s, self.name, self.wide)
        try:
            self.scale = s.f32(self.scale)
            self.values = s.array(self.values, OFFSETS, self.num_vertices)
        except FormatError as error:
            raise FormatError(f"difference morph {self.name!r}: {error.message}", offset=error.offset) from None

    @property
    def offsets(self):
        from .quantize import dequantize

        return dequantize(self.scale, self.values)


class ModifierMorph:
    """Target positions (absolute, like the base vertices) for some vertices: ``indices`` (L,)
    uint32 and ``positions`` (L, 3) float32."""

    kind = "modifier"

    def __init__(self, name="", indices=None, positions=None, wide=False):
        self.name = name
        self.indices = np.zeros(0, np.uint32) if indices is None else indices
        self.positions = np.zeros((len(self.indices), 3), np.float32) if positions is None else positions
        self.wide = wide

    def sync(self, s):
        self.name = _label(s, self.name, self.wide)
        self.indices = s.counted_array(self.indices, "<u4", what=f"modifier morph {self.name!r} vertices")


class FaceGenTri(SyncedFile):
    def __init__(self):
        self.vertices = np.zeros((0, 3), np.float32)
        self.triangles = np.zeros((0, 3), np.uint32)
        self.quads = np.zeros((0, 4), np.uint32)
        self.labelled_vertices = []
        self.surface_points = []
        self.uvs = None  # (X, 2) float32 with uv_triangles and uv_quads, or (V, 2) per vertex, or None
        self.uv_triangles = None
        self.uv_quads = None
        self.flags = 0  # the extension flags as stored (texture and label bits are kept in step on writing)
        self.morphs = []  # DifferenceMorph
        self.modifiers = []  # ModifierMorph
        self.unused_modifier_vertices = np.zeros((0, 3), np.float32)  # K beyond what the modifiers list
        self.reserved = bytes(RESERVED_SIZE)
        self.tail = b""  # bytes after the last morph, kept as they were
        self.path = None
        self.warnings = []

    kind = "facegen"

    # -- the one description of the layout --------------------------------------------------
    def sync(self, s):
        magic = s.raw(MAGIC, len(MAGIC))
        if magic != MAGIC:
            raise s.error(f"not a FaceGen .tri file (magic {magic!r}, expected {MAGIC!r})", at=0)
        per_facet = self.uv_triangles is not None
        modifier_positions = self._modifier_positions() if not s.reading else None
        counts = (
            len(self.vertices),
            len(self.triangles),
            len(self.quads),
            len(self.labelled_vertices),
            len(self.surface_points),
            len(self.uvs) if per_facet else 0,
            self._stored_flags(),
            len(self.morphs),
            len(self.modifiers),
            0 if modifier_positions is None else len(modifier_positions),
        )
        nv, nt, nq, nlv, nls, nx, flags, nd, nm, nk = (s.u32(n) for n in counts)
        self.flags = flags
        wide = bool(flags & WIDE_LABELS)
        self.reserved = s.raw(self.reserved, RESERVED_SIZE)
        if s.reading:
            _check_counts(s, nv, nt, nq, nlv, nls, nx, flags, nd, nm, nk)
        self.vertices = s.array(self.vertices, VEC3, nv)
        modifier_positions = s.array(modifier_positions, VEC3, nk)
        self.triangles = s.array(self.triangles, TRIANGLE, nt)
        self.quads = s.array(self.quads, QUAD, nq)
        self.labelled_vertices = s.items(
            self.labelled_vertices, lambda: LabelledVertex(wide=wide), nlv, 4 + LABEL_MIN_SIZE
        )
        self.surface_points = s.items(self.surface_points, lambda: SurfacePoint(wide=wide), nls, 16 + LABEL_MIN_SIZE)
        if nx:
            self.uvs = s.array(self.uvs, VEC2, nx)
            self.uv_triangles = s.array(self.uv_triangles, TRIANGLE, nt)
            self.uv_quads = s.array(self.uv_quads, QUAD, nq)
        elif flags & TEXTURES:
            self.uvs = s.array(self.uvs, VEC2, nv)
        self.morphs = s.items(
            self.morphs, lambda: DifferenceMorph(num_vertices=nv, wide=wide), nd, LABEL_MIN_SIZE + 4 + OFFSETS.itemsize * nv
        )
        self.modifiers = s.items(self.modifiers, lambda: ModifierMorph(wide=wide), nm, LABEL_MIN_SIZE + 4)
        if s.reading:
            self._give_positions(modifier_positions, s)
        self.tail = s.raw(self.tail, s.remaining if s.reading else len(self.tail))
        if s.reading:
            self.check()

    def _stored_flags(self):
        flags = self.flags
        if self.uvs is None:
            flags &= ~TEXTURES
        elif self.uv_triangles is None:  # per-vertex coordinates are only read with the flag
            flags |= TEXTURES
        return flags

    def _modifier_positions(self):
        parts = [np.asarray(m.positions, np.float32).reshape(-1, 3) for m in self.modifiers]
        return np.concatenate(parts + [self.unused_modifier_vertices])

    def _give_positions(self, positions, s):
        """Each modifier morph takes the next L modifier vertices, in morph order."""
        start = 0
        for morph in self.modifiers:
            end = start + len(morph.indices)
            if end > len(positions):
                raise s.error(
                    f"modifier morph {morph.name!r}: its {len(morph.indices)} vertices pass the {len(positions)} "
                    f"modifier vertices the header counts"
                )
            morph.positions = positions[start:end]
            start = end
        self.unused_modifier_vertices = positions[start:]

    # -- checks -------------------------------------------------------------------------------
    def check(self):
        nv = len(self.vertices)
        for morph in self.morphs:
            if np.shape(morph.values) != (nv, 3):
                raise FormatError(f"difference morph {morph.name!r} has {len(morph.values)} offsets for {nv} vertices")
        for morph in self.modifiers:
            indices = np.asarray(morph.indices)
            if np.shape(morph.positions) != (len(indices), 3):
                raise FormatError(f"modifier morph {morph.name!r} has {len(morph.positions)} targets for {len(indices)} vertices")
            bad = np.flatnonzero(indices >= nv)
            if len(bad):
                raise FormatError(
                    f"modifier morph {morph.name!r}: its vertex {bad[0]} is index {int(indices[bad[0]])}, past the {nv} "
                    f"vertices of the mesh"
                )
        if self.uvs is not None and self.uv_triangles is None and len(self.uvs) != nv:
            raise FormatError(f"{len(self.uvs)} per-vertex texture coordinates for {nv} vertices")
        warnings = []
        faces = [a for a in (self.triangles, self.quads) if len(a)]
        if faces and max(int(np.max(a)) for a in faces) >= nv:
            warnings.append(f"a face uses a vertex past the {nv} vertices")
        if self.uv_triangles is not None:
            corners = [a for a in (self.uv_triangles, self.uv_quads) if a is not None and len(a)]
            if corners and max(int(np.max(a)) for a in corners) >= len(self.uvs):
                warnings.append(f"a face corner uses a texture coordinate past the {len(self.uvs)}")
        if len(self.unused_modifier_vertices):
            warnings.append(f"{len(self.unused_modifier_vertices)} modifier vertices no modifier morph uses")
        if self.tail:
            warnings.append(f"{len(self.tail)} bytes after the last morph (kept as they are)")
        self.warnings = warnings

    # -- what the morphs do -------------------------------------------------------------------
    def offsets(self, morph):
        """(V, 3) float32 offsets a morph gives the vertices (zero where a modifier morph has no target)."""
        if isinstance(morph, DifferenceMorph):
            return morph.offsets
        out = np.zeros((len(self.vertices), 3), np.float32)
        indices = np.asarray(morph.indices, np.int64)
        out[indices] = np.asarray(morph.positions, np.float32) - self.vertices[indices]
        return out


def _check_counts(s, nv, nt, nq, nlv, nls, nx, flags, nd, nm, nk):
    """Refuse counts whose smallest possible size exceeds the file before anything is allocated."""
    uvs = 8 * nx + 12 * nt + 16 * nq if nx else (8 * nv if flags & TEXTURES else 0)
    least = (
        VEC3.itemsize * (nv + nk)
        + TRIANGLE.itemsize * nt
        + QUAD.itemsize * nq
        + 8 * nlv
        + 20 * nls
        + uvs
        + (8 + OFFSETS.itemsize * nv) * nd
        + 8 * nm
    )
    if least > s.remaining:
        raise s.error(
            f"counts ({nv} vertices, {nk} modifier vertices, {nt} triangles, {nq} quads, {nd} difference and {nm} "
            f"modifier morphs) need at least {least} bytes but only {s.remaining} follow the header",
            at=len(MAGIC),
        )
