"""Decoding hkaSplineCompressedAnimation to per-frame translation, rotation, scale and floats.

The data is a run of blocks (their layout: spline_block), each covering ``frames_per_block``
frames; neighbouring blocks share their boundary frame, which decodes from the later block (as
Havok's runtime picks the block from the time): frame f lies in block
min(f // (frames_per_block - 1), last) at local frame f - block * (frames_per_block - 1).

A spline is a clamped B-spline: a frame's span is the last knot not after it, kept within
[degree, n]; the value is the degree + 1 control points from span - degree weighted by the
Cox-de Boor basis. Rotations are blended as 4-vectors and normalised.

Every block is read at once (spline_block); then every section's control points (a static
section's one value) are dequantised into one table, each block's static values copied down
its frames, and every spline of every kind, degree and block evaluated together, about CHUNK
queries at a time (the basis and weighted sum per run of one degree).
"""

import itertools

import numpy as np

from ...errors import FormatError
from .quantize import ROTATION_SIZE, rotations_from, scalars_from
from .spline_block import POSITION, ROTATION, SCALE, Blocks, ranges

MAX_FRAMES_PER_BLOCK = 256  # knots are u8 frame numbers
CHUNK = 4096  # queries evaluated together: their arrays stay small, in memory already in use
IDENTITY = {POSITION: (0.0, 0.0, 0.0), ROTATION: (0.0, 0.0, 0.0, 1.0), SCALE: (1.0, 1.0, 1.0)}


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
    ends = np.concatenate([starts[1:], [size]])
    if (starts >= ends).any() or (starts % 4).any() or starts[0] != 0:
        raise FormatError(f"{where}: block offsets {starts.tolist()} do not divide {size} bytes of data")
    if (starts + anim.mask_size > ends).any():
        raise FormatError(f"{where}: a block is shorter than its masks")
    first = np.arange(blocks) * (per_block - 1)
    last = np.concatenate([first[1:] - 1, [frames - 1]])  # a shared boundary frame is the next block's first
    return starts, ends, first, last


def decode_spline(anim, where="hkaSplineCompressedAnimation"):
    """(translation (F, T, 3), rotation (F, T, 4) xyzw, scale (F, T, 3), floats (F, N))."""
    starts, ends, first, last = block_layout(anim, where)
    tracks, floats = anim.transform_track_count, anim.float_track_count
    float_offsets = anim.float_block_offsets.astype(np.int64) if floats else np.zeros(len(starts), np.int64)
    try:
        blocks = Blocks.read(np.asarray(anim.data, np.uint8), starts, ends, tracks, floats, float_offsets)
    except FormatError as error:
        at = "" if error.offset is None else f" (spline data offset {error.offset})"
        raise FormatError(f"{where}, {error.message}{at}") from None
    points, point_from = _points(blocks)
    block_of_frame = np.minimum(np.arange(anim.frame_count) // (anim.frames_per_block - 1), len(starts) - 1)
    out = {kind: _statics(blocks.sections, kind, points, point_from, block_of_frame, tracks) for kind in IDENTITY}
    _splines(blocks, points, point_from, first, last, out, where)
    return out[POSITION], out[ROTATION], out[SCALE], blocks.floats.take(block_of_frame, axis=0)


def _points(blocks):
    """Every section's control points (a static section's one value): (rows, 4) float64 (of
    float32 values), positions and scales in the first three columns, the rotations first (by
    quantisation), then the positions and scales; and each section's first row."""
    s = blocks.sections
    rows = np.where(s.spline, s.count, s.static)
    group = np.where(s.kind == ROTATION, s.key >> 8 & 15, 16)[rows > 0]  # quantisation; 16: not a rotation
    by_group = group.argsort(kind="stable")
    order, group = rows.nonzero()[0][by_group], group[by_group]
    point_from = np.zeros(len(rows), np.int64)
    ends = rows[order].cumsum()
    point_from[order] = ends - rows[order]
    points = np.zeros((ends[-1] if len(ends) else 0, 4))
    codes_from = s.code_bytes.cumsum() - s.code_bytes
    cuts = (group[1:] != group[:-1]).nonzero()[0] + 1
    for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), len(order)]):
        mine, start, end = order[a:b], ends[a] - rows[order[a]], ends[b - 1]
        if group[a] < 16:
            codes = blocks.codes[ranges(codes_from[mine], s.code_bytes[mine])]
            points[start:end] = rotations_from(codes.reshape(-1, ROTATION_SIZE[group[a]]), group[a])
        else:
            _vector_points(blocks, mine, rows[mine], codes_from, points[start:end])
    return points, point_from


def _axis_tables():
    """Per pair of splined and static axes bits (splined << 3 | static), per axis x y z: whether
    it is splined, whether it has values, where they start among the section's (a splined axis
    has a minimum and a maximum, a static one its value) and its place among the splined axes;
    and how many axes are splined."""
    static, splined = np.arange(64)[:, None] >> np.array([[0, 1, 2], [3, 4, 5]])[:, None] & 1  # (pairs, axes) each
    width = 2 * splined + static
    return splined.astype(bool), width > 0, width.cumsum(1) - width, splined.cumsum(1) - splined, splined.sum(1)


_SPLINED, _VALUED, _VALUE_OFFSET, _PLACE, _SPLINED_COUNT = _axis_tables()
_IDENTITY_AXES = np.array([IDENTITY[POSITION], (0.0, 0.0, 0.0), IDENTITY[SCALE]], np.float32)  # per kind (rotations have no axes)


def _vector_points(blocks, vector, count, codes_from, out):
    """``out``: the control points of position and scale sections ``vector`` (``count`` each),
    one section after the other; per axis, splined (its code between the section's minimum and
    maximum), static (its value) or the identity's."""
    s = blocks.sections
    pair = s.splined_axes[vector] << 3 | s.static_axes[vector]
    splined = _SPLINED[pair]  # (sections, 3)
    value_at = ((s.value_bytes.cumsum() - s.value_bytes) // 4)[vector, None] + _VALUE_OFFSET[pair]
    low = _IDENTITY_AXES[s.kind[vector]]
    valued = _VALUED[pair]
    low[valued] = blocks.values[value_at[valued]]
    high = low.copy()
    high[splined] = blocks.values[value_at[splined] + 1]
    out[:, :3] = low.repeat(count, axis=0)
    # point i's code of a splined axis: (i * the splined axes + the axis's place among them) * code size
    at, axis = splined.repeat(count, axis=0).nonzero()
    section = np.arange(len(vector)).repeat(count)[at]
    index = at - (count.cumsum() - count)[section]
    size = s.scalar_bytes[vector][section]
    code_at = codes_from[vector][section] + (index * _SPLINED_COUNT[pair][section] + _PLACE[pair][section, axis]) * size
    cell = section * 3 + axis  # the section's axis, in low and high
    out.reshape(-1)[at * 4 + axis] = scalars_from(blocks.codes, code_at, size == 2, low.ravel().take(cell), high.ravel().take(cell))


def _statics(s, kind, points, point_from, block_of_frame, tracks):
    """(frames, tracks, width) values of one kind: each block's static values (the identity's
    where a track has none), copied down its frames."""
    identity = IDENTITY[kind]
    rows = np.empty((s.blocks, tracks, len(identity)), np.float32)
    rows[...] = identity
    mine = (s.kind == kind) & s.static
    rows[s.block[mine], s.track[mine]] = points[point_from[mine], : len(identity)]
    return rows.take(block_of_frame, axis=0)


def _splines(blocks, points, point_from, first, last, out, where):
    """Evaluates every spline at every frame of its block over ``out`` ({kind: (frames, tracks,
    width)}): the splines by degree, then kind, about CHUNK queries at a time."""
    s = blocks.sections
    (spline,) = s.spline.nonzero()
    if not len(spline):
        return
    knots = blocks.knots
    owner = np.arange(len(spline)).repeat(s.knot_bytes[spline])
    if (knots[1:] < knots[:-1])[owner[1:] == owner[:-1]].any():
        raise FormatError(f"{where}: spline knots decrease")
    knot_from = s.knot_bytes.cumsum() - s.knot_bytes
    order = spline[(s.degree * 3 + s.kind)[spline].argsort(kind="stable")]
    frames_in = (last - first + 1)[s.block[order]]
    ends = frames_in.cumsum()
    cuts = ends.searchsorted(np.arange(CHUNK, ends[-1], CHUNK)).tolist()
    rows = [(_rows(out[kind]), out[kind].shape[2]) for kind in (POSITION, ROTATION, SCALE)]  # each kind's rows, width
    for a, b in zip([0] + cuts, cuts + [len(order)]):
        _evaluate(s, order[a:b], frames_in[a:b], knots, knot_from, points, point_from, first, rows, out[POSITION].shape[1])


def _evaluate(s, splines, frames_in, knots, knot_from, points, point_from, first, rows, tracks):
    """Evaluates splines (sorted by degree, then kind) at every frame of their blocks."""
    query_from = frames_in.cumsum() - frames_in
    queries = int(query_from[-1] + frames_in[-1])
    local = np.arange(queries) - query_from.repeat(frames_in)
    knot_bytes = s.knot_bytes[splines]
    knots = knots[ranges(knot_from[splines], knot_bytes)]  # theirs, one spline after the other
    knots_before = knot_bytes.cumsum() - knot_bytes
    degree = s.degree[splines]
    # a frame's span: how many of its spline's knots lie at or before it, less one; counted in a
    # histogram of each spline's knots over its frames, with one bin past them for later knots
    bins_from = query_from + np.arange(len(splines))
    owner = np.arange(len(splines)).repeat(knot_bytes)
    seen = np.bincount(bins_from[owner] + np.minimum(knots, frames_in[owner]), minlength=queries + len(splines)).cumsum()
    span = (seen.take(local + bins_from.repeat(frames_in)) - (knots_before + 1).repeat(frames_in)).clip(
        degree.repeat(frames_in), (s.count[splines] - 1).repeat(frames_in))
    first_knot = (knots_before + 1 - degree).repeat(frames_in) + span
    first_point = (point_from[splines] - degree).repeat(frames_in) + span
    knots = knots.astype(np.float64)
    u = local.astype(np.float64)
    values = np.empty((queries, 4), np.float32)
    bounds = [*query_from.tolist(), queries]
    for a, b in _runs(degree):
        q, d = slice(bounds[a], bounds[b]), int(degree[a])
        weights = basis(knots, first_knot[q], u[q], d)
        # the weighted control points summed from zero (so that -0 terms add up to +0)
        at = first_point[q]
        total = points.take(at, axis=0)
        total *= weights[0][:, None]
        total += 0.0
        for r in range(1, d + 1):
            term = points[r:].take(at, axis=0)
            term *= weights[r][:, None]
            total += term
        values[q] = total
    row = (first[s.block[splines]] * tracks + s.track[splines]).repeat(frames_in) + local * tracks
    kinds = s.kind[splines]
    for a, b in _runs(kinds):
        q, kind = slice(bounds[a], bounds[b]), int(kinds[a])
        mine = values[q]
        if kind == ROTATION:
            mine /= _lengths(mine)
        target, width = rows[kind]
        target[row[q]] = _rows(mine if width == 4 else np.ascontiguousarray(mine[:, :width]))


def _runs(values):
    """(start, end) of each run of equal values."""
    cuts = ((values[1:] != values[:-1]).nonzero()[0] + 1).tolist()
    return zip([0, *cuts], [*cuts, len(values)])


def _lengths(quaternions):
    """Lengths (n, 1) of float32 quaternions (n, 4): the squares summed left to right in float32,
    as np.linalg.norm sums them, column by column (faster than its reduction over rows of 4)."""
    squares = quaternions * quaternions
    return np.sqrt(squares[:, 0] + squares[:, 1] + squares[:, 2] + squares[:, 3])[:, None]


def _rows(array):
    """The rows of a contiguous array (its last axis) as single items of a 1-D array, which
    numpy copies by index faster than rows of numbers."""
    return array.reshape(-1, array.shape[-1]).view(f"V{array.itemsize * array.shape[-1]}").reshape(-1)


def basis(knots, first, u, degree):
    """Cox-de Boor basis values (degree + 1, queries) at ``u``; ``first`` indexes the first knot
    the span uses (span - degree + 1) in ``knots``, which do not decrease within a spline."""
    n = len(u)
    # left[j] = u - knots[span + 1 - j], right[j] = knots[span + j] - u: views of the knots
    # shifted so that ``first`` indexes them
    left = [None] + [u - knots[degree - j :].take(first) for j in range(1, degree + 1)]
    right = [None] + [knots[degree - 1 + j :].take(first) - u for j in range(1, degree + 1)]
    # a denominator is zero only between equal knots (the knots and frames are whole numbers);
    # of the pairs it spans, knots that do not decrease make the span's own the closest, so
    # one test of theirs tells whether any is (a repeated inner knot)
    distinct = (right[1] + left[1]).all()
    weights = np.empty((degree + 1, n))
    weights[0] = 1.0
    for j in range(1, degree + 1):
        saved = 0.0
        for r in range(j):
            denominator = right[r + 1] + left[j - r]
            if distinct:
                temp = weights[r] / denominator
            else:  # repeated knots: those terms are zero
                temp = np.divide(weights[r], denominator, out=np.zeros(n), where=denominator != 0)
            np.multiply(right[r + 1], temp, out=weights[r])
            weights[r] += saved
            saved = left[j - r] * temp
        weights[j] = saved
    return weights
