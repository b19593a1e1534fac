"""Object properties > Precombined: where a record object came from (cell, block, record,
copy), an operator marking new meshes as precombined, so the cell exporter takes them as
records (it refuses meshes that neither came from a cell nor are marked), and the Creation
Kit's verdict on the object (io.precombined.creation_kit)."""

from pathlib import Path

import bpy

from ..io.precombined.cell_outputs import PREVIEW
from ..io.precombined.creation_kit import verdict_lines
from ..io.precombined.exporter import MARK, is_record_object
from ..operators.precombined_export import OBJECT_OT_precombined_preview
from .object_panel import ObjectPanel


class OBJECT_OT_precombined_mark(bpy.types.Operator):
    """Mark the selected meshes as precombined (exported as records of a cell, each object a
    placed copy of its mesh), or clear the mark"""

    bl_idname = "object.precombined_mark"
    bl_label = "Mark as Precombined"
    bl_options = {"REGISTER", "UNDO"}

    clear: bpy.props.BoolProperty(name="Clear", description="Remove the mark instead", default=False)

    @classmethod
    def poll(cls, context):
        return any(o.type == "MESH" for o in context.selected_objects)

    def execute(self, context):
        meshes = [o for o in context.selected_objects if o.type == "MESH"]
        for obj in meshes:
            if self.clear:
                obj.pop(MARK, None)
            else:
                obj[MARK] = True
        self.report({"INFO"}, f"{len(meshes)} object(s) {'unmarked' if self.clear else 'marked as precombined'}")
        return {"FINISHED"}


class OBJECT_PT_precombined(ObjectPanel, bpy.types.Panel):
    bl_label = "Precombined"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        obj = context.object
        if "precombined_object" in obj:
            cell = Path(str(obj.get("precombined_cell", ""))).name or "unknown cell"
            layout.label(text=f"Cell: {cell}")
            layout.label(text=f"Block {obj.get('precombined_block', '?')}, record {obj['precombined_object']}")
            if "precombined_instance" in obj:
                layout.label(text=f"Copy {obj['precombined_instance']}")
            if obj.data is not None and "precombined_lod" in obj.data:
                layout.label(text=f"Showing LOD {obj.data['precombined_lod']}")
            draw_precombine_state(layout, obj)
            draw_lines(layout, verdict_lines(obj))
            draw_export_preview(layout, obj)
            return
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
    cell = next((c for c in obj.users_collection if "precombine_status" in c), None)
    lines = []
    if cell is None:
        return lines
    broken = cell["precombine_status"] != "intact"
    lines.append((f"Precombines: {cell['precombine_status']} (CELL of {cell.get('precombine_plugin', '?')}), "
                  f"previs: {cell['precombine_previs']}", "ERROR" if broken else "CHECKMARK"))
    causes = [line for line in cell.get("precombine_causes", "").split("\n") if line]
    lines += [(cause, "BLANK1") for cause in causes[:SHOWN_CAUSES]]
    if len(causes) > SHOWN_CAUSES:
        lines.append((f"... and {len(causes) - SHOWN_CAUSES} more (cli.py precombines DATA --cell lists them)", "BLANK1"))
    if "precombine_breaker" in obj:
        lines.append((f"Overridden by {obj['precombine_breaker']}: {obj.get('precombine_override', '')}", "ERROR"))
    return lines


def export_preview_lines(obj):
    """The lines of the last preview of the object's cell's export (files, patch records)."""
    cell = next((c for c in obj.users_collection if PREVIEW in c), None)
    return [line for line in str(cell[PREVIEW]).split("\n") if line] if cell is not None else []


def draw_export_preview(layout, obj):
    layout.operator(OBJECT_OT_precombined_preview.bl_idname)
    draw_lines(layout, [(line, "ERROR" if line.startswith(("error", "warning")) else "BLANK1")
                        for line in export_preview_lines(obj)])


def draw_lines(layout, lines):
    for text, icon in lines:
        layout.label(text=text, icon=icon)


def draw_precombine_state(layout, obj):
    draw_lines(layout, precombine_state_lines(obj))


CLASSES = (OBJECT_OT_precombined_mark, OBJECT_PT_precombined)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
