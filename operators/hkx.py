"""File > Import / Export > Havok Animation (.hkx), its drag-and-drop handler, and the steps
shared with cli.py."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..core.errors import FormatError
from .nif_import import MultiFileImport, import_files, report_import

EXTENSION = ".hkx"


def import_animations(context, paths, *, skeleton=None, root_motion=False, scene_frame_rate=True):
    """Every file (skeletons as armatures, animations as actions on the active armature, or on
    ``skeleton`` (.hkx/.nif) built first); returns import_files' (armatures, messages)."""
    from ..io.havok.animation import importer  # loaded when used, not at start-up

    if context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    built = None
    if skeleton:
        try:
            built = importer.import_skeleton(context, skeleton)
        except (FormatError, OSError) as error:
            message = str(error.located(path=skeleton)) if isinstance(error, FormatError) else f"{skeleton}: {error.strerror or error}"
            return [], [message]

    def import_one(context, path, progress):
        return importer.import_hkx(context, path, progress, root_motion=root_motion, scene_frame_rate=scene_frame_rate)

    # skeletons (as the games name them) first: files dropped together animate the one dropped with them
    paths = sorted(paths, key=lambda path: not Path(path).name.lower().startswith("skeleton"))
    imported, messages = import_files(context, paths, import_one)
    if built is not None and not imported:  # the skeleton was only wanted for the animations
        importer.remove_skeleton(built)
    return imported, messages


def export_animation(context, path, armature, action_name=None, *, compressed=True, game=None):
    """The armature's action (its active one, or the one named) as a .hkx; returns (core
    Animation, game) written. Raises FormatError or OSError; a failed write leaves no file."""
    from ..core.files import write_replacing
    from ..core.havok.animation import build_hkx
    from ..io.havok.animation import action_export

    action, slot = action_export.armature_action(armature, action_name)
    animation, game = action_export.animation_of(armature, action, slot, context.scene, game)
    write_replacing(path, build_hkx(animation, game, "spline" if compressed else "interleaved").to_bytes())
    return animation, game


class IMPORT_SCENE_OT_hkx(bpy.types.Operator, MultiFileImport):
    """Import Havok skeletons (as armatures) and animations (as actions on the active armature)
    of Fallout 4 and Skyrim SE"""

    bl_idname = "import_scene.havok_animation"
    bl_label = "Import Havok Animation"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = EXTENSION
    filter_glob: bpy.props.StringProperty(default=f"*{EXTENSION}", options={"HIDDEN"})
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

    def invoke(self, context, event):
        if self.directory and self.files:  # dropped files: there is nothing to choose
            return self.execute(context)
        return super().invoke(context, event)

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
        except FormatError as error:
            self.report({"ERROR"}, str(error.located(path=self.filepath)))
            return {"CANCELLED"}
        except OSError as error:
            self.report({"ERROR"}, f"{self.filepath}: {error.strerror or error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {animation.track_count} tracks, {animation.frame_count} frames to {Path(self.filepath).name}")
        return {"FINISHED"}


class IO_FH_hkx(bpy.types.FileHandler):
    bl_idname = "IO_FH_havok_animation"
    bl_label = "Havok Animation"
    bl_import_operator = IMPORT_SCENE_OT_hkx.bl_idname
    bl_file_extensions = EXTENSION

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"


CLASSES = (IMPORT_SCENE_OT_hkx, EXPORT_SCENE_OT_hkx, IO_FH_hkx)
