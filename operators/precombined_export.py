"""File > Export > Precombined NIF."""

import bpy

from ..core.errors import FormatError, failure_text
from ..core.nif.blocks.precombined import cell_totals
from ..io.precombined.exporter import cell_scale, export_cell
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

    def objects(self, context):
        return cell_objects(context, self.use_selection)

    def import_scale(self, context):
        return cell_scale(self.objects(context))

    def execute(self, context):
        try:
            nif, geometry = export_cell(
                self.filepath,
                self.objects(context),
                layout=None if self.layout == "KEEP" else self.layout,
                scale=self.export_scale(),
                plugin=self.plugin or None,
            )
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        records, instances = cell_totals(nif)
        written = f"; geometry in {geometry.name}" if geometry else ""
        self.report({"INFO"}, f"Exported {records} records, {instances} instances{written}")
        return {"FINISHED"}


CLASSES = (EXPORT_SCENE_OT_precombined,)
