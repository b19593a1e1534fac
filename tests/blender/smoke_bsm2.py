"""Import a .bsm2 with the installed extension, check its actions and deformation, export it back.

    <python with bpy> tests/blender/smoke_bsm2.py ZIP USER_DIR FILE.bsm2 OUT_DIR

Actions are where Blender versions differ (classic F-curves on 4.2/4.3, slotted channelbags from
4.4, no ``Action.fcurves`` at all on 5.0), so test_bsm2_blender.py runs this on 4.2 and 5.0.
Prints one line saying which Blender ran and what happened; exits 0 when all went well, else 1.
"""

import importlib
import os
import sys
from pathlib import Path

import numpy as np

import extension

TO_BLENDER = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], np.float64)


def addon_module(name):
    """A submodule of the installed add-on, e.g. ``addon_module("io.compat")``."""
    return importlib.import_module(f"{extension.ADDON}.{name}")


def check_actions(armature_object, compat):
    """What is wrong with the imported actions for this Blender's API, or None."""
    import bpy

    pairs = compat.animations(armature_object)
    if not pairs or not all(len(compat.fcurves(action, slot)) for action, slot in pairs):
        return "no action with F-curves"
    action, slot = pairs[0]
    if compat.SLOTTED_ACTIONS:
        if slot is None or armature_object.animation_data.action_slot != slot or not action.layers:
            return "the action is not assigned through a slot"
        if bpy.app.version >= (5, 0, 0) and hasattr(action, "fcurves"):
            return "5.0 should have no Action.fcurves"
    elif len(action.fcurves) != len(compat.fcurves(action, slot)):
        return "the classic action's F-curves are not the ones keyed"
    if not all(len(fcurve.keyframe_points) for fcurve in compat.fcurves(action, slot)):
        return "an F-curve has no keys"
    return None


def smoke(zip_path, user_dir, source, out_dir):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    extension.install_and_enable(zip_path)
    try:
        compat = addon_module("io.compat")
        core = addon_module("core.bsm2")
        skinning = addon_module("core.bsm2.skinning")
        if bpy.ops.import_scene.bsm2(filepath=str(source)) != {"FINISHED"}:
            return "import failed", compat
        mesh_object = bpy.context.view_layer.objects.active
        armature_object = mesh_object.parent
        problem = check_actions(armature_object, compat)
        if problem:
            return problem, compat
        bsm = core.Bsm2File.read(source)
        animation = bsm.animations[0]
        last = len(animation.keys) - 1
        scene = bpy.context.scene
        frame = scene.frame_start + last * animation.interval_ns * scene.render.fps / scene.render.fps_base / 1e9
        scene.frame_set(int(frame), subframe=frame - int(frame))
        evaluated = mesh_object.evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = evaluated.to_mesh()
        positions = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", positions)
        evaluated.to_mesh_clear()
        expected = skinning.skin(bsm.vertices, skinning.skinning_matrices(bsm, animation))[last] @ TO_BLENDER.T
        error = np.abs(positions.reshape(-1, 3) - expected).max() / max(1.0, np.abs(expected).max())
        if error > 1e-4:
            return f"the last key deforms {error:.3g} away from the file's skinning", compat
        target = Path(out_dir) / "exported.bsm2"
        if bpy.ops.export_scene.bsm2(filepath=str(target)) != {"FINISHED"}:
            return "export failed", compat
        exported = core.Bsm2File.read(target)
        if not all(np.array_equal(exported.vertices[f], bsm.vertices[f]) for f in ("position", "normal", "tangent", "uv", "weights")):
            return "the exported vertices differ", compat
        keys_error = max(np.abs(a.keys - b.keys).max() for a, b in zip(exported.animations, bsm.animations))
        if keys_error > 1e-5:
            return f"the exported keys are {keys_error:.3g} away", compat
        if target.read_bytes() != Path(source).read_bytes():  # untouched: every byte (issue 44)
            return "the untouched export is not the file's bytes", compat
        return None, compat
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem, compat = smoke(*sys.argv[1:5])
    import bpy

    api = "slotted" if compat.SLOTTED_ACTIONS else "classic"
    print(f"smoke_bsm2: Blender {bpy.app.version_string}, {api} actions: {problem or 'imported, deformed and exported'}")
    sys.exit(1 if problem else 0)
