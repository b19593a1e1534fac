"""A mesh's geometry encoded into a shape block: a BSTriShape vertex buffer (FO4, FO76, Skyrim SE) or a
NiTriShape and its NiTriShapeData (FO3/FNV, Skyrim LE), new or the object's own. The exporter
decides which pieces a mesh becomes and where they stand; this writes each piece's vertices."""

import numpy as np

from ...core.nif import sse_skin, versions
from ...core.nif import vertex_format as vf
from ...core.nif.blocks.geometry import NiTriBasedGeom, NiTriShapeData
from ...core.nif.blocks.tri_shape import BSDynamicTriShape, BSMeshLODTriShape, BSSubIndexTriShape, BSTriShape
from ...core.nif.triangle_groups import GROUPED
from .. import schema

FO4_FLAGS = vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT


def shape_block(exporter, obj, index, number, source=None):
    """The shape block a piece is written into: the object's own (as a NiTriShape when it was
    a NiTriStrips, whose strips cannot take edited triangles) or a new one: of the type of the
    object's own block ``source`` when that is a LOD or segmented shape, a BSSubIndexTriShape
    for an FO4/FO76 object with a segment layout (a piece Separate made of one), else the
    game's plain shape."""
    if index is not None:
        block = exporter.nif.blocks[index]
        if isinstance(block, NiTriBasedGeom) and block.type_name == "NiTriStrips":
            block.type_name = "NiTriShape"
            data = NiTriShapeData("NiTriShapeData", consistency_flags=exporter.nif.blocks[block.data].consistency_flags)
            exporter.nif.blocks[block.data] = data
        return index
    name = obj.name if number == 0 else f"{obj.name}:{number}"
    if exporter.game in ("FO4", "FO76", "SSE"):
        # A piece of a segmented shape (Separate copies the layout with the faces' segments) stays segmented.
        segmented = schema.NIF_SEGMENTS in obj and versions.fo4_or_later(exporter.nif.header.bs_version)
        kind = BSSubIndexTriShape if segmented else BSTriShape
        block = kind(kind.__name__, name=name, flags=exporter.new_flags)
        block.set_vertex_flags(FO4_FLAGS, exporter.full_precision or exporter.game == "SSE")  # SSE: float positions
        return exporter.add(block)
    like = exporter.nif.blocks[source] if source is not None else None
    kind, type_name = (type(like), like.type_name) if isinstance(like, GROUPED) else (NiTriBasedGeom, "NiTriShape")
    # as the games' files hold them: the shape, then its data; material 0 active
    index = exporter.add(kind(type_name, name=name, flags=exporter.new_flags, active_material=0))
    exporter.nif.blocks[index].data = exporter.add(NiTriShapeData("NiTriShapeData", consistency_flags=0x4000))
    return index


def keep_geometry(exporter, block):
    """An untouched shape keeps its vertices as stored; asked for full precision, an FO4 or FO76
    buffer of half positions is laid out anew with the same values as 32-bit floats (halves
    convert exactly), everything else in it kept."""
    if exporter.full_precision and isinstance(block, BSTriShape) and block.vertex_data is not None and not block.full_precision:
        if versions.fo4_or_later(exporter.nif.header.bs_version):
            block.set_vertex_flags(block.vertex_flags, True)
            block.bounds_dirty = False  # the same points: the bound stays as stored (zero on skinned shapes)


def encode_geometry(exporter, index, arrays, used, triangles, skinned):
    """The piece's vertices (``used`` of the mesh's ``arrays``) and ``triangles`` into shape ``index``."""
    block = exporter.nif.blocks[index]
    exporter.encoded.add(index)
    positions = arrays["positions"][used]
    uvs = None if arrays["uvs"] is None else arrays["uvs"][used]
    colors = None if arrays["colors"] is None else arrays["colors"][used]
    tangents = None if arrays["tangents"] is None else arrays["tangents"][used]
    bitangents = None if arrays["bitangents"] is None else arrays["bitangents"][used]
    if isinstance(block, BSTriShape):
        flags = block.vertex_flags | vf.VERTEX | vf.NORMAL
        flags = flags | vf.UV if uvs is not None else flags & ~(vf.UV | vf.TANGENT)
        flags = flags | vf.TANGENT if tangents is not None else flags & ~vf.TANGENT
        flags = flags | vf.COLORS if colors is not None else flags & ~vf.COLORS
        flags = flags | vf.SKINNED if skinned else flags & ~vf.SKINNED
        if index in exporter.sse_layouts:  # an edited SSE shape keeps its attributes (vanilla bodies: no normals)
            flags &= block.vertex_flags | vf.VERTEX | vf.SKINNED
        block.set_vertex_flags(flags, block.full_precision or exporter.full_precision)
        block.positions = positions
        if flags & vf.NORMAL:
            block.normals = arrays["normals"][used]
        if flags & vf.UV:
            block.uvs = uvs
        if flags & vf.TANGENT:
            block.tangents, block.bitangents = tangents, bitangents
        if flags & vf.COLORS:
            block.colors = colors
        block.set_triangles(triangles)
        if versions.sse(exporter.nif.header.bs_version):
            block.vertex_desc = sse_skin.sse_desc(block.vertex_flags & ~vf.FULL_PRECISION)
            if isinstance(block, BSDynamicTriShape):  # the positions the game draws (w: bitangent x)
                block.dynamic_vertices = np.asarray(block.vertex_data["position"], np.float32)
                block.vertex_desc |= sse_skin.DYNAMIC_VERTEX_SIZE
        if isinstance(block, BSMeshLODTriShape):
            block.lod_sizes = (len(triangles), 0, 0)
        return
    data = exporter.nif.blocks[block.data]
    data.vertices = positions
    data.normals = arrays["normals"][used]
    data.tangents, data.bitangents = tangents, bitangents
    data.uv_sets = [] if uvs is None else [uvs]
    data.vertex_colors = colors
    data.triangles = np.ascontiguousarray(triangles, np.uint16)
    data.match_groups = ()
