"""An object's or pose bone's transform over frames, from an action's F-curves (what exporters
sample: constraints and drivers are not baked)."""

import numpy as np

from ..core import transforms


def channel(curves, path, values, frames):
    """(frames, n) values of ``path[0..n)``: its F-curves where keyed, the current value elsewhere.
    ``curves``: {(data path, array index): F-curve}."""
    out = np.tile(np.asarray(values, np.float64), (len(frames), 1))
    for axis in range(out.shape[1]):
        fcurve = curves.get((path, axis))
        if fcurve is not None:
            out[:, axis] = _keyed(fcurve, frames)
    return out


def _keyed(fcurve, frames):
    """The F-curve's values at ``frames``: its keys' own values when it has one key at each of
    them (a curve passes through its keys; sampled imports are so), else evaluated."""
    points = fcurve.keyframe_points
    if len(points) == len(frames) and not fcurve.modifiers:
        co = np.zeros(2 * len(points), np.float32)
        points.foreach_get("co", co)
        if np.array_equal(co[0::2], np.asarray(frames, np.float32)):
            return co[1::2]
    return [fcurve.evaluate(frame) for frame in frames]


def basis(owner, curves, frames):
    """(frames, 4, 4) basis matrices of a pose bone or an object, composed as Blender does."""
    pose_bone = hasattr(owner, "bone")
    prefix = owner.path_from_id() + "." if pose_bone else ""
    location = channel(curves, f"{prefix}location", owner.location, frames)
    if pose_bone and owner.bone.use_connect:
        location[:] = 0.0  # a connected bone's head stays on its parent's tail
    mode = owner.rotation_mode
    if mode == "QUATERNION":
        values = channel(curves, f"{prefix}rotation_quaternion", owner.rotation_quaternion, frames)
        rotation = transforms.quaternion_to_matrix(values)
    elif mode == "AXIS_ANGLE":
        values = channel(curves, f"{prefix}rotation_axis_angle", owner.rotation_axis_angle, frames)
        rotation = transforms.axis_angle_to_matrix(values)
    else:
        rotation = transforms.euler_to_matrix(channel(curves, f"{prefix}rotation_euler", owner.rotation_euler, frames), mode)
    scale = channel(curves, f"{prefix}scale", owner.scale, frames)
    return transforms.compose(location, rotation, scale)
