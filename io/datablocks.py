"""What a failed import made, removed again: whatever kinds of datablock it created, so the
.blend is left as it was."""

import bpy


def remove_all(datablocks):
    """Remove ``datablocks`` (objects, meshes, armatures, actions, materials, images, node
    groups, collections...) from bpy.data in one step; those already removed are skipped."""
    alive = []
    for datablock in datablocks:
        try:
            datablock.name  # a removed ID's Python object raises here
        except ReferenceError:
            continue
        alive.append(datablock)
    bpy.data.batch_remove(alive)
