"""Object properties > Havok Collision: what a collision object holds, editable. The data are
the custom properties io.havok.collision_import describes (they survive save and reload, and need no
registered property: properties with getters made Blender 4.2 crash on exit in the install
test); operators set the motion, mark meshes as collision of their parent and give selected
faces a Bethesda material."""

import bpy
import numpy as np

from ..io.havok.collision_import import MATERIAL, RADIUS, SHAPE, material_text, parse_material, set_ranges
from ..io.integers import to_int32
from .object_panel import ObjectPanel

MOTIONS = (
    ("static", "Static", "Does not move"),
    ("dynamic", "Dynamic", "Moved by physics; needs a mass"),
    ("keyframed", "Keyframed", "Moved by animation, not by physics"),
)
MESH_SHAPES = (
    ("convex", "Convex", "The convex hull of the mesh (at most 256 corners)"),
    ("compressed_mesh", "Triangle mesh", "Every triangle, each with its own Bethesda material"),
    ("capsule", "Capsule", "The capsule around the mesh's longest axis"),
)
DEFAULTS = {
    "havok_motion": "static",
    "havok_mass": 0.0,
    "havok_friction": 0.5,
    "havok_restitution": 0.4,
    "havok_layer": 1,
    MATERIAL: "0x00000000",
}
FIELDS = (
    ("havok_mass", "Mass (kg)"),
    ("havok_friction", "Friction"),
    ("havok_restitution", "Restitution"),
    ("havok_layer", "Layer"),
)


class OBJECT_OT_havok_set_motion(bpy.types.Operator):
    """How the collision body moves"""

    bl_idname = "object.havok_set_motion"
    bl_label = "Set Motion"
    bl_options = {"REGISTER", "UNDO"}

    motion: bpy.props.EnumProperty(name="Motion", items=MOTIONS)

    @classmethod
    def poll(cls, context):
        return context.object is not None and SHAPE in context.object

    def execute(self, context):
        context.object["havok_motion"] = self.motion
        return {"FINISHED"}


class OBJECT_OT_havok_mark_collision(bpy.types.Operator):
    """Make the selected meshes collision of their parents (exported as Havok shapes, not as
    geometry)"""

    bl_idname = "object.havok_mark_collision"
    bl_label = "Mark as Collision"
    bl_options = {"REGISTER", "UNDO"}

    shape: bpy.props.EnumProperty(name="Shape", items=MESH_SHAPES, default="convex")

    @classmethod
    def poll(cls, context):
        return any(obj.type == "MESH" and obj.parent is not None for obj in context.selected_objects)

    def execute(self, context):
        marked = 0
        for obj in context.selected_objects:
            if obj.type != "MESH" or obj.parent is None:
                continue
            mark_collision(obj, self.shape)
            marked += 1
        self.report({"INFO"}, f"{marked} object(s) marked as collision")
        return {"FINISHED"}


def mark_collision(obj, shape):
    """Collision properties on ``obj`` (kept where it already has them); shown as a wire."""
    obj[SHAPE] = shape
    for name, value in DEFAULTS.items():
        if name not in obj:
            obj[name] = value
    if shape == "convex" and RADIUS not in obj:
        obj[RADIUS] = 0.0
    set_ranges(obj)
    obj.display_type = "WIRE"
    obj.hide_render = True


class MESH_OT_havok_assign_material(bpy.types.Operator):
    """Give the selected faces a Bethesda material"""

    bl_idname = "mesh.havok_assign_material"
    bl_label = "Assign Face Material"
    bl_options = {"REGISTER", "UNDO"}

    material: bpy.props.StringProperty(name="Material", description="Bethesda material id (hex 0x... or decimal)")

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.get(SHAPE) == "compressed_mesh" and obj.mode == "EDIT"

    def invoke(self, context, event):
        if not self.material:
            self.material = str(context.active_object.get(MATERIAL, ""))
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        value = parse_material(self.material)
        if value is None:
            self.report({"ERROR"}, f"{self.material!r} is not a material id")
            return {"CANCELLED"}
        obj = context.active_object
        bpy.ops.object.mode_set(mode="OBJECT")  # face data is written outside edit mode
        try:
            assigned = assign_face_material(obj, value)
        finally:
            bpy.ops.object.mode_set(mode="EDIT")
        self.report({"INFO"}, f"{assigned} face(s) given {material_text(value)}")
        return {"FINISHED"}


def assign_face_material(obj, value):
    """Set the selected faces' ``havok_material`` to ``value``; returns how many."""
    mesh = obj.data
    selected = np.empty(len(mesh.polygons), bool)
    mesh.polygons.foreach_get("select", selected)
    values = face_materials(obj)
    values[selected] = to_int32(value)
    attribute = mesh.attributes.get(MATERIAL) or mesh.attributes.new(MATERIAL, "INT", "FACE")
    attribute.data.foreach_set("value", values)
    return int(selected.sum())


def face_materials(obj):
    """The faces' ``havok_material`` values (int32 bit patterns); the object's material when
    the mesh has none, as the exporter reads it."""
    mesh = obj.data
    values = np.full(len(mesh.polygons), to_int32(parse_material(obj.get(MATERIAL, 0)) or 0), np.int32)
    attribute = mesh.attributes.get(MATERIAL)
    if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT":
        attribute.data.foreach_get("value", values)
    return values


class OBJECT_PT_havok_collision(ObjectPanel, bpy.types.Panel):
    bl_label = "Havok Collision"

    def draw(self, context):
        layout = self.layout
        obj = context.object
        if SHAPE not in obj:
            layout.label(text="Not a collision object")
            if obj.type == "MESH":
                layout.operator_menu_enum(OBJECT_OT_havok_mark_collision.bl_idname, "shape")
            return
        layout.label(text=f"Shape: {obj[SHAPE].replace('_', ' ')}")
        if obj.parent is None or SHAPE not in obj.parent:  # a body, not a compound's child
            motion = obj.get("havok_motion", "static")
            layout.operator_menu_enum(OBJECT_OT_havok_set_motion.bl_idname, "motion", text=f"Motion: {motion}")
            for name, label in FIELDS:
                if name in obj and (name != "havok_mass" or motion == "dynamic"):
                    layout.prop(obj, f'["{name}"]', text=label)
        if MATERIAL in obj:
            layout.prop(obj, f'["{MATERIAL}"]', text="Material")
        if obj[SHAPE] in ("convex", "box") and RADIUS in obj:  # boxes: Fallout 3 / New Vegas
            layout.prop(obj, f'["{RADIUS}"]', text="Convex Radius")
        if obj[SHAPE] == "compressed_mesh" and obj.type == "MESH":
            box = layout.box()
            box.label(text="Face materials")
            ids, counts = np.unique(face_materials(obj).view(np.uint32), return_counts=True)
            for value, count in zip(ids.tolist(), counts.tolist()):
                box.label(text=f"{material_text(value)}: {count} faces")
            box.operator(MESH_OT_havok_assign_material.bl_idname)


CLASSES = (OBJECT_OT_havok_mark_collision, OBJECT_OT_havok_set_motion, MESH_OT_havok_assign_material, OBJECT_PT_havok_collision)

register, unregister = bpy.utils.register_classes_factory(CLASSES)
