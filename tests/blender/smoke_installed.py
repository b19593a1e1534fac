"""Check what ``tasks.py install`` left in a Blender user folder, as that Blender starts up.

    <python with bpy> tests/blender/smoke_installed.py USER_DIR

Prints one line; exits 0 when the extension is installed there and the saved preferences
enable it, else 1. bpy does not load the saved preferences by itself; from 4.5 on it loads
them as Blender does at startup (which registers the add-on). bpy 4.2 crashes loading them,
so there the saved preferences' bytes must name the add-on.
"""

import os
import sys
from pathlib import Path

import extension


def smoke(user_dir):
    """What is wrong, or None."""
    os.environ.update(extension.user_environment(user_dir))
    import bpy
    import addon_utils  # on sys.path once bpy is imported

    if extension.ADDON not in {module.__name__ for module in addon_utils.modules()}:
        return f"{extension.ADDON} is not installed in {user_dir}"
    if bpy.app.version < (4, 5, 0):
        saved = (Path(user_dir) / "config" / "userpref.blend").read_bytes()
        return None if extension.ADDON.encode() + b"\0" in saved else "the saved preferences do not name the add-on"
    bpy.ops.wm.read_userpref()
    if extension.ADDON not in bpy.context.preferences.addons:
        return "installed, but the saved preferences do not enable it"
    if extension.preferences_class() is None:
        return "enabled, but its preferences class is not registered"
    extension.disable_all()
    return None


if __name__ == "__main__":
    problem = smoke(sys.argv[1])
    import bpy

    print(f"smoke_installed: Blender {bpy.app.version_string}: {problem or 'installed and enabled'}", flush=True)
    sys.stderr.flush()
    os._exit(1 if problem else 0)
