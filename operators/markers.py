"""Object properties > NIF Markers' operator: a new connect point (parent or child) under the
active object, which the NIF exporter writes into the file's connect point blocks."""

import bpy
from ..io import schema



class OBJECT_OT_nif_add_connect_point(bpy.types.Operator):
    """Add a connect point empty under the active object (a parent point where other parts
    snap on, or a child point naming the parent point this part snaps onto)"""

    bl_idname = "object.nif_add_connect_point"
    bl_label = "Add Connect Point"
    bl_options = {"REGISTER", "UNDO"}

    kind: bpy.props.EnumProperty(
        name="Kind",
        items=(("connect_point", "Parent point", "A point other parts snap onto (P-...)"),
               ("connect_child", "Child point", "The parent point this part snaps onto (C-...)")),  # fmt: skip
    )
    name: bpy.props.StringProperty(name="Name", default="P-New")

    @classmethod
    def poll(cls, context):
        return context.object is not None and schema.NIF_EXTRA_KIND not in context.object

    def execute(self, context):
        parent = context.object
        name = self.name if self.kind == "connect_point" or not self.name.startswith("P-") else "C-" + self.name[2:]
        obj = bpy.data.objects.new(name, None)
        for collection in parent.users_collection:
            collection.objects.link(obj)
        obj[schema.NIF_EXTRA_KIND] = self.kind
        obj.empty_display_type = "ARROWS" if self.kind == "connect_point" else "SINGLE_ARROW"
        obj.empty_display_size = 4.0
        obj.hide_render = True
        obj.rotation_mode = "QUATERNION"
        obj.parent = parent
        self.report({"INFO"}, f"added {obj.name!r} under {parent.name!r}")
        return {"FINISHED"}


CLASSES = (OBJECT_OT_nif_add_connect_point,)
