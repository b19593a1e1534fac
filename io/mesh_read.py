"""Per-vertex arrays in file conventions from a Blender mesh (the exporters' side of
mesh_build): game units, UV v from the top, Bethesda tangent = dP/dv and bitangent = dP/du."""

import numpy as np


def _per_vertex(count, triangles, loops, corner_values):
    """Average corner values over each vertex's corners, normalised."""
    out = np.zeros((count, corner_values.shape[1]), np.float32)
    np.add.at(out, triangles, corner_values[loops])
    lengths = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, lengths, out=np.zeros_like(out), where=lengths > 0), lengths[:, 0] > 0


def mesh_arrays(mesh, scale):
    """positions, triangles (from the mesh's triangulation), uvs, normals, tangents, bitangents,
    colors (or None) and ``used`` (vertices some face uses)."""
    count = len(mesh.vertices)
    positions = np.empty(3 * count, np.float32)
    mesh.vertices.foreach_get("co", positions)
    positions = positions.reshape(-1, 3) / np.float32(scale)
    mesh.calc_loop_triangles()
    triangles = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    loops = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("loops", loops)
    corners = len(mesh.loops)

    corner_normals = np.empty(3 * corners, np.float32)
    mesh.corner_normals.foreach_get("vector", corner_normals)
    normals, used = _per_vertex(count, triangles, loops, corner_normals.reshape(-1, 3))
    if not used.all():  # vertices no face uses (e.g. when another LOD was imported)
        vertex_normals = np.empty(3 * count, np.float32)
        mesh.vertex_normals.foreach_get("vector", vertex_normals)
        normals[~used] = vertex_normals.reshape(-1, 3)[~used]

    uvs = tangents = bitangents = None
    if mesh.uv_layers.active is not None:
        corner_uvs = np.empty(2 * corners, np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", corner_uvs)
        uvs = np.zeros((count, 2), np.float32)
        uvs[triangles] = corner_uvs.reshape(-1, 2)[loops]
        uvs[:, 1] = 1.0 - uvs[:, 1]
        if len(triangles):
            mesh.calc_tangents()
            tangent = np.empty(3 * corners, np.float32)
            mesh.loops.foreach_get("tangent", tangent)
            sign = np.empty(corners, np.float32)
            mesh.loops.foreach_get("bitangent_sign", sign)
            tangent = tangent.reshape(-1, 3)
            blender_bitangent = sign[:, None] * np.cross(corner_normals.reshape(-1, 3), tangent)
            # Checked on corpus meshes: file tangent = -Blender bitangent, file bitangent = Blender tangent.
            tangents, _ = _per_vertex(count, triangles, loops, -blender_bitangent)
            bitangents, _ = _per_vertex(count, triangles, loops, tangent)
            mesh.free_tangents()

    colors = None
    attribute = mesh.color_attributes.get("Color")
    if attribute is not None and attribute.domain == "POINT":
        colors = np.empty(4 * count, np.float32)
        attribute.data.foreach_get("color_srgb", colors)
        colors = colors.reshape(-1, 4)
    return {
        "positions": positions,
        "triangles": triangles.reshape(-1, 3),
        "uvs": uvs,
        "normals": normals,
        "tangents": tangents,
        "bitangents": bitangents,
        "colors": colors,
        "used": used,
    }
