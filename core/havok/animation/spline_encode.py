"""Encoding per-frame transforms as hkaSplineCompressedAnimation data (the blocks' layout:
spline_block, written through the same description that reads it).

Per block and track, each of position, rotation and scale is identity, static or a spline,
decided per axis (per quaternion for rotations) by the tolerances. Splines are fitted by least
squares over the block's frames, trying cubic B-splines with a knot every 16, 8, 4 then 2 frames
and keeping the first whose error after quantisation stays within tolerance; otherwise a
linear spline through every frame (exact up to quantisation). One basis matrix per block and
candidate serves every track at once.
"""

from dataclasses import dataclass

import numpy as np

from ...errors import FormatError
from .quantize import ROTATION_ALIGN, THREECOMP40, rotations_from, rotations_to, scalars_from_codes, scalars_to
from .spline_block import SPLINE, STATIC, STATIC_FLOAT, Blocks, Sections, padded
from .spline_decode import MAX_FRAMES_PER_BLOCK, basis

BITS16 = 1
CANDIDATES = ((3, 16), (3, 8), (3, 4), (3, 2), (1, 1))  # (degree, frames between knots)


@dataclass
class Tolerances:
    """Largest error allowed per value: rotation as a quaternion component, translation and
    scale in the file's units (Havok's defaults)."""

    rotation: float = 0.001
    translation: float = 0.01
    scale: float = 0.001


@dataclass
class SplineData:
    frames_per_block: int
    block_offsets: np.ndarray
    float_block_offsets: np.ndarray
    mask_size: int
    data: np.ndarray


def knots_for(frames, degree, spacing):
    """Clamped knot vector over local frames 0..frames-1 with breaks every ``spacing``."""
    inner = list(range(spacing, frames - 1, spacing))
    return np.array([0] * (degree + 1) + inner + [frames - 1] * (degree + 1), np.int64)


def basis_matrix(knots, degree, frames):
    """(frames, control points): the basis weights of every control point at every frame."""
    count = len(knots) - degree - 1
    u = np.arange(frames, dtype=np.float64)
    span = np.clip(np.searchsorted(knots, u, side="right") - 1, degree, count - 1)
    weights = basis(knots.astype(np.float64), span - degree + 1, u, degree)
    matrix = np.zeros((frames, count))
    rows = np.arange(frames)
    for r in range(degree + 1):
        matrix[rows, span - degree + r] = weights[r]
    return matrix


def _candidates(frames):
    for degree, spacing in CANDIDATES:
        knots = knots_for(frames, degree, spacing)
        count = len(knots) - degree - 1
        if count <= frames and count > degree:
            yield degree, knots, basis_matrix(knots, degree, frames)


def _fit_vectors(values, splined, bits16, tolerance):
    """Per track with a splined axis: (degree, knots, control points (k, 3), ranges (3, 2))."""
    frames = len(values)
    tracks = np.nonzero(splined.any(1))[0]
    chosen = {}
    left = tracks
    for degree, knots, matrix in _candidates(frames):
        if not len(left):
            break
        y = values[:, left].reshape(frames, -1)
        points = np.linalg.lstsq(matrix, y, rcond=None)[0].reshape(-1, len(left), 3)
        low, high = points.min(0), points.max(0)
        quantised = scalars_from_codes(scalars_to(points, bits16, low, high), bits16, low, high)
        error = np.abs(np.einsum("fk,ktc->ftc", matrix, quantised) - values[:, left])
        error = np.where(splined[left][None], error, 0).max(axis=(0, 2))
        last = degree == 1
        for i, track in enumerate(left.tolist()):
            if last or error[i] <= tolerance:
                chosen[track] = (degree, knots, points[:, i], np.stack([low[i], high[i]], 1))
        left = np.array([t for t in left.tolist() if t not in chosen], np.int64)
    return chosen


def _fit_rotations(values, splined, kind, tolerance):
    """Per splined track: (degree, knots, quantised bytes (k, size))."""
    frames = len(values)
    chosen = {}
    left = np.nonzero(splined)[0]
    for degree, knots, matrix in _candidates(frames):
        if not len(left):
            break
        y = values[:, left].reshape(frames, -1)
        points = np.linalg.lstsq(matrix, y, rcond=None)[0].reshape(-1, 4)
        points /= np.maximum(np.linalg.norm(points, axis=1, keepdims=True), 1e-12)
        raw = rotations_to(points, kind)
        decoded = rotations_from(raw, kind).reshape(-1, len(left), 4)
        curve = np.einsum("fk,ktc->ftc", matrix, decoded)
        curve /= np.maximum(np.linalg.norm(curve, axis=2, keepdims=True), 1e-12)
        error = np.abs(curve - values[:, left]).max(axis=(0, 2))
        raw = raw.reshape(-1, len(left), raw.shape[1])
        last = degree == 1
        for i, track in enumerate(left.tolist()):
            if last or error[i] <= tolerance:
                chosen[track] = (degree, knots, raw[:, i])
        left = np.array([t for t in left.tolist() if t not in chosen], np.int64)
    return chosen


def _classify(values, identity, tolerance):
    """Per (track, axis): 0 identity, 1 static, 2 spline; and the static values."""
    low, high = values.min(0), values.max(0)
    middle = ((low + high) / 2).astype(np.float32)
    state = np.full(low.shape, 2)
    state[(high - low) / 2 <= tolerance] = 1
    state[np.abs(values - identity).max(0) <= tolerance] = 0
    return state, middle


def encode_spline(translation, rotation, scale, floats, *, tolerances=None, rotation_quantization=THREECOMP40,
                  frames_per_block=MAX_FRAMES_PER_BLOCK):
    """SplineData for (F, T, 3) translation, (F, T, 4) xyzw rotation, (F, T, 3) scale and
    (F, N) floats (constant over time: the games' files hold only static float tracks)."""
    tolerances = tolerances or Tolerances()
    frames, tracks = rotation.shape[:2]
    float_count = floats.shape[1]
    if float_count and np.ptp(floats, axis=0).max() > 0:
        raise FormatError("float tracks that change over time cannot be spline-compressed; write the animation uncompressed")
    if rotation_quantization not in ROTATION_ALIGN:
        raise FormatError(f"rotation quantisation {rotation_quantization} cannot be written")
    rotation = _continuous(rotation)
    step = frames_per_block - 1
    blocks = max(1, -(-(frames - 1) // step))
    data, block_offsets, float_offsets = [], [], []
    at = 0
    for block in range(blocks):
        first = block * step
        last = min(first + step, frames - 1)
        written, float_offset = _block(translation[first : last + 1], rotation[first : last + 1], scale[first : last + 1],
                                       floats[0], tolerances, rotation_quantization).to_bytes()
        block_offsets.append(at)
        float_offsets.append(float_offset)
        data += [written, np.zeros(padded(len(written), 16) - len(written), np.uint8)]  # blocks start 16-aligned
        at += padded(len(written), 16)
    return SplineData(
        frames_per_block=frames_per_block,
        block_offsets=np.array(block_offsets, "<u4"),
        float_block_offsets=np.array(float_offsets, "<u4"),
        mask_size=4 * tracks + float_count,
        data=np.concatenate(data),
    )


def _continuous(rotation):
    """Unit quaternions, each on the same side as the frame before (q and -q are one rotation)."""
    q = rotation / np.maximum(np.linalg.norm(rotation, axis=2, keepdims=True), 1e-12)
    flips = np.einsum("ftc,ftc->ft", q[1:], q[:-1]) < 0
    sign = np.where(np.cumsum(np.vstack([np.zeros((1, q.shape[1]), int), flips]), axis=0) % 2, -1.0, 1.0)
    return (q * sign[..., None]).astype(np.float64)


def _block(translation, rotation, scale, floats, tolerances, kind):
    """The block (spline_block.Blocks) of these frames."""
    frames, tracks = rotation.shape[:2]
    position_state, position_static = _classify(translation, 0.0, tolerances.translation)
    scale_state, scale_static = _classify(scale, 1.0, tolerances.scale)
    # rotation: identity, static or spline as a whole quaternion (either sign of identity)
    identity = np.minimum(np.abs(rotation - [0, 0, 0, 1]).max(axis=(0, 2)), np.abs(rotation + [0, 0, 0, 1]).max(axis=(0, 2)))
    spread = (rotation.max(0) - rotation.min(0)).max(1) / 2
    # a static rotation is quantised too: half the tolerance leaves room for that step
    rotation_state = np.where(identity <= tolerances.rotation, 0, np.where(spread <= tolerances.rotation / 2, 1, 2))
    if frames < 2:
        position_state = np.minimum(position_state, 1)
        scale_state = np.minimum(scale_state, 1)
        rotation_state = np.minimum(rotation_state, 1)
    position_fits = _fit_vectors(translation, position_state == 2, True, tolerances.translation)
    scale_fits = _fit_vectors(scale, scale_state == 2, True, tolerances.scale)
    rotation_fits = _fit_rotations(rotation, rotation_state == 2, kind, tolerances.rotation)
    middle = (rotation.max(0) + rotation.min(0)) / 2
    static_rotations = rotations_to(middle / np.maximum(np.linalg.norm(middle, axis=1, keepdims=True), 1e-12), kind)

    masks = np.zeros((1, tracks, 4), np.uint8)
    masks[0, :, 0] = BITS16 | kind << 2 | BITS16 << 6
    masks[0, :, 1] = _vector_flags(position_state)
    masks[0, :, 2] = np.array([0, STATIC, SPLINE])[rotation_state]
    masks[0, :, 3] = _vector_flags(scale_state)
    fields = _Fields()
    for track in range(tracks):
        fields.vector(position_state[track], position_static[track], position_fits.get(track))
        if rotation_state[track] == 2:
            degree, knots, raw = rotation_fits[track]
            fields.spline(len(raw), degree, knots)
            fields.codes.append(raw.tobytes())
        elif rotation_state[track] == 1:
            fields.codes.append(static_rotations[track].tobytes())
        fields.vector(scale_state[track], scale_static[track], scale_fits.get(track))
    return Blocks(
        Sections(masks), np.full((1, len(floats)), STATIC_FLOAT, np.uint8), np.array(fields.counts, np.int64),
        np.array(fields.degrees, np.int64), np.frombuffer(b"".join(fields.knots), np.uint8),
        np.array(fields.values, "<f4"), np.frombuffer(b"".join(fields.codes), np.uint8),
        np.asarray(floats, np.float32).reshape(1, -1),
    )


def _vector_flags(state):
    """Per track: bits 4-6 the splined axes, bits 0-2 the static ones (state (tracks, 3))."""
    return ((state == 2) << np.array([4, 5, 6])).sum(1) | ((state == 1) << np.arange(3)).sum(1)


class _Fields:
    """A block's sections' fields, gathered in file order."""

    def __init__(self):
        self.counts, self.degrees, self.knots, self.values, self.codes = [], [], [], [], []

    def spline(self, count, degree, knots):
        self.counts.append(count)
        self.degrees.append(degree)
        self.knots.append(knots.astype(np.uint8).tobytes())

    def vector(self, state, static, fit):
        """A position or scale: per axis identity (0), static (1) or splined (2)."""
        if fit is not None:
            degree, knots, points, ranges = fit
            splined = state == 2
            self.spline(len(points), degree, knots)
            codes = scalars_to(points, True, ranges[:, 0], ranges[:, 1])[:, splined]
            self.codes.append(codes.astype("<u2").tobytes())
        for axis in range(3):
            if state[axis] == 2:
                self.values += ranges[axis].tolist()
            elif state[axis] == 1:
                self.values.append(float(static[axis]))
