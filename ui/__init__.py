"""Menus, panels and preferences (Blender side)."""

from . import collision_panel, menus, preferences

_modules = (preferences, menus, collision_panel)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
