"""One block of hkaSplineCompressedAnimation data, described once for reading and writing.

A block holds the masks (per transform track 4 bytes: quantisations, bits 0-1 position, 2-5
rotation, 6-7 scale; then the position, rotation and scale flags; per float track 1 byte of
flags), flags bits 0-3 marking static components (x y z w) and bits 4-7 spline ones (none:
identity); aligned to 4, per transform track its position, rotation and scale sections, each
followed by alignment to 4; at ``float_offset`` from the block's start, one f32 per static
float track.

- position or scale, spline: u16 n (control points - 1), u8 degree, n + degree + 2 u8 knots
  (local frames), align 4, per axis x y z: f32 min and max if splined, one f32 if static; then
  n + 1 control points of the splined axes, 8 or 16 bits each. Static only: one f32 per static
  axis.
- rotation, spline: n, degree, knots, aligned to the quantisation, n + 1 quantised quaternions;
  static: aligned, one quaternion.

Alignment is from the start of the data (blocks start 16-aligned). ``sync`` works on a
ReadStream over the data up to the block's end (positioned at its start) or a WriteStream of
the data written so far.
"""

from ...errors import FormatError
from .quantize import ROTATION_ALIGN, ROTATION_SIZE, SCALAR_SIZE, check_rotation, check_scalar

SPLINE, STATIC = 0xF0, 0x0F
STATIC_FLOAT = 0x03  # the flags the games' files give their float tracks, all static


def pad(s, alignment):
    if s.reading:
        s.pos = min(-(-s.pos // alignment) * alignment, len(s.data))
    else:
        s.raw(bytes(-s.pos % alignment))


def _bytes(s, value, size, what):
    if s.reading:
        s.need(size, what)
    return s.raw(value, size)


class Curve:
    """The spline header: control point count, degree, knots."""

    def __init__(self, count=0, degree=0, knots=b""):
        self.count = count
        self.degree = degree
        self.knots = knots

    def sync_header(self, s):
        self.count = s.u16(self.count - 1) + 1
        self.degree = s.u8(self.degree)
        if s.reading and not 1 <= self.degree < self.count:
            raise FormatError(f"spline at data offset {s.pos - 3} has {self.count} control points for degree {self.degree}")
        self.knots = _bytes(s, self.knots, self.count + self.degree + 1, "spline knots")


class VectorSection(Curve):
    """A track's position or scale in one block. ``values[axis]``: the static value or the
    (min, max) range of a splined axis; ``codes``: the control points' quantised bytes."""

    def __init__(self, flags=0, quant=1):
        super().__init__()
        self.flags = flags
        self.quant = quant
        self.values = [None, None, None]
        self.codes = b""
        self.codes_at = 0  # where the codes were read, for messages

    def splined(self, axis):
        return self.flags >> (4 + axis) & 1

    def static(self, axis):
        return self.flags >> axis & 1 and not self.splined(axis)

    def is_spline(self):
        return bool(self.flags & 0x70)

    def is_static(self):
        return not self.is_spline() and bool(self.flags & 0x07)

    def sync(self, s):
        if self.is_spline():
            check_scalar(self.quant, "position or scale")
            self.sync_header(s)
            pad(s, 4)
            for axis in range(3):
                if self.splined(axis):
                    self.values[axis] = s.floats(self.values[axis], 2)
                elif self.static(axis):
                    self.values[axis] = s.f32(self.values[axis])
            self.codes_at = s.pos
            size = self.count * sum(map(self.splined, range(3))) * SCALAR_SIZE[self.quant]
            self.codes = _bytes(s, self.codes, size, "control points")
        elif self.flags & 0x07:  # most are identity: nothing to read
            for axis in range(3):
                if self.static(axis):
                    self.values[axis] = s.f32(self.values[axis])
        pad(s, 4)


class RotationSection(Curve):
    """A track's rotation in one block: ``codes`` holds ``count`` quantised quaternions (one
    when static)."""

    def __init__(self, flags=0, quant=1):
        super().__init__()
        self.flags = flags
        self.quant = quant
        self.codes = b""
        self.codes_at = 0

    def is_spline(self):
        return bool(self.flags & SPLINE)

    def is_static(self):
        return not self.is_spline() and bool(self.flags & STATIC)

    def sync(self, s):
        if self.flags:
            check_rotation(self.quant, "rotation")
            if self.is_spline():
                self.sync_header(s)
            else:
                self.count = 1
            pad(s, ROTATION_ALIGN[self.quant])
            self.codes_at = s.pos
            self.codes = _bytes(s, self.codes, self.count * ROTATION_SIZE[self.quant], "quaternions")
        pad(s, 4)


class Block:
    def __init__(self, positions=(), rotations=(), scales=(), floats=()):
        self.positions = list(positions)
        self.rotations = list(rotations)
        self.scales = list(scales)
        self.floats = list(floats)  # static float track values
        self.float_offset = 0  # from the block's start to the float values

    def sync(self, s, tracks, float_count):
        start = s.pos
        masks = bytes(
            byte
            for p, r, c in zip(self.positions, self.rotations, self.scales)
            for byte in (p.quant | r.quant << 2 | c.quant << 6, p.flags, r.flags, c.flags)
        )
        masks = _bytes(s, masks, 4 * tracks, "masks")
        float_flags = _bytes(s, bytes([STATIC_FLOAT] * float_count), float_count, "float masks")
        pad(s, 4)
        if s.reading:
            self.positions = [VectorSection(masks[i + 1], masks[i] & 3) for i in range(0, 4 * tracks, 4)]
            self.rotations = [RotationSection(masks[i + 2], masks[i] >> 2 & 15) for i in range(0, 4 * tracks, 4)]
            self.scales = [VectorSection(masks[i + 3], masks[i] >> 6) for i in range(0, 4 * tracks, 4)]
        for sections in zip(self.positions, self.rotations, self.scales):
            for section in sections:
                section.sync(s)
        if s.reading:
            if start + self.float_offset < s.pos and float_count:
                raise FormatError(f"float tracks at {self.float_offset} overlap the block's transform tracks")
            s.pos = start + self.float_offset if float_count else s.pos
            self.floats = []
            for k, flags in enumerate(float_flags):
                if flags & SPLINE:
                    raise FormatError(f"float track {k} is a spline; only static float tracks are supported")
                self.floats.append(s.f32() if flags & STATIC else 0.0)
        else:
            self.float_offset = s.pos - start
            for value in self.floats:
                s.f32(value)
