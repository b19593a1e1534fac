"""Starfield .mat files written back when asked (Write Material Files, ``--write-materials``):
a material an import made from a .mat whose image nodes now show other textures than the .mat
names gets the .mat as read with those file names changed (core.materials.mat keeps every other
byte), at its path under the Data folder the NIF is written into (io/starfield/geometry_export:
the folder holding its ``meshes`` folder, else the NIF's). Untouched materials are not written."""

import bpy

from ...core.archives.data import path_in_folder, read_path
from ...core.data_paths import data_relative
from ...core.materials.mat import MatFile
from ...core.nif.materials import game_texture_path
from .. import compat, schema
from .geometry_export import output_data_folder


def texture_changes(material):
    """{(object, component): the new stored file name} of the image nodes whose image is another
    file than the .mat names (nodes without an image file keep the stored name)."""
    changes = {}
    for node in compat.material_node_tree(material).nodes:
        place = node.get(schema.SF_MAT_TEXTURE)
        if node.bl_idname != "ShaderNodeTexImage" or place is None or node.image is None or not node.image.filepath:
            continue
        path = game_texture_path(bpy.path.abspath(node.image.filepath))
        stored = str(node.get(schema.NIF_TEXTURE, ""))
        if path is not None and path.lower() != data_relative(stored).lower():
            changes[tuple(int(v) for v in place)] = "Data\\" + path
    return changes


def write_mat_files(nif_path, objects):
    """Write the .mat of every material of ``objects`` whose textures were swapped; returns the
    paths written."""
    materials = {m for o in objects if o.type == "MESH" for m in o.data.materials if m is not None and schema.SF_MAT_FILE in m}
    folder = output_data_folder(nif_path)
    written = []
    for material in sorted(materials, key=lambda m: m.name):
        changes = texture_changes(material)
        if not changes:
            continue
        mat = MatFile.from_bytes(read_path(material[schema.SF_MAT_FILE]), material[schema.SF_MAT_FILE])
        for (number, at), name in changes.items():
            mat.data["Objects"][number]["Components"][at]["Data"]["FileName"] = name
        target = path_in_folder(folder, data_relative(material[schema.NIF_MATERIAL_PATH]))
        target.parent.mkdir(parents=True, exist_ok=True)
        mat.write(target)
        written.append(target)
    return written
