"""Big-endian (Xbox 360) containers: header rules of FORMAT-NOTES section 7, typed blocks in
either byte order, and raw blocks that cannot be swapped refused instead of corrupted."""

import struct

import numpy as np
import pytest

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.geometry import NiTriShapeData

# FO3/FNV files whose blocks are all typed, so every field can change byte order.
TYPED_ONLY = [
    "niftools/history/test/nif/base_vertex_color0.nif",
    "niftools/history/test/nif/base_vertex_alpha0.nif",
    "pynifly/tests/tests/FONV/outfitf_simple.nif",
]


def to_big_endian(nif):
    nif.header.little_endian = 0
    return nif.to_bytes()


@pytest.mark.parametrize("name", TYPED_ONLY)
def test_little_big_little_is_identical(corpus, name):
    original = (corpus / name).read_bytes()
    big = to_big_endian(NifFile.from_bytes(original))
    assert big != original
    back = NifFile.from_bytes(big)
    assert back.header.big_endian
    back.header.little_endian = 1
    assert back.to_bytes() == original


def test_big_endian_layout_follows_the_notes(corpus):
    nif = NifFile.read(corpus / "niftools/history/test/nif/base_vertex_color0.nif")
    data_index = next(i for i, b in enumerate(nif.blocks) if isinstance(b, NiTriShapeData))
    vertices = nif.blocks[data_index].vertices.copy()
    big = to_big_endian(nif)

    line_end = big.index(b"\n") + 1
    version, endian, user, num_blocks, bs = struct.unpack_from("<IBIII", big, line_end)
    assert (version, endian, user, num_blocks, bs) == (0x14020007, 0, 11, 3, 34)  # still little-endian
    pos = line_end + 17
    for _ in range(3):  # export ShortStrings, also unswapped
        pos += 1 + big[pos]
    (num_types,) = struct.unpack_from(">H", big, pos)  # big-endian from here on
    assert num_types == len(nif.header.block_types)
    pos += 2
    names = []
    for _ in range(num_types):
        (length,) = struct.unpack_from(">I", big, pos)
        names.append(big[pos + 4 : pos + 4 + length].decode())
        pos += 4 + length
    assert names == nif.header.block_types
    pos += 2 * num_blocks
    sizes = struct.unpack_from(f">{num_blocks}I", big, pos)
    assert list(sizes) == list(nif.header.block_sizes)
    pos += 4 * num_blocks
    (num_strings,) = struct.unpack_from(">I", big, pos)
    pos += 8
    for _ in range(num_strings):
        pos += 4 + struct.unpack_from(">I", big, pos)[0]
    pos += 4 + 4 * struct.unpack_from(">I", big, pos)[0]  # groups
    block_start = pos + sum(sizes[:data_index])
    # NiGeometryData: group id i32, num vertices u16, keep u8, compress u8, has vertices u8, vertices
    (count,) = struct.unpack_from(">H", big, block_start + 4)
    assert count == len(vertices)
    decoded = np.frombuffer(big, ">f4", count * 3, block_start + 9).reshape(-1, 3)
    np.testing.assert_array_equal(decoded, vertices)
    assert struct.unpack_from(">I", big, len(big) - 8) == (1,)  # footer: one root, big-endian


def test_raw_blocks_refuse_to_change_byte_order(corpus):
    nif = NifFile.read(corpus / "pynifly/tests/tests/FONV/22smg.nif")
    nif.blocks.append(RawBlock("BSUntypedTestBlock", b"\x01\x02\x03\x04"))
    nif.header.little_endian = 0
    with pytest.raises(FormatError, match="cannot change the byte order of a BSUntypedTestBlock"):
        nif.to_bytes()
