"""A decoded Havok animation (core ``Animation``) as an action on an armature.

Each track is a bone's transform relative to its parent, L(t), sampled once per frame. Blender's
pose of a bone is parent pose @ rest_rel @ basis, rest_rel being the bone's rest relative to its
parent's, so the keys are basis = inv(rest_rel) @ L(t): the pose is where the file puts the bone
whatever rest the armature has (a skeleton .hkx's own, a skeleton NIF's, a skinned mesh's bind
pose), provided its bones have the skeleton's parents. One LINEAR key per frame, frame i at time
i * frame duration (frame 0 at time 0); rotations flipped for continuity (q and -q are one
rotation).

Annotations become pose markers. Root motion (hkaDefaultAnimatedReferenceFrame: a translation
and an angle about the up axis per sample) keys the armature object's location and quaternion
rotation, in the same slot, when asked for; either way it is kept on the action as read
(``hkx_root_motion``): written back so when not keyed, or keyed and left as imported.

What export needs is kept on the action: ``hkx_fps``, ``hkx_game``, ``hkx_binding`` (JSON:
skeleton name, each track's bone name and skeleton index, blend hint, float tracks),
``hkx_annotations`` (JSON [time, text]: a marker left where it was keeps its exact time) and
``hkx_root_axes`` (up and forward of the root motion, when imported).
"""

import json

import bpy
import numpy as np

from ....core import transforms
from ....core.errors import FormatError
from ... import compat, sampled_keys, schema

STILL = 1e-5  # what a track may change over its frames and still hold still (decoded float noise)


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


def armature_bones(armature, names):
    """The armature's bone for each name, matched as the games match names (in any case: FO4's
    skeleton.hkx says "Spine1" where its skeleton.nif says "SPINE1"); unmatched names as they are."""
    by_case = {}
    for bone in armature.data.bones:
        by_case.setdefault(bone.name.lower(), bone.name)
    return [name if armature.data.bones.get(name) is not None else by_case.get(name.lower(), name) for name in names]


def import_action(armature, animation, bones, *, name, game, rollback, root_motion=False, path=None):
    """A new action of ``animation`` (its tracks driving the armature's bones named ``bones``, in
    any case) on ``armature``, made its active action (the one it had is stashed in the NLA, not lost),
    and added to ``rollback``. Every track's bone must be in the armature: else an error naming the
    first missing one, and nothing is made."""
    bones = armature_bones(armature, bones)
    kept = np.array([armature.data.bones.get(bone) is not None for bone in bones], bool)
    moving = _moving(animation)
    lost = np.flatnonzero(~kept & moving)
    if len(lost):
        raise FormatError(f"the skeleton {armature.name!r} has no bone {bones[lost[0]]!r} ({len(lost)} bones the animation "
                          f"moves missing): choose or give the skeleton it was made for", path=path)
    _check_fit(armature, animation, bones, kept, path)
    warnings = []
    if not kept.all():  # bones the armature lacks that hold still (FO4's skeleton.nif has no weapon bones)
        warnings.append(f"{np.count_nonzero(~kept)} tracks of bones armature {armature.name!r} lacks hold still and are "
                        f"left out: {', '.join(b for b, k in zip(bones, kept) if not k)}")
    bones = [bone for bone, k in zip(bones, kept) if k]
    # basis = inv(rest_rel) @ T(t) R(q) S(s) with a rigid rest_rel = T(t0) R0, channel by channel:
    # location R0^T (t - t0), rotation R0^T R(q), scale s (no per-key matrix decomposition)
    rest = transforms.rigid(rest_relative(armature, bones))
    turn = rest[:, :3, :3]
    rotation_wxyz = np.asarray(animation.rotation, np.float64)[:, kept][..., [3, 0, 1, 2]]
    rotation = transforms.matrix_to_quaternion(np.swapaxes(turn, -1, -2)[None] @ transforms.quaternion_to_matrix(rotation_wxyz))
    location = np.einsum("tji,ftj->fti", turn, animation.translation[:, kept] - rest[None, :, :3, 3])
    scale = np.asarray(animation.scale, np.float64)[:, kept]
    rotation = sampled_keys.continuous(rotation)
    frames = np.arange(animation.frame_count, dtype=np.float64)
    action, slot = compat.new_action(name)
    rollback.add(action)
    for track, bone_name in enumerate(bones):
        prefix = f'pose.bones["{bpy.utils.escape_identifier(bone_name)}"].'
        for channel, values in (("location", location), ("rotation_quaternion", rotation), ("scale", scale)):
            for axis in range(values.shape[-1]):
                fcurve = compat.new_fcurve(action, slot, prefix + channel, axis, bone_name)
                sampled_keys.set_keys(fcurve, frames, values[:, track, axis])
    if root_motion and animation.root_motion is not None:
        _root_motion(action, slot, armature, animation)
    if animation.root_motion is not None:  # not lost when not shown, exact when shown and untouched
        _keep_root_motion(action, animation.root_motion)
    _describe(action, animation, bones, kept, game)
    for pose_bone in (armature.pose.bones[bone] for bone in bones):
        pose_bone.rotation_mode = "QUATERNION"
    if root_motion and animation.root_motion is not None:
        armature.rotation_mode = "QUATERNION"
    current = armature.animation_data
    if current is not None and current.action is not None:  # kept in the NLA, as Blender's Stash does
        compat.stash_action(armature, current.action, current.action_slot if compat.SLOTTED_ACTIONS else None, 0)
    compat.assign_action(armature, action, slot)
    return action, warnings


MISFIT = 0.25  # median relative difference of bone lengths: 0.00-0.02 for each animation's own skeleton, 0.5+ for another's


def _check_fit(armature, animation, bones, kept, path):
    """Refuse a skeleton the animation was not made for: a track's translation at the first frame
    is its bone's offset from its parent, about the armature's rest offset; another skeleton's
    bones (a troll's animation on the human skeleton, bound by bone index) are of other lengths."""
    names = [bone for bone, k in zip(bones, kept) if k]
    if not names:
        return
    rest = np.linalg.norm(rest_relative(armature, names)[:, :3, 3], axis=1)
    moved = np.linalg.norm(np.asarray(animation.translation[0], np.float64)[kept], axis=1)
    longer = np.maximum(rest, moved)
    counted = longer > 1e-3 * max(1.0, float(longer.max(initial=0.0)))
    if not counted.any():
        return
    difference = np.abs(rest - moved)[counted] / longer[counted]
    if np.median(difference) > MISFIT:
        made_from = f" from {armature.users_collection[0].name!r}" if armature.users_collection else ""
        raise FormatError(f"the skeleton {armature.name!r}{made_from} ({len(armature.data.bones)} bones) does not fit this "
                          f"animation: its bones' lengths differ from "
                          f"the animation's by {np.median(difference):.0%} (median of {np.count_nonzero(counted)} bones): "
                          f"give the skeleton it was made for", path=path)


def _moving(animation):
    """Per track, whether its transform changes over the frames."""
    change = [np.abs(values - values[:1]).max(axis=(0, 2)) for values in (animation.translation, animation.rotation, animation.scale)]
    return np.max(change, axis=0) > STILL


def _root_motion(action, slot, armature, animation):
    """The reference frame's samples as the object's location and rotation about the up axis,
    spread evenly over the animation's frames."""
    motion = animation.root_motion
    samples = np.asarray(motion.samples, np.float64).reshape(-1, 4)
    if not len(samples):
        return
    up = np.asarray(motion.up, np.float64)[:3]
    up = up / (np.linalg.norm(up) or 1.0)
    frames = np.linspace(0.0, animation.frame_count - 1, len(samples))
    half = samples[:, 3] / 2
    quaternions = sampled_keys.continuous(np.column_stack([np.cos(half), np.sin(half)[:, None] * up])[:, None])[:, 0]
    group = armature.name
    for axis in range(3):
        sampled_keys.set_keys(compat.new_fcurve(action, slot, "location", axis, group), frames, samples[:, axis])
    for axis in range(4):
        sampled_keys.set_keys(compat.new_fcurve(action, slot, "rotation_quaternion", axis, group), frames, quaternions[:, axis])
    action[schema.HKX_ROOT_AXES] = [float(v) for v in (*motion.up[:3], *motion.forward[:3])]


def _keep_root_motion(action, motion):
    action[schema.HKX_ROOT_MOTION] = json.dumps({
        "samples": np.asarray(motion.samples, np.float32).ravel().tolist(),  # float32 values held exactly by doubles
        "duration": float(motion.duration),
        "up": [float(v) for v in motion.up],
        "forward": [float(v) for v in motion.forward],
    })


def _describe(action, animation, bones, kept, game):
    schema.stamp(action)
    fps = animation.frame_rate
    action[schema.HKX_FPS] = fps
    action[schema.HKX_GAME] = game
    floats = np.asarray(animation.floats, np.float64)
    action[schema.HKX_BINDING] = json.dumps({
        "skeleton": animation.skeleton_name or "",
        "bones": list(bones),
        "indices": [int(i) for i in animation.track_bones[kept]],
        "blend_hint": int(animation.blend_hint),
        # float tracks (Skyrim's, constant in the games' files): their slots and first values
        "float_slots": [int(i) for i in animation.float_slots],
        "floats": [float(v) for v in floats[0]] if len(floats) else [],
    })  # fmt: skip
    annotations = [(float(a.time), a.text) for a in animation.annotations()]
    action[schema.HKX_ANNOTATIONS] = json.dumps(annotations)
    action.use_frame_range = True
    action.frame_start = 0.0
    action.frame_end = max(animation.frame_count - 1, 1e-3)  # Blender wants end > start
    for time, text in annotations:
        action.pose_markers.new(text).frame = int(round(time * fps))
