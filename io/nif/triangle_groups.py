"""Grouped triangles (core.nif.triangle_groups) as an INT face attribute: ``nif_lod_level``
(0 to 2) on a BSLODTriShape's faces, ``nif_segment`` on a BSSegmentedTriShape's. Export orders
the shape's triangles by their faces' numbers and writes its table (a table that already says
what the faces say is kept as stored). Knows bpy meshes and core blocks, never file bytes."""

import numpy as np

from ...core.nif.blocks.geometry import BSLODTriShape, NiTriShapeData
from ...core.nif.triangle_groups import GROUPED, NO_GROUP, group_order, table_holds, triangle_groups
from ..mesh_build import face_attribute, proper_triangles
from ..mesh_read import face_values
from .. import schema


def attribute_name(shape):
    return schema.NIF_LOD_LEVEL if isinstance(shape, BSLODTriShape) else schema.NIF_SEGMENT


def _data(nif, shape):
    data = nif.block_at(shape.data, NiTriShapeData) if isinstance(shape, GROUPED) else None
    return data if data is not None and data.triangles is not None else None


def show_groups(nif, shape, mesh):
    """The group of each face of ``mesh`` (built from the shape's triangles, degenerate ones
    dropped) as its attribute."""
    data = _data(nif, shape)
    if data is None:
        return
    groups = triangle_groups(shape, len(data.triangles))
    face_attribute(mesh, attribute_name(shape), groups[proper_triangles(data.triangles)])


def write_groups(exporter, index, mesh, face_ids, layout_index=None):
    """Shape ``index``'s triangles ordered by their faces' groups and its table written.
    ``face_ids``: the face of each of its triangles (-1: none, the triangle keeps its stored
    group); ``layout_index``: the block whose group count and segment flags are kept (the
    object's own, for a shape split off it; default the shape)."""
    nif = exporter.nif
    shape = nif.blocks[index]
    data = _data(nif, shape)
    if data is None:
        return
    stored = triangle_groups(shape, len(data.triangles))
    faceless = np.asarray(face_ids) < 0
    groups = np.where(faceless, stored, face_values(mesh, attribute_name(shape), face_ids, NO_GROUP))
    if layout_index in (None, index) and table_holds(shape, groups, faceless):
        return
    order = group_order(shape, groups, nif.blocks[index if layout_index is None else layout_index])
    data.triangles = np.ascontiguousarray(np.asarray(data.triangles)[order])
