"""How a Starfield shape's LODs stand in Blender, for the import and the export alike.

A BSGeometry block is one mesh object holding its LOD 0 (the block's object, placed by the
block's transform). Its other used slots (1 to 3) are mesh objects under it carrying
``sf_lod_slot``; the triangle lists a .mesh holds beyond its own (``MeshData.lods``, sharing its
vertices) are mesh objects under their slot's object carrying ``sf_mesh_lod`` (1, 2...), each
holding the vertices its triangles use. All but LOD 0 import hidden. A slot's object keeps a
fingerprint of what the import made of it (``sf_source``): while it holds, the export keeps the
slot's .mesh as stored. The slot's and mesh LODs' meshes name the .mesh vertex each vertex came
from (``sf_vertex``), and each mesh LOD object keeps its own fingerprint (``sf_lod_source``):
while that holds, the LOD uses the slot's vertices (moved, they move for it too), so an edit
that keeps the topology keeps the vertex count and order the morphs and skins index."""

import hashlib

import numpy as np

from ..mesh_read import geometry_fingerprint
from .. import schema

SLOTS = 4


def is_lod(obj):
    """Whether ``obj`` is a LOD under a shape's object (written with its shape, not on its own)."""
    return schema.SF_LOD_SLOT in obj or schema.SF_MESH_LOD in obj


def slot_objects(obj):
    """{slot number: mesh object} of a shape's object: itself for slot 0, its children for the
    others (the first child claiming a slot wins; slots outside 1 to 3 are ignored)."""
    slots = {0: obj} if obj.type == "MESH" else {}
    for child in sorted(obj.children, key=lambda o: o.name):
        number = child.get(schema.SF_LOD_SLOT)
        if child.type == "MESH" and isinstance(number, int) and 0 < number < SLOTS:
            slots.setdefault(number, child)
    return slots


def mesh_lod_objects(slot):
    """The mesh LOD objects under a slot's object, in their numbers' order."""
    found = [c for c in slot.children if c.type == "MESH" and isinstance(c.get(schema.SF_MESH_LOD), int)]
    return sorted(found, key=lambda o: (o[schema.SF_MESH_LOD], o.name))


def group_weights(obj):
    """(group names, dense (vertices, groups) float32 weights) of a mesh object's vertex groups.
    Blender has no bulk read of vertex-group weights, so this walks the vertices once."""
    names = [group.name for group in obj.vertex_groups]
    weights = np.zeros((len(obj.data.vertices), len(names)), np.float32)
    entries = [(v.index, g.group, g.weight) for v in obj.data.vertices for g in v.groups if g.group < len(names)]
    if entries:
        rows, columns, values = np.array(entries, np.float64).T
        weights[rows.astype(np.intp), columns.astype(np.intp)] = values
    return names, weights


def _digest_object(digest, obj):
    digest.update(f"{obj.get(schema.SF_MESH_LOD, 0)}:{geometry_fingerprint(obj.data)}".encode())
    names, weights = group_weights(obj)
    digest.update("\0".join(names).encode())
    digest.update(weights.tobytes())


def slot_fingerprint(slot):
    """A digest of what a slot's .mesh would be written from: its slot number, its mesh, its
    mesh LODs' meshes, their numbers and every vertex weight."""
    digest = hashlib.sha1(f"slot {slot.get(schema.SF_LOD_SLOT, 0)}".encode())
    for obj in [slot, *mesh_lod_objects(slot)]:
        _digest_object(digest, obj)
    return digest.hexdigest()


def lod_fingerprint(obj):
    """A digest of one mesh LOD object's mesh, number and weights: while it holds, the LOD's
    vertices are the slot's vertices they were imported from, wherever those moved."""
    digest = hashlib.sha1(b"mesh LOD")
    _digest_object(digest, obj)
    return digest.hexdigest()


def source_vertices(mesh):
    """The .mesh vertex each vertex of ``mesh`` was imported from (``sf_vertex``), or None."""
    attribute = mesh.attributes.get(schema.SF_VERTEX)
    if attribute is None or attribute.domain != "POINT" or attribute.data_type != "INT":
        return None
    values = np.empty(len(mesh.vertices), np.int32)
    attribute.data.foreach_get("value", values)
    return values
