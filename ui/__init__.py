"""Menus, panels and preferences (Blender side)."""

from . import collision_panel, markers_panel, menus, precombined_panel, preferences

_modules = (preferences, menus, collision_panel, markers_panel, precombined_panel)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
