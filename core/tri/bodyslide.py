"""A BodySlide .tri file (magic ``PIRT``): the body sliders a game applies at run time (LooksMenu
in Fallout 4, RaceMenu's BodyMorph in Skyrim), named by the NIF's ``BODYTRI`` string extra data.

Little-endian. After the magic, a u16 shape count, then per shape: its name (u8 length, the
bytes, no NUL), a u16 morph count and per morph its name, a float scale, a u16 count and that
many (u16 vertex index, three i16): the vertex moves by i16 x scale. An optional second section
of the same layout follows, with two i16 per vertex: texture-coordinate morphs.

A shape is the NIF shape of that name; indices are into that shape's vertices, in file order.
"""

import numpy as np

from ..errors import FormatError
from ..stream import decode_text, encode_text
from ..files import SyncedFile

MAGIC = b"PIRT"
OFFSETS = np.dtype([("index", "<u2"), ("values", "<i2", (3,))])
UV_OFFSETS = np.dtype([("index", "<u2"), ("values", "<i2", (2,))])
MAX_NAME = 255
MAX_COUNT = 0xFFFF
MORPH_MIN_SIZE = 1 + 4 + 2
SHAPE_MIN_SIZE = 1 + 2


def _name(s, value):
    raw = None if s.reading else encode_text(value)
    if raw is not None and len(raw) > MAX_NAME:
        raise FormatError(f"name {value[:40]!r}... is longer than {MAX_NAME} bytes")
    n = s.count(None if raw is None else len(raw), kind="u8", what="name")
    raw = s.raw(raw, size=n)
    return decode_text(raw) if s.reading else value


class SliderMorph:
    """One slider of a shape: ``offsets`` a structured array (index u16, values (3,) or (2,) i16),
    the offset of vertex ``index`` being values x ``scale``."""

    def __init__(self, name="", scale=0.0, offsets=None, dtype=OFFSETS):
        self.name = name
        self.scale = scale
        self.dtype = dtype
        self.offsets = np.zeros(0, dtype) if offsets is None else offsets

    def sync(self, s):
        self.name = _name(s, self.name)
        self.scale = s.f32(self.scale)
        self.offsets = s.counted_array(self.offsets, self.dtype, kind="u16", what=f"morph {self.name!r} vertices")

    @property
    def indices(self):
        return self.offsets["index"]

    @property
    def values(self):
        from .quantize import dequantize

        return dequantize(self.scale, self.offsets["values"])


class BodyShape:
    def __init__(self, name="", morphs=None, dtype=OFFSETS):
        self.name = name
        self.morphs = [] if morphs is None else morphs
        self.dtype = dtype

    def sync(self, s):
        self.name = _name(s, self.name)
        n = s.count(len(self.morphs), kind="u16", item_size=MORPH_MIN_SIZE, what=f"shape {self.name!r} morphs")
        self.morphs = s.items(self.morphs, lambda: SliderMorph(dtype=self.dtype), n, MORPH_MIN_SIZE)


def _shapes(s, shapes, dtype, what):
    n = s.count(len(shapes), kind="u16", item_size=SHAPE_MIN_SIZE, what=what)
    return s.items(shapes, lambda: BodyShape(dtype=dtype), n, SHAPE_MIN_SIZE)


class BodySlideTri(SyncedFile):
    kind = "bodyslide"

    def __init__(self):
        self.shapes = []  # BodyShape, position morphs
        self.uv_shapes = None  # BodyShape with UV morphs, or None when the file has no such section
        self.tail = b""
        self.path = None
        self.warnings = []

    def sync(self, s):
        magic = s.raw(MAGIC, len(MAGIC))
        if magic != MAGIC:
            raise s.error(f"not a BodySlide .tri file (magic {magic!r}, expected {MAGIC!r})", at=0)
        self.shapes = _shapes(s, self.shapes, OFFSETS, "shapes")
        if s.reading:
            self.uv_shapes = [] if s.remaining else None
        if self.uv_shapes is not None:
            self.uv_shapes = _shapes(s, self.uv_shapes, UV_OFFSETS, "texture-coordinate shapes")
        self.tail = s.raw(self.tail, s.remaining if s.reading else len(self.tail))
        if s.reading:
            self.check()

    def check(self):
        for what, shapes in (("shapes", self.shapes), ("texture-coordinate shapes", self.uv_shapes or [])):
            if len(shapes) > MAX_COUNT:
                raise FormatError(f"{len(shapes)} {what}: a BodySlide .tri holds at most {MAX_COUNT}")
            for shape in shapes:
                if len(shape.morphs) > MAX_COUNT:
                    raise FormatError(f"shape {shape.name!r}: {len(shape.morphs)} morphs, at most {MAX_COUNT} fit")
                for morph in shape.morphs:
                    if len(morph.offsets) > MAX_COUNT:
                        raise FormatError(
                            f"shape {shape.name!r}, morph {morph.name!r}: {len(morph.offsets)} vertices, at most "
                            f"{MAX_COUNT} fit (u16 counts)"
                        )
        self.warnings = [f"{len(self.tail)} bytes after the last morph (kept as they are)"] if self.tail else []

    def shape(self, name):
        """The position morphs' shape of that name, or None."""
        return next((shape for shape in self.shapes if shape.name == name), None)

    def check_shape(self, name, vertex_count):
        """Refuse a shape whose morphs move vertices the mesh does not have, naming the morph."""
        shape = self.shape(name)
        for morph in [] if shape is None else shape.morphs:
            indices = morph.indices
            if len(indices) and int(indices.max()) >= vertex_count:
                raise FormatError(
                    f"shape {name!r}, morph {morph.name!r}: vertex index {int(indices.max())} is past the shape's "
                    f"{vertex_count} vertices",
                    path=self.path,
                )
