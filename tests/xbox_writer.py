"""Test-side Xbox 360 writer: turns a PC FO3/FNV NIF into the console layout of FORMAT-NOTES
section 7, written here by hand from the notes (never through the converter or the codec's
geometry, skin-partition or packed-block code), since no public Xbox 360 files exist.

Big-endian everywhere after the export strings; each geometry data block keeps its header and
has-flags but loses its arrays to a BSPackedAdditionalGeometryData inserted before it (so every
later reference moves); skinned shapes keep their triangles only as strips in the skin
partition, vertices in partition order, and no partition weights or bone indices."""

import struct

import numpy as np

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.refs import renumber

HALF4, HALF2, UBYTE4 = 16, 14, 28
SIZES = {HALF4: 8, HALF2: 4, UBYTE4: 4}

LAYOUTS = {  # stride -> [(name, type)] in offset order
    28: [("position", HALF4), ("normal", HALF4), ("uv", HALF2), ("tangent", HALF4)],
    36: [("position", HALF4), ("normal", HALF4), ("uv", HALF2), ("tangent", HALF4), ("bitangent", HALF4)],
    40: [("position", HALF4), ("normal", HALF4), ("color", UBYTE4), ("uv", HALF2), ("tangent", HALF4), ("bitangent", HALF4)],
    48: [("position", HALF4), ("weights", HALF4), ("bones", UBYTE4), ("normal", HALF4), ("uv", HALF2), ("tangent", HALF4), ("bitangent", HALF4)],
    52: [("position", HALF4), ("weights", HALF4), ("bones", UBYTE4), ("normal", HALF4), ("uv", HALF2), ("tangent", HALF4), ("bitangent", HALF4), ("color", UBYTE4)],
}


def be(fmt, *values):
    return struct.pack(">" + fmt, *values)


def make_xbox(pc_bytes, *, stride=None, skinned_stride=48, sentinel=False, data_atoms=1, nifxml_length=False, strip_size=40):
    """Big-endian Xbox bytes of a PC file. ``stride``: non-skinned layout (default 40 with colours,
    else 36); ``skinned_stride``: 48 or 52; ``sentinel``: store 1.0 in weight slot 3 of vertices
    with three or fewer bones; ``data_atoms``/``nifxml_length``: how many atoms the data block
    declares and whether its data runs atoms x block size bytes (nif.xml) or block size bytes."""
    nif = NifFile.from_bytes(pc_bytes)
    geometry = [i for i, b in enumerate(nif.blocks) if b.type_name in ("NiTriShapeData", "NiTriStripsData")]
    mapping, order = {}, []
    for index in range(len(nif.blocks)):
        if index in geometry:
            order.append(None)  # the packed block goes just before its geometry
        mapping[index] = len(order)
        order.append(index)
    for block in nif.blocks:
        renumber(nif.header, block, lambda ref: mapping[ref] if ref >= 0 else ref)
    nif.roots = [mapping[r] for r in nif.roots]

    shapes = {b.data: b for b in nif.blocks if b.type_name in ("NiTriShape", "NiTriStrips")}
    old_index = {new: old for old, new in mapping.items()}
    new_blocks = []
    for position, index in enumerate(order):
        if index is None:
            new_blocks.append(None)
            continue
        block = nif.blocks[index]
        if block.type_name in ("NiTriShapeData", "NiTriStripsData"):
            shape = shapes.get(mapping[index])
            skin = nif.blocks[old_index[shape.skin_instance]] if shape is not None and shape.skin_instance >= 0 else None
            partition = nif.blocks[old_index[skin.skin_partition]] if skin is not None else None
            packed = packed_block(block, partition, stride, skinned_stride, sentinel, data_atoms, nifxml_length)
            new_blocks[position - 1] = RawBlock("BSPackedAdditionalGeometryData", packed, big_endian=True)
            new_blocks.append(RawBlock(block.type_name, geometry_bytes(block, position - 1, partition is not None), big_endian=True))
        elif block.type_name == "NiSkinPartition":
            new_blocks.append(RawBlock(block.type_name, partition_bytes(block, strip_size), big_endian=True))
        elif block.type_name == "BSDismemberSkinInstance":
            new_blocks.append(RawBlock(block.type_name, dismember_bytes(block), big_endian=True))
        else:
            new_blocks.append(block)
    nif.blocks = new_blocks
    nif.header.little_endian = 0
    return nif.to_bytes()


def vertex_rows(data, partition):
    """Indices of the original vertices in packed order: the partitions' vertex maps in turn."""
    if partition is None:
        return np.arange(data.num_vertices)
    return np.concatenate([np.asarray(p.vertex_map, np.int64) for p in partition.partitions])


def packed_block(data, partition, stride, skinned_stride, sentinel, data_atoms, nifxml_length):
    rows = vertex_rows(data, partition)
    n = len(rows)
    if partition is not None:
        stride = skinned_stride
    elif stride is None:
        stride = 40 if data.vertex_colors is not None else 36
    columns = {}
    zeros3 = np.zeros((data.num_vertices, 3), np.float32)

    def vec4(values, w):
        values = zeros3 if values is None else np.asarray(values, np.float32)
        return np.column_stack([values[rows], np.full(n, w, np.float32)])

    columns["position"] = vec4(data.vertices, 1.0)
    columns["normal"] = vec4(data.normals, 0.0)
    columns["tangent"] = vec4(data.tangents, 0.0)
    columns["bitangent"] = vec4(data.bitangents, 0.0)
    uv = data.uv_sets[0] if len(data.uv_sets) else np.zeros((data.num_vertices, 2), np.float32)
    columns["uv"] = np.asarray(uv, np.float32)[rows]
    colors = data.vertex_colors if data.vertex_colors is not None else np.ones((data.num_vertices, 4), np.float32)
    rgba = np.rint(np.asarray(colors)[rows] * 255).astype(np.uint32)
    columns["color"] = (rgba[:, 3] << 24) | (rgba[:, 0] << 16) | (rgba[:, 1] << 8) | rgba[:, 2]  # D3DCOLOR A,R,G,B
    if partition is not None:
        weights = np.zeros((n, 4), np.float32)
        bones = np.zeros((n, 4), np.uint32)
        start = 0
        for part in partition.partitions:
            per = part.weights_per_vertex
            weights[start : start + part.num_vertices, :per] = part.vertex_weights
            bones[start : start + part.num_vertices, :per] = part.bone_indices
            start += part.num_vertices
        if sentinel:
            weights[weights[:, 3] == 0, 3] = 1.0
        columns["weights"] = weights
        columns["bones"] = bones[:, 0] | (bones[:, 1] << 8) | (bones[:, 2] << 16) | (bones[:, 3] << 24)

    out = np.zeros((n, stride), np.uint8)
    infos = []
    offset = 0
    for name, kind in LAYOUTS[stride]:
        if kind == UBYTE4:
            raw = columns[name].astype(">u4").view(np.uint8).reshape(n, 4)
        else:
            raw = columns[name].astype(">f2").view(np.uint8).reshape(n, SIZES[kind])
        out[:, offset : offset + SIZES[kind]] = raw
        infos.append(be("IIIIIIB", kind, SIZES[kind], SIZES[kind] * n, stride, 0, offset, 2))
        offset += SIZES[kind]
    assert offset == stride
    block_size = stride * n
    data_bytes = out.tobytes()
    if nifxml_length:
        data_bytes += b"\0" * (block_size * (data_atoms - 1))
    parts = [be("H", n), be("I", len(infos)), *infos, be("I", 1), be("B", 1), be("I", block_size)]
    parts += [be("I", 1), be("I", 0), be("I", data_atoms), be(f"{data_atoms}I", *[stride] * data_atoms)]
    parts += [data_bytes, be("I", 0), be("I", block_size)]
    return b"".join(parts)


def geometry_bytes(data, packed_index, skinned):
    """NiGeometryData header with the has-flags kept and no arrays, then the triangles or strips."""
    parts = [
        be("iHBB", data.group_id, data.num_vertices, data.keep_flags, data.compress_flags),
        be("B", data.vertices is not None),
        be("H", data.bs_data_flags),
        be("B", data.normals is not None),
        be("3ff", *data.bound_center, data.bound_radius),
        be("B", data.vertex_colors is not None),
        be("H", data.consistency_flags),
        be("i", packed_index),
    ]
    if data.type_name == "NiTriShapeData":
        triangles = np.asarray(data.triangles, np.uint16).reshape(-1, 3)
        parts.append(be("HI", len(triangles), 3 * len(triangles)))
        if skinned:  # the partitions' strips are the only triangles
            parts.append(be("B", 0))
        else:
            parts += [be("B", 1), triangles.astype(">u2").tobytes()]
        parts.append(be("H", len(data.match_groups)))
        for group in data.match_groups:
            parts += [be("H", len(group)), np.asarray(group, ">u2").tobytes()]
    else:
        strips = [np.asarray(s, np.uint16) for s in data.strips]
        parts.append(be("HH", sum(max(len(s) - 2, 0) for s in strips), len(strips)))
        parts += [be("H", len(s)) for s in strips]
        parts.append(be("B", data.has_points))
        parts += [s.astype(">u2").tobytes() for s in strips]
    return b"".join(parts)


def stripify(triangles, size):
    """Strips of up to ``size`` triangles each, chained by degenerate triangles. Triangle k of a
    strip is (s[k], s[k+1], s[k+2]) for even k and (s[k+1], s[k], s[k+2]) for odd k."""
    strips = []
    for start in range(0, len(triangles), size):
        strip = []
        for a, b, c in np.asarray(triangles[start : start + size]).tolist():
            if not strip:
                strip = [a, b, c]
                continue
            strip.append(strip[-1])  # bridge: every triangle touching these repeats a vertex
            odd = (len(strip) + 1 - 2) % 2 == 1  # parity of the triangle starting at the next-but-one
            first, second = (b, a) if odd else (a, b)
            strip += [first, first, second, c]
        strips.append(np.array(strip, np.uint16))
    return strips


def partition_bytes(partition, strip_size):
    parts = [be("I", len(partition.partitions))]
    for part in partition.partitions:
        if len(part.strips):
            strips = [np.asarray(s, np.uint16) for s in part.strips]
        else:
            strips = stripify(np.asarray(part.triangles).reshape(-1, 3), strip_size)
        parts.append(be("HHHHH", part.num_vertices, part.num_triangles, len(part.bones), len(strips), part.weights_per_vertex))
        parts.append(np.asarray(part.bones, ">u2").tobytes())
        parts += [be("B", 1), np.asarray(part.vertex_map, ">u2").tobytes()]
        parts.append(be("B", 0))  # no vertex weights: they are in the packed streams
        parts += [be("H", len(s)) for s in strips]
        parts.append(be("B", 1))
        parts += [s.astype(">u2").tobytes() for s in strips]
        parts.append(be("B", 0))  # no bone indices either
    return b"".join(parts)


def dismember_bytes(skin):
    parts = [be("iii", skin.data, skin.skin_partition, skin.skeleton_root), be("I", len(skin.bones))]
    parts.append(np.asarray(skin.bones, ">i4").tobytes())
    parts.append(be("I", len(skin.partitions)))
    for item in skin.partitions.tolist():
        parts.append(struct.pack("<H", item[0]) + be("H", item[1]))  # part flags in PC byte order
    return b"".join(parts)
