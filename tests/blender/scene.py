"""What the Blender tests do to a scene as a user does it: import a NIF through the operator, export
a collection through File > Export; and where collision geometry sits in the world.
Call from tests that take the ``addon`` fixture (bpy is imported inside)."""

import numpy as np

from precombined_nif.core.nif import NifFile


def imported(path, **options):
    """Import ``path`` through the NIF importer; returns the collection it made."""
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path), **options) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def export_file(collection, path, **options):
    """Export the collection's objects (as File > Export does for the active collection); returns
    the path written."""
    import bpy

    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(path), **options) == {"FINISHED"}
    return path


def export(collection, path, **options):
    """``export_file``, the written file read back."""
    return NifFile.read(export_file(collection, path, **options))


def export_bytes(collection, path, **options):
    """``export_file``, the written file's bytes."""
    return export_file(collection, path, **options).read_bytes()


def world_points(obj):
    """World positions of a collision object's geometry and its children's: mesh vertices, a
    sphere as the corners of its bounding box."""
    matrix = np.array(obj.matrix_world)
    if obj.type == "MESH":
        co = np.empty(3 * len(obj.data.vertices), np.float32)
        obj.data.vertices.foreach_get("co", co)
        local = co.reshape(-1, 3).astype(np.float64)
    elif obj.get("havok_shape") == "sphere":  # its bounds: the centre +- the radius on the world axes
        radius = obj.empty_display_size * np.linalg.norm(matrix[:3, :3], axis=0).max()
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float64) * radius
        local, matrix = corners, np.array([[1, 0, 0, matrix[0, 3]], [0, 1, 0, matrix[1, 3]], [0, 0, 1, matrix[2, 3]], [0, 0, 0, 1]])
    else:
        local = np.zeros((0, 3))
    points = [local @ matrix[:3, :3].T + matrix[:3, 3]]
    points += [world_points(child) for child in obj.children if "havok_shape" in child]
    return np.concatenate(points)


def bounds(points):
    return points.min(axis=0), points.max(axis=0)
