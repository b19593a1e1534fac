"""Decoding hkaSplineCompressedAnimation to per-frame translation, rotation, scale and floats.

The data is a run of blocks, each covering ``frames_per_block`` frames; neighbouring blocks
share their boundary frame, so frame f lies in block min(f // (frames_per_block - 1), last) at
local frame f - block * (frames_per_block - 1). A block holds:

- the masks: per transform track 4 bytes (quantisations: bits 0-1 position, 2-5 rotation, 6-7
  scale; then the position, rotation and scale flags), per float track 1 byte of flags; flags
  bits 0-3 mark static components (x y z w), bits 4-7 spline ones, none: identity.
- aligned to 4, per transform track its position, rotation and scale, each followed by
  alignment to 4:
  - position or scale, spline: u16 n (control points - 1), u8 degree, n + degree + 2 u8 knots
    (local frames), align 4, per axis x y z: f32 min and max if splined, one f32 if static;
    then n + 1 control points of the splined axes, 8 or 16 bits each.
  - position or scale, static only: one f32 per static axis.
  - rotation, spline: n, degree, knots as above, aligned to the quantisation, n + 1 quantised
    quaternions; static: aligned, one quaternion.
- at ``float_block_offsets[block]`` from the block's start: per float track one f32 when
  static (the games' files hold only static float tracks).

A spline is a clamped B-spline: a frame's span is the last knot not after it, kept within
[degree, n]; the value is the degree + 1 control points from span - degree weighted by the
Cox-de Boor basis. Rotations are blended as 4-vectors and normalised.

Headers are walked per block and track (their sizes chain), control points and evaluation
are done at once for all splines with numpy.
"""

import numpy as np

from ...errors import FormatError
from .quantize import ROTATION_ALIGN, ROTATION_SIZE, SCALAR_SIZE, check_rotation, check_scalar, gather, rotations_from, scalars_from

POSITION, ROTATION, SCALE = 0, 1, 2
MAX_FRAMES_PER_BLOCK = 256  # knots are u8 frame numbers


class _Splines:
    """What the header walk collects for one kind of value, in flat lists."""

    def __init__(self):
        # splines: track, block, degree, control point count, knots offset, points offset,
        # quantisation, and for vectors the per-axis (min, max, splined) rows
        self.track, self.block, self.degree, self.count, self.knots, self.points, self.quant = ([] for _ in range(7))
        self.ranges = []  # vectors: (3, 2) min/max; a static axis has min = max = its value
        self.splined = []  # vectors: (3,) bool
        # static values: track, block, value (rotations: data offset and quantisation)
        self.static_track, self.static_block, self.static_value = [], [], []


class _Walker:
    def __init__(self, data, where):
        self.data = data
        self.size = len(data)
        self.where = where

    def need(self, pos, size, what):
        if pos + size > self.end:
            raise FormatError(f"{self.where}: {what} at data offset {pos} runs past its block (ends at {self.end})")

    def u8(self, pos):
        self.need(pos, 1, "spline header")
        return int(self.data[pos])

    def u16(self, pos):
        self.need(pos, 2, "spline header")
        return int(self.data[pos]) | int(self.data[pos + 1]) << 8

    def f32s(self, pos, count, what):
        self.need(pos, 4 * count, what)
        return np.frombuffer(self.data, "<f4", count, pos)

    def header(self, pos):
        """(n, degree, knots offset, position after the knots) of a spline."""
        n = self.u16(pos)
        degree = self.u8(pos + 2)
        if degree < 1 or n < degree:
            raise FormatError(f"{self.where}: spline at data offset {pos} has {n + 1} control points for degree {degree}")
        self.need(pos + 3, n + degree + 2, "spline knots")
        return n, degree, pos + 3, pos + 3 + n + degree + 2


def _align(pos, alignment):
    return -(-pos // alignment) * alignment


def _vector(walker, pos, flags, quant, track, block, out, identity):
    splined = [(flags >> (4 + axis)) & 1 for axis in range(3)]
    static = [(flags >> axis) & 1 for axis in range(3)]
    if any(splined):
        check_scalar(quant, walker.where)
        n, degree, knots, pos = walker.header(pos)
        pos = _align(pos, 4)
        ranges = np.full((3, 2), identity, np.float32)
        for axis in range(3):
            if splined[axis]:
                ranges[axis] = walker.f32s(pos, 2, "spline range")
                pos += 8
            elif static[axis]:
                ranges[axis] = walker.f32s(pos, 1, "static value")[0]
                pos += 4
        size = (n + 1) * sum(splined) * SCALAR_SIZE[quant]
        walker.need(pos, size, "control points")
        out.track.append(track)
        out.block.append(block)
        out.degree.append(degree)
        out.count.append(n + 1)
        out.knots.append(knots)
        out.points.append(pos)
        out.quant.append(quant)
        out.ranges.append(ranges)
        out.splined.append(splined)
        pos += size
    elif any(static):
        value = np.full(3, identity, np.float32)
        for axis in range(3):
            if static[axis]:
                value[axis] = walker.f32s(pos, 1, "static value")[0]
                pos += 4
        out.static_track.append(track)
        out.static_block.append(block)
        out.static_value.append(value)
    return _align(pos, 4)


def _rotation(walker, pos, flags, quant, track, block, out):
    if flags & 0xF0:
        check_rotation(quant, walker.where)
        n, degree, knots, pos = walker.header(pos)
        pos = _align(pos, ROTATION_ALIGN[quant])
        size = (n + 1) * ROTATION_SIZE[quant]
        walker.need(pos, size, "rotation control points")
        out.track.append(track)
        out.block.append(block)
        out.degree.append(degree)
        out.count.append(n + 1)
        out.knots.append(knots)
        out.points.append(pos)
        out.quant.append(quant)
        pos += size
    elif flags & 0x0F:
        check_rotation(quant, walker.where)
        pos = _align(pos, ROTATION_ALIGN[quant])
        walker.need(pos, ROTATION_SIZE[quant], "static rotation")
        out.static_track.append(track)
        out.static_block.append(block)
        out.static_value.append((pos, quant))  # decoded together in _fill
        pos += ROTATION_SIZE[quant]
    return _align(pos, 4)


def block_layout(anim, where):
    """Checks the counts and offsets; returns (block starts, block ends, first and last frame
    each block decodes)."""
    tracks, floats = anim.transform_track_count, anim.float_track_count
    frames, blocks, per_block = anim.frame_count, anim.block_count, anim.frames_per_block
    size = len(anim.data)
    if tracks < 0 or floats < 0 or frames < 1 or blocks < 1:
        raise FormatError(f"{where}: {tracks} tracks, {floats} float tracks, {frames} frames in {blocks} blocks")
    if not 2 <= per_block <= MAX_FRAMES_PER_BLOCK:
        raise FormatError(f"{where}: {per_block} frames per block (2 to {MAX_FRAMES_PER_BLOCK} possible)")
    if blocks != max(1, -(-(frames - 1) // (per_block - 1))):
        raise FormatError(f"{where}: {blocks} blocks cannot hold {frames} frames of {per_block} per block")
    if anim.mask_size != 4 * tracks + floats:
        raise FormatError(f"{where}: mask size {anim.mask_size} does not match {tracks} tracks and {floats} float tracks")
    if len(anim.block_offsets) != blocks or (floats and len(anim.float_block_offsets) != blocks):
        raise FormatError(f"{where}: {len(anim.block_offsets)} block offsets for {blocks} blocks")
    starts = anim.block_offsets.astype(np.int64)
    ends = np.append(starts[1:], size)
    if (starts >= ends).any() or (starts % 4).any() or starts[0] != 0:
        raise FormatError(f"{where}: block offsets {starts.tolist()} do not divide {size} bytes of data")
    if (starts + anim.mask_size > ends).any():
        raise FormatError(f"{where}: a block is shorter than its masks")
    first = np.arange(blocks) * (per_block - 1)
    last = np.append(first[1:] - 1, frames - 1)  # a shared boundary frame is the next block's first
    return starts, ends, first, last


def decode_spline(anim, where="hkaSplineCompressedAnimation"):
    """(translation (F, T, 3), rotation (F, T, 4) xyzw, scale (F, T, 3), floats (F, N))."""
    starts, ends, first, last = block_layout(anim, where)
    data = np.asarray(anim.data, np.uint8)
    tracks, floats = anim.transform_track_count, anim.float_track_count
    frames = anim.frame_count
    walker = _Walker(data, where)
    kinds = [_Splines(), _Splines(), _Splines()]
    float_values = np.zeros((len(starts), floats), np.float32)
    for block, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        walker.where = f"{where}, block {block}"
        walker.end = end
        masks = data[start : start + 4 * tracks].reshape(tracks, 4).tolist()
        pos = _align(start + anim.mask_size, 4)
        for track, (quant, position, rotation, scale) in enumerate(masks):
            pos = _vector(walker, pos, position, quant & 3, track, block, kinds[POSITION], 0.0)
            pos = _rotation(walker, pos, rotation, (quant >> 2) & 0xF, track, block, kinds[ROTATION])
            pos = _vector(walker, pos, scale, quant >> 6, track, block, kinds[SCALE], 1.0)
        walker.last = pos
        if floats:
            float_values[block] = _floats(walker, data, start, anim.float_block_offsets[block], floats, anim.mask_size)

    translation = np.zeros((frames, tracks, 3), np.float32)
    rotation = np.zeros((frames, tracks, 4), np.float32)
    rotation[..., 3] = 1.0
    scale = np.ones((frames, tracks, 3), np.float32)
    for kind, out in zip(kinds, (translation, rotation, scale)):
        _fill(kind, out, data, first, last, kind is kinds[ROTATION], where)
    block_of_frame = np.minimum(np.arange(frames) // (anim.frames_per_block - 1), len(starts) - 1)
    return translation, rotation, scale, float_values[block_of_frame]


def _floats(walker, data, start, offset, count, mask_size):
    values = np.zeros(count, np.float32)
    flags = data[start + mask_size - count : start + mask_size].tolist()
    pos = start + int(offset)
    if pos < start + mask_size:
        raise FormatError(f"{walker.where}: float tracks at {offset} overlap the block's masks")
    for k, flag in enumerate(flags):
        if flag & 0xF0:
            raise FormatError(f"{walker.where}: float track {k} is a spline; only static float tracks are supported")
        if flag & 0x0F:
            values[k] = walker.f32s(pos, 1, "float track value")[0]
            pos += 4
    return values


def _frames_of(blocks, first, last):
    """For splines in ``blocks``: (spline index per query, local frame, frame)."""
    counts = (last - first + 1)[blocks]
    spline = np.repeat(np.arange(len(blocks)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return spline, local, local + first[blocks][spline]


def _fill(kind, out, data, first, last, is_rotation, where):
    width = out.shape[2]
    if kind.static_track:
        blocks = np.array(kind.static_block)
        spline, _, frame = _frames_of(blocks, first, last)
        if is_rotation:
            at, quant = np.array(kind.static_value).T
            values = np.empty((len(at), 4), np.float32)
            for q in np.unique(quant).tolist():
                rows = quant == q
                values[rows] = rotations_from(gather(data, at[rows], ROTATION_SIZE[q]), q)
        else:
            values = np.array(kind.static_value, np.float32)
        out[frame, np.array(kind.static_track)[spline]] = values[spline]
    if not kind.track:
        return
    blocks = np.array(kind.block)
    degree = np.array(kind.degree)
    count = np.array(kind.count)
    points = _control_points(kind, data, count, width, is_rotation)
    point_start = np.cumsum(count) - count
    spline, local, frame = _frames_of(blocks, first, last)
    values = evaluate(data, np.array(kind.knots), degree, count, points, point_start, spline, local, where)
    if is_rotation:
        values /= np.linalg.norm(values, axis=1, keepdims=True)
    out[frame, np.array(kind.track)[spline]] = values


def _control_points(kind, data, count, width, is_rotation):
    """All splines' control points stacked: (sum of counts, width) float32."""
    owner = np.repeat(np.arange(len(count)), count)
    index = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    offsets = np.array(kind.points)[owner]
    quant = np.array(kind.quant)[owner]
    if is_rotation:
        points = np.empty((len(owner), 4), np.float32)
        for q in np.unique(quant).tolist():
            rows = quant == q
            at = offsets[rows] + index[rows] * ROTATION_SIZE[q]
            points[rows] = rotations_from(gather(data, at, ROTATION_SIZE[q]), q)
        return points
    splined = np.array(kind.splined, bool)  # (splines, 3)
    ranges = np.array(kind.ranges, np.float32)  # (splines, 3, 2)
    per_point = splined.sum(1)
    slot = np.cumsum(splined, 1) - splined  # position of each axis among the splined ones
    size = np.array([SCALAR_SIZE[q] for q in kind.quant])[owner]
    points = np.repeat(ranges[:, :, 0], count, axis=0)  # static axes: their value
    for axis in range(3):
        rows = splined[owner, axis]
        at = offsets[rows] + (index[rows] * per_point[owner[rows]] + slot[owner[rows], axis]) * size[rows]
        raw = data[np.minimum(at[:, None] + np.arange(2), len(data) - 1)]
        low, high = ranges[owner[rows], axis, 0], ranges[owner[rows], axis, 1]
        points[rows, axis] = scalars_from(raw, size[rows] == 2, low, high)
    return points


def evaluate(data, knots_at, degree, count, points, point_start, spline, local, where):
    """B-spline values at local frames ``local`` of splines ``spline``: (queries, width)."""
    knot_count = count + degree + 1
    # all knots in one sorted run, each spline's lifted by 512 * its index, so one
    # searchsorted finds every query's span
    owner = np.repeat(np.arange(len(count)), knot_count)
    within = np.arange(knot_count.sum()) - np.repeat(np.cumsum(knot_count) - knot_count, knot_count)
    knots = data[knots_at[owner] + within].astype(np.float64)
    if (np.diff(knots)[np.diff(owner) == 0] < 0).any():
        raise FormatError(f"{where}: spline knots decrease")
    knot_start = np.cumsum(knot_count) - knot_count
    lifted = knots + 512.0 * owner
    u = local.astype(np.float64)
    last_le = np.searchsorted(lifted, u + 512.0 * spline, side="right") - 1 - knot_start[spline]
    p = degree[spline]
    span = np.clip(last_le, p, count[spline] - 1)
    result = np.zeros((len(spline), points.shape[1]), np.float64)
    for d in np.unique(degree).tolist():
        rows = np.nonzero(p == d)[0]
        base = knot_start[spline[rows]] + span[rows]
        weights = _basis(knots, base, u[rows], d)
        first_point = point_start[spline[rows]] + span[rows] - d
        for r in range(d + 1):
            result[rows] += weights[:, r : r + 1] * points[first_point + r]
    return result.astype(np.float32)


def _basis(knots, base, u, degree):
    """Cox-de Boor basis values (queries, degree + 1) at ``u``; ``base`` indexes the span's
    knot in ``knots``."""
    n = len(u)
    weights = np.zeros((n, degree + 1))
    weights[:, 0] = 1.0
    left = np.zeros((n, degree + 1))
    right = np.zeros((n, degree + 1))
    for j in range(1, degree + 1):
        left[:, j] = u - knots[base + 1 - j]
        right[:, j] = knots[base + j] - u
        saved = np.zeros(n)
        for r in range(j):
            denominator = right[:, r + 1] + left[:, j - r]
            temp = np.divide(weights[:, r], denominator, out=np.zeros(n), where=denominator != 0)
            weights[:, r] = saved + right[:, r + 1] * temp
            saved = left[:, j - r] * temp
        weights[:, j] = saved
    return weights
