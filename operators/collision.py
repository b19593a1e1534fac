"""Object properties > Havok Collision's operators: set a body's motion, mark meshes as collision
of their parents, give selected faces a Bethesda material."""

import bpy

from ..io.havok.collision_edit import assign_face_material, mark_collision
from ..io.havok.collision_import import material_text, parse_material
from ..io import schema

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


class OBJECT_OT_havok_set_motion(bpy.types.Operator):
    """How the collision body moves"""

    bl_idname = "object.havok_set_motion"
    bl_label = "Set Motion"
    bl_options = {"REGISTER", "UNDO"}

    motion: bpy.props.EnumProperty(name="Motion", items=MOTIONS)

    @classmethod
    def poll(cls, context):
        return context.object is not None and schema.HAVOK_SHAPE in context.object

    def execute(self, context):
        context.object[schema.HAVOK_MOTION] = self.motion
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


class MESH_OT_havok_assign_material(bpy.types.Operator):
    """Give the selected faces a Bethesda material"""

    bl_idname = "mesh.havok_assign_material"
    bl_label = "Assign Face Material"
    bl_options = {"REGISTER", "UNDO"}

    material: bpy.props.StringProperty(name="Material", description="Bethesda material id (hex 0x... or decimal)")

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.get(schema.HAVOK_SHAPE) == "compressed_mesh" and obj.mode == "EDIT"

    def invoke(self, context, event):
        if not self.material:
            self.material = str(context.active_object.get(schema.HAVOK_MATERIAL, ""))
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


CLASSES = (OBJECT_OT_havok_mark_collision, OBJECT_OT_havok_set_motion, MESH_OT_havok_assign_material)
