"""Object properties > Havok Collision: what a collision object holds, editable. The data are
the custom properties io.havok.collision_import describes (they survive save and reload, and need no
registered property: properties with getters made Blender 4.2 crash on exit in the install
test); the operators of operators/collision.py set the motion, mark meshes as collision of their
parent and give selected faces a Bethesda material."""

import bpy
import numpy as np

from ..io.havok.collision_edit import face_materials
from ..io.havok.collision_import import material_text
from ..operators.collision import MESH_OT_havok_assign_material, OBJECT_OT_havok_mark_collision, OBJECT_OT_havok_set_motion
from .object_panel import ObjectPanel
from ..io import schema

FIELDS = (
    (schema.HAVOK_MASS, "Mass (kg)"),
    (schema.HAVOK_FRICTION, "Friction"),
    (schema.HAVOK_RESTITUTION, "Restitution"),
    (schema.HAVOK_LAYER, "Layer"),
)


class OBJECT_PT_havok_collision(ObjectPanel, bpy.types.Panel):
    bl_label = "Havok Collision"

    def draw(self, context):
        layout = self.layout
        obj = context.object
        if schema.HAVOK_SHAPE not in obj:
            layout.label(text="Not a collision object")
            if obj.type == "MESH":
                layout.operator_menu_enum(OBJECT_OT_havok_mark_collision.bl_idname, "shape")
            return
        layout.label(text=f"Shape: {obj[schema.HAVOK_SHAPE].replace('_', ' ')}")
        if obj.parent is None or schema.HAVOK_SHAPE not in obj.parent:  # a body, not a compound's child
            motion = obj.get(schema.HAVOK_MOTION, "static")
            layout.operator_menu_enum(OBJECT_OT_havok_set_motion.bl_idname, "motion", text=f"Motion: {motion}")
            for name, label in FIELDS:
                if name in obj and (name != schema.HAVOK_MASS or motion == "dynamic"):
                    layout.prop(obj, f'["{name}"]', text=label)
        if schema.HAVOK_MATERIAL in obj:
            layout.prop(obj, f'["{schema.HAVOK_MATERIAL}"]', text="Material")
        if obj[schema.HAVOK_SHAPE] in ("convex", "box") and schema.HAVOK_RADIUS in obj:  # boxes: Fallout 3 / New Vegas
            layout.prop(obj, f'["{schema.HAVOK_RADIUS}"]', text="Convex Radius")
        if obj[schema.HAVOK_SHAPE] == "compressed_mesh" and obj.type == "MESH":
            box = layout.box()
            box.label(text="Face materials")
            ids, counts = np.unique(face_materials(obj).view(np.uint32), return_counts=True)
            for value, count in zip(ids.tolist(), counts.tolist()):
                box.label(text=f"{material_text(value)}: {count} faces")
            box.operator(MESH_OT_havok_assign_material.bl_idname)


CLASSES = (OBJECT_PT_havok_collision,)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
