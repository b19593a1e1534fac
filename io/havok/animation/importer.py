"""Havok animation files in Blender: a skeleton .hkx as an armature in a collection of its own,
an animation .hkx as an action on an armature (the active one, or one made from a skeleton
.hkx or skeleton .nif given with it). A file that fails leaves nothing behind."""

import json
from pathlib import Path

import bpy

from ....core.errors import FormatError, failure_text
from ....core.havok.animation import read_hkx
from ...datablocks import Rollback, rolled_back
from ...file_import import import_files
from . import action_import, armature
from ... import schema


def _collection(context, name):
    collection = bpy.data.collections.new(name)
    context.scene.collection.children.link(collection)
    return collection


@rolled_back
def import_skeleton(context, path, *, rollback):
    """A skeleton .hkx or .nif as a new armature in a new collection named after the file,
    made the active object; returns the armature object."""
    path = Path(path)
    skeleton = armature.nif_skeleton(path) if path.suffix.lower() == ".nif" else _havok_skeleton(read_hkx(path))
    collection = rollback.add(_collection(context, path.stem))
    obj = armature.build_armature(skeleton, collection, rollback)
    _activate(context, obj)
    return obj


def _havok_skeleton(hkx):
    """The file's first skeleton (a skeleton .hkx's second is its ragdoll's)."""
    if not hkx.skeletons:
        raise FormatError("holds no skeleton", path=hkx.path)
    return armature.havok_skeleton(hkx.skeletons[0], hkx.game)


@rolled_back
def import_hkx(context, path, progress=None, *, rollback, root_motion=False, scene_frame_rate=True):
    """One .hkx: a skeleton as a new armature, an animation as an action on the active armature.
    Returns (armature object, warnings), for io.file_import.import_files."""
    path = Path(path)
    hkx = read_hkx(path)
    if not hkx.animations:
        return import_skeleton(context, path, rollback=rollback), []
    target = context.view_layer.objects.active
    if target is None or target.type != "ARMATURE":
        beside = armature.havok_skeleton_near(path)  # the games keep it with their animations
        if beside is None:
            raise FormatError("an animation needs its skeleton and no skeleton.hkx is beside it: select its armature, "
                              "or give the skeleton (.hkx or .nif; cli.py import: --skeleton FILE)", path=path)
        target = import_skeleton(context, beside, rollback=rollback)
    if progress is not None:
        progress(0.5)  # decoded; the action is the other half
    animation = hkx.animations[0]
    bones = track_bones(target, animation, path)
    _action, warnings = action_import.import_action(target, animation, bones, name=path.stem, game=hkx.game, rollback=rollback,
                                                    root_motion=root_motion, path=path)
    if scene_frame_rate:
        _scene_rate(context.scene, animation)
    if len(hkx.animations) > 1:
        warnings.append(f"{len(hkx.animations)} animations: the first imported")
    if hkx.bits == 32:
        warnings.append("a Skyrim LE (32-bit) file: its action exports as Skyrim SE (64-bit)")
    return target, warnings


def track_bones(target, animation, path):
    """The bone name each track drives: from the Havok skeleton the armature was made from, else
    from the skeleton .hkx beside the animation."""
    stored = target.get(schema.HKX_BONES)
    if stored is not None:
        names, skeleton_name = json.loads(stored), target.get(schema.HKX_SKELETON)
    else:
        found = armature.havok_skeleton_near(path)
        if found is None:
            raise FormatError(f"its tracks drive bones by their index in the Havok skeleton; armature {target.name!r} "
                              "was not made from one and no skeleton.hkx is beside the file: import the skeleton .hkx",
                              path=path)
        skeleton = read_hkx(found).skeletons
        if not skeleton:
            raise FormatError(f"{found} holds no skeleton", path=path)
        names, skeleton_name = skeleton[0].bone_names, skeleton[0].name
    if animation.skeleton_name and skeleton_name and animation.skeleton_name != skeleton_name:
        raise FormatError(f"made for skeleton {animation.skeleton_name!r}, not {skeleton_name!r} (armature "
                          f"{target.name!r}): choose or give the skeleton it was made for", path=path)
    beyond = animation.track_bones[animation.track_bones >= len(names)]
    if len(beyond):
        raise FormatError(f"a track drives bone {int(beyond[0])} of skeleton {skeleton_name!r}, which has {len(names)} bones",
                          path=path)
    return [names[index] for index in animation.track_bones.tolist()]


def _scene_rate(scene, animation):
    """The scene plays at the file's rate over the animation's frames."""
    fps = max(int(round(animation.frame_rate)), 1)
    scene.render.fps = fps
    # 1 / a float32 frame duration is rarely a whole number exactly (29.999998): no base for that
    scene.render.fps_base = 1.0 if abs(fps - animation.frame_rate) < 1e-4 * fps else fps / animation.frame_rate
    scene.frame_start = 0
    scene.frame_end = max(animation.frame_count - 1, 0)


def _activate(context, obj):
    view_layer = context.view_layer
    view_layer.update()  # its object list still names the armature's removed editing object until then
    for selected in view_layer.objects:
        selected.select_set(False)
    view_layer.objects.active = obj
    obj.select_set(True)


def import_animations(context, paths, *, skeleton=None, root_motion=False, scene_frame_rate=True):
    """Every file (skeletons as armatures, animations as actions on the active armature, or on
    ``skeleton`` (.hkx/.nif) built first); returns import_files' (armatures, messages)."""
    if context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    skeleton_made = Rollback()
    if skeleton:
        try:
            with skeleton_made:
                import_skeleton(context, skeleton, rollback=skeleton_made)
        except (FormatError, OSError) as error:
            return [], [failure_text(skeleton, error)]

    def import_one(context, path, progress, rollback):
        return import_hkx(context, path, progress, rollback=rollback, root_motion=root_motion,
                          scene_frame_rate=scene_frame_rate)

    # skeletons (as the games name them) first: files dropped together animate the one dropped with them
    paths = sorted(paths, key=lambda path: not Path(path).name.lower().startswith("skeleton"))
    imported, messages = import_files(context, paths, import_one)
    if not imported:  # the skeleton was only wanted for the animations
        skeleton_made.undo()
    return imported, messages
