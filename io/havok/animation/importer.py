"""Havok animation files in Blender: a skeleton .hkx as an armature in a collection of its own,
an animation .hkx as an action on an armature (the active one, or one made from a skeleton
.hkx or skeleton .nif given with it). A file that fails leaves nothing behind."""

from pathlib import Path

import bpy

from ....core.errors import FormatError
from ...datablocks import remove_all
from . import action_import, armature, codec


def _collection(context, name):
    collection = bpy.data.collections.new(name)
    context.scene.collection.children.link(collection)
    return collection


def import_skeleton(context, path):
    """A skeleton .hkx or .nif as a new armature in a new collection named after the file,
    made the active object; returns the armature object."""
    path = Path(path)
    skeleton = armature.nif_skeleton(path) if path.suffix.lower() == ".nif" else codec.read_skeleton(path)
    collection = _collection(context, path.stem)
    try:
        obj = armature.build_armature(context, skeleton, collection)
    except BaseException:
        remove_all([collection])
        raise
    collection["hkx_path"] = str(path)
    _activate(context, obj)
    return obj


def remove_skeleton(obj):
    """An armature import_skeleton made, with its collection."""
    remove_all([obj.data, obj, *obj.users_collection])


def import_hkx(context, path, progress=None, *, root_motion=False, scene_frame_rate=True):
    """One .hkx: a skeleton as a new armature, an animation as an action on the active armature.
    Returns (armature object, warnings), for operators.nif_import.import_files."""
    path = Path(path)
    contents = codec.read_contents(path)
    if contents.clip is None:
        if contents.skeleton is None:
            raise FormatError("holds neither a skeleton nor an animation", path=path)
        return import_skeleton(context, path), []
    target = context.view_layer.objects.active
    if target is None or target.type != "ARMATURE":
        raise FormatError("an animation needs its skeleton: select its armature, or give the skeleton (.hkx or .nif)",
                          path=path)
    if progress is not None:
        progress(0.5)  # decoded; the action is the other half
    clip = contents.clip
    action_import.import_action(target, clip, root_motion=root_motion, path=path)
    if scene_frame_rate:
        _scene_rate(context.scene, clip)
    return target, contents.warnings


def _scene_rate(scene, clip):
    """The scene plays at the file's rate over the animation's frames."""
    fps = max(int(round(clip.fps)), 1)
    scene.render.fps = fps
    scene.render.fps_base = fps / clip.fps
    scene.frame_start = 0
    scene.frame_end = max(clip.frames - 1, 0)


def _activate(context, obj):
    view_layer = context.view_layer
    for selected in view_layer.objects:
        selected.select_set(False)
    view_layer.objects.active = obj
    obj.select_set(True)
