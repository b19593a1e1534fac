"""Menus, panels and preferences (Blender side)."""

from . import menus, preferences

_modules = (preferences, menus)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
