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
from .quantize import ROTATION_SIZE, SCALAR_SIZE, rotations_from, scalars_from
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

    identities = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0))
    translation, rotation, scale = (_fill(kind, frames, tracks, np.array(identity, np.float32), first, last, where)
                                    for kind, identity in zip(kinds, identities))
    block_of_frame = np.minimum(np.arange(frames) // (anim.frames_per_block - 1), len(starts) - 1)
    return translation, rotation, scale, float_values[block_of_frame]


def _fill(kind, frames, tracks, identity, first, last, where):
    """(frames, tracks, width) values of one kind; ``identity``: the value of a track with neither
    static value nor spline (its length the width). Each block's frames start as one row of its
    static values, copied down; the splines are evaluated at every frame of their blocks, a
    degree at a time, and written over them."""
    out = np.empty((frames, tracks, len(identity)), np.float32)
    is_rotation = len(identity) == 4
    static_block, static_track = np.array(kind.static_block, np.int64), np.array(kind.static_track, np.int64)
    if is_rotation:
        statics = _rotations(kind.static_sections)
    else:
        defaults = identity.tolist()
        statics = np.array([[default if v is None else v for v, default in zip(section.values, defaults)]
                            for section in kind.static_sections], np.float32).reshape(-1, 3)
    for block in range(len(first)):
        row = np.tile(identity, (tracks, 1))
        mine = static_block == block
        row[static_track[mine]] = statics[mine]
        out[first[block] : last[block] + 1] = row
    if not kind.track:
        return out
    sections = kind.sections
    degree = np.array([section.degree for section in sections])
    count = np.array([section.count for section in sections])
    knots = np.frombuffer(b"".join(section.knots for section in sections), np.uint8)
    points = _rotations(sections) if is_rotation else _vector_points(sections, count, identity)
    spline_block, spline_track = np.array(kind.block), np.array(kind.track)
    # the queries (spline, local frame) in runs of one degree and block, frame by frame
    groups = []
    for d in np.unique(degree).tolist():
        for block in np.unique(spline_block).tolist():
            (mine,) = np.nonzero((degree == d) & (spline_block == block))
            if len(mine):
                groups.append((d, block, mine, int(last[block] - first[block] + 1)))
    spline = np.concatenate([np.tile(mine, frames_in) for _, _, mine, frames_in in groups])
    local = np.concatenate([np.repeat(np.arange(frames_in), len(mine)) for _, _, mine, frames_in in groups])
    runs = [(d, len(mine) * frames_in) for d, _, mine, frames_in in groups]
    values = evaluate(knots, degree, count, points, spline, local, runs, where)
    if is_rotation:
        values /= np.linalg.norm(values, axis=1, keepdims=True)
    at = 0
    for _, block, mine, frames_in in groups:
        out[first[block] : last[block] + 1, spline_track[mine]] = values[at : at + len(mine) * frames_in].reshape(frames_in, len(mine), -1)
        at += len(mine) * frames_in
    return out


def _rotations(sections):
    """Every section's quaternions, stacked: (sum of counts, 4). The codes of one quantisation are
    whole quaternions back to back, so each quantisation's are decoded in one piece."""
    quant = np.repeat([section.quant for section in sections], [section.count for section in sections])
    points = np.empty((len(quant), 4), np.float32)
    for q in {section.quant for section in sections}:
        codes = np.frombuffer(b"".join(section.codes for section in sections if section.quant == q), np.uint8)
        points[quant == q] = rotations_from(codes.reshape(-1, ROTATION_SIZE[q]), q)
    return points


def _vector_points(sections, count, identity):
    """Every section's control points, stacked: (sum of counts, 3), static axes at their value,
    the others at ``identity``'s."""
    owner = np.repeat(np.arange(len(count)), count)
    index = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    splined = np.array([[section.splined(axis) for axis in range(3)] for section in sections], bool)
    defaults = identity.tolist()
    ranges = np.array([[v if isinstance(v, tuple) else (default if v is None else v,) * 2 for v, default in zip(section.values, defaults)]
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


def evaluate(knots, degree, count, points, spline, local, runs, where):
    """B-spline values at local frames ``local`` of splines ``spline``: (queries, width).
    ``knots`` holds every spline's knots in turn, ``points`` their control points; the queries
    come in runs of one degree, ``runs`` [(degree, queries)]."""
    knot_count = count + degree + 1
    # all knots in one sorted run, each spline's lifted by 256 * its index, so one
    # searchsorted finds every query's span
    owner = np.repeat(np.arange(len(count)), knot_count)
    knots = knots.astype(np.int64)
    if (np.diff(knots)[np.diff(owner) == 0] < 0).any():
        raise FormatError(f"{where}: spline knots decrease")
    knot_start = np.cumsum(knot_count) - knot_count
    last_le = np.searchsorted(knots + 256 * owner, local + 256 * spline, side="right") - 1 - knot_start[spline]
    span = np.clip(last_le, degree[spline], count[spline] - 1)
    base = knot_start[spline] + span
    last_point = (np.cumsum(count) - count)[spline] + span
    knots = knots.astype(np.float64)
    u = local.astype(np.float64)
    result = np.empty((len(spline), points.shape[1]), np.float32)
    at = 0
    for d, size in runs:
        rows = slice(at, at + size)
        weights = basis(knots, base[rows], u[rows], d)
        total = np.zeros((size, points.shape[1]))
        for r in range(d + 1):
            total += weights[:, r : r + 1] * points[last_point[rows] + (r - d)]
        result[rows] = total
        at += size
    return result


def basis(knots, base, u, degree):
    """Cox-de Boor basis values (queries, degree + 1) at ``u``; ``base`` indexes the span's
    knot in ``knots``."""
    n = len(u)
    weights = np.zeros((degree + 1, n))  # one row per term: each a contiguous run
    weights[0] = 1.0
    left = np.zeros((degree + 1, n))
    right = np.zeros((degree + 1, n))
    for j in range(1, degree + 1):
        left[j] = u - knots[base + 1 - j]
        right[j] = knots[base + j] - u
        saved = np.zeros(n)
        for r in range(j):
            denominator = right[r + 1] + left[j - r]
            temp = np.divide(weights[r], denominator, out=np.zeros(n), where=denominator != 0)
            weights[r] = saved + right[r + 1] * temp
            saved = left[j - r] * temp
        weights[j] = saved
    return weights.T
