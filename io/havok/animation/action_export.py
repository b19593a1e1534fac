"""An action on an armature as a core ``Animation`` for the Havok encoder: the inverse of
action_import.py, sampled once per frame over the action's frame range (constraints and
drivers are not baked: bake the action first for those).

Tracks: those the action was imported with (``hkx_binding``), else every bone of the Havok
skeleton the armature was made from (``hkx_bones``) that it still has, in skeleton order. Each
track's local transform is rest_rel @ basis (see action_import.py). Pose markers become
annotations; keyed object location/rotation become root motion about the up axis the import
recorded (else +Z).
"""

import json

import numpy as np

from ....core import transforms
from ....core.errors import FormatError
from ....core.files import write_replacing
from ....core.havok.animation import Animation, Annotation, AnnotationTrack, RootMotion, build_hkx
from ... import compat, pose_channels, schema
from .action_import import rest_relative

UP, FORWARD = (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)  # the games' axes

ROOT_PATHS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle")


def armature_action(armature, action_name=None):
    """(action, slot) to export: the one named, else the armature's active action."""
    found = compat.animations(armature)
    if action_name is not None:
        found = [(action, slot) for action, slot in found if action.name == action_name]
        if not found:
            raise FormatError(f"armature {armature.name!r} has no action named {action_name!r}")
        return found[0]
    animation = armature.animation_data
    if animation is None or animation.action is None:
        raise FormatError(f"armature {armature.name!r} has no active action to export")
    return animation.action, (animation.action_slot if compat.SLOTTED_ACTIONS else None)


def animation_of(armature, action, slot, scene, game=None):
    """(core Animation, game) of ``action`` animating ``armature``; ``game`` ("FO4"/"SSE") when
    neither the action nor the armature says."""
    schema.check_version(armature)
    schema.check_version(action)
    binding = _binding(armature, action)
    game = action.get(schema.HKX_GAME) or armature.get(schema.HKX_GAME) or game
    if game not in ("FO4", "SSE"):
        raise FormatError(f"action {action.name!r}: the game to write for is not known (import its skeleton .hkx, or choose one)")
    fps = float(action.get(schema.HKX_FPS, 0.0)) or scene.render.fps / scene.render.fps_base
    curves = {(fcurve.data_path, fcurve.array_index): fcurve for fcurve in compat.fcurves(action, slot) if not fcurve.mute}
    frames = _frames(action, curves)
    bones = binding["bones"]
    basis = np.stack([pose_channels.basis(armature.pose.bones[name], curves, frames) for name in bones], axis=1)
    translation, rotation, scale, _error = transforms.decompose(rest_relative(armature, bones)[None] @ basis)
    floats = np.tile(np.asarray(binding.get("floats", []), np.float32), (len(frames), 1))
    animation = Animation(
        frame_duration=1.0 / fps,
        translation=translation.astype(np.float32),
        rotation=rotation[..., [1, 2, 3, 0]].astype(np.float32),
        scale=scale.astype(np.float32),
        floats=floats.reshape(len(frames), -1),
        track_bones=np.asarray(binding["indices"], np.int64),
        float_slots=np.asarray(binding.get("float_slots", []), np.int64),
        skeleton_name=binding["skeleton"],
        blend_hint=binding["blend_hint"],
        annotation_tracks=[AnnotationTrack("", [Annotation(t, text) for t, text in _annotations(action, fps, frames[0])])],
        root_motion=_root_motion(armature, action, curves, frames, fps),
    )
    return animation, game


def _binding(armature, action):
    """The tracks' bone names and skeleton indices, skeleton name, blend hint and float tracks."""
    stored = action.get(schema.HKX_BINDING)
    if stored is not None:
        binding = json.loads(stored)
        missing = [name for name in binding["bones"] if armature.data.bones.get(name) is None]
        if missing:
            raise FormatError(f"action {action.name!r} animates bone {missing[0]!r}, which armature {armature.name!r} lacks")
        return binding
    names = json.loads(armature.get(schema.HKX_BONES, "[]"))
    kept = [(index, name) for index, name in enumerate(names) if armature.data.bones.get(name) is not None]
    if not kept:
        raise FormatError(f"armature {armature.name!r} has no Havok skeleton bones: import the game's skeleton .hkx "
                          "and animate that armature (or import an animation onto this one first)")
    return {"bones": [name for _, name in kept], "indices": [index for index, _ in kept],
            "skeleton": armature.get(schema.HKX_SKELETON, armature.name), "blend_hint": 0}


def _frames(action, curves):
    """Whole frames over the action's frame range (else its keys' range), one per file frame."""
    if action.use_frame_range:
        first, last = action.frame_start, action.frame_end
    else:
        keyed = [fcurve.range() for fcurve in curves.values() if len(fcurve.keyframe_points)]
        if not keyed:
            raise FormatError(f"action {action.name!r} has no keys")
        first, last = min(r[0] for r in keyed), max(r[1] for r in keyed)
    count = int(np.floor(last - first + 1e-3)) + 1
    return first + np.arange(max(count, 1), dtype=np.float64)


def _annotations(action, fps, first):
    """Pose markers as (time, text); a marker still at the frame and with the text of a stored
    annotation keeps that annotation's exact time."""
    stored = [tuple(pair) for pair in json.loads(action.get(schema.HKX_ANNOTATIONS, "[]"))]
    out = []
    for marker in sorted(action.pose_markers, key=lambda m: m.frame):
        kept = next((pair for pair in stored if pair[1] == marker.name and round(pair[0] * fps) == marker.frame), None)
        if kept is not None:
            stored.remove(kept)
            out.append(kept)
        else:
            out.append(((marker.frame - first) / fps, marker.name))
    return out


def _root_motion(armature, action, curves, frames, fps):
    """The object's keyed location and rotation about the up axis as root motion (the samples the
    import kept when the keys still hold them), else the root motion the import kept unkeyed,
    else None."""
    kept = action.get(schema.HKX_ROOT_MOTION)
    if kept is not None:
        kept = json.loads(kept)
        kept = RootMotion(np.asarray(kept["samples"], np.float32).reshape(-1, 4), kept["duration"], tuple(kept["up"]),
                          tuple(kept["forward"]))
    if not any(path in ROOT_PATHS for path, _ in curves):
        return kept
    axes = list(action.get(schema.HKX_ROOT_AXES, (*UP, *FORWARD)))
    up = np.asarray(axes[:3], np.float64)
    location, quaternion, _scale, _error = transforms.decompose(pose_channels.basis(armature, curves, frames))
    angle = np.unwrap(2 * np.arctan2(quaternion[:, 1:] @ up, quaternion[:, 0]))
    samples = np.column_stack([location, angle]).astype(np.float32)
    if kept is not None and _untouched(samples, kept.samples):
        return kept
    return RootMotion(samples, (len(frames) - 1) / fps, (*axes[:3], 0.0), (*axes[3:6], 0.0))


def _untouched(samples, kept):
    """Whether samples read from the keys are the kept ones, to the keys' float32 rounding (an
    angle in any lap)."""
    if samples.shape != kept.shape:
        return False
    turn = np.angle(np.exp(1j * (samples[:, 3].astype(np.float64) - kept[:, 3])))
    return np.allclose(samples[:, :3], kept[:, :3], rtol=1e-5, atol=1e-4) and np.abs(turn).max(initial=0.0) < 1e-5


def export_animation(context, path, armature, action_name=None, *, compressed=True, game=None):
    """The armature's action (its active one, or the one named) as a .hkx; returns (core
    Animation, game) written. Raises FormatError or OSError; a failed write leaves no file."""
    action, slot = armature_action(armature, action_name)
    animation, game = animation_of(armature, action, slot, context.scene, game)
    write_replacing(path, build_hkx(animation, game, "spline" if compressed else "interleaved").to_bytes())
    return animation, game
