"""File > Import / Export menu entries."""

import bpy

from ..operators.nif_import import IMPORT_SCENE_OT_nif

IMPORTS = ((IMPORT_SCENE_OT_nif.bl_idname, "NIF (.nif)"),)


def draw_import(self, context):
    for idname, label in IMPORTS:
        self.layout.operator(idname, text=label)


def register():
    bpy.types.TOPBAR_MT_file_import.append(draw_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(draw_import)
