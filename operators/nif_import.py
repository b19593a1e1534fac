"""File > Import > NIF, its drag-and-drop handler, and what the NIF importers share (their options)."""

import bpy

from .. import preferences
from ..io.file_import import import_cells
from .file_import import DropImport, MultiFileImport, report_import


class NifImport(MultiFileImport):
    """What every NIF importer offers: .nif files and a scale."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    filename_ext = ".nif"
    filter_glob: bpy.props.StringProperty(default="*.nif", options={"HIDDEN"})
    scale: bpy.props.FloatProperty(
        name="Scale", description="Blender units per game unit", default=1.0, min=1e-6, soft_max=1.0
    )
    use_collision: bpy.props.BoolProperty(
        name="Collision", description="Build Havok collision bodies under the objects owning them", default=True
    )
    use_skin: bpy.props.BoolProperty(
        name="Skin", description="Skeleton bones as an armature, skin weights as vertex groups", default=True
    )

    def import_options(self):
        return {"scale": self.scale, "collision": self.use_collision, "skin": self.use_skin}

    # The games whose Data folders (from the preferences) the import looks in, shown in its options.
    data_folder_games = ("FO4", "FO3", "SSE", "SKYRIM", "FO76", "SF")

    def draw(self, context):
        """The options as Blender draws them by default, then the Data folders."""
        layout = self.layout
        layout.use_property_split = True
        for prop in self.properties.bl_rna.properties:
            if prop.identifier != "rna_type" and not prop.is_hidden:
                layout.prop(self, prop.identifier)
        preferences.draw_import_folders(layout, context, self.data_folder_games)


class IMPORT_SCENE_OT_nif(bpy.types.Operator, NifImport):
    """Import Bethesda NIF files (Fallout 3, New Vegas, Fallout 4, Fallout 76, Skyrim, Starfield)"""

    bl_idname = "import_scene.precombined_nif"
    bl_label = "Import NIF"
    # .kf: standalone animations, their sequences going to the scene's objects named like their nodes
    filter_glob: bpy.props.StringProperty(default="*.nif;*.kf", options={"HIDDEN"})
    # the NIF importer's alone: the precombined importer's dialog is for cells, which have no .tri
    use_morphs: bpy.props.BoolProperty(
        name="Morphs (.tri)",
        description="Shape keys from the .tri files the games read with the NIF: FaceGen expressions and character "
        "creation morphs named after it, the BodySlide file its BODYTRI names",
        default=True,
    )
    starfield_skeleton: bpy.props.StringProperty(
        name="Starfield Skeleton", subtype="FILE_PATH",
        description="Starfield: the skeleton NIF whose nodes pose the skins' bones (empty: the human skeleton, "
        "when the Data folders hold it; else the bind pose)",
    )
    starfield_morphs: bpy.props.StringProperty(
        name="Starfield Morphs", subtype="FILE_PATH",
        description="Starfield: a morph.dat whose morphs become shape keys of the shape with as many vertices",
    )

    def import_options(self):
        return {**super().import_options(),
                "skeleton": bpy.path.abspath(self.starfield_skeleton) or None,
                "starfield_morphs": bpy.path.abspath(self.starfield_morphs) or None}

    def execute(self, context):
        # Precombined cells dropped or picked here import with the cell importer's defaults.
        collections, messages = import_cells(context, self.paths(), folders=preferences.folders(context),
                                             morphs=self.use_morphs, **self.import_options())
        return report_import(self, collections, messages, "NIF")


class IO_FH_nif(DropImport, bpy.types.FileHandler):
    bl_idname = "IO_FH_precombined_nif"
    bl_label = "Bethesda NIF"
    bl_import_operator = IMPORT_SCENE_OT_nif.bl_idname
    bl_file_extensions = ".nif;.kf"


CLASSES = (IMPORT_SCENE_OT_nif, IO_FH_nif)
