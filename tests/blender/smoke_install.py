"""Install the extension zip into an empty Blender user folder, enable it, check it, disable it.

    <python with bpy> tests/blender/smoke_install.py ZIP USER_DIR

Prints one line saying which Blender ran and what happened; exits 0 when all went well, else 1.
test_extension.py runs it on every Blender version the tests cover.
"""

import os
import sys

import extension


def smoke(zip_path, user_dir):
    """What went wrong, or None."""
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    if not bpy.utils.resource_path("USER").startswith(user_dir):
        return f"the user folder is {bpy.utils.resource_path('USER')}, not {user_dir}"
    extension.install_and_enable(zip_path)
    try:
        preferences = bpy.context.preferences.addons[extension.ADDON].preferences
        if preferences is None or "fo4_data" not in preferences.bl_rna.properties:
            return f"enabled, but its preferences ({extension.PREFERENCES_CLASS}) are not registered"
        missing = {"fo4_data", "fnv_data", "sse_data", "skyrim_data", "fo76_data"} - set(preferences.bl_rna.properties.keys())
        if missing:
            return f"its preferences lack the Data folders {sorted(missing)}"
    finally:
        extension.disable_all()
    if extension.ADDON in bpy.context.preferences.addons or extension.preferences_class():
        return "still enabled or registered after being disabled"
    return None


if __name__ == "__main__":
    problem = smoke(sys.argv[1], sys.argv[2])
    import bpy

    print(f"smoke_install: Blender {bpy.app.version_string}: {problem or 'installed, enabled and disabled'}")
    sys.exit(1 if problem else 0)
