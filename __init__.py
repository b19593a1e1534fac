"""Precombined NIF: Blender extension for Bethesda packed game geometry.

Importing this package (and its ``core`` codec) never imports bpy, so the codec, the
command line and the tests run on plain Python; Blender-side modules load in register().
"""


def register():
    from . import operators, preferences, ui

    preferences.register()
    operators.register()
    ui.register()


def unregister():
    from . import operators, preferences, ui

    ui.unregister()
    operators.unregister()
    preferences.unregister()
