"""A Starfield LOD slot's objects (io/starfield/lod_objects) encoded as one .mesh: the slot
object's faces as the mesh's triangles, each mesh LOD object's as a further triangle list over
the same vertex buffer, meshlets and culling data rebuilt.

Vertices are the file vertices Blender's corners make (io.mesh_read.export_vertices: one per
distinct vertex, UV and normal). A mesh LOD object still as imported (its ``sf_lod_source``)
uses the slot's vertices its own were imported from (``sf_vertex``), wherever the slot's moved:
matched by value, a vertex moved in the slot and the neighbours whose normals turned with it
would be written twice, once at the LOD's old values. Another mesh LOD object's vertex shares
the slot's vertex that stores the same position, UVs, colour and weights with a normal within
``SAME_NORMAL``, as those made by the import from one .mesh vertex do; the others are added to
the buffer. Tangents run along +u
of the file's UVs (Blender's tangent), and the bitangent sign says whether +v of the file's UVs
(Blender's -v) is normal x tangent: the v flip reverses every sign Blender computes."""

import numpy as np

from ...core.errors import FormatError
from ...core.starfield.mesh import MeshData, TRIANGLE
from ...core.starfield.meshlets import rebuild_meshlets
from ..mesh_read import export_vertices
from .lod_objects import group_weights, lod_fingerprint, mesh_lod_objects, source_vertices
from .. import schema

MAX_VERTICES = 65536  # triangles name their vertices with u16
SAME_NORMAL = 0.99  # cosine above which two stored normals are the same one


def _unit(vectors):
    lengths = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, lengths, out=np.zeros_like(vectors), where=lengths > 0)


def _part(obj, matrix, names):
    """The file vertices and triangles of one mesh object, in the slot's space (``matrix``: the
    object's placement there; under the import's root every object is in file units), weights
    over the bone ``names``."""
    mesh = obj.data
    arrays = export_vertices(mesh)
    matrix = np.asarray(matrix, np.float64)
    linear = matrix[:3, :3]
    part = {
        "positions": arrays["positions"].astype(np.float64) @ linear.T + matrix[:3, 3],
        "triangles": arrays["triangles"],
        "normals": _unit(arrays["normals"] @ linear.T),
        "uvs": arrays["uvs"],
        "colors": arrays["colors"],
        "tangents": None,
        "signs": None,
        "uvs2": None,
    }
    if arrays["tangents"] is not None:
        along_u = _unit(arrays["bitangents"] @ linear.T)  # export_vertices' bitangent: dP/du
        along_v = arrays["tangents"] @ linear.T  # its tangent: dP/dv of the file's v
        part["tangents"] = along_u
        part["signs"] = np.where((np.cross(part["normals"], along_u) * along_v).sum(axis=1) < 0, -1, 1)
    second = next((layer for index, layer in enumerate(mesh.uv_layers) if index != mesh.uv_layers.active_index), None)
    if second is not None and len(part["triangles"]):
        corners = np.empty(2 * len(mesh.loops), np.float32)
        second.data.foreach_get("uv", corners)
        loops = np.empty(3 * len(mesh.loop_triangles), np.int32)
        mesh.loop_triangles.foreach_get("loops", loops)
        uvs2 = np.zeros((len(part["positions"]), 2), np.float32)
        uvs2[part["triangles"].ravel()] = corners.reshape(-1, 2)[loops]
        uvs2[:, 1] = 1.0 - uvs2[:, 1]
        part["uvs2"] = uvs2
    group_names, dense = group_weights(obj)
    weights = np.zeros((len(mesh.vertices), len(names)), np.float32)
    for column, name in enumerate(group_names):
        if name in names:
            weights[:, names.index(name)] += dense[:, column]
    part["weights"] = weights[arrays["vertex_ids"]]
    sources = source_vertices(mesh)
    part["sources"] = None if sources is None else sources[arrays["vertex_ids"]]
    return part


def _joined(parts, key, width, fill, dtype=np.float32):
    """One array of every part's ``key`` values (``fill`` for a part without them), or None
    when no part has any."""
    if all(part[key] is None for part in parts):
        return None
    return np.concatenate([
        np.full((len(part["positions"]), width), fill, dtype) if part[key] is None else np.asarray(part[key], dtype).reshape(-1, width)
        for part in parts
    ])


def _sorted_weights(weights):
    """(bones, weights) of each row's non-zero weights, heaviest first, as many columns as the
    row with most of them (unused: bone 0, weight 0)."""
    count = int((weights > 0).sum(axis=1).max(initial=0))
    if count == 0:
        return None, None
    order = np.argsort(-weights, axis=1, kind="stable")[:, :count]
    values = np.take_along_axis(weights, order, axis=1)
    return np.where(values > 0, order, 0), np.where(values > 0, values, 0)


def encode_slot(slot, names, reorder):
    """The MeshData of a slot's object and its mesh LOD objects (``names``: the skin's bones, in
    its order; ``reorder``: a new mesh's triangles ordered for meshlets)."""
    lods = mesh_lod_objects(slot)
    inverse = np.linalg.inv(np.array(slot.matrix_world))
    parts = [_part(obj, (inverse @ np.array(obj.matrix_world)) if obj is not slot else np.eye(4), names)
             for obj in [slot, *lods]]
    counts = [len(part["positions"]) for part in parts]
    mesh = MeshData()
    mesh.set_vertices(np.concatenate([part["positions"] for part in parts]))
    uvs = _joined(parts, "uvs", 2, 0.0)
    mesh.uvs = np.zeros((0, 2), np.float16) if uvs is None else uvs.astype(np.float16)
    uvs2 = _joined(parts, "uvs2", 2, 0.0)
    mesh.uvs2 = np.zeros((0, 2), np.float16) if uvs2 is None else uvs2.astype(np.float16)
    normals = np.concatenate([part["normals"] for part in parts])
    tangents = _joined(parts, "tangents", 3, 0.0)
    signs = _joined(parts, "signs", 1, 1, np.int8)
    mesh.set_normals(normals, tangents, None if signs is None else signs[:, 0])
    colors = _joined(parts, "colors", 4, 1.0)
    if colors is not None:
        mesh.set_rgba(colors)
    bones, weights = _sorted_weights(np.concatenate([part["weights"] for part in parts]))
    if bones is not None:
        mesh.set_bone_weights(bones, weights)
    following = [None if part["sources"] is None or obj.get(schema.SF_LOD_SOURCE) != lod_fingerprint(obj) else part["sources"]
                 for obj, part in zip(lods, parts[1:])]
    sources = _slot_rows(parts[0]["sources"], following)
    kept, lists = _shared_vertices(mesh, normals, counts, [part["triangles"] for part in parts], sources)
    if len(kept) > MAX_VERTICES:
        raise FormatError(f"{slot.name}: {len(kept)} vertices, more than the {MAX_VERTICES} a Starfield mesh holds")
    _keep_rows(mesh, kept)
    mesh.triangles = np.ascontiguousarray(lists[0], TRIANGLE.base).reshape(-1, 3)
    mesh.lods = [np.ascontiguousarray(triangles, TRIANGLE.base).reshape(-1, 3) for triangles in lists[1:]]
    return rebuild_meshlets(mesh, reorder=reorder)


def _slot_rows(slot_sources, following):
    """The slot's row each mesh LOD row stands for by the .mesh vertex both came from (-1: none;
    a source only one slot row holds, of a LOD still as imported), for the LOD rows in order."""
    if slot_sources is None:
        return None
    values, rows, counts = np.unique(slot_sources, return_index=True, return_counts=True)
    values, rows = values[counts == 1], rows[counts == 1]
    out = []
    for sources in following:
        if sources is None or not len(values):
            out.append(None)
            continue
        at = np.minimum(np.searchsorted(values, sources), len(values) - 1)
        out.append(np.where(values[at] == sources, rows[at], -1))
    return out


def _shared_vertices(mesh, normals, counts, triangle_lists, sources=None):
    """(rows of ``mesh`` kept, each part's triangles renumbered to them): the slot's rows, then
    the mesh LODs' rows no slot row stands for. ``sources``: per mesh LOD, the slot row each of
    its rows is (-1: matched by value), or None."""
    first = counts[0]
    columns = [np.ascontiguousarray(values).view(np.uint8).reshape(len(mesh.positions), -1)
               for values in (mesh.positions, mesh.uvs, mesh.uvs2, mesh.colors) if len(values)]
    if mesh.weights_per_vertex:
        columns.append(np.ascontiguousarray(mesh.weights).view(np.uint8).reshape(len(mesh.positions), -1))
    rows = np.concatenate(columns, axis=1) if columns else np.zeros((len(mesh.positions), 0), np.uint8)
    _, ids = np.unique(rows, axis=0, return_inverse=True)
    ids = ids.ravel()
    standing = np.full(ids.max(initial=-1) + 1, -1, np.int64)
    standing[ids[:first][::-1]] = np.arange(first)[::-1]  # the first slot row of each kind
    candidate = standing[ids[first:]]
    same = candidate >= 0
    same[same] = (normals[candidate[same]] * normals[first:][same]).sum(axis=1) >= SAME_NORMAL
    if sources is not None:
        known = np.concatenate([np.full(count, -1, np.int64) if slot_rows is None else slot_rows
                                for slot_rows, count in zip(sources, counts[1:])] or [np.zeros(0, np.int64)])
        candidate = np.where(known >= 0, known, candidate)
        same |= known >= 0
    added = np.flatnonzero(~same) + first
    number = np.arange(len(ids))
    number[first:][same] = candidate[same]
    number[added] = first + np.arange(len(added))
    kept = np.concatenate([np.arange(first), added])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    lists = [number[np.asarray(triangles, np.int64) + start] for triangles, start in zip(triangle_lists, starts)]
    return kept, lists


def _keep_rows(mesh, kept):
    per = mesh.weights_per_vertex
    for name in ("positions", "uvs", "uvs2", "colors", "normals", "tangents"):
        values = getattr(mesh, name)
        if len(values):
            setattr(mesh, name, np.ascontiguousarray(values[kept]))
    if per:
        mesh.weights = np.ascontiguousarray(mesh.weights.reshape(-1, per)[kept].reshape(-1))
