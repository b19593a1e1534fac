"""NIF key groups as Blender F-curve keyframes and back (numpy only, no bpy).

Time: frame = time * fps, frame 0 at time 0; the fps is the scene's at import, kept on each
action (``nif_fps``) so the file's times come back whatever the scene's rate becomes.

Interpolation: linear keys are LINEAR keyframes, constant keys CONSTANT. Quadratic keys are
Hermite segments whose tangents span the whole interval (value change per interval), so they
are Bezier keyframes with free handles a third of each neighbouring interval away:
handle_right = (f + dt_next / 3, v + forward / 3), handle_left = (f - dt_prev / 3,
v - backward / 3); a Bezier with those handles is the same cubic. TBC keys become the same
Bezier handles, their Kochanek-Bartels tangents computed here (Blender has no TBC); writing
them back keeps each key's tension, bias and continuity. Quaternion keys carry no tangents:
linear ones are LINEAR keyframes (Blender blends components where the game slerps: equal at
the keys), quadratic and TBC ones are Bezier keyframes with automatic handles.
"""

import numpy as np

from ...core.nif.blocks.animation import CONSTANT, LINEAR, QUADRATIC, TBC


def neighbour_spans(frames):
    """(dt_prev, dt_next) per key; the ends borrow their one neighbouring interval (1 frame when
    there is a single key)."""
    steps = np.diff(frames)
    if not len(steps):
        return np.ones(1), np.ones(1)
    return np.concatenate([steps[:1], steps]), np.concatenate([steps, steps[-1:]])


def tbc_tangents(values, tbc):
    """(backward, forward) tangents of TBC keys (Kochanek-Bartels, per-interval units);
    ``values``: (n, width), ``tbc``: (n, 3) tension, bias, continuity."""
    n = len(values)
    before = values - values[np.maximum(np.arange(n) - 1, 0)]
    after = values[np.minimum(np.arange(n) + 1, n - 1)] - values
    t, b, c = (tbc[:, i : i + 1] for i in range(3))
    incoming = (1 - t) * (1 + c) * (1 + b) / 2 * before + (1 - t) * (1 - c) * (1 - b) / 2 * after
    outgoing = (1 - t) * (1 - c) * (1 + b) / 2 * before + (1 - t) * (1 + c) * (1 - b) / 2 * after
    return incoming, outgoing


def keyframes(times, values, interpolation, fps, backward=None, forward=None, tbc=None):
    """Keyframe arrays of one component: frames, values, handle_left, handle_right (each (n, 2))
    and the Blender interpolation name. ``backward``/``forward``: that component's tangents of
    quadratic keys; ``tbc`` (n, 3) for TBC keys."""
    frames = np.asarray(times, np.float64) * fps
    values = np.asarray(values, np.float64)
    if interpolation == TBC and tbc is not None:
        backward, forward = (t[:, 0] for t in tbc_tangents(values[:, None], np.asarray(tbc, np.float64)))
    if interpolation in (QUADRATIC, TBC) and backward is not None:
        dt_prev, dt_next = neighbour_spans(frames)
        left = np.column_stack([frames - dt_prev / 3, values - np.asarray(backward, np.float64) / 3])
        right = np.column_stack([frames + dt_next / 3, values + np.asarray(forward, np.float64) / 3])
        return frames, values, left, right, "BEZIER"
    flat = np.column_stack([frames, values])
    kind = "CONSTANT" if interpolation == CONSTANT else "LINEAR" if interpolation == LINEAR or backward is None else "BEZIER"
    return frames, values, flat, flat, kind


def tangents(frames, values, left, right, spans=None):
    """(backward, forward) per-interval tangents read off Bezier handles (the inverse of
    ``keyframes``): the handle's slope times the neighbouring interval (``spans``: (dt_prev,
    dt_next) when the intervals are not those between ``frames``)."""
    dt_prev, dt_next = spans if spans is not None else neighbour_spans(frames)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope_left = np.where(frames - left[:, 0] > 0, (values - left[:, 1]) / (frames - left[:, 0]), 0.0)
        slope_right = np.where(right[:, 0] - frames > 0, (right[:, 1] - values) / (right[:, 0] - frames), 0.0)
    return slope_left * dt_prev, slope_right * dt_next


def quaternion_continuity(quaternions):
    """Quaternions with signs flipped so each is on the same side as the one before (the game
    takes the short way between keys; Blender blends components as they are)."""
    q = np.array(quaternions, np.float64)
    for i in range(1, len(q)):
        if np.dot(q[i], q[i - 1]) < 0:
            q[i] = -q[i]
    return q


def quaternion_multiply(a, b):
    """a * b for a single quaternion ``a`` (w x y z) and an (n, 4) array ``b``."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = np.asarray(b, np.float64).T
    return np.column_stack(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )
