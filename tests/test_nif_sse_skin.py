"""Skyrim SE NiSkinPartition keeps the shape's vertices (the corpus has none): a block built
byte by byte from nif.xml's layout decodes to the values put in."""

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
