"""4x4 transforms as numpy arrays (float64, column vectors, stacks welcome): quaternions
(w, x, y, z), Euler angles, axis-angle and location/rotation/scale, as Blender composes them."""

import numpy as np

from .errors import FormatError


def translation(vectors):
    vectors = np.asarray(vectors, np.float64)
    out = np.broadcast_to(np.eye(4), vectors.shape[:-1] + (4, 4)).copy()
    out[..., :3, 3] = vectors
    return out


def quaternion_to_matrix(q):
    """(..., 4) w, x, y, z (normalised here, as Blender does) -> (..., 3, 3)."""
    q = np.asarray(q, np.float64)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(norm > 0, q / np.where(norm > 0, norm, 1), [1.0, 0.0, 0.0, 0.0])
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def matrix_to_quaternion(m):
    """(..., 3, 3) rotations -> (..., 4) unit quaternions with w >= 0 (Shepperd's method:
    divide by the largest of the four candidates, so it is accurate everywhere)."""
    m = np.asarray(m, np.float64)
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = (np.moveaxis(row, -1, 0) for row in np.moveaxis(m, -2, 0))
    candidates = (
        (1 + m00 + m11 + m22, lambda s: (s / 4, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s)),
        (1 + m00 - m11 - m22, lambda s: ((m21 - m12) / s, s / 4, (m01 + m10) / s, (m02 + m20) / s)),
        (1 - m00 + m11 - m22, lambda s: ((m02 - m20) / s, (m01 + m10) / s, s / 4, (m12 + m21) / s)),
        (1 - m00 - m11 + m22, lambda s: ((m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, s / 4)),
    )
    pick = np.argmax(np.stack([size for size, _ in candidates], -1), axis=-1)
    out = np.empty(m.shape[:-2] + (4,))
    for index, (size, quaternion) in enumerate(candidates):
        chosen = pick == index
        out[chosen] = np.stack(quaternion(np.sqrt(np.maximum(size, 1e-300)) * 2), -1)[chosen]
    out *= np.where(out[..., :1] < 0, -1.0, 1.0)
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def _axis_rotation(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    one, zero = np.ones_like(angle), np.zeros_like(angle)
    rows = {
        "X": [[one, zero, zero], [zero, c, -s], [zero, s, c]],
        "Y": [[c, zero, s], [zero, one, zero], [-s, zero, c]],
        "Z": [[c, -s, zero], [s, c, zero], [zero, zero, one]],
    }[axis]
    return np.stack([np.stack(row, -1) for row in rows], -2)


def euler_to_matrix(angles, order="XYZ"):
    """(..., 3) angles in radians about X, Y, Z; ``order`` as Blender's rotation modes name it
    (XYZ: X applied first)."""
    angles = np.asarray(angles, np.float64)
    out = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3))
    for axis in order:
        out = _axis_rotation(axis, angles[..., "XYZ".index(axis)]) @ out
    return out


def axis_angle_to_matrix(values):
    """(..., 4) angle, axis x, y, z (Blender's rotation_axis_angle) -> (..., 3, 3)."""
    values = np.asarray(values, np.float64)
    half = values[..., 0] / 2
    axis = values[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    axis = np.where(norm > 0, axis / np.where(norm > 0, norm, 1), [0.0, 1.0, 0.0])
    return quaternion_to_matrix(np.concatenate([np.cos(half)[..., None], axis * np.sin(half)[..., None]], -1))


def compose(location, rotation, scale):
    """T * R * S from (..., 3) location, (..., 3, 3) rotation and (..., 3) scale."""
    out = translation(location)
    out[..., :3, :3] = rotation * np.asarray(scale, np.float64)[..., None, :]
    return out


def transform_matrix(rotation, translation, scale):
    """A NIF node's transform (rotation rows as 9 floats, translation, uniform scale) -> 4x4."""
    return compose(translation, np.asarray(rotation, np.float64).reshape(3, 3), np.full(3, float(scale)))


def transform_parts(matrix):
    """(rotation rows as 9 floats, translation, uniform scale) of a similarity transform."""
    matrix = np.asarray(matrix, np.float64)
    linear = matrix[:3, :3]
    scale = float(np.cbrt(abs(np.linalg.det(linear)))) or 1.0
    rotation = tuple(float(v) for v in (linear / scale).ravel())
    return rotation, tuple(float(v) for v in matrix[:3, 3]), scale


def decompose(matrix):
    """(..., 4, 4) -> location, unit quaternion, scale and the largest error of recomposing them
    (non-zero when the matrix has shear, which location/rotation/scale cannot hold)."""
    matrix = np.asarray(matrix, np.float64)
    linear = matrix[..., :3, :3]
    scale = np.linalg.norm(linear, axis=-2)
    # A mirror flips the sign of the x scale, as Blender does.
    scale[..., 0] *= np.where(np.linalg.det(linear) < 0, -1.0, 1.0)
    rotation = linear / np.where(scale == 0, 1.0, scale)[..., None, :]
    u, _, vt = np.linalg.svd(rotation)
    rotation = u @ vt  # nearest rotation: exact when there is no shear
    quaternion = matrix_to_quaternion(rotation)
    error = np.abs(compose(matrix[..., :3, 3], quaternion_to_matrix(quaternion), scale) - matrix).max(initial=0.0)
    return matrix[..., :3, 3].copy(), quaternion, scale, error


def similarity(linear, name, holder, hint=""):
    """(rotation, scale) of a 3x3 that is a rotation times one positive uniform scale: all a
    game's node or placement holds. A mirror, shear or uneven scale is refused naming the
    object ``name`` and the ``holder`` that cannot take it (``hint``: what the user can do)."""
    linear = np.asarray(linear, np.float64)
    det = np.linalg.det(linear)
    size = float(np.cbrt(det)) if det > 0 else 0.0
    if size <= 0 or not np.allclose(linear.T @ linear, np.eye(3) * size * size, rtol=1e-4, atol=1e-6 * size * size):
        raise FormatError(
            f"object {name!r} is mirrored, sheared or scaled unevenly: {holder} takes a rotation, "
            f"a translation and one uniform scale{hint}"
        )
    return linear / size, size


def invertible(matrices, limit=1e12):
    """Per (..., n, n) matrix: finite, and far enough from singular to invert reliably (a
    damaged file's matrices may be neither; numpy would raise, or return garbage)."""
    matrices = np.asarray(matrices, np.float64)
    finite = np.isfinite(matrices).all(axis=(-2, -1))
    safe = np.where(finite[..., None, None], matrices, np.eye(matrices.shape[-1]))
    with np.errstate(all="ignore"):
        return finite & (np.linalg.cond(safe) < limit)


def rigid(matrix):
    """The nearest rotation + the translation of a (..., 4, 4) matrix: what a Blender bone's rest
    can hold."""
    matrix = np.asarray(matrix, np.float64)
    u, _, vt = np.linalg.svd(matrix[..., :3, :3])
    rotation = u @ vt
    rotation[np.linalg.det(rotation) < 0] *= -1  # keep it proper; a mirror stays in the rest residual
    out = translation(matrix[..., :3, 3])
    out[..., :3, :3] = rotation
    return out


def axis_frame(axis):
    """(unit axis, side, up): a right-handed orthonormal frame around ``axis`` (+Z when the axis
    has no length), for building shapes around a segment."""
    axis = np.asarray(axis, np.float64)
    length = np.linalg.norm(axis)
    direction = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    side = np.cross(direction, [1.0, 0.0, 0.0] if abs(direction[0]) < 0.9 else [0.0, 1.0, 0.0])
    side /= np.linalg.norm(side)
    return direction, side, np.cross(direction, side)
