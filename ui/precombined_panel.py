"""Object properties > Precombined: where a record object came from (cell, block, record,
copy), the operator marking new meshes as precombined (operators/precombined_mark.py), so the
cell exporter takes them as records (it refuses meshes that neither came from a cell nor are
marked), the Creation Kit's verdict on the object (io.precombined.creation_kit) and the preview
of its cell's export (operators/precombined_export.py)."""

from pathlib import Path

import bpy

from ..io.precombined.creation_kit import verdict_lines
from ..io.precombined.exporter import is_record_object
from ..operators.precombined_build import OBJECT_OT_precombined_build
from ..operators.precombined_export import OBJECT_OT_precombined_preview
from ..operators.precombined_mark import OBJECT_OT_precombined_mark
from .object_panel import ObjectPanel
from ..io import schema


class OBJECT_PT_precombined(ObjectPanel, bpy.types.Panel):
    bl_label = "Precombined"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        obj = context.object
        if schema.PRECOMBINED_OBJECT in obj:
            cell = Path(str(obj.get(schema.PRECOMBINED_CELL, ""))).name or "unknown cell"
            layout.label(text=f"Cell: {cell}")
            layout.label(text=f"Block {obj.get(schema.PRECOMBINED_BLOCK, '?')}, record {obj[schema.PRECOMBINED_OBJECT]}")
            if schema.PRECOMBINED_INSTANCE in obj:
                layout.label(text=f"Copy {obj[schema.PRECOMBINED_INSTANCE]}")
            if obj.data is not None and schema.PRECOMBINED_LOD in obj.data:
                layout.label(text=f"Showing LOD {obj.data[schema.PRECOMBINED_LOD]}")
            draw_precombine_state(layout, obj)
            draw_lines(layout, verdict_lines(obj))
            draw_export_preview(layout, obj)
            layout.operator(OBJECT_OT_precombined_build.bl_idname)
            return
        if schema.CELL_REFERENCE in obj:  # a whole cell's import: built on its edits
            layout.operator(OBJECT_OT_precombined_build.bl_idname)
        if is_record_object(obj):
            layout.label(text="Marked: exported as a record of a new or imported cell")
            layout.operator(OBJECT_OT_precombined_mark.bl_idname, text="Clear Mark").clear = True
        else:
            layout.label(text="Not part of a precombined cell")
            layout.operator(OBJECT_OT_precombined_mark.bl_idname)
        draw_lines(layout, verdict_lines(obj))


SHOWN_CAUSES = 6


def precombine_state_lines(obj):
    """(text, icon) lines of the cell's state in the load order (io.precombined.breakers), and
    of the override of this copy's reference."""
    cell = next((c for c in obj.users_collection if schema.PRECOMBINE_STATUS in c), None)
    lines = []
    if cell is None:
        return lines
    broken = cell[schema.PRECOMBINE_STATUS] != "intact"
    lines.append((f"Precombines: {cell[schema.PRECOMBINE_STATUS]} (CELL of {cell.get(schema.PRECOMBINE_PLUGIN, '?')}), "
                  f"previs: {cell[schema.PRECOMBINE_PREVIS]}", "ERROR" if broken else "CHECKMARK"))
    causes = [line for line in cell.get(schema.PRECOMBINE_CAUSES, "").split("\n") if line]
    lines += [(cause, "BLANK1") for cause in causes[:SHOWN_CAUSES]]
    if len(causes) > SHOWN_CAUSES:
        lines.append((f"... and {len(causes) - SHOWN_CAUSES} more (cli.py precombines DATA --cell lists them)", "BLANK1"))
    if schema.PRECOMBINE_BREAKER in obj:
        lines.append((f"Overridden by {obj[schema.PRECOMBINE_BREAKER]}: {obj.get(schema.PRECOMBINE_OVERRIDE, '')}", "ERROR"))
    return lines


def export_preview_lines(obj):
    """The lines of the last preview of the object's cell's export (files, patch records)."""
    cell = next((c for c in obj.users_collection if schema.PRECOMBINED_EXPORT_PREVIEW in c), None)
    return [line for line in str(cell[schema.PRECOMBINED_EXPORT_PREVIEW]).split("\n") if line] if cell is not None else []


def draw_export_preview(layout, obj):
    layout.operator(OBJECT_OT_precombined_preview.bl_idname)
    draw_lines(layout, [(line, "ERROR" if line.startswith(("error", "warning")) else "BLANK1")
                        for line in export_preview_lines(obj)])


def draw_lines(layout, lines):
    for text, icon in lines:
        layout.label(text=text, icon=icon)


def draw_precombine_state(layout, obj):
    draw_lines(layout, precombine_state_lines(obj))


CLASSES = (OBJECT_PT_precombined,)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
