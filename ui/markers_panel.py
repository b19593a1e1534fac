"""Object properties > NIF Markers: what a connect point, furniture marker, bound, inventory
marker or Havok constraint empty stands for, its properties editable; and the operator adding a
new connect point (operators/markers.py)."""

import bpy

from ..io.havok.constraints import BODY_A, BODY_B, TYPE
from ..io.nif.connect_points import PARENT_NAME, SKINNED
from ..io.nif.extra_empties import KIND
from ..io.nif.markers import FO3_FIELDS, LATER_FIELDS, ZOOM
from ..operators.markers import OBJECT_OT_nif_add_connect_point
from .object_panel import ObjectPanel

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


CLASSES = (OBJECT_PT_nif_markers,)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
