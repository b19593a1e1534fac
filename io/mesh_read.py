"""Per-vertex arrays in file conventions from a Blender mesh (the exporters' side of
mesh_build): game units, UV v from the top, Bethesda tangent = dP/dv and bitangent = dP/du."""

import hashlib

import bmesh
import bpy
import numpy as np

from .colors import get_srgb


def _per_vertex(count, triangles, loops, corner_values):
    """Average corner values over each vertex's corners, normalised."""
    out = np.zeros((count, corner_values.shape[1]), np.float32)
    np.add.at(out, triangles, corner_values[loops])
    lengths = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, lengths, out=np.zeros_like(out), where=lengths > 0), lengths[:, 0] > 0


def color_attribute(mesh):
    """The colour attribute written as the vertex colours: the active one (what Vertex Paint
    paints and the Color Attributes list highlights), else the render one, else "Color" (the
    name the importer gives)."""
    attributes = mesh.color_attributes
    render = attributes.get(attributes.default_color_name) if attributes.default_color_name else None
    return attributes.active_color or render or attributes.get("Color")


CORNER_KEY = "nif_export_corner"  # on the triangulated copy only: the corner each corner was


def corner_tangents(mesh):
    """(tangent (corners, 3), bitangent sign (corners)) of the active UV map, per corner of the
    mesh. Blender computes them for triangles and quads only: a mesh with larger faces has them
    computed on a copy with those faces triangulated (as the file stores them), each corner
    taking its copy's values."""
    corners = len(mesh.loops)
    tangent = np.empty(3 * corners, np.float32)
    sign = np.empty(corners, np.float32)
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    if not len(sizes) or sizes.max() <= 4:
        mesh.calc_tangents()
        mesh.loops.foreach_get("tangent", tangent)
        mesh.loops.foreach_get("bitangent_sign", sign)
        mesh.free_tangents()
        return tangent.reshape(-1, 3), sign
    copy = mesh.copy()
    try:
        copy.attributes.new(CORNER_KEY, "INT", "CORNER").data.foreach_set("value", np.arange(corners, dtype=np.int32))
        bm = bmesh.new()
        bm.from_mesh(copy)
        bmesh.ops.triangulate(bm, faces=[face for face in bm.faces if len(face.verts) > 4])
        bm.to_mesh(copy)
        bm.free()
        copy.uv_layers.active = copy.uv_layers[mesh.uv_layers.active.name]
        copy.calc_tangents()
        count = len(copy.loops)
        source = np.empty(count, np.int32)
        copy.attributes[CORNER_KEY].data.foreach_get("value", source)
        copy_tangent = np.empty(3 * count, np.float32)
        copy_sign = np.empty(count, np.float32)
        copy.loops.foreach_get("tangent", copy_tangent)
        copy.loops.foreach_get("bitangent_sign", copy_sign)
    finally:
        bpy.data.meshes.remove(copy)
    tangent = tangent.reshape(-1, 3)
    tangent[source] = copy_tangent.reshape(-1, 3)
    sign[source] = copy_sign
    return tangent, sign


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
            tangent, sign = corner_tangents(mesh)
            blender_bitangent = sign[:, None] * np.cross(corner_normals.reshape(-1, 3), tangent)
            # Checked on corpus meshes: file tangent = -Blender bitangent, file bitangent = Blender tangent.
            tangents, _ = _per_vertex(count, triangles, loops, -blender_bitangent)
            bitangents, _ = _per_vertex(count, triangles, loops, tangent)

    colors = None
    attribute = color_attribute(mesh)
    if attribute is not None and attribute.domain == "POINT":
        colors = get_srgb(attribute)
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


def corner_data(mesh):
    """What the faces' corners hold: ``vertex`` (vertex index), ``uv`` (file convention, or None),
    ``normal``, ``color`` (RGBA, or None), per corner of the mesh's loops."""
    corners = len(mesh.loops)
    vertex = np.empty(corners, np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    normal = np.empty(3 * corners, np.float32)
    mesh.corner_normals.foreach_get("vector", normal)
    uv = None
    if mesh.uv_layers.active is not None:
        uv = np.empty(2 * corners, np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", uv)
        uv = uv.reshape(-1, 2)
        uv[:, 1] = 1.0 - uv[:, 1]
    color = None
    attribute = color_attribute(mesh)
    if attribute is not None and attribute.domain in ("POINT", "CORNER"):
        values = get_srgb(attribute)
        color = values[vertex] if attribute.domain == "POINT" else values
    return {"vertex": vertex, "uv": uv, "normal": normal.reshape(-1, 3), "color": color}


def export_vertices(mesh):
    """The mesh as file vertices: one per distinct (vertex, UV, normal) among the corners of its
    faces, so UV seams and hard edges become separate vertices as the games need, in vertex
    order. Returns positions, triangles (into these vertices), uvs, normals, tangents,
    bitangents, colors (None when absent), ``vertex_ids`` (the Blender vertex of each file
    vertex), ``face_ids`` (the polygon of each triangle) and ``materials`` (its slot)."""
    count = len(mesh.vertices)
    co = np.empty(3 * count, np.float32)
    mesh.vertices.foreach_get("co", co)
    mesh.calc_loop_triangles()
    loops = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("loops", loops)
    face_ids = np.empty(len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("polygon_index", face_ids)
    materials = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("material_index", materials)
    corners = corner_data(mesh)

    # Corners are the same file vertex when vertex, UV and (to 1e-4) normal agree.
    vertex = corners["vertex"][loops]
    keys = [vertex[:, None].astype(np.int64), np.round(corners["normal"][loops] * 1e4).astype(np.int64)]
    if corners["uv"] is not None:
        keys.append(corners["uv"][loops].view(np.int32).astype(np.int64))
    keys = np.concatenate(keys, axis=1)
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    vertex_ids = unique[:, 0].astype(np.int32)

    def averaged(values):
        total = np.zeros((len(unique), values.shape[1]), np.float64)
        np.add.at(total, inverse, values)
        lengths = np.linalg.norm(total, axis=1, keepdims=True)
        return np.divide(total, lengths, out=np.zeros_like(total), where=lengths > 0).astype(np.float32)

    tangents = bitangents = None
    if corners["uv"] is not None and len(loops):
        tangent, sign = corner_tangents(mesh)
        blender_bitangent = sign[:, None] * np.cross(corners["normal"], tangent)
        # Checked on corpus meshes: file tangent = -Blender bitangent, file bitangent = Blender tangent.
        tangents = averaged(-blender_bitangent[loops])
        bitangents = averaged(tangent[loops])
    return {
        "positions": co.reshape(-1, 3)[vertex_ids],
        "triangles": inverse.reshape(-1, 3).astype(np.int32),
        "uvs": None if corners["uv"] is None else corners["uv"][loops][first],
        "normals": averaged(corners["normal"][loops]),
        "tangents": tangents,
        "bitangents": bitangents,
        "colors": None if corners["color"] is None else corners["color"][loops][first],
        "vertex_ids": vertex_ids,
        "face_ids": face_ids,
        "materials": materials[face_ids] if len(materials) else np.zeros(len(face_ids), np.int32),
    }


def geometry_fingerprint(mesh):
    """A digest of what a mesh holds for export (positions, faces, corner normals, UVs, colours):
    the importer stores it, and an equal digest at export means the geometry is untouched."""
    digest = hashlib.sha1()
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    starts = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_start", starts)
    digest.update(co.tobytes())
    digest.update(starts.tobytes())
    for values in corner_data(mesh).values():
        digest.update(b"-" if values is None else np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


def face_values(mesh, name, face_ids, missing=0):
    """The INT face attribute ``name`` of each of ``face_ids`` (``missing`` without it; a face
    id of -1 gets ``missing`` too)."""
    face_ids = np.asarray(face_ids, np.intp)
    attribute = mesh.attributes.get(name)
    if attribute is None or attribute.domain != "FACE" or attribute.data_type != "INT":
        return np.full(len(face_ids), missing, np.int64)
    values = np.empty(len(mesh.polygons), np.int32)
    attribute.data.foreach_get("value", values)
    # -1 takes the value put last (a mesh of degenerate triangles only has no face to index)
    return np.concatenate((values.astype(np.int64), (missing,)))[face_ids]
