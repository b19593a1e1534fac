"""Import a Havok animation onto its skeleton with the installed extension, check the action and
the pose, export it back uncompressed.

    <python with bpy> tests/blender/smoke_hkx.py ZIP USER_DIR ANIMATION.hkx SKELETON.hkx OUT_DIR

Actions are where Blender versions differ, so test_havok_animation_blender.py runs this on 4.2
and 5.0. Prints one line saying which Blender ran and what happened; exits 0 when all went
well, else 1.
"""

import os
import sys
from pathlib import Path

import numpy as np

import extension
from smoke_bsm2 import addon_module, check_actions


def smoke(zip_path, user_dir, animation_path, skeleton_path, out_dir):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    extension.install_and_enable(zip_path)
    try:
        compat = addon_module("io.compat")
        codec = addon_module("core.havok.animation")
        if bpy.ops.import_scene.havok_animation(filepath=animation_path, skeleton=skeleton_path) != {"FINISHED"}:
            return "import failed", compat
        armature = bpy.context.view_layer.objects.active
        problem = check_actions(armature, compat)
        if problem:
            return problem, compat
        target = Path(out_dir) / "exported.hkx"
        if bpy.ops.export_scene.havok_animation(filepath=str(target), compression="NONE") != {"FINISHED"}:
            return "export failed", compat
        original, written = codec.read_hkx(animation_path).animations[0], codec.read_hkx(target).animations[0]
        error = np.abs(written.translation - original.translation).max()
        turn = np.abs(np.abs(np.einsum("ftq,ftq->ft", written.rotation, original.rotation)) - 1).max()
        if error > 1e-3 or turn > 1e-5:
            return f"the exported tracks are {error:.3g} units, {turn:.3g} (1 - cos) away", compat
        return None, compat
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem, compat = smoke(*sys.argv[1:6])
    import bpy

    api = "slotted" if compat.SLOTTED_ACTIONS else "classic"
    print(f"smoke_hkx: Blender {bpy.app.version_string}, {api} actions: {problem or 'imported and exported'}")
    sys.exit(1 if problem else 0)
