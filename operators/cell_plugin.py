"""File > Import > Cell (Plugin), File > Export > Cell (Plugin) and Add > Game Reference: a whole
cell of a load order (io.plugin.cell_import, io.plugin.cell_export)."""

import bpy
from bpy_extras.io_utils import ExportHelper

from .. import preferences
from ..core.errors import FormatError
from ..io.datablocks import Rollback
from ..io.plugin.cell_export import export_cell
from ..io.plugin.cell_import import add_game_reference, cell_of, import_cell


def active_cell(operator, context):
    """The cell import the operator works on, or None (reported)."""
    collection = cell_of(context)
    if collection is None:
        operator.report({"ERROR"}, "no cell's import holds the active object (File > Import > Cell (Plugin))")
    return collection


class IMPORT_SCENE_OT_cell_plugin(bpy.types.Operator):
    """Import every reference of a cell of the load order: each placed from its plugin record"""

    bl_idname = "import_scene.cell_plugin"
    bl_label = "Import Cell (Plugin)"
    bl_options = {"REGISTER", "UNDO"}

    directory: bpy.props.StringProperty(name="Data Folder", description="The game's Data folder (default: the "
                                        "Fallout 4 one of the preferences)", subtype="DIR_PATH")
    cell: bpy.props.StringProperty(name="Cell", description="The cell's FormID (00001E58, Plugin.esm:XXXXXX) or "
                                   "EditorID")
    plugins_txt: bpy.props.StringProperty(name="plugins.txt", description="The active plugins (default: the "
                                          "preferences'; empty: every plugin of the Data folder)", subtype="FILE_PATH")
    precombined: bpy.props.EnumProperty(
        name="Precombined", description="How references combined in the cell's precombined meshes are shown",
        items=(("COPIES", "_OC Copies", "By the cell's precombined _OC files (the precombined import)"),
               ("MODELS", "Own Models", "By their own models, like every other reference")), default="COPIES")
    scol: bpy.props.EnumProperty(
        name="SCOL", description="How a static collection is shown",
        items=(("PARTS", "Parts", "An empty with a child per placed part"),
               ("OBJECT", "One Object", "Its own combined model")), default="PARTS")

    def invoke(self, context, event):
        settings = preferences.get(context)
        if settings is not None:
            self.directory = self.directory or bpy.path.abspath(settings.fo4_data)
            self.plugins_txt = self.plugins_txt or bpy.path.abspath(settings.plugins_txt)
        return context.window_manager.invoke_props_dialog(self, width=420)

    def execute(self, context):
        if not self.directory or not self.cell:
            self.report({"ERROR"}, "give the Data folder and the cell (FormID or EditorID)")
            return {"CANCELLED"}
        try:
            collection, warnings = import_cell(context, bpy.path.abspath(self.directory), self.cell,
                                               bpy.path.abspath(self.plugins_txt) or None,
                                               precombined=self.precombined, scol=self.scol)
        except FormatError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for warning in warnings:
            self.report({"WARNING"}, warning)
        self.report({"INFO"}, f"Imported cell {collection.name}")
        return {"FINISHED"}


class EXPORT_SCENE_OT_cell_plugin(bpy.types.Operator, ExportHelper):
    """Write the cell's edits (references moved, deleted, duplicated, added) as a plugin"""

    bl_idname = "export_scene.cell_plugin"
    bl_label = "Export Cell (Plugin)"
    filename_ext = ".esp"
    filter_glob: bpy.props.StringProperty(default="*.esp;*.esl", options={"HIDDEN"})
    light: bpy.props.BoolProperty(name="Light Plugin (ESL)", description="Flag the plugin as a light plugin")

    def execute(self, context):
        collection = active_cell(self, context)
        if collection is None:
            return {"CANCELLED"}
        try:
            written, messages = export_cell(collection, self.filepath, light=self.light or
                                            self.filepath.lower().endswith(".esl"))
        except FormatError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for message in messages:
            self.report({"INFO"}, message)
        return {"FINISHED"}


class OBJECT_OT_add_game_reference(bpy.types.Operator):
    """Add a reference of a base of the load order (by EditorID) or of a model of the Data folder at the 3D cursor"""

    bl_idname = "object.add_game_reference"
    bl_label = "Game Reference"
    bl_options = {"REGISTER", "UNDO"}

    editor_id: bpy.props.StringProperty(name="EditorID", description="The base's EditorID")
    model: bpy.props.StringProperty(name="Model", description="A model of the Data folder (meshes\\...): the base "
                                    "having it, else a new STAT on export")

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self, width=420)

    def execute(self, context):
        collection = active_cell(self, context)
        if collection is None:
            return {"CANCELLED"}
        try:
            with Rollback() as rollback:
                obj, message = add_game_reference(context, collection, self.editor_id, self.model, rollback=rollback)
        except FormatError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for other in context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, message)
        return {"FINISHED"}


def draw_add(self, context):
    self.layout.operator(OBJECT_OT_add_game_reference.bl_idname, icon="OUTLINER_OB_GROUP_INSTANCE")


CLASSES = (IMPORT_SCENE_OT_cell_plugin, EXPORT_SCENE_OT_cell_plugin, OBJECT_OT_add_game_reference)
