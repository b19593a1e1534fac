"""Object properties > Precombined's operator: mark new meshes as precombined, so the cell
exporter takes them as records (it refuses meshes that neither came from a cell nor are marked)."""

import bpy
from ..io import schema



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
                obj.pop(schema.PRECOMBINED, None)
            else:
                obj[schema.PRECOMBINED] = True
        self.report({"INFO"}, f"{len(meshes)} object(s) {'unmarked' if self.clear else 'marked as precombined'}")
        return {"FINISHED"}


CLASSES = (OBJECT_OT_precombined_mark,)
