"""A precombined cell's state in a load order, with the installed extension, on another Blender
version.

    <python with bpy> tests/blender/smoke_precombine_state.py ZIP USER_DIR DATA_DIR CELL PLUGIN

The preferences' Fallout 4 Data folder is DATA_DIR, whose load order overrides some of the
cell's references after its precombines (test_precombine_breakers_blender builds it); CELL is
imported with PLUGIN through File > Import > Precombined NIF. Prints one line; exits 0 when the
cell got its state and the overridden copies were marked, else 1.
"""

import sys

import extension


def smoke(zip_path, user_dir, data_dir, cell, plugin):
    import os

    os.environ.update(extension.user_environment(user_dir))
    import bpy

    module = extension.install_and_enable(zip_path)
    try:
        bpy.context.preferences.addons[module.__name__].preferences.fo4_data = data_dir
        if bpy.ops.import_scene.precombined_cell(filepath=cell, plugin_path=plugin) != {"FINISHED"}:
            return "cell import failed"
        collection = next((c for c in bpy.data.collections if "precombine_status" in c), None)
        if collection is None:
            return "no collection got its precombine state"
        if collection["precombine_status"] != "broken" or "reference override: Later.esp" not in collection["precombine_causes"]:
            return f"state {collection['precombine_status']}: {collection['precombine_causes']}"
        marked = [o for o in bpy.data.objects if o.get("precombine_breaker") == "Later.esp"]
        breakers = [c for c in collection.children if c.name.endswith("precombine breakers")]
        if not marked or not breakers or set(breakers[0].objects) != set(marked):
            return f"{len(marked)} copies marked, breakers collection: {breakers}"
        return None
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem = smoke(*sys.argv[1:6])
    import bpy

    print(f"smoke_precombine_state: Blender {bpy.app.version_string}: {problem or 'state read, overridden copies marked'}")
    sys.exit(1 if problem else 0)
