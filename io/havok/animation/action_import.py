"""A decoded Havok animation (a ``Clip``) as an action on an armature.

Each track is a bone's transform relative to its parent, L(t), sampled once per frame. Blender's
pose of a bone is parent pose @ rest_rel @ basis, rest_rel being the bone's rest relative to its
parent's, so the keys are basis = inv(rest_rel) @ L(t): the pose is where the file puts the bone
whatever rest the armature has (a skeleton .hkx's own, a skeleton NIF's, a skinned mesh's bind
pose), provided its bones have the skeleton's parents. One LINEAR key per frame, frame i at time
i / fps (frame 0 at time 0); rotations flipped for continuity (q and -q are one rotation).

Annotations become pose markers. Root motion (hkaDefaultAnimatedReferenceFrame: a translation
and an angle about the up axis per sample) keys the armature object's location and quaternion
rotation, in the same slot, when asked for.

What export needs is kept on the action: ``hkx_fps``, ``hkx_game``, ``hkx_binding`` (JSON:
skeleton name, each track's bone name and skeleton index, blend hint) and ``hkx_annotations``
(JSON [time, text]: a marker left where it was keeps its exact time).
"""

import json

import bpy
import numpy as np

from ....core import transforms
from ....core.errors import FormatError
from ... import compat, sampled_keys
from ...datablocks import remove_all

FPS, GAME, BINDING, ANNOTATIONS = "hkx_fps", "hkx_game", "hkx_binding", "hkx_annotations"


class Clip:
    """An animation as Blender needs it: per frame and track, translation (F, T, 3), rotation
    w x y z (F, T, 4) and scale (F, T, 3); ``bones`` the tracks' bone names and ``indices`` their
    skeleton indices; ``annotations`` [(time, text)]; ``root_motion`` None or (up axis (3,),
    samples (S, 4): x y z translation and angle)."""

    def __init__(self, name, fps, bones, indices, translations, rotations, scales, *, game, skeleton="",
                 blend_hint=0, annotations=(), root_motion=None, duration=None):
        self.name = name
        self.fps = float(fps)
        self.bones = [str(b) for b in bones]
        self.indices = [int(i) for i in indices]
        self.translations = np.asarray(translations, np.float64)
        self.rotations = np.asarray(rotations, np.float64)
        self.scales = np.asarray(scales, np.float64)
        self.game = game
        self.skeleton = skeleton
        self.blend_hint = int(blend_hint)
        self.annotations = [(float(time), str(text)) for time, text in annotations]
        self.root_motion = root_motion
        frames = len(self.translations)
        self.duration = float(duration) if duration is not None else (frames - 1) / self.fps

    @property
    def frames(self):
        return len(self.translations)


def missing_bones(armature, clip):
    return [name for name in clip.bones if armature.data.bones.get(name) is None]


def rest_relative(armature, names):
    """(n, 4, 4) each named bone's rest relative to its parent's (the armature's space for
    roots)."""
    out = []
    for name in names:
        bone = armature.data.bones[name]
        rest = np.array(bone.matrix_local, np.float64)
        if bone.parent is not None:
            rest = np.linalg.solve(np.array(bone.parent.matrix_local, np.float64), rest)
        out.append(rest)
    return np.array(out).reshape(-1, 4, 4)


def import_action(armature, clip, *, root_motion=False, path=None):
    """A new action of ``clip`` on ``armature``, made its active action (the one it had before
    is stashed in the NLA, not lost). Every track's bone must be in the armature: else an error
    naming the first missing one, and nothing is made."""
    missing = missing_bones(armature, clip)
    if missing:
        raise FormatError(f"the skeleton {armature.name!r} has no bone {missing[0]!r} ({len(missing)} of the animation's "
                          f"{len(clip.bones)} bones missing): choose or give the skeleton it was made for", path=path)
    if clip.frames == 0:
        raise FormatError("the animation has no frames", path=path)
    local = transforms.compose(clip.translations, transforms.quaternion_to_matrix(clip.rotations), clip.scales)
    basis = np.linalg.solve(rest_relative(armature, clip.bones)[None], local)
    location, rotation, scale, _error = transforms.decompose(basis)
    rotation = sampled_keys.continuous(rotation)
    frames = np.arange(clip.frames, dtype=np.float64)
    action, slot = compat.new_action(clip.name)
    try:
        for track, bone_name in enumerate(clip.bones):
            path_prefix = f'pose.bones["{bpy.utils.escape_identifier(bone_name)}"].'
            for channel, values in (("location", location), ("rotation_quaternion", rotation), ("scale", scale)):
                for axis in range(values.shape[-1]):
                    fcurve = compat.new_fcurve(action, slot, path_prefix + channel, axis, bone_name)
                    sampled_keys.set_keys(fcurve, frames, values[:, track, axis])
        if root_motion and clip.root_motion is not None:
            _root_motion(action, slot, armature, clip)
        _describe(action, clip)
    except BaseException:
        remove_all([action])
        raise
    for pose_bone in (armature.pose.bones[name] for name in clip.bones):
        pose_bone.rotation_mode = "QUATERNION"
    animation = armature.animation_data
    if animation is not None and animation.action is not None:  # kept in the NLA, as Blender's Stash does
        compat.stash_action(armature, animation.action, animation.action_slot if compat.SLOTTED_ACTIONS else None, 0)
    compat.assign_action(armature, action, slot)
    return action


def _root_motion(action, slot, armature, clip):
    """The reference frame's samples as the object's location and rotation about the up axis,
    spread evenly over the animation's frames."""
    up, samples = clip.root_motion
    samples = np.asarray(samples, np.float64).reshape(-1, 4)
    if not len(samples):
        return
    up = np.asarray(up, np.float64)[:3]
    up = up / (np.linalg.norm(up) or 1.0)
    frames = np.linspace(0.0, clip.frames - 1, len(samples)) if len(samples) > 1 else np.zeros(1)
    half = samples[:, 3] / 2
    quaternions = sampled_keys.continuous(np.column_stack([np.cos(half), np.sin(half)[:, None] * up])[:, None])[:, 0]
    group = armature.name
    for axis in range(3):
        sampled_keys.set_keys(compat.new_fcurve(action, slot, "location", axis, group), frames, samples[:, axis])
    for axis in range(4):
        sampled_keys.set_keys(compat.new_fcurve(action, slot, "rotation_quaternion", axis, group), frames, quaternions[:, axis])
    armature.rotation_mode = "QUATERNION"
    action["hkx_up"] = [float(v) for v in up]


def _describe(action, clip):
    action[FPS] = clip.fps
    action[GAME] = clip.game
    action[BINDING] = json.dumps({"skeleton": clip.skeleton, "bones": clip.bones, "indices": clip.indices,
                                  "blend_hint": clip.blend_hint})
    action[ANNOTATIONS] = json.dumps(clip.annotations)
    action.use_frame_range = True
    action.frame_start = 0.0
    action.frame_end = max(clip.frames - 1, 1e-3)  # Blender wants end > start
    for time, text in clip.annotations:
        action.pose_markers.new(text).frame = int(round(time * clip.fps))
