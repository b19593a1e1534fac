"""File > Import > NIF from Data: a searchable list of the meshes in the preferences' Data
folders' archives; the chosen one imports like a file (precombined cells as cells)."""

import os

import bpy

from .. import preferences
from ..core.archives.data import DataFiles, split_archive_path
from ..io.file_import import import_cells
from .file_import import report_import

_listing = {"folders": None, "paths": [], "items": []}  # Blender needs the item strings kept alive


def mesh_items(self, context):
    folders = [folder for folder in preferences.folders(context).data.values() if folder]
    # A folder's modification time changes when an archive is added, removed or replaced (a mod
    # installed meanwhile): then the list is made again. Blender asks for the items often.
    stamps = [(folder, _modified(folder)) for folder in folders]
    if _listing["folders"] != stamps:
        data = DataFiles(folders)
        try:
            paths = data.archive_paths("meshes/*.nif")
        finally:
            data.close()
        _listing.update(folders=stamps, paths=paths,
                        items=[(str(i), split_archive_path(path).inner, path) for i, path in enumerate(paths)])
    return _listing["items"]


def _modified(folder):
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


class IMPORT_SCENE_OT_nif_from_data(bpy.types.Operator):
    """Import a NIF straight from the Data folders' archives (search by path)"""

    bl_idname = "import_scene.precombined_nif_from_data"
    bl_label = "Import NIF from Data"
    bl_options = {"REGISTER", "UNDO"}
    bl_property = "mesh"

    mesh: bpy.props.EnumProperty(name="Mesh", description="A mesh of the Data folders' archives", items=mesh_items)

    def invoke(self, context, event):
        if not mesh_items(self, context):
            self.report({"ERROR"}, "No mesh archive in the Data folders set in the preferences")
            return {"CANCELLED"}
        context.window_manager.invoke_search_popup(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        path = _listing["paths"][int(self.mesh)]
        collections, messages = import_cells(context, [path], folders=preferences.folders(context))
        return report_import(self, collections, messages, "NIF")


CLASSES = (IMPORT_SCENE_OT_nif_from_data,)
