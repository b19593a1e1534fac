"""Object properties > NIF Markers: what a connect point, furniture marker, bound, inventory
marker or Havok constraint empty stands for, its properties editable; and an operator adding a
new connect point (parent or child) under the active object, which the NIF exporter writes into
the file's connect point blocks."""

import bpy

from ..io.havok.constraints import BODY_A, BODY_B, TYPE
from ..io.nif.connect_points import PARENT_NAME, SKINNED
from ..io.nif.extra_empties import KIND
from ..io.nif.markers import FO3_FIELDS, LATER_FIELDS, ZOOM
from .object_panel import ObjectPanel

LABELS = {
    "connect_point": "Connect point (parent)",
    "connect_child": "Connect point (child)",
    "furniture": "Furniture marker",
    "bound": "Bound box (BSBound)",
    "inventory_marker": "Inventory marker",
    "constraint": "Havok constraint",
}


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
        return context.object is not None and KIND not in context.object

    def execute(self, context):
        parent = context.object
        name = self.name if self.kind == "connect_point" or not self.name.startswith("P-") else "C-" + self.name[2:]
        obj = bpy.data.objects.new(name, None)
        for collection in parent.users_collection:
            collection.objects.link(obj)
        obj[KIND] = self.kind
        obj.empty_display_type = "ARROWS" if self.kind == "connect_point" else "SINGLE_ARROW"
        obj.empty_display_size = 4.0
        obj.hide_render = True
        obj.rotation_mode = "QUATERNION"
        obj.parent = parent
        self.report({"INFO"}, f"added {obj.name!r} under {parent.name!r}")
        return {"FINISHED"}


class OBJECT_PT_nif_markers(ObjectPanel, bpy.types.Panel):
    bl_label = "NIF Markers"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        obj = context.object
        kind = obj.get(KIND)
        if kind is None:
            layout.operator_menu_enum(OBJECT_OT_nif_add_connect_point.bl_idname, "kind")
            return
        layout.label(text=LABELS.get(kind, kind))
        if kind == "connect_point":
            layout.label(text=f"Hangs from: {obj.parent.name if obj.parent else obj.get(PARENT_NAME, 'the root')}")
        elif kind == "connect_child" and SKINNED in obj:
            layout.prop(obj, f'["{SKINNED}"]', text="Skinned")
        elif kind == "constraint":
            layout.label(text=f"Type: {str(obj.get(TYPE, '')).replace('_', ' ')}")
            layout.label(text=f"Body A: {obj.get(BODY_A, '?')}")
            layout.label(text=f"Body B: {obj.get(BODY_B, '?')}")
        names = {**LATER_FIELDS, **FO3_FIELDS, ZOOM: None}
        names.update((key, None) for key in obj.keys() if key.startswith("havok_") and key not in (TYPE, BODY_A, BODY_B))
        for name in names:
            if name in obj:
                layout.prop(obj, f'["{name}"]', text=name.removeprefix("nif_").removeprefix("havok_").replace("_", " ").title())


CLASSES = (OBJECT_OT_nif_add_connect_point, OBJECT_PT_nif_markers)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
