"""File > Export > Precombined NIF."""

import bpy

from .. import preferences
from ..core.archives.data import split_archive_path
from ..core.errors import FormatError, failure_text
from ..core.nif.blocks.precombined import cell_totals
from ..io.collection_objects import objects_in
from ..io import schema
from ..io.precombined.cell_outputs import PatchOptions
from ..io.precombined.exporter import CELL, cell_scale, export_cell, plan_cell
from .nif_export import NifExport


def cell_objects(context, selected_only):
    return list(context.selected_objects if selected_only else context.scene.objects)


class EXPORT_SCENE_OT_precombined(bpy.types.Operator, NifExport):
    """Export objects sharing meshes as a Fallout 4 precombined cell: each mesh a record, each
    object one of its placed copies"""

    bl_idname = "export_scene.precombined_cell"
    bl_label = "Export Precombined NIF"

    layout: bpy.props.EnumProperty(
        name="Layout",
        items=(
            ("KEEP", "As imported", "Each block keeps the layout it was imported with (new cells: inline)"),
            ("inline", "Shared, inline geometry", "BSPackedCombinedSharedGeomDataExtra with the geometry in the block"),
            ("baked", "Baked", "BSPackedCombinedGeomDataExtra"),
        ),
        default="KEEP",
    )
    plugin: bpy.props.StringProperty(
        name="Plugin",
        description="Edited records of cells keeping their geometry in a .csg go to '<Plugin> - Geometry.csg' beside "
        "the cell (empty: the plugin the records came from, else the file's name)",
    )
    use_selection: bpy.props.BoolProperty(name="Selected Only", default=True)
    patch: bpy.props.StringProperty(
        name="Patch Plugin", subtype="FILE_PATH",
        description="Also write this plugin (.esp): REFR overrides for moved copies, disabled REFRs for deleted ones, "
        "new REFRs for duplicated ones and the CELL's combined references, with its own geometry files "
        "(empty: no patch)",
    )
    patch_light: bpy.props.BoolProperty(name="Light Plugin (ESL)", description="Flag the patch as a light plugin")
    update_patch: bpy.props.BoolProperty(
        name="Update Patch", description="The patch may exist already: keep its records and update them (an existing "
        "patch is never overwritten otherwise)",
    )

    def objects(self, context):
        return cell_objects(context, self.use_selection)

    def import_scale(self, context):
        return cell_scale(self.objects(context))

    def execute(self, context):
        patch = PatchOptions(bpy.path.abspath(self.patch), self.patch_light, self.update_patch) if self.patch else None
        try:
            plan = export_cell(
                self.filepath,
                self.objects(context),
                layout=None if self.layout == "KEEP" else self.layout,
                scale=self.export_scale(),
                plugin=self.plugin or None,
                patch=patch,
                folders=preferences.folders(context).data_folders("FO4"),
            )
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        for message in plan.messages:
            self.report({"WARNING"}, message)
        records, instances = cell_totals(plan.nif)
        others = [path.name for path, what in plan.wrote if what != CELL]
        written = f"; also {', '.join(others)}" if others else ""
        self.report({"INFO"}, f"Exported {records} records, {instances} instances{written}")
        return {"FINISHED"}


class OBJECT_OT_precombined_preview(bpy.types.Operator):
    """List what exporting the active object's cell over the file it came from would write: the
    files, and the patch plugin's records when a patch is named"""

    bl_idname = "object.precombined_export_preview"
    bl_label = "Preview Export"
    bl_options = {"REGISTER"}

    patch: EXPORT_SCENE_OT_precombined.__annotations__["patch"]
    patch_light: EXPORT_SCENE_OT_precombined.__annotations__["patch_light"]
    update_patch: EXPORT_SCENE_OT_precombined.__annotations__["update_patch"]

    @classmethod
    def poll(cls, context):
        return context.object is not None and schema.PRECOMBINED_CELL in context.object

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        cell = str(context.object[schema.PRECOMBINED_CELL])
        collection = next((c for c in bpy.data.collections if c.get(schema.NIF_PATH) == cell), None)
        if collection is None:
            self.report({"ERROR"}, f"the collection {cell} was imported into is gone")
            return {"CANCELLED"}
        patch = PatchOptions(bpy.path.abspath(self.patch), self.patch_light, self.update_patch) if self.patch else None
        inside = split_archive_path(cell)  # a cell taken from an archive is written loose in its Data folder
        target = str(inside.data_folder / inside.inner) if inside is not None else cell
        try:
            lines = plan_cell(target, objects_in(collection), patch=patch,
                              folders=preferences.folders(context).data_folders("FO4")).lines()
        except (FormatError, OSError) as error:
            lines = [f"error: {failure_text(target, error)}"]
        collection[schema.PRECOMBINED_EXPORT_PREVIEW] = "\n".join(lines)
        return {"FINISHED"}


CLASSES = (EXPORT_SCENE_OT_precombined, OBJECT_OT_precombined_preview)
