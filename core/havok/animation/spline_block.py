"""The blocks of hkaSplineCompressedAnimation data, described once for reading and writing.

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

Alignment is from the start of the data (blocks start 16-aligned, sections 4-aligned).

``Sections`` lays out every section of every block at once, from the masks and the splines'
control point counts and degrees. Reading walks the spline headers in turn (where a section
starts depends on the sizes of those before it), then gathers the fields of every section
with one index (``Sections.fields``); writing scatters them through the same index.
"""

import struct

import numpy as np

from ...errors import FormatError
from .quantize import ROTATION_ALIGN, ROTATION_SIZE, SCALAR_SIZE, check_rotation, check_scalar

SPLINE, STATIC = 0xF0, 0x0F
STATIC_FLOAT = 0x03  # the flags the games' files give their float tracks, all static
POSITION, ROTATION, SCALE = range(3)  # a track's sections, in file order
HEADER = struct.Struct("<HB")  # a spline's control points - 1 and degree; its knots follow

_AXES = np.array([bin(bits).count("1") for bits in range(8)])  # axes set in 3 flag bits
ROTATION_KEY = 1 << 12  # a section's mask key: flags | quantisation << 8 | this for a rotation


def _per_code(sizes, codes):
    table = np.zeros(codes, np.int64)  # 0: not supported
    table[list(sizes)] = list(sizes.values())
    return table


def _per_mask():
    """What a section holds, for every mask key: (fields, keys)."""
    key = np.arange(2 * ROTATION_KEY)
    rotation, quant, flags = key >= ROTATION_KEY, key >> 8 & 15, key & 0xFF
    splined_axes = np.where(rotation, 0, flags >> 4 & 7)  # positions and scales: x y z bits
    static_axes = np.where(rotation, 0, flags & 7 & ~splined_axes)
    spline = np.where(rotation, flags & SPLINE, splined_axes) != 0
    static = ~spline & (np.where(rotation, flags, static_axes) != 0)
    scalar_bytes = _per_code(SCALAR_SIZE, 16)[quant]  # positions and scales: per value
    rotation_bytes = _per_code(ROTATION_SIZE, 16)[quant]
    point_bytes = np.where(rotation, rotation_bytes, _AXES[splined_axes] * scalar_bytes)
    value_bytes = np.where(rotation, 0, 8 * _AXES[splined_axes] + 4 * _AXES[static_axes])
    return np.stack([
        spline, static, splined_axes, static_axes,
        np.where(rotation, np.maximum(_per_code(ROTATION_ALIGN, 16)[quant], 1), 4),  # the values' alignment
        value_bytes, scalar_bytes, point_bytes,
        # the whole size of a section without a spline: its static values or quaternion
        np.where(spline, 0, value_bytes + np.where(rotation & static, point_bytes, 0)),
        np.where(rotation, (flags != 0) & (rotation_bytes == 0), spline & (scalar_bytes == 0)),  # unsupported
    ]).astype(np.int64)


_PER_MASK = _per_mask()
_QUANT_SHIFT, _QUANT_MASK = np.array([0, 2, 6]), np.array([3, 15, 3])  # position, rotation, scale


def padded(size, alignment):
    """``size`` rounded up to ``alignment`` (numbers or arrays)."""
    return -(-size // alignment) * alignment


def spline_fields(count, degree, align, value_bytes, point_bytes):
    """From a spline section's start (numbers or arrays): where its values and its codes start
    and where its data ends (header, knots, aligned, values, codes)."""
    values = -(-(HEADER.size + count + degree + 1) // align) * align  # padded, inline: called per spline when reading
    codes = values + value_bytes
    return values, codes, codes + count * point_bytes


def ranges(starts, sizes):
    """The indices of the ranges (start, size), one range after the other."""
    ends = sizes.cumsum()
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - ends + sizes, sizes)


class Sections:
    """Every section of blocks of the same tracks, from their masks (blocks, tracks, 4), as
    flat arrays in file order (block by block, track by track: position, rotation, scale).
    ``layout`` places their fields once the splines' counts and degrees are known."""

    def __init__(self, masks):
        self.masks = masks
        self.blocks, tracks = masks.shape[:2]
        self.per_block = 3 * tracks
        index = np.arange(self.blocks * self.per_block)
        self.block, self.track, self.kind = index // self.per_block, index // 3 % max(tracks, 1), index % 3
        quant = masks[..., :1] >> _QUANT_SHIFT & _QUANT_MASK
        self.key = (masks[..., 1:] | quant << 8 | np.array([0, ROTATION_KEY, 0])).ravel()
        (spline, static, self.splined_axes, self.static_axes, self.align, self.value_bytes, self.scalar_bytes,
         self.point_bytes, self.fixed, unsupported) = _PER_MASK[:, self.key]
        self.spline, self.static = spline.astype(bool), static.astype(bool)
        if unsupported.any():
            at = int(np.argmax(unsupported))
            quant = int(self.key[at] >> 8 & 15)
            try:
                if self.kind[at] == ROTATION:
                    check_rotation(quant, "rotation")
                else:
                    check_scalar(quant, "position or scale")
            except FormatError as error:
                raise FormatError(f"block {self.block[at]}: {error.message}") from None

    def read_headers(self, data, bodies, ends):
        """The splines' control point counts and degrees, read from ``data`` in file order:
        block b's sections start at ``bodies[b]`` and end by ``ends[b]``."""
        fixed = padded(self.fixed, 4).reshape(self.blocks, -1)
        at_fixed = (fixed.cumsum(1) - fixed + bodies[:, None]).ravel()  # after the sections without a spline
        (index,) = self.spline.nonzero()
        counts, degrees = [], []
        block, grown, end = -1, 0, 0
        unpack = HEADER.unpack_from
        for b, at, align, value_bytes, point_bytes in zip(*(a[index].tolist() for a in (
                self.block, at_fixed, self.align, self.value_bytes, self.point_bytes))):
            if b != block:
                block, grown, end = b, 0, int(ends[b])
            at += grown
            if at + HEADER.size > end:
                raise FormatError(f"block {b}: a spline header at data offset {at} lies past the block's end", offset=at)
            points, degree = unpack(data, at)
            count = points + 1
            _, codes, stop = spline_fields(count, degree, align, value_bytes, point_bytes)
            if at + stop > end or not 1 <= degree < count:  # one test for the usual case; which, below
                _bad_spline(b, at, count, degree, codes, stop, end)
            counts.append(count)
            degrees.append(degree)
            grown += padded(stop, 4)
        return np.array(counts, np.int64), np.array(degrees, np.int64)

    def layout(self, counts, degrees):
        """Places every field, from each block's first section (``starts``; per section, from
        its start: ``values_at``, ``codes_at``; the sizes ``knot_bytes``, ``code_bytes``), and
        keeps ``count`` and ``degree`` (0 off splines). Returns each block's sections' size."""
        self.count = np.zeros(len(self.key), np.int64)
        self.degree = np.zeros(len(self.key), np.int64)
        self.count[self.spline] = counts
        self.degree[self.spline] = degrees
        values, codes, ends = spline_fields(self.count, self.degree, self.align, self.value_bytes, self.point_bytes)
        self.values_at = np.where(self.spline, values, 0)
        self.codes_at = np.where(self.spline, codes, self.value_bytes)
        self.ends = np.where(self.spline, ends, self.fixed)
        self.code_bytes = self.ends - self.codes_at
        self.knot_bytes = np.where(self.spline, self.count + self.degree + 1, 0)
        sizes = padded(self.ends, 4).reshape(self.blocks, -1)
        self.starts = (sizes.cumsum(1) - sizes).ravel()
        return sizes.sum(1)

    def fields(self, at):
        """Where every section's values, knots and codes lie (the sections starting at ``at``):
        the byte indices of all values, then all knots, then all codes; and how many of each."""
        sizes = (self.value_bytes, self.knot_bytes, self.code_bytes)
        index = ranges(np.concatenate([at + self.values_at, at + HEADER.size, at + self.codes_at]), np.concatenate(sizes))
        return index, [int(size.sum()) for size in sizes]


def _bad_spline(b, at, count, degree, codes, stop, end):
    """Raises what is wrong with the spline at data offset ``at`` of block ``b``."""
    if not 1 <= degree < count:
        raise FormatError(f"block {b}: spline at data offset {at} has {count} control points for degree {degree}", offset=at)
    knots = count + degree + 1
    if at + HEADER.size + knots > end:
        raise FormatError(f"block {b}: spline knots needs {knots} bytes but only {end - at - HEADER.size} remain", offset=at + HEADER.size)
    raise FormatError(f"block {b}: control points needs {stop - codes} bytes but only {end - at - codes} remain", offset=at + codes)


def _static_floats(float_flags):
    """Which float tracks hold a value (blocks, floats) and each one's place among them."""
    static = float_flags & STATIC != 0
    return static, static.cumsum(1) - static


class Blocks:
    """Blocks of the same tracks: their ``sections`` (Sections, from the masks) and float track
    flags (blocks, float tracks); per spline, in file order, ``counts`` and ``degrees``; the
    sections' fields one after the other in file order, ``knots`` (u8), ``values`` (f32: per
    splined axis its minimum and maximum, per static axis its value) and ``codes`` (u8:
    quantised control points and static quaternions); ``floats`` (blocks, float tracks), the
    static float tracks' values (0 for the others)."""

    def __init__(self, sections, float_flags, counts, degrees, knots, values, codes, floats):
        self.sections = sections
        self.float_flags = float_flags
        self.counts = counts
        self.degrees = degrees
        self.knots = knots
        self.values = values
        self.codes = codes
        self.floats = floats

    @classmethod
    def read(cls, data, starts, ends, tracks, float_count, float_offsets):
        """The blocks of ``data`` (u8): block b from ``starts[b]`` to ``ends[b]`` (holding its
        masks), its float values at ``float_offsets[b]`` from its start."""
        mask_bytes = 4 * tracks + float_count
        head = data[starts[:, None] + np.arange(mask_bytes)]
        masks = head[:, : 4 * tracks].reshape(len(starts), tracks, 4)
        float_flags = head[:, 4 * tracks :]
        sections = Sections(masks)
        bodies = starts + padded(mask_bytes, 4)
        counts, degrees = sections.read_headers(data, bodies, ends)
        sizes = sections.layout(counts, degrees)
        at = bodies[sections.block] + sections.starts
        over = (sections.ends > 0) & (at + sections.ends > ends[sections.block])
        if over.any():
            i = int(np.argmax(over))
            raise FormatError(f"block {sections.block[i]}: track {sections.track[i]}'s static values run past the block's end", offset=int(at[i]))
        index, (values, knots, _) = sections.fields(at)
        gathered = data[index]  # values first: their f32 stay aligned
        values, knots, codes = gathered[:values].view("<f4"), gathered[values : values + knots], gathered[values + knots :]

        floats = np.zeros(float_flags.shape, np.float32)
        if float_count:
            float_at = starts + float_offsets
            overlap = float_at < np.minimum(bodies + sizes, ends)
            if overlap.any():
                b = int(np.argmax(overlap))
                raise FormatError(f"block {b}: float tracks at {float_offsets[b]} overlap the block's transform tracks")
            splined = float_flags & SPLINE != 0
            if splined.any():
                b, k = np.argwhere(splined)[0].tolist()
                raise FormatError(f"block {b}: float track {k} is a spline; only static float tracks are supported")
            static, slot = _static_floats(float_flags)
            short = float_at + 4 * static.sum(1) > ends
            if short.any():
                b = int(np.argmax(short))
                raise FormatError(f"block {b}: the float tracks' values run past the block's end", offset=int(float_at[b]))
            value_at = (float_at[:, None] + 4 * slot)[static]
            floats[static] = data[value_at[:, None] + np.arange(4)].view("<f4").ravel()
        return cls(sections, float_flags, counts, degrees, knots, values, codes, floats)

    def to_bytes(self):
        """One block: (its bytes (u8), the offset of its float values)."""
        sections = self.sections
        tracks, float_count = sections.masks.shape[1], self.float_flags.shape[1]
        body = padded(4 * tracks + float_count, 4)
        float_offset = body + int(sections.layout(self.counts, self.degrees)[0])
        static, slot = _static_floats(self.float_flags)
        out = np.zeros(float_offset + 4 * int(static.sum()), np.uint8)
        out[: 4 * tracks] = sections.masks.ravel()
        out[4 * tracks : 4 * tracks + float_count] = self.float_flags[0]
        at = body + sections.starts
        headers = b"".join(HEADER.pack(count - 1, degree) for count, degree in zip(self.counts.tolist(), self.degrees.tolist()))
        out[ranges(at[sections.spline], np.full(len(self.counts), HEADER.size))] = np.frombuffer(headers, np.uint8)
        out[sections.fields(at)[0]] = np.concatenate([np.asarray(self.values, "<f4").view(np.uint8), self.knots, self.codes])
        out[(float_offset + 4 * slot[static])[:, None] + np.arange(4)] = self.floats[static].astype("<f4").view(np.uint8).reshape(-1, 4)
        return out, float_offset
