"""The B-spline channels of NiBSplineCompTransformInterpolator: open uniform cubic B-splines
over the interpolator's [start, stop] (clamped knots, so the curve starts and ends on its first
and last control points), their control points stored as shorts mapped from [-1, 1] by each
channel's offset and half range. Each knot span is one cubic, so the curve converts exactly to
Bezier segments, one per span."""

import numpy as np

DEGREE = 3
CHANNELS = (("translation", 3), ("rotation", 4), ("scale", 1))  # rotation: quaternion w x y z
NO_CHANNEL = 0xFFFF


def control_points(interpolator, spline, count):
    """{channel: (count, width) control points} of the channels the interpolator has (a handle
    is the channel's first short in ``spline.compact_points``); a channel whose points run past
    the data is left out."""
    shorts = np.asarray(spline.compact_points, np.float64)
    found = {}
    for number, (name, width) in enumerate(CHANNELS):
        handle = interpolator.handles[number]
        offset, half_range = interpolator.ranges[2 * number : 2 * number + 2]
        if handle == NO_CHANNEL or handle + count * width > len(shorts):
            continue
        points = shorts[handle : handle + count * width].reshape(count, width)
        found[name] = offset + points / 32767.0 * half_range
    return found


def knots(count):
    """The clamped uniform knot vector of ``count`` control points: spans 0..count-3."""
    spans = count - DEGREE
    return np.concatenate([np.zeros(DEGREE), np.arange(spans + 1, dtype=np.float64), np.full(DEGREE, spans)])


def evaluate(points, u):
    """Values at parameters ``u`` (0..count-3) of the spline with control ``points`` (count, width),
    by de Boor's algorithm."""
    points = np.asarray(points, np.float64)
    count = len(points)
    t = knots(count)
    u = np.clip(np.asarray(u, np.float64), 0.0, count - DEGREE)
    span = np.clip(np.floor(u).astype(int), 0, count - DEGREE - 1) + DEGREE  # t[span] <= u < t[span + 1]
    out = np.empty((len(u), points.shape[1]))
    for n, (k, x) in enumerate(zip(span, u)):
        d = [points[j + k - DEGREE].copy() for j in range(DEGREE + 1)]
        for r in range(1, DEGREE + 1):
            for j in range(DEGREE, r - 1, -1):
                left, right = t[j + k - DEGREE], t[j + 1 + k - r]
                alpha = 0.0 if right == left else (x - left) / (right - left)
                d[j] = (1 - alpha) * d[j - 1] + alpha * d[j]
        out[n] = d[DEGREE]
    return out


# Bernstein values of a cubic at 0, 1/3, 2/3, 1: solving them gives a span's Bezier points.
_AT = np.array([0.0, 1 / 3, 2 / 3, 1.0])
_BERNSTEIN = np.stack([(1 - _AT) ** 3, 3 * _AT * (1 - _AT) ** 2, 3 * _AT**2 * (1 - _AT), _AT**3], axis=1)


def bezier_segments(points):
    """(values at the span ends (spans + 1, width), right handles (spans, width), left handles
    (spans, width)): each span's cubic exactly, as Bezier control points."""
    points = np.asarray(points, np.float64)
    spans = len(points) - DEGREE
    ends = evaluate(points, np.arange(spans + 1, dtype=np.float64))
    right, left = [], []
    for s in range(spans):
        samples = evaluate(points, s + _AT)
        control = np.linalg.solve(_BERNSTEIN, samples)
        right.append(control[1])
        left.append(control[2])
    return ends, np.array(right), np.array(left)
