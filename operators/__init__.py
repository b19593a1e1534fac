"""Operators and file handlers (Blender side). Each module lists its classes in CLASSES."""

import bpy

from . import (
    bsm2,
    cell_plugin,
    collision,
    data_import,
    hkx,
    markers,
    nif_export,
    nif_import,
    precombined_build,
    precombined_export,
    precombined_import,
    precombined_mark,
    tri,
)

_modules = (nif_import, nif_export, precombined_import, precombined_export, precombined_mark, precombined_build, bsm2,
            data_import, hkx, collision, markers, tri, cell_plugin)


def register():
    for module in _modules:
        for cls in module.CLASSES:
            bpy.utils.register_class(cls)


def unregister():
    for module in reversed(_modules):
        for cls in reversed(module.CLASSES):
            bpy.utils.unregister_class(cls)
