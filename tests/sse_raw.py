"""Skyrim SE skinned shapes read with struct from nif.xml's layout, apart from the product's
decoders, for tests to check imports and exports against: the shape's header fields, its
NiSkinPartition's vertex buffer and partitions, its skin instance's bones and body parts."""

import struct

import numpy as np

from nif_rewriter import RawNif
from raw_tri_shape import SKINNED, vertex_buffer

SHAPES = ("BSTriShape", "BSDynamicTriShape")


def raw_sse_shapes(path):
    """{shape block index: raw_sse_shape(...)} of every skinned shape of a bs 100 file."""
    nif = RawNif.read(path)
    assert nif.bs_version == 100
    out = {}
    for type_name in SHAPES:
        for index in nif.indices_of(type_name):
            shape = raw_sse_shape(nif, index)
            if shape is not None:
                out[index] = shape
    return out


def raw_sse_shape(nif, index):
    """{"counts" (vertices, triangles the shape counts), "positions", "uvs", "normals", "colors"
    (None when the buffer has none), "triangles" (shape numbering: SSE partitions number the
    shared buffer's vertices; the stored triangles equal their copy), "part" (partition of each
    triangle), "vertex_maps", "body_parts" (None for a plain NiSkinInstance), "weights" ({vertex:
    {bone node: weight}} from the buffer, whose bone indices number the skin's bones)}, or None
    for an unskinned shape or one with vertices of its own."""
    block = nif.blocks[index]
    at = nif.av_offsets(index)["end"] + 16  # after the bounding sphere
    skin, _shader, _alpha, shape_desc, num_triangles, num_vertices, data_size = struct.unpack_from("<3iQ2HI", block, at)
    where = {"counts": at + 20}
    at += 28
    if skin < 0 or data_size:
        return None
    (particle_size,) = struct.unpack_from("<I", block, at)
    at += 4 + particle_size
    dynamic = None
    if nif.type_of(index) == "BSDynamicTriShape":
        (dynamic_size,) = struct.unpack_from("<I", block, at)
        dynamic = np.frombuffer(bytes(block[at + 4 : at + 4 + dynamic_size]), "<f4").reshape(-1, 4)
    # NiSkinInstance / BSDismemberSkinInstance: data, partition, skeleton root, bones, [body parts]
    instance = nif.blocks[skin]
    _data, partition_index, _root, bone_count = struct.unpack_from("<3iI", instance, 0)
    bones = struct.unpack_from(f"<{bone_count}i", instance, 16)
    body_parts = None
    if nif.type_of(skin) == "BSDismemberSkinInstance":
        (part_count,) = struct.unpack_from("<I", instance, 16 + 4 * bone_count)
        body_parts = [struct.unpack_from("<2H", instance, 20 + 4 * bone_count + 4 * i)[1] for i in range(part_count)]
    # NiSkinPartition: partitions, data size, vertex size, vertex desc, the shared vertex buffer
    data = nif.blocks[partition_index]
    where.update(partition=partition_index, buffer=4, vertex_map=[], bone_indices=[])
    partitions, size, stride, desc = struct.unpack_from("<3IQ", data, 0)
    assert desc == shape_desc and stride == (desc & 0xF) * 4 and size % stride == 0
    count = size // stride
    flags = desc >> 44
    buffer = np.frombuffer(bytes(data[20 : 20 + size]), np.uint8).reshape(count, stride)
    vertices = vertex_buffer(buffer, desc, True)  # SSE: float positions
    positions = dynamic[:, :3] if dynamic is not None and len(dynamic) else vertices["positions"]
    uvs, normals, colors = vertices["uvs"], vertices["normals"], vertices["colors"]
    weights = {}
    if flags & SKINNED:
        for vertex in range(count):
            for value, slot in zip(vertices["weights"][vertex], vertices["bones"][vertex]):
                if value > 0:
                    node = bones[slot]
                    weights.setdefault(vertex, {})[node] = weights.get(vertex, {}).get(node, 0) + value
    at = 20 + size
    triangles, part_of, vertex_maps = [], [], []
    for number in range(partitions):
        nv, nt, nb, ns, per = struct.unpack_from("<5H", data, at)
        at += 10 + 2 * nb
        vertex_map = struct.unpack_from(f"<{nv}H", data, at + 1) if data[at] else ()
        where["vertex_map"].append(at + 1)
        at += 1 + (2 * nv if data[at] else 0)
        at += 1 + (4 * nv * per if data[at] else 0)  # vertex weights
        assert ns == 0  # triangles, no strips
        local = struct.unpack_from(f"<{3 * nt}H", data, at + 1) if data[at] else ()
        at += 1 + (6 * nt if data[at] else 0)
        where["bone_indices"].append(at + 1)
        at += 1 + (nv * per if data[at] else 0)  # bone indices
        at += 2 + 8  # LOD level, global VB, vertex desc
        copy = struct.unpack_from(f"<{3 * nt}H", data, at)
        at += 6 * nt
        assert tuple(local) == tuple(copy)  # every real SSE file: the triangles are their own copy
        triangles += [copy[corner : corner + 3] for corner in range(0, len(copy), 3)]
        part_of += [number] * nt
        vertex_maps.append(np.array(vertex_map, np.int64))
    assert at == len(data)
    return {"counts": (num_vertices, num_triangles), "positions": np.asarray(positions, np.float64), "uvs": uvs,
            "normals": normals, "colors": colors, "triangles": np.array(triangles, np.int64).reshape(-1, 3),
            "part": np.array(part_of, np.int64), "vertex_maps": vertex_maps, "body_parts": body_parts,
            "weights": weights, "count": count, "desc": desc, "at": where}
