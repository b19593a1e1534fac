"""Menus and panels (Blender side)."""

from . import collision_panel, markers_panel, menus, morphs_panel, precombined_panel

_modules = (menus, collision_panel, markers_panel, precombined_panel, morphs_panel)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
