"""File > Export > NIF: Fallout 4, Fallout 76, Fallout 3 / New Vegas, Skyrim, Skyrim SE or
Starfield files from Blender objects."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ExportHelper

from ..core.errors import FormatError, failure_text


class NifExport(ExportHelper):
    """What every NIF exporter offers: a .nif file and a scale, by default the one the objects
    were imported at (so an import at 0.01 exports in the game's units: ``import_scale``)."""

    bl_options = {"REGISTER", "PRESET"}
    filename_ext = ".nif"
    filter_glob: bpy.props.StringProperty(default="*.nif", options={"HIDDEN"})
    scale: bpy.props.FloatProperty(
        name="Scale",
        description="Blender units per game unit (unset: the scale the objects were imported at)",
        default=1.0,
        min=1e-6,
        options={"SKIP_SAVE"},  # not the last export's: each import's own
    )

    def export_scale(self):
        """The scale given, or None: the import's."""
        return self.scale if self.properties.is_property_set("scale") else None

    def invoke(self, context, event):
        if not self.properties.is_property_set("scale"):  # the dialog shows what an unset scale does
            self.scale = self.import_scale(context)
        return super().invoke(context, event)


class EXPORT_SCENE_OT_nif(bpy.types.Operator, NifExport):
    """Export objects as a Bethesda NIF (Fallout 4, Fallout 76, Fallout 3 / New Vegas, Skyrim, Skyrim SE,
    Starfield). Objects imported from a NIF write back into that file's blocks, keeping what Blender does not show"""

    bl_idname = "export_scene.precombined_nif"
    bl_label = "Export NIF"
    game: bpy.props.EnumProperty(
        name="Game",
        items=(
            ("AUTO", "As Imported", "The game of the imported file the objects came from (Fallout 4 for new scenes)"),
            ("FO4", "Fallout 4", "BSTriShape geometry, BSSkin skinning"),
            ("FO3", "Fallout 3 / New Vegas", "NiTriShape geometry, NiSkinInstance skinning"),
            ("SSE", "Skyrim Special Edition", "BSTriShape geometry, NiSkinInstance skinning with the vertices in the partition"),
            ("SKYRIM", "Skyrim", "Skyrim (Legendary Edition): NiTriShape geometry, NiSkinInstance skinning"),
            ("FO76", "Fallout 76", "BSTriShape geometry, BSSkin skinning, shaders named after their material file"),
            ("SF", "Starfield", "BSGeometry shapes naming .mesh files (written under the NIF's Data folder), BSSkin "
             "skinning naming its bones"),
        ),
        default="AUTO",
    )
    use_selection: bpy.props.BoolProperty(
        name="Selected Only", description="Only selected objects (else the active collection)", default=False
    )
    full_precision: bpy.props.BoolProperty(
        name="Full Precision", description="Fallout 4 and 76: 32-bit vertex positions instead of half floats", default=False
    )

    write_morphs: bpy.props.BoolProperty(
        name="Write Morphs (.tri)",
        description="Shape keys to the .tri files beside the NIF: each to the kind it came from (FaceGen expressions "
        "or character creation, BodySlide), new ones where the mesh's TRI Morphs panel says",
        default=True,
    )
    write_materials: bpy.props.BoolProperty(
        name="Write Material Files",
        description="Write the material files (Fallout 4: BGSM/BGEM; Starfield: .mat, their textures) of materials "
        "edited since their material file gave them their look (into the Data folder the NIF goes to, else beside it); "
        "the NIF keeps naming them either way",
        default=False,
    )

    def draw(self, context):
        """The options as Blender draws them by default, then which .tri files the morphs go to
        and whether a BODYTRI is added to the NIF."""
        from ..io.tri.exporter import morph_links

        layout = self.layout
        layout.use_property_split = True
        for prop in self.properties.bl_rna.properties:
            if prop.identifier != "rna_type" and not prop.is_hidden:
                layout.prop(self, prop.identifier)
        if self.write_morphs:
            for line in morph_links(self.objects(context), Path(self.filepath).stem or "<name>"):
                layout.label(text=line)

    def objects(self, context):
        from ..io.nif.exporter import exported_objects

        return exported_objects(context, self.use_selection)

    def import_scale(self, context):
        from ..io.nif.source import import_scale

        return import_scale(self.objects(context))

    def execute(self, context):
        from ..io.nif.exporter import export_nif
        from ..io.nif.material_export import write_material_files

        objects = self.objects(context)
        morph_files = []
        try:
            nif, messages = export_nif(
                self.filepath,
                objects,
                game=None if self.game == "AUTO" else self.game,
                scale=self.export_scale(),
                full_precision=self.full_precision,
                morphs=self.write_morphs,
                written=morph_files,
            )
            if self.write_materials:
                for path in write_material_files(self.filepath, objects):
                    self.report({"INFO"}, f"Material file written: {path}")
        except (FormatError, OSError) as error:
            self.report({"ERROR"}, failure_text(self.filepath, error))
            return {"CANCELLED"}
        for message in messages:
            self.report({"WARNING"}, message)
        for path in morph_files:
            self.report({"INFO"}, f"Morphs written: {path}")
        self.report({"INFO"}, f"Exported {len(nif.blocks)} blocks to {self.filepath}")
        return {"FINISHED"}


CLASSES = (EXPORT_SCENE_OT_nif,)
