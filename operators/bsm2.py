"""File > Import / Export > Banuba Skinned Mesh (.bsm2) and its drag-and-drop handler."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..core.errors import FormatError, failure_text
from ..io.bsm2.exporter import export_file, find_mesh
from ..io.file_import import import_bsm2, import_files
from .file_import import DropImport, MultiFileImport, report_import

EXTENSION = ".bsm2"


class IMPORT_SCENE_OT_bsm2(bpy.types.Operator, MultiFileImport):
    """Import Banuba skinned meshes: mesh, armature and one action per animation"""

    bl_idname = "import_scene.bsm2"
    bl_label = "Import Banuba Skinned Mesh"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
    drop_shows_options = False

    def execute(self, context):
        armatures, messages = import_files(context, self.paths(), import_bsm2)
        return report_import(self, armatures, messages, ".bsm2")


class EXPORT_SCENE_OT_bsm2(bpy.types.Operator, ExportHelper):
    """Export the active skinned mesh with its armature and actions as a Banuba skinned mesh"""

    bl_idname = "export_scene.bsm2"
    bl_label = "Export Banuba Skinned Mesh"

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return any(obj.type == "MESH" for obj in context.view_layer.objects)

    def invoke(self, context, event):
        if not self.filepath:  # name the file after the mesh, beside the .blend
            try:
                name = bpy.path.clean_name(find_mesh(context).name)
            except FormatError:
                name = None
            if name:
                folder = Path(bpy.data.filepath).parent if bpy.data.filepath else Path()
                self.filepath = str(folder / name) + EXTENSION
        return super().invoke(context, event)

    def execute(self, context):
        try:
            bsm, warnings = export_file(context, self.filepath)
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        for message in warnings:
            self.report({"WARNING"}, message)
        self.report(
            {"INFO"},
            f"Exported {len(bsm.vertices)} vertices, {bsm.num_bones} bones and {len(bsm.animations)} "
            f"animation(s) to {Path(self.filepath).name}",
        )
        return {"FINISHED"}


class IO_FH_bsm2(DropImport, bpy.types.FileHandler):
    bl_idname = "IO_FH_bsm2"
    bl_label = "Banuba Skinned Mesh"
    bl_import_operator = IMPORT_SCENE_OT_bsm2.bl_idname
    bl_file_extensions = EXTENSION


CLASSES = (IMPORT_SCENE_OT_bsm2, EXPORT_SCENE_OT_bsm2, IO_FH_bsm2)
