"""File > Import / Export > TRI Morphs, the .tri drag-and-drop handler, and the operators choosing
which .tri a shape key is written to."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..core.errors import FormatError, failure_text
from ..core.tri import naming
from ..io.file_import import import_files
from ..io.tri.exporter import export_tri
from ..io.tri.importer import apply_file
from ..io.tri.roles import AUTO, assign, new_role, set_new_role, sources
from .file_import import DropImport, MultiFileImport, report_import

EXTENSION = ".tri"
ROLE_ITEMS = (
    (naming.EXPRESSION, "Expressions", "FaceGen morphs the game plays (head.tri)"),
    (naming.CHARGEN, "Character Creation", "FaceGen sliders of character creation (headChargen.tri)"),
    (naming.RACE, "Race", "FaceGen race morphs (Skyrim's headRaces.tri)"),
    (naming.BODYSLIDE, "BodySlide", "Body sliders by shape name (the .tri the NIF's BODYTRI names)"),
)


class IMPORT_SCENE_OT_tri(bpy.types.Operator, MultiFileImport):
    """Import FaceGen or BodySlide morphs (.tri) as shape keys of the selected meshes: a FaceGen
    .tri goes onto the mesh with its vertex count (the game matches vertices by order), a
    BodySlide .tri onto the meshes its shapes name; a FaceGen .tri fitting none is its own mesh"""

    bl_idname = "import_scene.tri_morphs"
    bl_label = "Import TRI Morphs"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
    role: bpy.props.EnumProperty(
        name="FaceGen Morphs",
        description="What a FaceGen .tri holds",
        items=((AUTO, "By File Name", "headChargen.tri: character creation, headRaces.tri: race, else expressions"),
               *ROLE_ITEMS[:3]),  # fmt: skip
        default=AUTO,
    )
    use_selection: bpy.props.BoolProperty(
        name="Onto Selected Meshes", description="Give the morphs to the selected meshes (else a FaceGen .tri is a mesh "
        "of its own)", default=True,
    )

    drop_shows_options = False  # dropped onto the meshes: nothing to choose

    def execute(self, context):
        if context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        meshes = []
        if self.use_selection:
            active = context.view_layer.objects.active
            meshes = [obj for obj in context.selected_objects if obj.type == "MESH"]
            meshes.sort(key=lambda obj: obj != active)  # the active mesh first
        role = None if self.role == AUTO else self.role

        def import_one(context, path, progress, rollback):
            return apply_file(context, path, meshes, role, rollback=rollback)

        imported, messages = import_files(context, self.paths(), import_one)
        return report_import(self, imported, messages, ".tri")


class EXPORT_SCENE_OT_tri(bpy.types.Operator, ExportHelper):
    """Export the active mesh's shape keys of one kind as a .tri (the NIF export also writes them
    beside the NIF)"""

    bl_idname = "export_scene.tri_morphs"
    bl_label = "Export TRI Morphs"

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
    role: bpy.props.EnumProperty(name="Morphs", items=ROLE_ITEMS, default=naming.EXPRESSION)

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "MESH"

    def invoke(self, context, event):
        obj = context.object
        kept = sources(obj)
        if not self.properties.is_property_set("role"):
            self.role = next(iter(kept), None) or new_role(obj) or naming.EXPRESSION
        if not self.filepath and self.role in kept:
            self.filepath = str(Path(kept[self.role]["path"]).name)
        return super().invoke(context, event)

    def execute(self, context):
        try:
            tri, messages = export_tri(self.filepath, context.object, self.role)
            tri.write(self.filepath)
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        for message in messages:
            self.report({"WARNING"}, message)
        self.report({"INFO"}, f"Exported {context.object.name}'s {naming.ROLE_NAMES[self.role]} morphs to {Path(self.filepath).name}")
        return {"FINISHED"}


class OBJECT_OT_tri_morph_role(bpy.types.Operator):
    """Choose the .tri shape keys are written to: the active shape key's, or where the mesh's new
    shape keys (those no .tri gave) go"""

    bl_idname = "object.tri_morph_role"
    bl_label = "Write Shape Keys To"
    bl_options = {"REGISTER", "UNDO"}

    which: bpy.props.EnumProperty(
        name="Shape Keys",
        items=(("ACTIVE", "Active Shape Key", "The active shape key"),
               ("NEW", "New Shape Keys", "Shape keys no .tri gave")),  # fmt: skip
    )
    role: bpy.props.EnumProperty(
        name="To",
        items=((AUTO, "As Read", "New keys: the kind of .tri the mesh's morphs came from"), *ROLE_ITEMS),
        default=naming.EXPRESSION,
    )

    @classmethod
    def poll(cls, context):
        obj = context.object
        return obj is not None and obj.type == "MESH"

    def execute(self, context):
        obj = context.object
        if self.which == "NEW":
            set_new_role(obj, self.role)
            return {"FINISHED"}
        key = obj.active_shape_key
        if key is None or key == obj.data.shape_keys.reference_key or self.role == AUTO:
            self.report({"ERROR"}, "choose a shape key other than the basis, and a kind of .tri")
            return {"CANCELLED"}
        assign(obj, key.name, self.role)
        return {"FINISHED"}


class IO_FH_tri(DropImport, bpy.types.FileHandler):
    bl_idname = "IO_FH_tri_morphs"
    bl_label = "FaceGen / BodySlide Morphs"
    bl_import_operator = IMPORT_SCENE_OT_tri.bl_idname
    bl_file_extensions = EXTENSION


CLASSES = (IMPORT_SCENE_OT_tri, EXPORT_SCENE_OT_tri, OBJECT_OT_tri_morph_role, IO_FH_tri)
