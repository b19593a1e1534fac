"""NIF animation sequences as Blender actions: one action per NiControllerSequence (on 4.2/4.3
one per sequence and animated object), its transform keys (key groups or compressed B-splines)
as F-curves of the nodes' objects or armature bones, NiVisController keys as hide_viewport /
hide_render, shader emissive multiple, alpha and emissive colour keys on the shape material's
Principled BSDF inputs, its text keys as the action's pose markers. A standalone .kf binds to
the scene's objects and bones named like its nodes. What keys animate: animation_targets.py;
keys as F-curves: animation_channels.py.

What a sequence is made of stays on the action for export (animation_export.py):
``nif_sequence`` (the sequence block), ``nif_name`` (its name, which the action's name
edits), ``nif_fps`` (frame = time * fps), ``nif_cycle_type``
(0 loop, 1 reverse, 2 clamp), ``nif_frequency``; its start and stop times are the action's
manual frame range. ``nif_channels`` (JSON) lists each F-curve set made from a key group with a
fingerprint of its keyframes as imported: untouched ones leave their keys as stored.

A node's keys are its local transform L(t). Blender's channels hold A @ L(t) @ B, with A and B
what the import made of the node's placement: for objects A is the import scale on roots (else
identity) and B identity; for bones, basis = A @ L(t) @ B with B = inv(bind rest) @ bone rest
(the bind's scale) and A taken from the pose the import gave the bone. So translation keys map
to s_a R_a t + t_a, quaternion keys to q_a q, scale keys to s_a s s_b: each key group stays
its own set of keys (XYZ Euler keys too, as rotation mode 'ZYX' = Rx Ry Rz, the file's order,
when R_a is the identity, which it is for objects).
"""

import hashlib
import json

import bpy
import numpy as np

from ...core.nif.blocks.animation import (
    NiBoolData,
    NiBoolInterpolator,
    NiBSplineCompTransformInterpolator,
    NiFloatData,
    NiFloatInterpolator,
    NiPoint3Interpolator,
    NiPosData,
    NiTransformData,
    NiTransformInterpolator,
)
from ...core.nif.blocks.sequences import LOOP, NiControllerSequence, NiTextKeyExtraData
from .. import compat, schema
from .animation_channels import shader_keys, spline_blocks, spline_keys, transform_keys, visibility_keys
from .animation_targets import SceneTargets, node_targets, shader_socket

KEYFRAME = bpy.types.Keyframe.bl_rna.properties
INTERPOLATION = {item.identifier: item.value for item in KEYFRAME["interpolation"].enum_items}
FREE = KEYFRAME["handle_left_type"].enum_items["FREE"].value
AUTO_CLAMPED = KEYFRAME["handle_left_type"].enum_items["AUTO_CLAMPED"].value

# What a controlled block's interpolator may be (anything else there is damage: left out).
INTERPOLATORS = (NiTransformInterpolator, NiBoolInterpolator, NiFloatInterpolator, NiPoint3Interpolator,
                 NiBSplineCompTransformInterpolator)


def fps_of(scene):
    return scene.render.fps / scene.render.fps_base


def fingerprint(fcurves):
    """What the keyframes of F-curves hold (frames, values, handles, interpolation)."""
    digest = hashlib.sha1()
    for fcurve in fcurves:
        points = fcurve.keyframe_points
        for field, width in (("co", 2), ("handle_left", 2), ("handle_right", 2), ("interpolation", 1)):
            data = np.zeros(len(points) * width, np.float32 if width == 2 else np.int32)
            points.foreach_get(field, data)
            digest.update(data.tobytes())
    return digest.hexdigest()[:16]


def is_kf(nif):
    """A standalone animation (.kf): its roots are sequences, it has no scene of its own."""
    roots = [nif.blocks[root] for root in nif.roots if 0 <= root < len(nif.blocks)]
    return bool(roots) and all(isinstance(root, NiControllerSequence) for root in roots)


class SequenceImport:
    """The action(s) of one sequence: on 4.4+ one action with a slot per animated object, before
    that one action per object."""

    def __init__(self, builder, index, sequence, fps):
        self.builder = builder
        self.index = index
        self.sequence = sequence
        self.fps = fps
        self.name = sequence.name or f"NiControllerSequence:{index}"
        self.kf = None  # the .kf's collection name, for a standalone animation
        self.slots = {}  # object -> (action, slot)
        self.channels = {}  # action -> [channel records]

    def slot(self, owner, id_type="OBJECT"):
        """The action and slot animating ``owner`` (an object, or a material's node tree)."""
        found = self.slots.get(owner)
        if found is not None:
            return found
        if compat.SLOTTED_ACTIONS and self.slots:
            action = next(iter(self.slots.values()))[0]
            slot = action.slots.new(id_type=id_type, name=owner.name)
        else:
            action, slot = compat.new_action(self.name, id_type)
            if slot is not None:
                slot.name_display = owner.name  # each slot named after what it animates
            self.builder.rollback.add(action)
            self._describe(action)
            self.channels[action] = []
        self.slots[owner] = (action, slot)
        return action, slot

    def _describe(self, action):
        sequence = self.sequence
        action[schema.NIF_SEQUENCE] = self.index
        action[schema.NIF_NAME] = self.name
        if self.kf is not None:
            action[schema.NIF_KF] = self.kf
        action[schema.NIF_FPS] = self.fps
        action[schema.NIF_CYCLE_TYPE] = sequence.cycle_type
        action[schema.NIF_FREQUENCY] = sequence.frequency
        if sequence.start_time <= sequence.stop_time:
            action.use_frame_range = True
            action.frame_start = sequence.start_time * self.fps
            action.frame_end = max(sequence.stop_time * self.fps, action.frame_start + 1e-3)
            action[schema.NIF_FRAME_RANGE] = (action.frame_start, action.frame_end)
        action.use_cyclic = sequence.cycle_type == LOOP
        self._markers(action)

    def _markers(self, action):
        nif = self.builder.nif
        text_keys = nif.block_at(self.sequence.text_keys, NiTextKeyExtraData)
        if text_keys is None:
            return
        for key in text_keys.keys:
            marker = action.pose_markers.new(key.text or "")
            marker.frame = int(round(key.time * self.fps))

    def add(self, target, block_index, kind, components, curves):
        """F-curves of one key group: ``curves`` [(data path, array index, keyframe arrays)]."""
        action, slot = self.slot(target.obj, target.id_type)
        group = target.bone_name or target.obj.name
        if any(compat.find_fcurve(action, slot, target.prefix + path, index) for path, index, _ in curves):
            # two key groups of one sequence for the same channel (a damaged name): the first shown
            self.builder.warn(f"sequence {self.sequence.name!r}: {group} is animated twice; the second keys are "
                              f"kept in the file, not shown")
            return
        fcurves = []
        for path, array_index, (frames, values, left, right, interpolation) in curves:
            fcurve = compat.new_fcurve(action, slot, target.prefix + path, array_index, group)
            points = fcurve.keyframe_points
            points.add(len(frames))
            points.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
            points.foreach_set("interpolation", np.full(len(frames), INTERPOLATION[interpolation], np.int32))
            handle_type = FREE if interpolation == "BEZIER" and left is not None and not np.array_equal(left, right) else AUTO_CLAMPED
            points.foreach_set("handle_left_type", np.full(len(frames), handle_type, np.int32))
            points.foreach_set("handle_right_type", np.full(len(frames), handle_type, np.int32))
            if handle_type == FREE:
                points.foreach_set("handle_left", left.astype(np.float32).ravel())
                points.foreach_set("handle_right", right.astype(np.float32).ravel())
            fcurve.update()
            fcurves.append(fcurve)
        self.channels[action].append(
            {
                "block": block_index,
                "kind": kind,
                "slot": slot.handle if slot is not None else 0,
                "paths": [[fcurve.data_path, fcurve.array_index] for fcurve in fcurves],
                "map": [target.scale_a, *target.rotation_a, *target.translation_a, target.scale_b],
                "fingerprint": fingerprint(fcurves),
            }
        )

    def finish(self):
        for action, channels in self.channels.items():
            action[schema.NIF_CHANNELS] = json.dumps(channels)
        for obj, (action, slot) in self.slots.items():
            compat.stash_action(obj, action, slot, 0)


def import_animations(builder, scene):
    """Every NiControllerSequence of the file as actions, each kept with its objects in a muted
    NLA track: none plays, so the scene shows every node where the file puts it (make one the
    active action, or unmute its track, to play it)."""
    nif = builder.nif
    names = {}
    for index, obj in builder.objects.items():
        name = nif.blocks[index].name
        if name is not None:
            names.setdefault(str(name), index)
    fps = fps_of(scene)
    targets = {}
    missing = 0
    kf = is_kf(nif)
    if kf:  # its actions go to the scene's objects; an empty stands for the file (export it to write it)
        scene_targets = SceneTargets(scene, builder.collection)
        handle = builder.link(bpy.data.objects.new(f"{builder.collection.name} (kf)", None))
        handle[schema.NIF_KF] = builder.collection.name
    for index, sequence in nif.blocks_of(NiControllerSequence):
        imported = SequenceImport(builder, index, sequence, fps)
        imported.kf = builder.collection.name if kf else None
        for number, controlled in enumerate(sequence.controlled_blocks):
            interpolator = nif.block_at(controlled.interpolator, *INTERPOLATORS)
            data = nif.block_at(getattr(interpolator, "data", -1), NiTransformData, NiFloatData, NiPosData, NiBoolData)
            # keys, or only the pose the interpolator holds for the whole sequence
            transform = isinstance(interpolator, NiTransformInterpolator) and (isinstance(data, NiTransformData) or data is None)
            visibility = controlled.controller_type == "NiVisController" and isinstance(interpolator, NiBoolInterpolator) and (
                isinstance(data, NiBoolData) or interpolator.value in (0, 1)  # keys, or one value for the whole sequence
            )
            socket = shader_socket(controlled) if isinstance(data, (NiFloatData, NiPosData)) else None
            spline = spline_blocks(nif, interpolator)
            if not (transform or visibility or socket or spline):
                continue
            name = str(controlled.node_name)
            if name not in targets:
                if kf:
                    targets[name] = scene_targets.find(name)
                else:
                    node_index = names.get(name)
                    targets[name] = [] if node_index is None else node_targets(builder, node_index, nif.blocks[node_index])
            if not targets[name]:
                missing += 1
            for target in targets[name]:
                if target is None:
                    builder.warn(f"{controlled.node_name}: its placement is sheared or singular, its keys are not shown")
                elif transform:
                    transform_keys(imported, target, number, interpolator, data, fps)
                elif spline:
                    spline_keys(imported, target, number, interpolator, *spline, fps)
                elif socket is not None:
                    shader_keys(imported, target, number, socket, data, fps)
                elif target.bone_name is None:
                    visibility_keys(imported, target, number, interpolator, data, fps)
        imported.finish()
    if missing:
        where = "the scene has" if kf else "this file has"
        builder.warn(f"{missing} animated values name nodes {where} no object or bone for: kept, not shown")
