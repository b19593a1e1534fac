"""Import from a Data folder of archives with the installed extension, on another Blender version.

    <python with bpy> tests/blender/smoke_data.py ZIP USER_DIR DATA_DIR CELL PLUGIN

DATA_DIR holds archives only (a NIF, its BGSM and its textures); the NIF is imported with
File > Import > NIF from Data, and must get its material file's textures, decoded. CELL is then
imported with PLUGIN, some copies must carry their references, and exported untouched it must
give the cell's bytes (the export reads its geometry again from the cell and its .csg). Prints
one line; exits 0 when all went well, else 1.
"""

import os
import sys
import tempfile
from pathlib import Path

import extension


def smoke(zip_path, user_dir, data_dir, cell, plugin):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    module = extension.install_and_enable(zip_path)
    try:
        bpy.context.preferences.addons[module.__name__].preferences.fo4_data = data_dir
        data_import = sys.modules[f"{module.__name__}.operators.data_import"]
        items = data_import.mesh_items(None, bpy.context)
        number = next((i for i, _, path in items if path.lower().endswith("alarmclock.nif")), None)
        if number is None:
            return f"no AlarmClock.nif among {len(items)} archived meshes"
        if bpy.ops.import_scene.precombined_nif_from_data(mesh=number) != {"FINISHED"}:
            return "import from Data failed"
        materials = [m for m in bpy.data.materials if "bgsm_file" in m]
        if not materials:
            return "no material took its material file"
        images = [n.image for n in materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage"]
        if len(images) != 3 or any(image is None or tuple(image.size) != (4, 4) for image in images):
            return f"textures not loaded from the archive: {images}"
        if bpy.ops.import_scene.precombined_cell(filepath=cell, plugin_path=plugin) != {"FINISHED"}:
            return "cell import failed"
        named = sum("reference_form_id" in o for o in bpy.data.objects)
        if not named:
            return "no copy carries its reference"
        collection = bpy.data.collections[Path(cell).stem]
        for obj in bpy.context.scene.objects:
            obj.select_set(obj.name in collection.objects)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / Path(cell).name
            if bpy.ops.export_scene.precombined_cell(filepath=str(out)) != {"FINISHED"}:
                return "cell export failed"
            if out.read_bytes() != Path(cell).read_bytes():
                return "the untouched cell exported different bytes"
        return None
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem = smoke(*sys.argv[1:6])
    import bpy

    print(f"smoke_data: Blender {bpy.app.version_string}: {problem or 'imported from archives, references named, cell written back'}")
    sys.exit(1 if problem else 0)
