"""Blender meshes from decoded numpy arrays, all through foreach_set (no per-vertex Python)."""

import bpy
import numpy as np

from ..core.errors import FormatError
from .colors import set_srgb


def proper_triangles(triangles):
    """Which triangles name three different vertices (the others cannot be Blender faces)."""
    triangles = np.asarray(triangles).reshape(-1, 3)
    return (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])


def drop_degenerate(triangles):
    """The triangles build_mesh makes faces of, in order."""
    return np.asarray(triangles).reshape(-1, 3)[proper_triangles(triangles)]


def face_attribute(mesh, name, values):
    """A new INT face attribute holding ``values`` (one per face)."""
    attribute = mesh.attributes.new(name, "INT", "FACE")
    attribute.data.foreach_set("value", np.asarray(values, np.int32))


def vertex_attribute(mesh, name, values):
    """A new INT point attribute holding ``values`` (one per vertex)."""
    attribute = mesh.attributes.new(name, "INT", "POINT")
    attribute.data.foreach_set("value", np.asarray(values, np.int32))


def build_mesh(name, positions, triangles, *, uvs=None, normals=None, colors=None, scale=1.0):
    """A new mesh: one vertex per file vertex, one face per triangle. ``uvs`` in file convention
    (v measured from the top: flipped here), ``normals`` become custom normals, ``colors``
    RGBA 0..1 as stored (sRGB): bytes, or floats kept as floats when off the 1/255 grid."""
    positions = np.asarray(positions, np.float32).reshape(-1, 3)
    triangles = drop_degenerate(triangles).astype(np.int64)
    if len(triangles) and (triangles.min() < 0 or triangles.max() >= len(positions)):
        raise FormatError(f"{name}: a face uses vertex {int(triangles.max())} of only {len(positions)}")
    mesh = bpy.data.meshes.new(name)
    try:
        _fill(mesh, positions, triangles.astype(np.int32), uvs, normals, colors, scale)
    except Exception:
        bpy.data.meshes.remove(mesh)  # nothing half-built stays behind
        raise
    return mesh


def _fill(mesh, positions, triangles, uvs, normals, colors, scale):
    # The position and corner attributes take the arrays 4x faster than vertices' "co" and
    # loops' "vertex_index" (Blender 4.2 to 5.0 all have them).
    # (An empty mesh has neither attribute.)
    mesh.vertices.add(len(positions))
    if len(positions):
        mesh.attributes["position"].data.foreach_set("vector", (positions * np.float32(scale)).ravel())
    corners = triangles.ravel()
    mesh.loops.add(len(corners))
    if len(corners):
        mesh.attributes[".corner_vert"].data.foreach_set("value", corners)
    mesh.polygons.add(len(triangles))
    mesh.polygons.foreach_set("loop_start", np.arange(0, len(corners), 3, dtype=np.int32))
    mesh.update(calc_edges=True)
    if uvs is not None:
        uv = np.asarray(uvs, np.float32).reshape(-1, 2)[corners]
        uv[:, 1] = 1.0 - uv[:, 1]
        mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", uv.ravel())
    if colors is not None:
        colors = np.asarray(colors, np.float32)
        # Float colours (NiTriShapeData's) off the 1/255 grid would be rounded by a byte attribute.
        on_grid = np.all(np.abs(colors * 255 - np.round(colors * 255)) < 1e-3)
        attribute = mesh.color_attributes.new("Color", "BYTE_COLOR" if on_grid else "FLOAT_COLOR", "POINT")
        set_srgb(attribute, colors)
    if normals is not None and len(triangles):
        normals = np.asarray(normals, np.float64).reshape(-1, 3)
        normals[~np.isfinite(normals).all(axis=1)] = 0.0
        # Blender 4.2 keeps custom normals as given; quantised file normals are not unit length.
        # Scaled by the largest component first, so even damaged huge values cannot overflow.
        largest = np.abs(normals).max(axis=1, keepdims=True)
        normals = np.divide(normals, largest, out=np.zeros_like(normals), where=largest > 0)
        lengths = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0).astype(np.float32)
        mesh.shade_smooth()
        mesh.normals_split_custom_set_from_vertices(normals)
