"""Skyrim compressed-mesh collision built anew from triangles: the bhkCompressedMeshShapeData
(chunks and big triangles, see blocks/compressed_mesh.py) and the MOPP code over what it stores.

Triangles are grouped by material (a chunk has one) and halved along their longest axis until a
group fits a chunk: its vertices span at most MAX_CHUNK_SPAN Havok units (u16 offsets in
thousandths) and number at most MAX_CHUNK_VERTICES (the corpus chunks hold up to 234). A
triangle wider than a chunk on its own is a big triangle. Chunks are written as plain triangle
lists (no strips) under one identity transform, with zero welding (no edge welding angles)."""

import numpy as np

from ..errors import FormatError
from ..havok import mopp
from .blocks.compressed_mesh import CHUNK_UNIT, NO_REFERENCE, Chunk, bhkCompressedMeshShapeData

MAX_CHUNK_SPAN = 65.0  # Havok units: under the 65.535 a u16 offset reaches
MAX_CHUNK_VERTICES = 255
MAX_CHUNK_TRIANGLES = 1024
MAX_TRIANGLES = 1 << 22  # far beyond any game mesh: refuses runaway input before any work
IDENTITY = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)  # as the game's files store it (w of translation 1)


def build_compressed_data(vertices, triangles, materials, filters=None, template=None):
    """A new bhkCompressedMeshShapeData holding ``triangles`` (m, 3) of ``vertices`` (n, 3,
    Havok units) with the Bethesda material id per triangle ``materials`` (m,); ``filters``
    maps a material id to its HavokFilter (layer, flags, group), default (1, 0, 0). The header
    fields (bits, masks, error, welding type) are kept from ``template`` when given."""
    vertices = np.asarray(vertices, np.float64).reshape(-1, 3)
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    materials = np.asarray(materials, np.int64).reshape(-1)
    if len(triangles) > MAX_TRIANGLES:
        raise FormatError(f"{len(triangles)} triangles are more than a compressed mesh holds ({MAX_TRIANGLES})")
    if len(materials) != len(triangles):
        raise FormatError(f"{len(materials)} materials for {len(triangles)} triangles")
    if len(triangles) and (triangles.min() < 0 or triangles.max() >= len(vertices)):
        raise FormatError(f"a triangle names a vertex past the {len(vertices)} vertices")
    if not np.isfinite(vertices).all():
        raise FormatError("a collision vertex is not a finite number")
    proper = (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])
    triangles, materials = triangles[proper], materials[proper]
    if not len(triangles):
        raise FormatError("a triangle mesh collision needs at least one triangle")
    data = bhkCompressedMeshShapeData()
    if template is not None:
        for name in ("bits_per_index", "bits_per_w_index", "mask_w_index", "mask_index", "error", "welding_type"):
            setattr(data, name, getattr(template, name))
    ids, material_index = np.unique(materials, return_inverse=True)
    filters = filters or {}
    table = np.zeros(len(ids), [("material", "<u4"), ("layer", "u1"), ("flags", "u1"), ("group", "<u2")])
    table["material"] = ids
    rows = np.array([filters.get(value, (1, 0, 0)) for value in ids.tolist()], np.int64).reshape(-1, 3)
    table["layer"], table["flags"], table["group"] = rows.T
    data.chunk_materials = table
    data.chunk_transforms = np.array([IDENTITY], np.float32)
    corners = vertices[triangles]
    big = (corners.max(axis=1) - corners.min(axis=1) > MAX_CHUNK_SPAN).any(axis=1)
    _set_big(data, vertices, triangles[big], material_index[big])
    chunks = []
    for material in np.unique(material_index[~big]).tolist():
        members = np.flatnonzero(~big & (material_index == material))
        for group in _groups(vertices, triangles, members):
            chunks.append(_chunk(vertices, triangles[group], material))
    if len(chunks) >= 1 << (32 - data.bits_per_w_index):
        raise FormatError(f"{len(chunks)} chunks are more than the shape keys can name")
    data.chunks = chunks
    low, high = vertices[triangles].reshape(-1, 3).min(axis=0), vertices[triangles].reshape(-1, 3).max(axis=0)
    data.aabb_min, data.aabb_max = (*low.tolist(), 0.0), (*high.tolist(), 0.0)
    return data


def _set_big(data, vertices, triangles, material_index):
    used, corners = np.unique(triangles, return_inverse=True)
    if len(used) > 0xFFFF:
        raise FormatError(f"{len(used)} vertices of big triangles are more than u16 indices reach")
    data.big_vertices = np.c_[vertices[used], np.zeros(len(used))].astype(np.float32)
    rows = np.zeros(len(triangles), [("triangle", "<u2", (3,)), ("material", "<u4"), ("welding", "<u2")])
    rows["triangle"] = corners.reshape(-1, 3)
    rows["material"] = material_index
    data.big_triangles = rows


def _fits(vertices, triangles):
    used = np.unique(triangles)
    points = vertices[used]
    span = (points.max(axis=0) - points.min(axis=0)).max()
    return span <= MAX_CHUNK_SPAN and len(used) <= MAX_CHUNK_VERTICES and len(triangles) <= MAX_CHUNK_TRIANGLES


def _groups(vertices, triangles, members):
    """Triangle index groups that each fit a chunk: halves along the longest axis of the
    triangles' centres (an explicit stack: depth stays about log2 of the triangle count)."""
    stack, found = [members], []
    while stack:
        group = stack.pop()
        if _fits(vertices, triangles[group]):
            found.append(group)
            continue
        centres = vertices[triangles[group]].mean(axis=1)
        axis = int(np.argmax(centres.max(axis=0) - centres.min(axis=0)))
        order = group[np.argsort(centres[:, axis], kind="stable")]
        half = len(order) // 2
        stack += [order[half:], order[:half]]
    return found


def _chunk(vertices, triangles, material):
    used, corners = np.unique(triangles, return_inverse=True)
    points = vertices[used]
    origin = points.min(axis=0).astype(np.float32).astype(np.float64)
    offsets = np.clip(np.rint((points - origin) / CHUNK_UNIT), 0, 0xFFFF).astype(np.uint16)
    indices = corners.astype(np.uint16).reshape(-1)
    return Chunk(translation=(*origin.tolist(), 0.0), material_index=material, reference=NO_REFERENCE, transform_index=0,
                 vertices=offsets.reshape(-1), indices=indices, strips=np.zeros(0, np.uint16),
                 welding=np.zeros(len(indices), np.uint16))


def build_mopp(data, radius):
    """The MOPP (core.havok.mopp.Mopp) over what ``data`` stores, naming its shape keys."""
    vertices, triangles, _, keys = data.mesh()
    return mopp.build(vertices, triangles, keys, radius=radius)
