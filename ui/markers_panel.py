"""Object properties > NIF Markers: what a connect point, furniture marker, bound, inventory
marker or Havok constraint empty stands for, its properties editable; and the operator adding a
new connect point (operators/markers.py)."""

import bpy

from ..io.nif.markers import FO3_FIELDS, LATER_FIELDS
from ..operators.markers import OBJECT_OT_nif_add_connect_point
from .object_panel import ObjectPanel
from ..io import schema

LABELS = {
    "connect_point": "Connect point (parent)",
    "connect_child": "Connect point (child)",
    "furniture": "Furniture marker",
    "bound": "Bound box (BSBound)",
    "inventory_marker": "Inventory marker",
    "constraint": "Havok constraint",
}


class OBJECT_PT_nif_markers(ObjectPanel, bpy.types.Panel):
    bl_label = "NIF Markers"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        obj = context.object
        kind = obj.get(schema.NIF_EXTRA_KIND)
        if kind is None:
            layout.operator_menu_enum(OBJECT_OT_nif_add_connect_point.bl_idname, "kind")
            return
        layout.label(text=LABELS.get(kind, kind))
        if kind == "connect_point":
            layout.label(text=f"Hangs from: {obj.parent.name if obj.parent else obj.get(schema.NIF_CONNECT_PARENT, 'the root')}")
        elif kind == "connect_child" and schema.NIF_CONNECT_SKINNED in obj:
            layout.prop(obj, f'["{schema.NIF_CONNECT_SKINNED}"]', text="Skinned")
        elif kind == "constraint":
            layout.label(text=f"Type: {str(obj.get(schema.HAVOK_CONSTRAINT, '')).replace('_', ' ')}")
            layout.label(text=f"Body A: {obj.get(schema.HAVOK_BODY_A, '?')}")
            layout.label(text=f"Body B: {obj.get(schema.HAVOK_BODY_B, '?')}")
        names = {**LATER_FIELDS, **FO3_FIELDS, schema.NIF_ZOOM: None}
        shown = (schema.HAVOK_CONSTRAINT, schema.HAVOK_BODY_A, schema.HAVOK_BODY_B)
        names.update((key, None) for key in obj.keys() if key.startswith(schema.HAVOK_LIMIT_PREFIX) and key not in shown)
        for name in names:
            if name in obj:
                layout.prop(obj, f'["{name}"]', text=name.removeprefix("nif_").removeprefix(schema.HAVOK_LIMIT_PREFIX).replace("_", " ").title())


CLASSES = (OBJECT_PT_nif_markers,)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
