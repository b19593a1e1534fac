"""Import NIFs with the installed extension and export them back, on another Blender version.

    <python with bpy> tests/blender/smoke_nif.py ZIP USER_DIR OUT_DIR FILE.nif...

Materials (node trees, blend modes), armatures and custom normals are where Blender versions
differ, so test_nif_export.py runs this on 4.2 and 5.0 with a skinned FO4 file, a static FO4
file with collision, a FO3 file and a Skyrim SE body: each must import, write back byte for
byte untouched, and write an edited vertex. Prints one line; exits 0 when all went well, else 1.
"""

import os
import sys
from pathlib import Path

import extension


def smoke(zip_path, user_dir, out_dir, sources):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    extension.install_and_enable(zip_path)
    try:
        for source in map(Path, sources):
            if bpy.ops.import_scene.precombined_nif(filepath=str(source)) != {"FINISHED"}:
                return f"{source.name}: import failed"
            collection = bpy.data.collections[source.stem]
            if not any(o.type == "MESH" and o.active_material for o in collection.all_objects):
                return f"{source.name}: no mesh got a material"
            layer = bpy.context.view_layer.layer_collection.children[collection.name]
            bpy.context.view_layer.active_layer_collection = layer
            target = Path(out_dir) / source.name
            if bpy.ops.export_scene.precombined_nif(filepath=str(target)) != {"FINISHED"}:
                return f"{source.name}: export failed"
            if target.read_bytes() != source.read_bytes():
                return f"{source.name}: the untouched import does not write back byte for byte"
            mesh = next(o for o in collection.all_objects if o.type == "MESH" and "havok_shape" not in o).data
            mesh.vertices[0].co.x += 1.0
            if bpy.ops.export_scene.precombined_nif(filepath=str(target)) != {"FINISHED"}:
                return f"{source.name}: export of an edit failed"
            if target.read_bytes() == source.read_bytes():
                return f"{source.name}: the edit was not written"
        return None
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem = smoke(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
    import bpy

    print(f"smoke_nif: Blender {bpy.app.version_string}: {problem or 'imported, written back and edited'}")
    sys.exit(1 if problem else 0)
