"""File > Export > Precombined NIF."""

import bpy

from ..core.errors import FormatError
from ..core.nif.blocks.precombined import cell_totals
from ..io.precombined.cell_outputs import PatchOptions
from ..io.precombined.exporter import CELL, cell_scale, export_cell
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
            )
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, f"{self.filepath}: {error}")
            return {"CANCELLED"}
        for message in plan.messages:
            self.report({"WARNING"}, message)
        records, instances = cell_totals(plan.nif)
        others = [path.name for path, what in plan.wrote if what != CELL]
        written = f"; also {', '.join(others)}" if others else ""
        self.report({"INFO"}, f"Exported {records} records, {instances} instances{written}")
        return {"FINISHED"}


CLASSES = (EXPORT_SCENE_OT_precombined,)
