"""A controlled block's keys as F-curves of its target (animation_targets.py), through the
sequence's actions (animation_import.SequenceImport.add): transform key groups and B-splines
mapped by the target's A and s_b, visibility keys, shader floats and colours. The key math
itself (times, handles, TBC) is animation_keys.py."""

import numpy as np

from ...core.nif import bspline
from ...core.nif.blocks.animation import (
    CONSTANT,
    XYZ_ROTATION,
    KeyGroup,
    NiBoolData,
    NiBSplineBasisData,
    NiBSplineCompTransformInterpolator,
    NiBSplineData,
    NiTransformData,
)
from .. import compat
from . import animation_keys as ak
from .animation_targets import shader_target


def transform_keys(imported, target, number, interpolator, data, fps):
    """A transform's key groups; a channel without keys whose pose the interpolator sets (not
    FLT_MAX) holds it for the whole sequence: a single key at its start."""
    if data is None:
        data = NiTransformData()  # no keys at all: every channel is the pose's
    translations = data.translations or KeyGroup(3)
    if not len(translations.keys) and _set(interpolator.translation):
        values = target.scale_a * _rotate(target.rotation_a, [interpolator.translation]) + target.translation_a
        curves = [("location", axis, _pose_key(imported, values[0, axis], fps)) for axis in range(3)]
        imported.add(target, number, "pose_translation", 3, curves)
    if len(translations.keys):
        keys = translations.keys
        values = target.scale_a * _rotate(target.rotation_a, keys["value"]) + target.translation_a
        forward = backward = None
        if "forward" in keys.dtype.names:
            forward = target.scale_a * _rotate(target.rotation_a, keys["forward"])
            backward = target.scale_a * _rotate(target.rotation_a, keys["backward"])
        tbc = keys["tbc"] if "tbc" in keys.dtype.names else None
        curves = []
        for axis in range(3):
            arrays = ak.keyframes(
                keys["time"], values[:, axis], translations.interpolation, fps,
                None if backward is None else backward[:, axis], None if forward is None else forward[:, axis], tbc,
            )  # fmt: skip
            curves.append(("location", axis, arrays))
        imported.add(target, number, "translation", 3, curves)
    if data.rotation_type == XYZ_ROTATION:
        if not target.euler_exact:
            imported.builder.warn(f"{target.bone_name}: Euler rotation keys on a turned bone are not shown")
        else:
            target.set_rotation_mode("ZYX")
            for axis, group in enumerate(data.xyz_rotations):
                if len(group.keys):
                    curve = _float_curve(group, fps, 1.0)
                    imported.add(target, number, f"euler{axis}", 1, [("rotation_euler", axis, curve)])
    elif not len(data.rotation_keys) and _set(interpolator.rotation):
        values = ak.quaternion_multiply(target.rotation_a, [interpolator.rotation])
        curves = [("rotation_quaternion", component, _pose_key(imported, values[0, component], fps)) for component in range(4)]
        imported.add(target, number, "pose_rotation", 4, curves)
    elif len(data.rotation_keys):
        keys = data.rotation_keys
        values = ak.quaternion_multiply(target.rotation_a, ak.quaternion_continuity(keys["value"]))
        curves = []
        for component in range(4):
            arrays = ak.keyframes(keys["time"], values[:, component], data.rotation_type, fps)
            curves.append(("rotation_quaternion", component, arrays))
        imported.add(target, number, "rotation", 4, curves)
    scales = data.scales or KeyGroup(1)
    if len(scales.keys):
        factor = target.scale_a * target.scale_b
        arrays = _float_curve(scales, fps, factor)
        imported.add(target, number, "scale", 3, [("scale", axis, arrays) for axis in range(3)])
    elif _set((interpolator.scale,)):
        value = interpolator.scale * target.scale_a * target.scale_b
        imported.add(target, number, "pose_scale", 3, [("scale", axis, _pose_key(imported, value, fps)) for axis in range(3)])


def _set(values):
    """Whether a pose value is set (FLT_MAX, of either sign, leaves it to the keys or the node)."""
    return all(abs(value) < 1e30 for value in values)


def _pose_key(imported, value, fps):
    sequence = imported.sequence
    start = sequence.start_time if sequence.start_time <= sequence.stop_time else 0.0
    return ak.keyframes([start], [value], CONSTANT, fps)


def visibility_keys(imported, target, number, interpolator, data, fps):
    """NiVisController keys: the object hidden (viewport and render) where the file says not
    visible, stepping at each key as the game does; an interpolator without keys holds one
    value for the whole sequence, a single key at its start."""
    if isinstance(data, NiBoolData):
        keys = data.keys.keys
        if not len(keys):
            return
        times, visible, kind = keys["time"], keys["value"][:, 0], "visibility"
    else:
        start = imported.sequence.start_time if imported.sequence.start_time <= imported.sequence.stop_time else 0.0
        times, visible, kind = np.array([start]), np.array([interpolator.value]), "visibility_pose"
    arrays = ak.keyframes(times, (visible == 0).astype(np.float64), CONSTANT, fps)
    imported.add(target, number, kind, 2, [("hide_viewport", 0, arrays), ("hide_render", 0, arrays)])


def spline_blocks(nif, interpolator):
    """(spline data, basis data) of a B-spline transform interpolator that has its blocks, else
    None."""
    if not isinstance(interpolator, NiBSplineCompTransformInterpolator):
        return None
    spline = nif.block_at(interpolator.spline_data, NiBSplineData)
    basis = nif.block_at(interpolator.basis_data, NiBSplineBasisData)
    if spline is None or basis is None:
        return None
    return (spline, basis) if basis.num_control_points > bspline.DEGREE else None


SPLINE_PATHS = {"translation": "location", "rotation": "rotation_quaternion", "scale": "scale"}


def spline_keys(imported, target, number, interpolator, spline, basis, fps):
    """B-spline channels as Bezier keys at the knots, each span's cubic exactly (see
    core/nif/bspline.py); the first and last keys' outer handles mirror their inner ones."""
    count = basis.num_control_points
    spans = count - bspline.DEGREE
    start, stop = interpolator.start_time, interpolator.stop_time
    frames = (start + (stop - start) * np.arange(spans + 1) / spans) * fps
    step = (frames[1] - frames[0]) / 3
    for name, points in bspline.control_points(interpolator, spline, count).items():
        ends, right, left = (_mapped(target, name, values) for values in bspline.bezier_segments(points))
        handle_left = np.concatenate([2 * ends[:1] - right[:1], left])
        handle_right = np.concatenate([right, 2 * ends[-1:] - left[-1:]])
        curves = []
        for component in range(3 if name == "scale" else ends.shape[1]):
            column = 0 if name == "scale" else component
            left_points = np.column_stack([frames - step, handle_left[:, column]])
            right_points = np.column_stack([frames + step, handle_right[:, column]])
            curves.append((SPLINE_PATHS[name], component, (frames, ends[:, column], left_points, right_points, "BEZIER")))
        imported.add(target, number, f"bspline_{name}", len(curves), curves)


def _mapped(target, channel, values):
    """File values of a transform channel as Blender's (A @ L @ B, see the module's docstring)."""
    if channel == "translation":
        return target.scale_a * _rotate(target.rotation_a, values) + target.translation_a
    if channel == "rotation":
        return ak.quaternion_multiply(target.rotation_a, values)
    return values * target.scale_a * target.scale_b


def shader_keys(imported, target, number, socket, data, fps):
    """A shader float's or colour's keys on its Principled BSDF input, values as stored."""
    shader = shader_target(target.obj) if target.bone_name is None else None
    if shader is None or not len(data.keys.keys):
        return
    index = next(i for i, s in enumerate(shader.node.inputs) if s.name == socket)
    path = f"inputs[{index}].default_value"
    action, slot = imported.slot(shader.obj, shader.id_type)
    if any(f.data_path == shader.prefix + path for f in compat.fcurves(action, slot)):
        return  # a material shared by several shapes: the first one's keys
    group = data.keys
    if group.width == 1:
        imported.add(shader, number, "shader_float", 1, [(path, 0, _float_curve(group, fps, 1.0))])
        return
    keys, names = group.keys, group.keys.dtype.names
    curves = [
        (path, c, ak.keyframes(
            keys["time"], keys["value"][:, c], group.interpolation, fps,
            keys["backward"][:, c] if "backward" in names else None,
            keys["forward"][:, c] if "forward" in names else None,
            keys["tbc"] if "tbc" in names else None,
        ))  # fmt: skip
        for c in range(group.width)
    ]
    imported.add(shader, number, "shader_color", group.width, curves)


def _float_curve(group, fps, factor):
    keys = group.keys
    names = keys.dtype.names
    return ak.keyframes(
        keys["time"], keys["value"][:, 0] * factor, group.interpolation, fps,
        keys["backward"][:, 0] * factor if "backward" in names else None,
        keys["forward"][:, 0] * factor if "forward" in names else None,
        keys["tbc"] if "tbc" in names else None,
    )  # fmt: skip


def _rotate(quaternion, vectors):
    from mathutils import Quaternion

    matrix = np.array(Quaternion(quaternion).to_matrix(), np.float64)
    return np.asarray(vectors, np.float64) @ matrix.T
