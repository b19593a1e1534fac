"""NIF animation sequences as Blender actions: one action per NiControllerSequence (on 4.2/4.3
one per sequence and animated object), its transform keys (key groups or compressed B-splines)
as F-curves of the nodes' objects or armature bones, NiVisController keys as hide_viewport /
hide_render, shader emissive multiple, alpha and emissive colour keys on the shape material's
Principled BSDF inputs, its text keys as the action's pose markers. A standalone .kf binds to
the scene's objects and bones named like its nodes.

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
import re

import bpy
import numpy as np

from ...core import transforms
from ...core.nif import bspline
from ...core.nif.blocks.animation import (
    CONSTANT,
    XYZ_ROTATION,
    KeyGroup,
    NiBoolData,
    NiBoolInterpolator,
    NiBSplineBasisData,
    NiBSplineCompTransformInterpolator,
    NiBSplineData,
    NiFloatData,
    NiFloatInterpolator,
    NiPoint3Interpolator,
    NiPosData,
    NiTransformData,
    NiTransformInterpolator,
)
from ...core.nif.blocks.objects import NiAVObject
from ...core.nif.blocks.sequences import LOOP, NiControllerSequence, NiTextKeyExtraData
from .. import compat
from . import animation_keys as ak
from .node_transform import local_matrix
from .source import source_of, template_collection

KEYFRAME = bpy.types.Keyframe.bl_rna.properties
INTERPOLATION = {item.identifier: item.value for item in KEYFRAME["interpolation"].enum_items}
FREE = KEYFRAME["handle_left_type"].enum_items["FREE"].value
AUTO_CLAMPED = KEYFRAME["handle_left_type"].enum_items["AUTO_CLAMPED"].value
SIMILARITY = 1e-4  # what A may stray from a rotation times a uniform scale

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


def similarity(matrix):
    """(scale, rotation quaternion w x y z, translation) of a 4x4 matrix, or None when it is not
    a rotation times a uniform scale."""
    from mathutils import Matrix

    m = np.array(matrix, np.float64)
    linear = m[:3, :3]
    det = np.linalg.det(linear)
    if det <= 0:
        return None
    scale = float(np.cbrt(det))
    rotation = linear / scale
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=SIMILARITY):
        return None
    quaternion = tuple(Matrix(rotation.tolist()).to_quaternion())
    return scale, quaternion, tuple(m[:3, 3])


class Target:
    """What a node's keys animate: an object, or a bone of an armature object, and the map
    (A, s_b) from the node's local transform to Blender's channels."""

    id_type = "OBJECT"

    def __init__(self, obj, bone_name, a, scale_b):
        self.obj = obj
        self.bone_name = bone_name
        self.scale_a, self.rotation_a, self.translation_a = a
        self.scale_b = scale_b
        self.prefix = f'pose.bones["{bone_name}"].' if bone_name else ""

    @property
    def euler_exact(self):
        """Whether A leaves rotations as they are (q and -q alike), so Euler keys map one to one."""
        return abs(abs(self.rotation_a[0]) - 1.0) < 1e-6

    def set_rotation_mode(self, mode):
        owner = self.obj.pose.bones[self.bone_name] if self.bone_name else self.obj
        owner.rotation_mode = mode


def _targets(builder, index, node):
    """The Targets of the node at ``index``: its object, or its bone in every armature showing
    it (skins with different bind poses get armatures of their own); None for one whose
    placement is sheared or singular."""
    made = builder.objects.get(index)
    if made is None:
        return []
    local = np.array(local_matrix(node), np.float64)
    if not transforms.invertible(local):  # a node scaled to nothing (or damaged): no keys map onto it
        return [None]
    if not isinstance(made, tuple):
        return [_object_target(made, local)]
    found = [made] + [
        (armature.object, armature.names[index])
        for armature in builder.skins.armatures
        if index in armature.names and armature.object is not None and (armature.object, armature.names[index]) != made
    ]
    return [_bone_target(obj, bone_name, local) for obj, bone_name in found]


def _object_target(obj, local):
    return _similar_target(obj, None, np.array(obj.matrix_basis, np.float64) @ np.linalg.inv(local), 1.0)


def _bone_target(obj, bone_name, local):
    bone = obj.data.bones[bone_name]
    rest = np.asarray(bone["nif_rest"], np.float64).reshape(4, 4)
    if not transforms.invertible(rest):
        return None
    b = np.linalg.inv(rest) @ np.array(bone.matrix_local, np.float64)
    if not transforms.invertible(b):  # a rest Blender could not hold
        return None
    basis = np.array(obj.pose.bones[bone_name].matrix_basis, np.float64)
    a = basis @ np.linalg.inv(b) @ np.linalg.inv(local)
    return _similar_target(obj, bone_name, a, float(np.cbrt(np.linalg.det(b[:3, :3]))))


def _similar_target(obj, bone_name, a, scale_b):
    parts = similarity(a)
    return None if parts is None else Target(obj, bone_name, parts, scale_b)


class ShaderTarget:
    """A shader value's socket on the Principled BSDF of a shape's material (the material's node
    tree holds its F-curves)."""

    id_type = "NODETREE"
    bone_name = None
    scale_a, rotation_a, translation_a, scale_b = 1.0, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0  # values as stored

    def __init__(self, tree, node):
        self.obj = tree
        self.node = node
        self.prefix = f'nodes["{node.name}"].'


# Shader controller variables Blender shows (the controller ID is the variable's number):
# (controller type, variable) -> Principled BSDF input.
SHADER_SOCKETS = {
    ("BSEffectShaderPropertyFloatController", 0): "Emission Strength",  # emissive multiple
    ("BSEffectShaderPropertyFloatController", 5): "Alpha",  # alpha transparency
    ("BSLightingShaderPropertyFloatController", 11): "Emission Strength",
    ("BSLightingShaderPropertyFloatController", 12): "Alpha",
    ("BSEffectShaderPropertyColorController", 0): "Emission Color",  # emissive colour (r g b)
    ("BSLightingShaderPropertyColorController", 1): "Emission Color",
}


def _shader_socket(controlled):
    try:
        variable = int(str(controlled.controller_id))
    except ValueError:
        return None
    return SHADER_SOCKETS.get((str(controlled.controller_type), variable))


def _shader_target(obj):
    """The ShaderTarget of a shape object's first material, or None."""
    material = obj.data.materials[0] if obj.type == "MESH" and len(obj.data.materials) and obj.data.materials[0] else None
    tree = material.node_tree if material is not None else None
    node = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) if tree is not None else None
    return None if node is None else ShaderTarget(tree, node)


def is_kf(nif):
    """A standalone animation (.kf): its roots are sequences, it has no scene of its own."""
    roots = [nif.blocks[root] for root in nif.roots if 0 <= root < len(nif.blocks)]
    return bool(roots) and all(isinstance(root, NiControllerSequence) for root in roots)


class SceneTargets:
    """Where a .kf's node names point: objects of the scene named so (or so with Blender's
    '.001' suffix), else bones of its armatures; each node's own local transform comes from the
    file the object was imported from, else from what Blender shows."""

    def __init__(self, scene, skip):
        self.objects, self.bones = {}, {}
        for obj in scene.objects:
            if skip in obj.users_collection:
                continue
            self.objects.setdefault(re.sub(r"\.\d{3,}$", "", obj.name), obj)
            if obj.type == "ARMATURE":
                for bone in obj.data.bones:
                    self.bones.setdefault(bone.name, []).append((obj, bone.name))
        self.sources = {}

    def find(self, name):
        obj = self.objects.get(name)
        if obj is not None:
            return [_object_target(obj, self._local(obj, obj.get("nif_block"), np.array(obj.matrix_basis, np.float64)))]
        targets = []
        for armature, bone_name in self.bones.get(name, []):
            bone = armature.data.bones[bone_name]
            if "nif_rest" not in bone:
                continue
            rest = np.asarray(bone["nif_rest"], np.float64).reshape(4, 4)
            parent = np.asarray(bone.parent["nif_rest"], np.float64).reshape(4, 4) if bone.parent and "nif_rest" in bone.parent else np.eye(4)
            targets.append(_bone_target(armature, bone_name, self._local(armature, bone.get("nif_block"), np.linalg.inv(parent) @ rest)))
        return targets

    def _local(self, obj, index, fallback):
        """The node's stored local transform in the file ``obj`` came from, else ``fallback``."""
        collection = template_collection([obj])
        if collection is None or not isinstance(index, int):
            return fallback
        if collection.name not in self.sources:
            self.sources[collection.name] = source_of(collection)
        nif = self.sources[collection.name]
        block = nif.blocks[index] if 0 <= index < len(nif.blocks) else None
        return np.array(local_matrix(block), np.float64) if isinstance(block, NiAVObject) else fallback


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
            self.builder.created.append(action)
            self._describe(action)
            self.channels[action] = []
        self.slots[owner] = (action, slot)
        return action, slot

    def _describe(self, action):
        sequence = self.sequence
        action["nif_sequence"] = self.index
        action["nif_name"] = self.name
        if self.kf is not None:
            action["nif_kf"] = self.kf
        action["nif_fps"] = self.fps
        action["nif_cycle_type"] = sequence.cycle_type
        action["nif_frequency"] = sequence.frequency
        if sequence.start_time <= sequence.stop_time:
            action.use_frame_range = True
            action.frame_start = sequence.start_time * self.fps
            action.frame_end = max(sequence.stop_time * self.fps, action.frame_start + 1e-3)
            action["nif_frame_range"] = (action.frame_start, action.frame_end)
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
            action["nif_channels"] = json.dumps(channels)
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
        handle["nif_kf"] = builder.collection.name
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
            socket = _shader_socket(controlled) if isinstance(data, (NiFloatData, NiPosData)) else None
            spline = _spline(nif, interpolator)
            if not (transform or visibility or socket or spline):
                continue
            name = str(controlled.node_name)
            if name not in targets:
                if kf:
                    targets[name] = scene_targets.find(name)
                else:
                    node_index = names.get(name)
                    targets[name] = [] if node_index is None else _targets(builder, node_index, nif.blocks[node_index])
            if not targets[name]:
                missing += 1
            for target in targets[name]:
                if target is None:
                    builder.warn(f"{controlled.node_name}: its placement is sheared or singular, its keys are not shown")
                elif transform:
                    _transform_keys(imported, target, number, interpolator, data, fps)
                elif spline:
                    _spline_keys(imported, target, number, interpolator, *spline, fps)
                elif socket is not None:
                    _shader_keys(imported, target, number, socket, data, fps)
                elif target.bone_name is None:
                    _visibility_keys(imported, target, number, interpolator, data, fps)
        imported.finish()
    if missing:
        where = "the scene has" if kf else "this file has"
        builder.warn(f"{missing} animated values name nodes {where} no object or bone for: kept, not shown")


def _transform_keys(imported, target, number, interpolator, data, fps):
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


def _visibility_keys(imported, target, number, interpolator, data, fps):
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


def _spline(nif, interpolator):
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


def _spline_keys(imported, target, number, interpolator, spline, basis, fps):
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


def _shader_keys(imported, target, number, socket, data, fps):
    """A shader float's or colour's keys on its Principled BSDF input, values as stored."""
    shader = _shader_target(target.obj) if target.bone_name is None else None
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
