"""File > Import > Precombined NIF: cells as linked duplicates."""

import bpy

from .. import preferences
from ..io.file_import import import_cells
from ..io.precombined import INSTANCING
from .file_import import report_import
from .nif_import import NifImport


class IMPORT_SCENE_OT_precombined(bpy.types.Operator, NifImport):
    """Import Fallout 4 precombined cells (*_OC.nif): every placed copy as a linked duplicate"""

    bl_idname = "import_scene.precombined_cell"
    bl_label = "Import Precombined NIF"
    data_folder_games = ("FO4",)  # cells are Fallout 4's; their .csg is found in its Data folder

    lod: bpy.props.EnumProperty(
        name="LOD",
        description="Which of the records' three triangulations to build",
        items=(("0", "LOD 0", "The first triangulation"), ("1", "LOD 1", ""), ("2", "LOD 2", "")),
        default="0",
    )
    instancing: bpy.props.EnumProperty(
        name="Instancing",
        description="How placed copies are built",
        items=[(name, label, description) for name, (label, description) in INSTANCING.items()],
        default="OBJECTS",
    )
    geometry_path: bpy.props.StringProperty(
        name="Geometry File",
        description="The .csg (or .psg) holding vanilla cells' geometry; empty: find it in the Fallout 4 Data "
        "folder set in the preferences",
        subtype="FILE_PATH",
    )

    plugin_path: bpy.props.StringProperty(
        name="Plugin",
        description="The cell's plugin (.esm/.esp/.esl), to name every copy after the reference placing it; empty: "
        "the plugin in the cell's Data folder whose geometry the cell uses",
        subtype="FILE_PATH",
    )
    find_plugin: bpy.props.BoolProperty(
        name="Name References",
        description="Look the cell's plugin up in its Data folder when none is given",
        default=True,
    )

    def execute(self, context):
        collections, messages = import_cells(
            context,
            self.paths(),
            folders=preferences.folders(context),
            lod=int(self.lod),
            **self.import_options(),
            geometry_path=self.geometry_path,
            instancing=self.instancing,
            plugins=[self.plugin_path] if self.plugin_path else [],
            find_plugin=self.find_plugin,
        )
        return report_import(self, collections, messages, "NIF")


CLASSES = (IMPORT_SCENE_OT_precombined,)
