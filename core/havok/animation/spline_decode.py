"""Decoding hkaSplineCompressedAnimation to per-frame translation, rotation, scale and floats.

The data is a run of blocks (their layout: spline_block), each covering ``frames_per_block``
frames; neighbouring blocks share their boundary frame, which decodes from the later block (as
Havok's runtime picks the block from the time): frame f lies in block
min(f // (frames_per_block - 1), last) at local frame f - block * (frames_per_block - 1).

A spline is a clamped B-spline: a frame's span is the last knot not after it, kept within
[degree, n]; the value is the degree + 1 control points from span - degree weighted by the
Cox-de Boor basis. Rotations are blended as 4-vectors and normalised.

Blocks are read per track (their sections' sizes chain); control points are dequantised and
every spline evaluated at once with numpy.
"""

import numpy as np

from ...errors import FormatError
from ...stream import ReadStream
from .quantize import ROTATION_SIZE, SCALAR_SIZE, gather, rotations_from, scalars_from
from .spline_block import Block

MAX_FRAMES_PER_BLOCK = 256  # knots are u8 frame numbers


class _Splines:
    """One kind of value (position, rotation or scale) of every block, in flat lists."""

    def __init__(self):
        self.track, self.block, self.sections = [], [], []  # splines
        self.static_track, self.static_block, self.static_sections = [], [], []


def _collect(kinds, block, sections_by_kind):
    for kind, sections in zip(kinds, sections_by_kind):
        for track, section in enumerate(sections):
            if section.is_spline():
                kind.track.append(track)
                kind.block.append(block)
                kind.sections.append(section)
            elif section.is_static():
                kind.static_track.append(track)
                kind.static_block.append(block)
                kind.static_sections.append(section)


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
    kinds = [_Splines(), _Splines(), _Splines()]
    float_values = np.zeros((len(starts), floats), np.float32)
    for block, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        stream = ReadStream(memoryview(data)[:end])
        stream.pos = start
        read = Block()
        read.float_offset = int(anim.float_block_offsets[block]) if floats else 0
        try:
            read.sync(stream, tracks, floats)
        except FormatError as error:
            at = "" if error.offset is None else f" (spline data offset {error.offset})"
            raise FormatError(f"{where}, block {block}: {error.message}{at}") from None
        _collect(kinds, block, (read.positions, read.rotations, read.scales))
        float_values[block] = read.floats

    translation = np.zeros((frames, tracks, 3), np.float32)
    rotation = np.zeros((frames, tracks, 4), np.float32)
    rotation[..., 3] = 1.0
    scale = np.ones((frames, tracks, 3), np.float32)
    for kind, out, identity in zip(kinds, (translation, rotation, scale), (0.0, None, 1.0)):
        _fill(kind, out, first, last, identity, where)
    block_of_frame = np.minimum(np.arange(frames) // (anim.frames_per_block - 1), len(starts) - 1)
    return translation, rotation, scale, float_values[block_of_frame]


def _frames_of(blocks, first, last):
    """For splines in ``blocks``: (spline index per query, local frame, frame)."""
    counts = (last - first + 1)[blocks]
    spline = np.repeat(np.arange(len(blocks)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return spline, local, local + first[blocks][spline]


def _fill(kind, out, first, last, identity, where):
    """Writes one kind's static values and splines into ``out``; ``identity`` None for rotations,
    else the value of an axis neither static nor splined."""
    is_rotation = identity is None
    if kind.static_track:
        spline, _, frame = _frames_of(np.array(kind.static_block), first, last)
        if is_rotation:
            values = _rotations(kind.static_sections)
        else:
            values = np.array([[identity if v is None else v for v in section.values] for section in kind.static_sections], np.float32)
        out[frame, np.array(kind.static_track)[spline]] = values[spline]
    if not kind.track:
        return
    sections = kind.sections
    degree = np.array([section.degree for section in sections])
    count = np.array([section.count for section in sections])
    knots = np.frombuffer(b"".join(section.knots for section in sections), np.uint8)
    points = _rotations(sections) if is_rotation else _vector_points(sections, count, identity)
    spline, local, frame = _frames_of(np.array(kind.block), first, last)
    values = evaluate(knots, degree, count, points, spline, local, where)
    if is_rotation:
        values /= np.linalg.norm(values, axis=1, keepdims=True)
    out[frame, np.array(kind.track)[spline]] = values


def _rotations(sections):
    """Every section's quaternions, stacked: (sum of counts, 4)."""
    quant = np.repeat([section.quant for section in sections], [section.count for section in sections])
    codes = np.frombuffer(b"".join(section.codes for section in sections), np.uint8)
    starts = np.cumsum([0] + [len(section.codes) for section in sections])[:-1]
    index = np.arange(len(quant)) - np.repeat(np.cumsum([0] + [s.count for s in sections])[:-1], [s.count for s in sections])
    at = np.repeat(starts, [section.count for section in sections])
    points = np.empty((len(quant), 4), np.float32)
    for q in np.unique(quant).tolist():
        rows = quant == q
        points[rows] = rotations_from(gather(codes, at[rows] + index[rows] * ROTATION_SIZE[q], ROTATION_SIZE[q]), q)
    return points


def _vector_points(sections, count, identity):
    """Every section's control points, stacked: (sum of counts, 3), static axes at their value."""
    owner = np.repeat(np.arange(len(count)), count)
    index = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    splined = np.array([[section.splined(axis) for axis in range(3)] for section in sections], bool)
    ranges = np.array([[v if isinstance(v, tuple) else (identity if v is None else v,) * 2 for v in section.values]
                       for section in sections], np.float32)  # (splines, 3, 2)
    codes = np.frombuffer(b"".join(section.codes for section in sections) + b"\0", np.uint8)
    starts = np.cumsum([0] + [len(section.codes) for section in sections])[:-1][owner]
    per_point = splined.sum(1)
    slot = np.cumsum(splined, 1) - splined  # position of each axis among the splined ones
    size = np.array([SCALAR_SIZE[section.quant] for section in sections])[owner]
    points = np.repeat(ranges[:, :, 0], count, axis=0)  # static axes: their value
    for axis in range(3):
        rows = splined[owner, axis]
        at = starts[rows] + (index[rows] * per_point[owner[rows]] + slot[owner[rows], axis]) * size[rows]
        raw = codes[np.minimum(at[:, None] + np.arange(2), len(codes) - 1)]
        points[rows, axis] = scalars_from(raw, size[rows] == 2, ranges[owner[rows], axis, 0], ranges[owner[rows], axis, 1])
    return points


def evaluate(knots, degree, count, points, spline, local, where):
    """B-spline values at local frames ``local`` of splines ``spline``: (queries, width).
    ``knots`` holds every spline's knots in turn, ``points`` their control points."""
    knot_count = count + degree + 1
    # all knots in one sorted run, each spline's lifted by 512 * its index, so one
    # searchsorted finds every query's span
    owner = np.repeat(np.arange(len(count)), knot_count)
    knots = knots.astype(np.float64)
    if (np.diff(knots)[np.diff(owner) == 0] < 0).any():
        raise FormatError(f"{where}: spline knots decrease")
    knot_start = np.cumsum(knot_count) - knot_count
    lifted = knots + 512.0 * owner
    u = local.astype(np.float64)
    last_le = np.searchsorted(lifted, u + 512.0 * spline, side="right") - 1 - knot_start[spline]
    p = degree[spline]
    span = np.clip(last_le, p, count[spline] - 1)
    point_start = np.cumsum(count) - count
    result = np.zeros((len(spline), points.shape[1]), np.float64)
    for d in np.unique(degree).tolist():
        rows = np.nonzero(p == d)[0]
        base = knot_start[spline[rows]] + span[rows]
        weights = basis(knots, base, u[rows], d)
        first_point = point_start[spline[rows]] + span[rows] - d
        for r in range(d + 1):
            result[rows] += weights[:, r : r + 1] * points[first_point + r]
    return result.astype(np.float32)


def basis(knots, base, u, degree):
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
