"""Xbox 360 Fallout 3 / New Vegas NIFs as ordinary PC files (FORMAT-NOTES section 7).

Geometry comes back inline from the BSPackedAdditionalGeometryData blocks, skinned triangles
from the skin partitions' strips, partition weights and bone indices from the packed streams;
the packed blocks are dropped and every reference renumbered; packed Havok triangle meshes
(hkPackedNiTriStripsData) get back the float vertices PC files hold for their half floats. Every
other block is typed, so writing it little-endian converts it field by field."""

import numpy as np

from ..errors import FormatError
from .block import RawBlock
from .blocks.geometry import NiTriBasedGeom, NiTriBasedGeomData, NiTriShapeData, NiTriStripsData
from .blocks.legacy_havok import hkPackedNiTriStripsData
from .blocks.packed_geometry import BSPackedAdditionalGeometryData, decode_streams
from .blocks.skin import NiSkinInstance, NiSkinPartition
from .refs import remove_blocks


def to_pc(nif):
    """Convert ``nif`` in place to a little-endian PC file; returns how many shapes were unpacked."""
    for index, block in enumerate(nif.blocks):
        if isinstance(block, RawBlock):
            raise FormatError(
                "its fields are not decoded, so it cannot be converted to a PC file",
                path=nif.path,
                block=index,
                block_type=block.type_name,
            )
    owners = {block.data: (index, block) for index, block in nif.blocks_of(NiTriBasedGeom)}
    packed = {index for index, _ in nif.blocks_of(BSPackedAdditionalGeometryData)}
    unpacked = 0
    for index, data in nif.blocks_of(NiTriBasedGeomData):
        if data.additional_data not in packed:
            continue
        try:
            _unpack(nif, data, owners.get(index, (None, None))[1])
        except FormatError as error:
            raise error.located(path=nif.path, block=index, block_type=data.type_name) from None
        data.additional_data = -1
        unpacked += 1
    remove_blocks(nif, packed)
    for _, collision_data in nif.blocks_of(hkPackedNiTriStripsData):
        collision_data.decompress()
    nif.header.little_endian = 1
    return unpacked


def _unpack(nif, data, shape):
    source = nif.blocks[data.additional_data]
    streams = decode_streams(source)
    partition = _partition(nif, shape)
    n = data.num_vertices
    if partition is None:
        if source.num_vertices != n:
            raise FormatError(f"{n} vertices but its packed data holds {source.num_vertices}")
        order = None
    else:
        order = np.concatenate([_vertex_map(p, n) for p in partition.partitions]) if partition.partitions else np.zeros(0, int)
        if len(order) != source.num_vertices:
            raise FormatError(f"skin partitions map {len(order)} vertices but its packed data holds {source.num_vertices}")
        if len(np.unique(order)) != n:
            raise FormatError(f"skin partitions cover {len(np.unique(order))} of its {n} vertices")
    if data.packed_flags is None:  # arrays kept inline as well (PC files with the block): keep them
        return
    flags = data.packed_flags

    def take(name, wanted=True):
        if not wanted:
            return None
        if name not in streams:
            raise FormatError(f"its flags ask for {name}s but the packed data has no {name} stream")
        values = streams[name]
        if order is None:
            return values
        out = np.zeros((n,) + values.shape[1:], values.dtype)
        out[order] = values  # a vertex shared by partitions is stored once per partition
        return out

    tangents = bool(flags[1] and data.bs_data_flags & 0x1000)
    uv = take("uv", bool(data.bs_data_flags & 1))
    data.set_arrays(
        vertices=take("position", bool(flags[0])),
        normals=take("normal", bool(flags[1])),
        tangents=take("tangent", tangents),
        bitangents=take("bitangent", tangents),
        vertex_colors=take("color", bool(flags[2])),
        uv_sets=[] if uv is None else [uv],
    )
    if partition is not None:
        _fill_partitions(data, partition, streams)


def _partition(nif, shape):
    if shape is None or not shape.skinned:
        return None
    skin = nif.blocks[shape.skin_instance] if 0 <= shape.skin_instance < len(nif.blocks) else None
    if not isinstance(skin, NiSkinInstance):
        return None
    partition = nif.blocks[skin.skin_partition] if 0 <= skin.skin_partition < len(nif.blocks) else None
    return partition if isinstance(partition, NiSkinPartition) else None


def _vertex_map(part, num_vertices):
    if part.vertex_map is None:
        raise FormatError("a skin partition has no vertex map")
    vertex_map = np.asarray(part.vertex_map, np.int64)
    if len(vertex_map) and vertex_map.max() >= num_vertices:
        raise FormatError(f"a skin partition maps to vertex {vertex_map.max()} of {num_vertices}")
    return vertex_map


def _fill_partitions(data, partition, streams):
    """Partition-local triangles mapped to the shape, and each partition's weights and bone
    indices from its stretch of the packed vertices."""
    for name in ("weights", "bone_indices"):
        if name not in streams:
            raise FormatError(f"a skinned shape's packed data has no {name} stream")
    start = 0
    shape_faces = []
    for part in partition.partitions:
        nv = part.num_vertices
        per = part.weights_per_vertex
        if per > 4:
            raise FormatError(f"a skin partition has {per} weights per vertex; packed vertices hold 4")
        faces = part.faces
        if len(faces) and faces.max() >= nv:
            raise FormatError(f"a skin partition's strips use vertex {faces.max()} of its {nv}")
        part.vertex_weights = np.ascontiguousarray(streams["weights"][start : start + nv, :per])
        part.bone_indices = np.ascontiguousarray(streams["bone_indices"][start : start + nv, :per])
        part.strips = ()
        part.triangles = faces.astype(np.uint16)
        part.num_triangles = len(faces)
        part.has_faces = 1
        shape_faces.append(np.asarray(part.vertex_map, np.uint16)[faces])
        start += nv
    triangles = np.concatenate(shape_faces) if shape_faces else np.zeros((0, 3), np.uint16)
    if isinstance(data, NiTriShapeData) and data.triangles is None:
        data.triangles = triangles
    elif isinstance(data, NiTriStripsData) and not len(data.strips):
        data.strips = list(triangles)  # each triangle a strip of three: winding kept
        data.has_points = 1
