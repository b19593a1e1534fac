"""Precombined blocks and geometry files built byte by byte from the notes decode to the
values written: all three layouts, instance matrices, .csg/.psg geometry, damaged input."""

import struct
import zlib

import numpy as np
import pytest
from precombined_builder import (
    STRIDE20_DESC,
    block_bytes,
    csg_bytes,
    geometry_space,
    make_object,
    psg_bytes,
)

from precombined_nif.core.errors import FormatError
from precombined_nif.commands.info import nif_info
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.blocks.precombined import instance_matrices
from precombined_nif.core.nif.header import Header
from precombined_nif.core.precombined.csg import GeometryFile, GeometryWriter, on_disk_desc
from precombined_nif.core.precombined.names import bscrc32, find_geometry_file, geometry_hash

SHARED = "BSPackedCombinedSharedGeomDataExtra"
BAKED = "BSPackedCombinedGeomDataExtra"
OBJECTS = [make_object(i, instance_count=1 + i % 3) for i in range(4)]


def cell(block_type, body):
    """A FO4 file: root BSFadeNode whose extra data list holds the precombined block."""
    root = NiNode("BSFadeNode", name="cell", extra_data=[1])
    data = NifFile(Header(), [root, RawBlock(block_type, body)], [0]).to_bytes()
    return NifFile.from_bytes(data)


def check_record(record, obj, inline=True):
    assert record.num_vertices == len(obj["positions"])
    assert record.lod_counts == tuple(len(lod) for lod in obj["lods"])
    if inline:
        np.testing.assert_array_equal(record.positions, obj["positions"])
        np.testing.assert_array_equal(record.uvs, obj["uvs"])
        np.testing.assert_allclose(record.normals, obj["normal_bytes"][:, :3] / 255 * 2 - 1, atol=1e-6)
        np.testing.assert_allclose(record.tangents, obj["tangent_bytes"][:, :3] / 255 * 2 - 1, atol=1e-6)
        for lod in range(3):
            np.testing.assert_array_equal(record.lod_triangles(lod), np.array(obj["lods"][lod]).reshape(-1, 3))
    matrices = instance_matrices(record.instances)
    for inst, matrix, raw in zip(obj["instances"], matrices, record.instances):
        expected = np.eye(4)
        expected[:3, :3] = np.array(inst["rotation"]) * inst["scale"]
        expected[:3, 3] = inst["translation"]
        np.testing.assert_allclose(matrix, expected, rtol=1e-6, atol=1e-5)
        assert raw["grayscale_scale"] == pytest.approx(inst["grayscale"])
        assert raw["bound_radius"] == pytest.approx(inst["bound_radius"])
        # world = T + R * s * v for a vertex
        v = obj["positions"][1]
        world = np.array(inst["translation"]) + np.array(inst["rotation"]) @ (inst["scale"] * v)
        np.testing.assert_allclose((matrix @ np.append(v, 1))[:3], world, rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("block_type, layout", [(SHARED, "inline"), (SHARED, "external"), (BAKED, "baked")])
def test_layouts_decode_to_the_values_written(block_type, layout):
    hashes = [0xDDF19A67, 0x2088054D, 0xDDF19A67, 0x626DFE98]
    offsets = [0, 4096, 70000, 123]
    body = block_bytes(OBJECTS, layout, hashes=hashes, offsets=offsets)
    nif = cell(block_type, body)
    block = nif.blocks[1]
    assert block.layout == layout and not nif.warnings
    assert block.vertex_desc == STRIDE20_DESC
    assert (block.unknown_flags_1, block.unknown_flags_2) == (7, 9)
    assert len(block.records) == len(OBJECTS)
    for record, obj in zip(block.records, OBJECTS):
        check_record(record, obj, inline=layout != "external")
    if layout != "baked":
        assert list(block.objects["filename_hash"]) == hashes
        assert list(block.objects["data_offset"]) == offsets
    assert nif.to_bytes() == NifFile(nif.header, nif.blocks, nif.roots).to_bytes()
    raw_again = cell(block_type, body)
    assert raw_again.to_bytes() == nif.to_bytes()  # unchanged blocks write back byte-identical
    summary = nif_info(nif)["precombined"][0]
    assert summary["layout"] == layout and summary["block"] == 1
    assert [o["instances"] for o in summary["objects"]] == [len(o["instances"]) for o in OBJECTS]
    assert summary["objects"][1]["lod_triangles"] == [len(lod) for lod in OBJECTS[1]["lods"]]
    if layout != "baked":
        assert summary["objects"][1]["hash"] == "2088054D" and summary["objects"][2]["offset"] == 70000


def test_edited_inline_record_is_written_and_read_back():
    nif = cell(SHARED, block_bytes(OBJECTS, "inline"))
    record = nif.blocks[1].records[0]
    record.positions = record.positions + np.float32(1.0)
    record.instances["translation"][0] = (5.0, 6.0, 7.0)
    back = NifFile.from_bytes(nif.to_bytes()).blocks[1].records[0]
    np.testing.assert_array_equal(back.positions, OBJECTS[0]["positions"] + 1)
    np.testing.assert_array_equal(back.instances["translation"][0], [5, 6, 7])


@pytest.mark.parametrize("kind", ["csg", "psg"])
def test_geometry_files_give_each_record_its_geometry(tmp_path, kind):
    objects = [make_object(i, 1) for i in range(40)]
    for obj in objects:  # enough bytes to cross several 64 KiB chunks
        obj["positions"] = np.tile(obj["positions"], (60, 1))
        obj["uvs"] = np.tile(obj["uvs"], (60, 1))
        obj["normal_bytes"] = np.tile(obj["normal_bytes"], (60, 1))
        obj["tangent_bytes"] = np.tile(obj["tangent_bytes"], (60, 1))
    space, offsets = geometry_space(objects)
    assert len(space) > 2 * 0x10000
    path = tmp_path / f"Fallout4 - Geometry.{kind}"
    path.write_bytes((csg_bytes if kind == "csg" else psg_bytes)(objects, space, offsets))
    nif = cell(SHARED, block_bytes(objects, "external", offsets=offsets))
    with GeometryFile(path) as geometry:
        assert len(geometry.rows) == len(objects)
        for record, obj, offset in zip(nif.blocks[1].records, objects, offsets):
            desc, vertices, triangles = geometry.record_geometry(offset, record.vertex_desc, record.num_vertices, record.lod_counts)
            np.testing.assert_array_equal(vertices["position"][:, :3].astype(np.float32), obj["positions"])
            np.testing.assert_array_equal(vertices["uv"].astype(np.float32), obj["uvs"])
            np.testing.assert_array_equal(triangles, np.concatenate([np.reshape(lod, (-1, 3)) for lod in obj["lods"]]))
        if kind == "csg":
            assert len(geometry._chunks) == len(space) // 0x10000 + 1
    assert find_geometry_file(tmp_path, geometry_hash("Fallout4")) == path


def test_retail_full_precision_descriptor_reads_half_positions():
    retail = STRIDE20_DESC + 2 | (0x400 << 44)
    retail = retail & ~0xFFFFF00 | (4 << 8) | (5 << 16) | (6 << 20)  # offsets as if positions were 16 bytes
    assert on_disk_desc(retail) == STRIDE20_DESC
    assert on_disk_desc(STRIDE20_DESC) == STRIDE20_DESC


def test_filename_hashes_match_the_notes():
    assert geometry_hash("Fallout4") == 0xDDF19A67
    assert geometry_hash("DLCCoast") == 0x2088054D
    assert geometry_hash("DLCNukaWorld") == 0xE81B308E
    assert geometry_hash("DLCRobot") == 0x3A1B90B8
    assert geometry_hash("DLCworkshop01") == 0x8E566007
    assert geometry_hash("DLCworkshop03") == 0x626DFE98
    assert bscrc32("bldwoodwall01") == 0x4E578EE1
    assert bscrc32("materials/interiors/building") == 0xA6E66AC9
    assert bscrc32("textures\\shared\\cubemaps") == 0xC588DB1C


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda body: body[:-7], "truncated|remain"),
        (lambda body: body[:28] + b"\xff\xff\xff\x7f" + body[32:], "records: count"),
        (lambda body: body[:76] + b"\xff\xff\x00\x00" + body[80:], "LOD0"),  # record 0, LOD0 offset
    ],
)
def test_damaged_blocks_fail_cleanly(damage, message):
    body = block_bytes(OBJECTS, "inline")
    with pytest.raises(FormatError, match=message) as caught:
        cell(SHARED, damage(body))
    assert caught.value.block == 1


def test_triangle_indices_are_checked():
    objects = [make_object(0, 1)]
    objects[0]["lods"][0][0] = (0, 1, 99)
    with pytest.raises(FormatError, match="vertex 99"):
        cell(BAKED, block_bytes(objects, "baked"))


def test_damaged_geometry_files_fail_cleanly(tmp_path):
    objects = [make_object(0, 1)]
    space, offsets = geometry_space(objects)
    good = csg_bytes(objects, space, offsets)
    for name, data in {
        "magic": b"xxxx" + good[4:],
        "truncated": good[: len(good) // 2],
        "counts": good[:4] + b"\xff\xff\xff\x7f" + good[8:],
        "chunk": good[:-20] + b"\x00" * 20,
    }.items():
        path = tmp_path / f"{name}.csg"
        path.write_bytes(data)
        with pytest.raises(FormatError):
            with GeometryFile(path) as geometry:
                geometry.record_geometry(0, STRIDE20_DESC, len(objects[0]["positions"]), [len(l) for l in objects[0]["lods"]])


CK_CSG = "ck-precombined/AlootHomePlate - Geometry.csg"


def test_ck_geometry_file_written_back_byte_identical(corpus):
    """The Creation Kit's .csg (110 records, 5 chunks): every record read and written again."""
    path = corpus / CK_CSG
    data = path.read_bytes()
    objects, chunks = struct.unpack_from("<II", data, 4)
    assert (objects, chunks) == (110, 5)
    with GeometryFile(path) as geometry:
        assert GeometryWriter(geometry).to_bytes() == data


def test_appended_records_read_back_independently(corpus, tmp_path):
    """A record appended to the CK's .csg: its row, its bytes in the chunks and the chunk table,
    read with struct and zlib; the same bytes again are shared, not stored twice."""
    with GeometryFile(corpus / CK_CSG) as geometry:
        writer = GeometryWriter(geometry)
        size = len(geometry.whole_space())
    record = bytes(range(256)) * 3 + struct.pack("<6H", 0, 1, 2, 2, 1, 0)
    offset = writer.add(STRIDE20_DESC, 768 // 20, 6, record[: 768 // 20 * 20] + record[768:])
    assert offset == size
    assert writer.add(STRIDE20_DESC, 768 // 20, 6, record[: 768 // 20 * 20] + record[768:]) == offset
    data = writer.to_bytes()
    objects, chunks = struct.unpack_from("<II", data, 4)
    assert (objects, chunks) == (111, 5)  # 298378 + 772 bytes still fit in five 64 KiB chunks
    table = [struct.unpack_from("<II", data, 12 + 8 * k) for k in range(chunks)]
    assert table[0][1] == 12 + 8 * chunks + 20 * objects
    space = b""
    for size_k, at in table:
        packed = data[at : at + size_k]
        assert packed[:2] == b"\x78\x9c"
        space += zlib.decompress(packed)
    row = struct.unpack_from("<IQII", data, 12 + 8 * chunks + 20 * 110)
    assert row == (offset, STRIDE20_DESC, 38, 6)
    assert space[offset:] == record[:760] + record[768:]


def test_nearest_lod_with_triangles():
    from precombined_nif.core.nif.blocks.precombined import PackedGeomRecord

    record = PackedGeomRecord(inline=False)
    for counts, chosen in [((5, 0, 3), (0, 0, 2)), ((0, 4, 0), (1, 1, 1)), ((6, 0, 0), (0, 0, 0)), ((0, 0, 0), (0, 1, 2))]:
        record.lod_counts = counts
        assert tuple(record.nearest_lod(lod) for lod in range(3)) == chosen, counts
