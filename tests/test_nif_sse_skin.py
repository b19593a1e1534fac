"""Skyrim SE NiSkinPartition keeps the shape's vertices (the corpus's one such partition has no
positions: its BSDynamicTriShape holds them): blocks built byte by byte from nif.xml's layout
decode to the values put in."""

import struct

import numpy as np

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.header import Header

# VERTEX | UV | NORMAL | TANGENT | SKINNED; float positions (SSE), UV at 16, normal 20,
# tangent 24, skin 28, stride 40.
DESC = 10 | (4 << 8) | (5 << 16) | (6 << 20) | (7 << 28) | (0x5B << 44)


def handmade_partition():
    positions = [(1.0, 2.0, 3.0), (-4.0, 5.5, 6.25), (7.0, -8.0, 9.0)]
    vertices = b""
    for i, (x, y, z) in enumerate(positions):
        vertices += struct.pack("<4f", x, y, z, 0.5)  # w = bitangent x
        vertices += struct.pack("<2e", 0.25 * i, 1.0 - 0.25 * i)
        vertices += bytes([255, 128, 0, 0]) + bytes([0, 255, 128, 255])  # normal + bt.y, tangent + bt.z
        vertices += struct.pack("<4e", 0.75, 0.25, 0.0, 0.0) + bytes([i, 2, 0, 0])
    triangles = struct.pack("<3H", 0, 1, 2)
    block = struct.pack("<I", 1)
    block += struct.pack("<IIQ", len(vertices), 40, DESC) + vertices
    block += struct.pack("<5H", 3, 1, 2, 0, 4) + struct.pack("<2H", 5, 9)  # counts, bones
    block += b"\x01" + struct.pack("<3H", 0, 1, 2)  # vertex map
    block += b"\x01" + struct.pack("<12f", *([0.75, 0.25, 0.0, 0.0] * 3))  # weights
    block += b"\x01" + triangles  # has faces, triangles (no strips)
    block += b"\x01" + bytes([0, 1, 0, 0] * 3)  # bone indices
    block += b"\x00\x01"  # LOD level, global VB
    block += struct.pack("<Q", DESC) + triangles  # vertex desc, triangles copy
    return positions, block


def test_sse_skin_partition_decodes_handmade_bytes():
    positions, block = handmade_partition()
    data = NifFile(Header(user_version=12, bs_version=100), [RawBlock("NiSkinPartition", block)], [0]).to_bytes()
    nif = NifFile.from_bytes(data)
    partition = nif.blocks[0]
    assert partition.type_name == "NiSkinPartition" and not isinstance(partition, RawBlock)
    np.testing.assert_array_equal(partition.positions, positions)
    np.testing.assert_array_equal(partition.uvs, [[0, 1], [0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_allclose(partition.normals[0], [1, 128 / 255 * 2 - 1, -1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(partition.bitangents[0], [0.5, -1, 1])
    np.testing.assert_array_equal(partition.bone_weights[:, :2], [[0.75, 0.25]] * 3)
    np.testing.assert_array_equal(partition.bone_indices[:, 0], [0, 1, 2])
    part = partition.partitions[0]
    assert list(part.bones) == [5, 9] and list(part.vertex_map) == [0, 1, 2]
    np.testing.assert_array_equal(part.triangles, [[0, 1, 2]])
    np.testing.assert_array_equal(part.triangles_copy, [[0, 1, 2]])
    assert part.vertex_desc == DESC and part.global_vb == 1
    assert nif.to_bytes() == data


def sse_vertex(x, y, z, u, v):
    """One 40-byte vertex of DESC: float position, UV, normal, tangent, weights and bones."""
    return (struct.pack("<4f2e", x, y, z, 0.0, u, v) + bytes([128, 128, 255, 0, 255, 128, 128, 0])
            + struct.pack("<4e", 1.0, 0.0, 0.0, 0.0) + bytes(4))


def sse_partition(vertex_map, local, copy):
    """A Skyrim SE SkinPartition of one bone: its vertex map, triangles numbered within it and
    the triangles' copy (nif.xml's SkinPartition, bs 100)."""
    nv, nt = len(vertex_map), len(local)
    out = struct.pack("<5H", nv, nt, 1, 0, 4) + struct.pack("<H", 0)
    out += b"\x01" + struct.pack(f"<{nv}H", *vertex_map)
    out += b"\x01" + struct.pack(f"<{4 * nv}f", *([1.0, 0.0, 0.0, 0.0] * nv))
    out += b"\x01" + b"".join(struct.pack("<3H", *t) for t in local)
    out += b"\x01" + bytes(4 * nv) + b"\x00\x00" + struct.pack("<Q", DESC)
    return out + b"".join(struct.pack("<3H", *t) for t in copy)


def test_sse_shape_triangles_go_through_each_partitions_vertex_map():
    """A skinned Skyrim SE BSTriShape with no vertices of its own (data size 0): its vertices are
    the partition's buffer, its triangles each partition's, numbered within the partition and
    mapped to the shape's vertices through the partition's vertex map, the copy holding their
    mapping (every real file numbers the shared buffer's vertices instead: tests/blender/
    test_sse_skin_blender.py)."""
    from precombined_nif.core.nif import skinning

    positions = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 1.0, 0.0)]
    uvs = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    vertices = b"".join(sse_vertex(*p, *uv) for p, uv in zip(positions, uvs))
    shape = struct.pack("<iIiI", -1, 0, -1, 14) + struct.pack("<13f", 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1)
    shape += struct.pack("<i4f3iQ2HII", -1, 0.5, 0.5, 0.0, 1.0, 1, -1, -1, DESC, 2, 4, 0, 0)
    instance = struct.pack("<3iI", -1, 2, -1, 0) + struct.pack("<I4H", 2, 1, 30, 1, 31)
    partition = struct.pack("<I", 2) + struct.pack("<IIQ", len(vertices), 40, DESC) + vertices
    partition += sse_partition([2, 0, 1], [(1, 2, 0)], [(0, 1, 2)])  # shape triangle (0, 1, 2)
    partition += sse_partition([3, 2, 0], [(2, 1, 0)], [(0, 2, 3)])  # shape triangle (0, 2, 3)
    blocks = [RawBlock("BSTriShape", shape), RawBlock("BSDismemberSkinInstance", instance),
              RawBlock("NiSkinPartition", partition)]
    data = NifFile(Header(user_version=12, bs_version=100), blocks, [0]).to_bytes()
    nif = NifFile.from_bytes(data)
    assert nif.blocks[0].vertex_data is None and not isinstance(nif.blocks[2], RawBlock)
    found = skinning.partition_geometry(nif, nif.blocks[0])
    np.testing.assert_array_equal(found.triangles, [[0, 1, 2], [0, 2, 3]])
    np.testing.assert_array_equal(found.positions, positions)
    np.testing.assert_array_equal(found.uvs, uvs)
    np.testing.assert_allclose(found.normals, [[128 / 255 * 2 - 1, 128 / 255 * 2 - 1, 1]] * 4, atol=1e-6)
    np.testing.assert_array_equal(skinning.face_partitions(found.triangles, nif.blocks[2]), [0, 1])
    assert nif.to_bytes() == data


def test_partitions_written_anew_hold_what_was_put_in(corpus, tmp_path):
    """malebody_1's body re-encoded by sse_skin (what the exporter does for an edited shape):
    the struct reading of the written file finds the same vertices, triangles (shape-numbered,
    each partition's within its map), four normalised weights per vertex, the body parts, and
    the shape still counting 0."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from sse_raw import raw_sse_shapes

    from precombined_nif.core.nif import skinning, sse_skin

    path = corpus / "pynifly/tests/tests/SkyrimSE/malebody_1.nif"
    nif = NifFile.read(path)
    index = 2
    shape = nif.blocks[index]
    found = skinning.partition_geometry(nif, shape)
    instance, data, partition = skinning.skin_blocks(nif, shape.skin)
    groups = np.asarray(instance.partitions["body_part"])[skinning.face_partitions(found.triangles, partition)]
    indices, values = skinning.limit_weights(skinning.shape_weights(instance, data, partition, len(found.positions)))
    layout = sse_skin.layout_of(shape)
    shape.positions, shape.uvs = found.positions, found.uvs  # the vanilla body has no normals
    shape.set_triangles(found.triangles)
    built = skinning.build_partitions(indices, values, found.triangles, groups, sse_skin.BONE_LIMIT)
    partition.partitions = [sse_skin.sse_partition(p) for p in built]
    instance.partitions = np.array([(1, p["group"]) for p in built], instance.partitions.dtype)
    sse_skin.store_in_partition(shape, partition, layout, indices, values)
    nif.write(tmp_path / "out.nif")
    before, after = raw_sse_shapes(path)[index], raw_sse_shapes(tmp_path / "out.nif")[index]
    assert after["counts"] == (0, 0) and after["count"] == before["count"] and after["desc"] == before["desc"]
    np.testing.assert_array_equal(after["positions"], before["positions"])
    np.testing.assert_array_equal(after["uvs"], before["uvs"])
    assert sorted(map(tuple, np.sort(after["triangles"], axis=1).tolist())) == sorted(map(tuple, np.sort(before["triangles"], axis=1).tolist()))
    for number, vertex_map in enumerate(after["vertex_maps"]):
        assert np.isin(after["triangles"][after["part"] == number], vertex_map).all()
    assert max(len(b) for b in after["weights"].values()) <= 4
    np.testing.assert_allclose([sum(b.values()) for b in after["weights"].values()], 1.0, atol=2e-3)
    for vertex, bones in before["weights"].items():
        total = sum(bones.values())
        assert set(after["weights"][vertex]) == set(bones)
        for node, weight in bones.items():
            assert abs(after["weights"][vertex][node] - weight / total) < 2e-3
    assert sorted(after["body_parts"]) == sorted(before["body_parts"])
