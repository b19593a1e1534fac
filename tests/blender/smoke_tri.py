"""Shape keys from .tri files with the installed extension, on another Blender version.

    <python with bpy> tests/blender/smoke_tri.py ZIP USER_DIR OUT_DIR HEAD.nif ALONE.tri

Shape keys, file handlers and nested custom properties are what this depends on, so
test_tri_blender.py runs it on 4.2 and 5.0: the head's .tri loads with it and writes back byte
for byte, an edited key is written, and a .tri alone becomes a mesh that writes back too.
Prints one line; exits 0 when all went well, else 1.
"""

import os
import sys
from pathlib import Path

import extension


def smoke(zip_path, user_dir, out_dir, head, alone):
    os.environ.update(extension.user_environment(user_dir))
    import bpy

    extension.install_and_enable(zip_path)
    try:
        head, alone, out_dir = Path(head), Path(alone), Path(out_dir)
        if bpy.ops.import_scene.precombined_nif(filepath=str(head)) != {"FINISHED"}:
            return f"{head.name}: import failed"
        collection = bpy.data.collections[head.stem]
        obj = next(o for o in collection.all_objects if o.type == "MESH")
        if obj.data.shape_keys is None:
            return f"{head.name}: its .tri gave no shape keys"
        bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection.children[collection.name]
        target = out_dir / head.name
        if bpy.ops.export_scene.precombined_nif(filepath=str(target)) != {"FINISHED"}:
            return f"{head.name}: export failed"
        written, source = target.with_suffix(".tri"), head.with_suffix(".tri")
        if written.read_bytes() != source.read_bytes():
            return f"{source.name}: the untouched import does not write back byte for byte"
        obj.data.shape_keys.key_blocks[1].data[0].co.x += 0.5
        bpy.ops.export_scene.precombined_nif(filepath=str(target))
        if written.read_bytes() == source.read_bytes():
            return f"{source.name}: the edited key was not written"
        bpy.ops.object.select_all(action="DESELECT")
        if bpy.ops.import_scene.tri_morphs(filepath=str(alone)) != {"FINISHED"}:
            return f"{alone.name}: import failed"
        bpy.context.view_layer.objects.active = bpy.data.objects[alone.stem]
        if bpy.ops.export_scene.tri_morphs(filepath=str(out_dir / alone.name), role="EXPRESSION") != {"FINISHED"}:
            return f"{alone.name}: export failed"
        if (out_dir / alone.name).read_bytes() != alone.read_bytes():
            return f"{alone.name}: a .tri alone does not write back byte for byte"
        return None
    finally:
        extension.disable_all()


if __name__ == "__main__":
    problem = smoke(*sys.argv[1:6])
    import bpy

    print(f"smoke_tri: Blender {bpy.app.version_string}: {problem or 'loaded, written back and edited'}")
    sys.exit(1 if problem else 0)
