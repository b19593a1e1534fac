"""Import an animated NIF with the installed extension on another Blender version, check its
sequences became actions, write it back untouched, then retime a key and write it again.

    <python with bpy> tests/blender/smoke_animation.py ZIP USER_DIR OUT_DIR FILE.nif

Actions are where Blender versions differ most (4.2/4.3 classic, 4.4 slotted, 5.0 without
Action.fcurves). Prints one line; exits 0 when all went well, else 1.
"""

import os
import sys
from pathlib import Path

import extension


def smoke(zip_path, user_dir, out_dir, source):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    import importlib

    module = extension.install_and_enable(zip_path)
    compat = importlib.import_module(f"{module.__name__}.io.compat")
    try:
        source = Path(source)
        if bpy.ops.import_scene.precombined_nif(filepath=str(source)) != {"FINISHED"}:
            return "import failed"
        collection = bpy.data.collections[source.stem]
        animated = [o for o in collection.objects if o.animation_data and o.animation_data.nla_tracks]
        names = sorted({track.name.split(".")[0] for o in animated for track in o.animation_data.nla_tracks})
        if not names:
            return "no sequence became an action"
        layer = bpy.context.view_layer.layer_collection.children[collection.name]
        bpy.context.view_layer.active_layer_collection = layer
        target = Path(out_dir) / source.name
        if bpy.ops.export_scene.precombined_nif(filepath=str(target)) != {"FINISHED"}:
            return "export failed"
        if target.read_bytes() != source.read_bytes():
            return "the untouched import does not write back byte for byte"
        track = animated[0].animation_data.nla_tracks[0]
        strip = track.strips[0]
        slot = getattr(strip, "action_slot", None)
        fcurve = compat.fcurves(strip.action, slot)[0]
        key = fcurve.keyframe_points[-1]
        for point in (key.co, key.handle_left, key.handle_right):
            point.x += 2.0
        if bpy.ops.export_scene.precombined_nif(filepath=str(target)) != {"FINISHED"}:
            return "export of a retimed key failed"
        if target.read_bytes() == source.read_bytes():
            return "the retimed key was not written"
        return f"sequences {', '.join(names)}"
    finally:
        extension.disable_all()


if __name__ == "__main__":
    outcome = smoke(*sys.argv[1:5])
    import bpy

    ok = outcome.startswith("sequences")
    print(f"smoke_animation: Blender {bpy.app.version_string}: {outcome}")
    sys.exit(0 if ok else 1)
