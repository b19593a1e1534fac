"""A reference's rotation as the Creation Kit computes it for a precombined instance: float32
throughout, the sine and cosine of each angle by DirectXMath's ``XMScalarSinCos`` (the angle
brought into [-pi/2, pi/2], then minimax polynomials of degree 11 and 10: not the C library's
correctly rounded values, up to 3 units in the last place away), the matrix
Rx(-x) (Ry(-y) Rz(-z)) (references.rotation_matrix's convention) multiplied in that grouping.
Checked on the corpus cell (ck-precombined/): all 178 instances of the plugin's REFRs at their
model's root have exactly these 9 float32 values; float64 sine and cosine give 28, float32
library ones 30, the other grouping (Rx Ry) Rz 164."""

import functools

import numpy as np

F = np.float32
ONE_OVER_TWO_PI, TWO_PI, PI, HALF_PI = F(0.159154943), F(6.283185307), F(3.141592654), F(1.570796327)
SINE = [F(c) for c in (-2.3889859e-08, 2.7525562e-06, -0.00019840874, 0.0083333310, -0.16666667, 1.0)]
COSINE = [F(c) for c in (-2.6051615e-07, 2.4760495e-05, -0.0013888378, 0.041666638, -0.5, 1.0)]


def sin_cos(angles):
    """(sine, cosine) float32 arrays of float32 ``angles`` (radians), as XMScalarSinCos."""
    value = np.asarray(angles, F)
    turns = value * ONE_OVER_TWO_PI
    turns = np.trunc(np.where(value >= 0, turns + F(0.5), turns - F(0.5))).astype(F)  # to the nearest turn
    y = value - TWO_PI * turns
    sign = np.where(np.abs(y) > HALF_PI, F(-1), F(1))
    y = np.where(y > HALF_PI, PI - y, np.where(y < -HALF_PI, -PI - y, y)).astype(F)
    square = y * y
    sine, cosine = SINE[0], COSINE[0]
    for s, c in zip(SINE[1:], COSINE[1:]):
        sine, cosine = sine * square + s, cosine * square + c
    return (sine * y).astype(F), (sign * cosine).astype(F)


def product(a, b):
    """a @ b in float32, each element's three products summed left to right."""
    return a[:, 0, None] * b[0] + a[:, 1, None] * b[1] + a[:, 2, None] * b[2]


def ck_rotation(angles):
    """The 3x3 float32 rotation (read-only) of a REFR's DATA angles (radians about x, y, z)."""
    return _rotation(tuple(float(a) for a in angles))


@functools.lru_cache(maxsize=8192)  # a cell's references share few angles; numpy on 3 values is slow
def _rotation(angles):
    (sx, sy, sz), (cx, cy, cz) = sin_cos(-np.asarray(angles, F))
    one, zero = F(1), F(0)
    about_x = np.array([[one, zero, zero], [zero, cx, -sx], [zero, sx, cx]], F)
    about_y = np.array([[cy, zero, sy], [zero, one, zero], [-sy, zero, cy]], F)
    about_z = np.array([[cz, -sz, zero], [sz, cz, zero], [zero, zero, one]], F)
    matrix = product(about_x, product(about_y, about_z))
    matrix.flags.writeable = False
    return matrix
