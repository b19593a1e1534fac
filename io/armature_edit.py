"""Editing the bones of armature data not yet in the scene, which Blender allows only in edit
mode on an object in the scene."""

from contextlib import contextmanager

import bpy


@contextmanager
def edit_bones(data):
    """The edit bones of armature ``data``, through a temporary object linked to the scene for
    the duration (an importer's collection is not in the scene yet); the user's active object
    is restored after."""
    context = bpy.context
    scene, view_layer = context.scene, context.view_layer
    active = view_layer.objects.active
    obj = bpy.data.objects.new("armature (editing)", data)
    scene.collection.objects.link(obj)
    view_layer.objects.active = obj
    try:
        with context.temp_override(active_object=obj, object=obj):
            bpy.ops.object.mode_set(mode="EDIT")
        try:
            yield data.edit_bones
        finally:
            with bpy.context.temp_override(active_object=obj, object=obj):
                bpy.ops.object.mode_set(mode="OBJECT")
    finally:
        bpy.data.objects.remove(obj)
        view_layer.objects.active = active
