"""File > Import / Export menu entries."""

import bpy

from ..operators.bsm2 import EXPORT_SCENE_OT_bsm2, IMPORT_SCENE_OT_bsm2
from ..operators.cell_plugin import EXPORT_SCENE_OT_cell_plugin, IMPORT_SCENE_OT_cell_plugin, draw_add
from ..operators.data_import import IMPORT_SCENE_OT_nif_from_data
from ..operators.hkx import EXPORT_SCENE_OT_hkx, IMPORT_SCENE_OT_hkx
from ..operators.nif_export import EXPORT_SCENE_OT_nif
from ..operators.nif_import import IMPORT_SCENE_OT_nif
from ..operators.precombined_export import EXPORT_SCENE_OT_precombined
from ..operators.precombined_import import IMPORT_SCENE_OT_precombined
from ..operators.tri import EXPORT_SCENE_OT_tri, IMPORT_SCENE_OT_tri

BSM2_LABEL = "Banuba Skinned Mesh (.bsm2)"
HKX_LABEL = "Havok Animation (.hkx)"
TRI_LABEL = "FaceGen / BodySlide Morphs (.tri)"
IMPORTS = (
    (IMPORT_SCENE_OT_nif.bl_idname, "NIF (.nif)"),
    (IMPORT_SCENE_OT_precombined.bl_idname, "Precombined NIF (.nif)"),
    (IMPORT_SCENE_OT_bsm2.bl_idname, BSM2_LABEL),
    (IMPORT_SCENE_OT_nif_from_data.bl_idname, "NIF from Data (archives)"),
    (IMPORT_SCENE_OT_hkx.bl_idname, HKX_LABEL),
    (IMPORT_SCENE_OT_tri.bl_idname, TRI_LABEL),
    (IMPORT_SCENE_OT_cell_plugin.bl_idname, "Cell (Plugin)"),
)
EXPORTS = (
    (EXPORT_SCENE_OT_nif.bl_idname, "NIF (.nif)"),
    (EXPORT_SCENE_OT_precombined.bl_idname, "Precombined NIF (.nif)"),
    (EXPORT_SCENE_OT_bsm2.bl_idname, BSM2_LABEL),
    (EXPORT_SCENE_OT_hkx.bl_idname, HKX_LABEL),
    (EXPORT_SCENE_OT_tri.bl_idname, TRI_LABEL),
    (EXPORT_SCENE_OT_cell_plugin.bl_idname, "Cell (Plugin)"),
)


def draw_import(self, context):
    for idname, label in IMPORTS:
        self.layout.operator(idname, text=label)


def draw_export(self, context):
    for idname, label in EXPORTS:
        self.layout.operator(idname, text=label)


def register():
    bpy.types.TOPBAR_MT_file_import.append(draw_import)
    bpy.types.TOPBAR_MT_file_export.append(draw_export)
    bpy.types.VIEW3D_MT_add.append(draw_add)


def unregister():
    bpy.types.VIEW3D_MT_add.remove(draw_add)
    bpy.types.TOPBAR_MT_file_export.remove(draw_export)
    bpy.types.TOPBAR_MT_file_import.remove(draw_import)
