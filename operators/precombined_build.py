"""Object properties > Precombined's Build Precombines: the active copy's cell rebuilt from its
load order's references without the Creation Kit, or the cell import holding the active object
built on its edits (io.precombined.build)."""

import bpy

from ..core.errors import FormatError
from ..io.plugin import cell_import
from ..io.precombined.build import build_cell, build_cell_import, cell_of


class OBJECT_OT_precombined_build(bpy.types.Operator):
    """Build the precombines of the active copy's cell from the references of its Data folder's
    load order, as the Creation Kit would (every file written or none); for an imported cell,
    its edits written into the patch first"""

    bl_idname = "object.precombined_build"
    bl_label = "Build Precombines"
    bl_options = {"REGISTER"}

    layout: bpy.props.EnumProperty(name="Geometry", items=(
        ("shared", "Shared .csg", "In '<patch> - Geometry.csg', as the Creation Kit writes it"),
        ("inline", "Inline", "In the _OC files")), default="shared")
    into: bpy.props.StringProperty(name="Patch Plugin", description="The patch plugin to write the CELL into "
                                   "(empty: '<plugin defining the cell> - Precombined.esp')", default="")
    dry_run: bpy.props.BoolProperty(name="Dry Run", description="List the files, write none", default=False)

    @classmethod
    def poll(cls, context):
        return cell_of(context.object) is not None or cell_import.cell_of(context) is not None

    def execute(self, context):
        imported = cell_import.cell_of(context)
        try:
            if imported is not None and (context.object is None or context.object.name in imported.all_objects):
                lines, _ = build_cell_import(imported, self.layout, self.into, self.dry_run)
            else:
                lines, _ = build_cell(context.object, self.layout, self.into, self.dry_run)
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for line in lines[:-1]:
            self.report({"WARNING"}, line)
        self.report({"INFO"}, lines[-1])
        return {"FINISHED"}


CLASSES = (OBJECT_OT_precombined_build,)
