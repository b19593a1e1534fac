"""File > Import / Export > Havok Animation (.hkx) and its drag-and-drop handler."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..core.errors import FormatError, failure_text
from ..io.havok.animation.action_export import export_animation
from ..io.havok.animation.importer import import_animations
from .file_import import DropImport, MultiFileImport, report_import

EXTENSION = ".hkx"


class IMPORT_SCENE_OT_hkx(bpy.types.Operator, MultiFileImport):
    """Import Havok skeletons (as armatures) and animations (as actions on the active armature)
    of Fallout 4 and Skyrim SE"""

    bl_idname = "import_scene.havok_animation"
    bl_label = "Import Havok Animation"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
    drop_shows_options = False
    skeleton: bpy.props.StringProperty(
        name="Skeleton", subtype="FILE_PATH",
        description="Animations go onto an armature built from this skeleton (.hkx or .nif); empty: the active armature",
    )
    root_motion: bpy.props.BoolProperty(
        name="Root Motion", description="Key the armature object's location and rotation with the file's root motion",
        default=False,
    )
    scene_frame_rate: bpy.props.BoolProperty(
        name="Scene Frame Rate", description="Set the scene's frame rate and range to the animation's", default=True
    )

    def execute(self, context):
        armatures, messages = import_animations(
            context, self.paths(), skeleton=self.skeleton or None, root_motion=self.root_motion,
            scene_frame_rate=self.scene_frame_rate,
        )  # fmt: skip
        return report_import(self, armatures, messages, ".hkx")


class EXPORT_SCENE_OT_hkx(bpy.types.Operator, ExportHelper):
    """Export the active armature's action as a Havok animation (Fallout 4 or Skyrim SE)"""

    bl_idname = "export_scene.havok_animation"
    bl_label = "Export Havok Animation"

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
    compression: bpy.props.EnumProperty(
        name="Compression",
        items=(
            ("SPLINE", "Spline Compressed", "Quantised splines, as the games' own animations"),
            ("NONE", "Uncompressed", "Every frame's transforms as they are"),
        ),
        default="SPLINE",
    )
    game: bpy.props.EnumProperty(
        name="Game",
        description="When neither the action nor the armature came from a Havok file of a game",
        items=(("FO4", "Fallout 4", "hk_2014"), ("SSE", "Skyrim SE", "hk_2010, 64-bit")),
        default="FO4",
    )

    @classmethod
    def poll(cls, context):
        obj = context.view_layer.objects.active
        return obj is not None and obj.type == "ARMATURE"

    def execute(self, context):
        armature = context.view_layer.objects.active
        try:
            animation, _game = export_animation(context, self.filepath, armature, compressed=self.compression == "SPLINE",
                                                game=self.game)
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {animation.track_count} tracks, {animation.frame_count} frames to {Path(self.filepath).name}")
        return {"FINISHED"}


class IO_FH_hkx(DropImport, bpy.types.FileHandler):
    bl_idname = "IO_FH_havok_animation"
    bl_label = "Havok Animation"
    bl_import_operator = IMPORT_SCENE_OT_hkx.bl_idname
    bl_file_extensions = EXTENSION


CLASSES = (IMPORT_SCENE_OT_hkx, EXPORT_SCENE_OT_hkx, IO_FH_hkx)
