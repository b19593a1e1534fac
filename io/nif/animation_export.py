"""Actions an import made of NIF sequences (animation_import.py) written back into the template's
blocks: a key group whose F-curves still hold what the import made of it keeps its stored keys;
an edited one is written anew from its F-curves, as keys of the kind the file used (linear,
quadratic with tangents read off the Bezier handles, TBC keeping each key's parameters,
constant, XYZ Euler axes). Sequence settings (cycle type, frequency, frame range) and text keys
(the action's pose markers) are written when they changed."""

import json

import numpy as np

from ...core.errors import FormatError
from ...core.nif.blocks.animation import QUADRATIC, TBC, XYZ_ROTATION, NiBoolData, NiFloatData, NiPosData, NiTransformData, key_dtype
from ...core.nif.blocks.sequences import NiControllerSequence, NiTextKeyExtraData, TextKey
from .. import compat, schema
from ..names import unsuffixed
from . import animation_keys as ak
from .animation_import import fingerprint


class _LittleEndian:
    """Stands in for a stream where key_dtype asks the byte order (templates are PC files)."""

    @staticmethod
    def dtype(code):
        return np.dtype(code).newbyteorder("<")


def drives_transform(obj):
    """Whether an action of an imported sequence moves the object (its location, rotation or
    scale then show the current frame, not the node's own transform)."""
    animation = obj.animation_data
    return animation is not None and animation.action is not None and schema.NIF_SEQUENCE in animation.action


def export_kf(exporter, collection):
    """A standalone animation (.kf) imported into ``collection``: its sequences from the actions
    its import made, wherever they are now."""
    import bpy

    for action in bpy.data.actions:
        if action.get(schema.NIF_KF) == collection.name and schema.NIF_SEQUENCE in action:
            _write_action(exporter, action)
    return exporter.nif


def write_animations(exporter, objects):
    seen = set()
    for obj in objects:
        materials = obj.data.materials if obj.type == "MESH" else ()
        trees = [material.node_tree for material in materials if material is not None and material.node_tree is not None]
        for owner in [obj, *trees]:  # shader keys live on the materials' node trees
            for action, _slot in compat.animations(owner):
                if schema.NIF_SEQUENCE in action and action.name not in seen:
                    seen.add(action.name)
                    _write_action(exporter, action)


def _write_action(exporter, action):
    """One action's sequence; what the import stored on it, damaged (edited by hand, or from
    another file), is reported by the action's name."""
    try:
        _write_sequence(exporter, action)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise FormatError(f"action {action.name!r}: its NIF sequence records do not fit this file ({type(error).__name__}: {error})") from None


def _write_sequence(exporter, action):
    nif = exporter.nif
    index = action[schema.NIF_SEQUENCE]
    sequence = nif.blocks[index] if isinstance(index, int) and 0 <= index < len(nif.blocks) else None
    if not isinstance(sequence, NiControllerSequence):
        exporter.warn(f"action {action.name!r}: its sequence is not in this file, not written")
        return
    fps = float(action[schema.NIF_FPS])
    curves = _fcurves(action)
    for channel in json.loads(action.get(schema.NIF_CHANNELS, "[]")):
        fcurves = [curves.get((channel["slot"], path, array_index)) for path, array_index in channel["paths"]]
        fcurves = [fcurve for fcurve in fcurves if fcurve is not None]
        if len(fcurves) == len(channel["paths"]) and fingerprint(fcurves) == channel["fingerprint"]:
            continue
        if channel["kind"].startswith("bspline_"):
            exporter.warn(f"action {action.name!r}: edited B-spline keys cannot be written as a B-spline, kept as stored")
            continue
        controlled = sequence.controlled_blocks[channel["block"]]
        interpolator = nif.blocks[controlled.interpolator]
        data = nif.blocks[interpolator.data] if interpolator.data >= 0 else None
        exporter.require_writable(f"the keys of {action.name!r}")
        if channel["kind"].startswith("pose_") and len(fcurves) == len(channel["paths"]):
            _write_pose(interpolator, channel, fcurves)
        elif channel["kind"] == "visibility_pose" and fcurves:
            interpolator.value = int(fcurves[0].evaluate(_first_frame(fcurves[0])) < 0.5)
        elif isinstance(data, NiTransformData):
            _write_channel(data, channel, fcurves, fps)
        elif isinstance(data, (NiFloatData, NiPosData)) and channel["kind"] in ("shader_float", "shader_color"):
            width = data.keys.width
            frames, values, backward, forward = _sampled(fcurves[:width], width)
            data.keys.keys = _keys(data.keys, width, frames / fps, values, backward, forward)
        elif isinstance(data, NiBoolData) and channel["kind"] == "visibility":
            frames, hidden, _backward, _forward = _sampled(fcurves[:1], 1)
            group = data.keys
            keys = np.zeros(len(frames), key_dtype(_LittleEndian, 1, group.interpolation, code="u1"))
            keys["time"], keys["value"][:, 0] = frames / fps, hidden[:, 0] < 0.5
            group.keys = keys
    _write_settings(sequence, action, fps)
    _write_text_keys(nif, sequence, action, fps)


def _fcurves(action):
    """{(slot handle, data path, array index): F-curve} of every slot (slot 0 before 4.4)."""
    found = {}
    slots = list(action.slots) if compat.SLOTTED_ACTIONS else [None]
    for slot in slots:
        for fcurve in compat.fcurves(action, slot):
            found[(slot.handle if slot is not None else 0, fcurve.data_path, fcurve.array_index)] = fcurve
    return found


def _write_channel(data, channel, fcurves, fps):
    scale_a, *rest = channel["map"]
    rotation_a, translation_a, scale_b = np.array(rest[:4]), np.array(rest[4:7]), rest[7]
    kind = channel["kind"]
    if kind == "translation":
        group = data.translations
        frames, values, backward, forward = _sampled(fcurves, 3)
        matrix = _matrix(rotation_a)
        # Blender holds s_a R_a t + t_a; the file holds t.
        values = (values - translation_a) @ matrix / scale_a
        backward, forward = backward @ matrix / scale_a, forward @ matrix / scale_a
        group.keys = _keys(group, 3, frames / fps, values, backward, forward)
    elif kind == "rotation":
        frames, values, _backward, _forward = _sampled(fcurves, 4)
        inverse = np.array([rotation_a[0], -rotation_a[1], -rotation_a[2], -rotation_a[3]])
        values = _stored_signs(ak.quaternion_multiply(inverse, values), frames / fps, data.rotation_keys)
        dtype = key_dtype(_LittleEndian, 4, data.rotation_type, quaternion=True)
        keys = np.zeros(len(frames), dtype)
        keys["time"], keys["value"] = frames / fps, values
        if "tbc" in dtype.names:
            _keep_tbc(keys, data.rotation_keys)
        data.rotation_keys = keys
        data.num_rotation_keys = len(keys)
    elif kind == "scale":
        frames, values, backward, forward = _sampled(fcurves[:1], 1)
        factor = scale_a * scale_b
        group = data.scales
        group.keys = _keys(group, 1, frames / fps, values / factor, backward / factor, forward / factor)
    elif kind.startswith("euler") and data.rotation_type == XYZ_ROTATION:
        frames, values, backward, forward = _sampled(fcurves, 1)
        group = data.xyz_rotations[int(kind[-1])]
        group.keys = _keys(group, 1, frames / fps, values, backward, forward)


def _stored_signs(quaternions, times, stored):
    """Quaternions with the sign of the stored key at the same time (the import flipped some for
    continuity; q and -q are one rotation, but the file's own keys keep their bytes)."""
    if not len(stored):
        return quaternions
    stored_times = np.asarray(stored["time"], np.float64)
    for i, time in enumerate(np.asarray(times, np.float32).astype(np.float64)):
        match = np.flatnonzero(stored_times == time)
        if len(match) and np.dot(quaternions[i], stored["value"][match[0]]) < 0:
            quaternions[i] = -quaternions[i]
    return quaternions


def _write_pose(interpolator, channel, fcurves):
    """A transform channel's pose (one value for the whole sequence) from its F-curves' first key."""
    scale_a, *rest = channel["map"]
    rotation_a, translation_a, scale_b = np.array(rest[:4]), np.array(rest[4:7]), rest[7]
    values = np.array([fcurve.evaluate(_first_frame(fcurve)) for fcurve in fcurves])
    kind = channel["kind"]
    if kind == "pose_translation":
        interpolator.translation = tuple(float(v) for v in (values - translation_a) @ _matrix(rotation_a) / scale_a)
    elif kind == "pose_rotation":
        inverse = np.array([rotation_a[0], -rotation_a[1], -rotation_a[2], -rotation_a[3]])
        rotation = ak.quaternion_multiply(inverse, [values])[0]
        if np.dot(rotation, interpolator.rotation) < 0:  # the stored sign (q and -q are one rotation)
            rotation = -rotation
        interpolator.rotation = tuple(float(v) for v in rotation)
    else:
        interpolator.scale = float(values[0] / (scale_a * scale_b))


def _first_frame(fcurve):
    frames = _points(fcurve)[0]
    return float(frames[0]) if len(frames) else 0.0


def _matrix(quaternion):
    from mathutils import Quaternion

    return np.array(Quaternion(quaternion).to_matrix(), np.float64)


def _sampled(fcurves, width):
    """(frames, values (n, width), backward, forward tangents) of the F-curves of one key group
    at the union of their key frames: a component keyed there gives its own value and handles,
    one that is not gives its curve's value there and flat tangents."""
    frames = np.unique(np.concatenate([_points(fcurve)[0] for fcurve in fcurves] or [np.zeros(0)]))
    values = np.zeros((len(frames), width))
    backward, forward = np.zeros_like(values), np.zeros_like(values)
    for axis, fcurve in enumerate(fcurves):
        own, own_values, left, right = _points(fcurve)
        at = np.searchsorted(frames, own)
        values[:, axis] = [fcurve.evaluate(frame) for frame in frames]
        values[at, axis] = own_values
        # tangents span the group's intervals (the component's own when all are keyed together)
        dt_prev, dt_next = ak.neighbour_spans(frames)
        backward[at, axis], forward[at, axis] = ak.tangents(own, own_values, left, right, (dt_prev[at], dt_next[at]))
    return frames, values, backward, forward


def _points(fcurve):
    points = fcurve.keyframe_points
    arrays = {}
    for field in ("co", "handle_left", "handle_right"):
        data = np.zeros(len(points) * 2, np.float32)
        points.foreach_get(field, data)
        arrays[field] = data.reshape(-1, 2).astype(np.float64)
    co = arrays["co"]
    order = np.argsort(co[:, 0], kind="stable")
    return co[order, 0], co[order, 1], arrays["handle_left"][order], arrays["handle_right"][order]


def _keys(group, width, times, values, backward, forward):
    """A key group's keys in its own interpolation type."""
    dtype = key_dtype(_LittleEndian, width, group.interpolation)
    keys = np.zeros(len(times), dtype)
    keys["time"] = times
    keys["value"] = np.asarray(values).reshape(len(times), width)
    if group.interpolation == QUADRATIC:
        keys["forward"] = np.asarray(forward).reshape(len(times), width)
        keys["backward"] = np.asarray(backward).reshape(len(times), width)
    elif group.interpolation == TBC:
        _keep_tbc(keys, group.keys)
    return keys


def _keep_tbc(keys, old):
    """Each key keeps the tension, bias and continuity of the stored key it replaces."""
    if len(old) and "tbc" in old.dtype.names:
        n = min(len(keys), len(old))
        keys["tbc"][:n] = old["tbc"][:n]


def _write_settings(sequence, action, fps):
    imported = action.get(schema.NIF_NAME)  # what the import called it (suffixes: Blender's, for a second import)
    name = unsuffixed(action.name)
    if imported is not None and name != unsuffixed(imported):
        sequence.name = name
    cycle_type = int(action.get(schema.NIF_CYCLE_TYPE, sequence.cycle_type))
    if cycle_type != sequence.cycle_type:
        sequence.cycle_type = cycle_type
    frequency = float(action.get(schema.NIF_FREQUENCY, sequence.frequency))
    if not np.isclose(frequency, sequence.frequency, rtol=0, atol=1e-7):
        sequence.frequency = frequency
    stored = action.get(schema.NIF_FRAME_RANGE)
    if action.use_frame_range and stored is not None:
        if abs(action.frame_start - stored[0]) > 1e-4:
            sequence.start_time = action.frame_start / fps
        if abs(action.frame_end - stored[1]) > 1e-4:
            sequence.stop_time = action.frame_end / fps


def _write_text_keys(nif, sequence, action, fps):
    """Text keys from the pose markers when they changed (a marker's frame is whole: a key
    whose marker kept its name and frame keeps its exact time)."""
    text_keys = nif.blocks[sequence.text_keys] if 0 <= sequence.text_keys < len(nif.blocks) else None
    if not isinstance(text_keys, NiTextKeyExtraData):
        return
    markers = sorted(((marker.frame, marker.name) for marker in action.pose_markers))
    stored = [(int(round(key.time * fps)), key.text or "") for key in text_keys.keys]
    if sorted(stored) == markers:
        return
    wanted = list(markers)
    keys, unused = [], []
    for key in text_keys.keys:  # kept keys first, in the file's order (several may share a time)
        mark = (int(round(key.time * fps)), key.text or "")
        if mark in wanted:
            wanted.remove(mark)
            keys.append(key)
        else:
            unused.append(key)
    for frame, name in wanted:  # a renamed marker keeps its key's exact time
        renamed = next((key for key in unused if int(round(key.time * fps)) == frame), None)
        if renamed is not None:
            unused.remove(renamed)
        keys.append(TextKey(renamed.time if renamed is not None else frame / fps, name))
    text_keys.keys = sorted(keys, key=lambda key: key.time)
