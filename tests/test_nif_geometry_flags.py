"""BS Data Flags of NiGeometryData written back as read: the tangents bit (0x1000) says whether
tangents follow the normals, so without normals it says nothing, and BodySlide leaves it set on
the shapes it strips the normals from (a Skyrim LE robe of realmods/). Checked against the bytes
read by the tests' own reader (raw_geometry), on the corpus file and on a file built here."""

import numpy as np
from nif_rewriter import RawNif
from raw_geometry import pack_geometry_data, shape_tail, tri_shape_data

from precombined_nif.core.nif import NifFile

ROBE = "realmods/Dizona-Forte-Bodyslide/meshes/clothes/psiijic/psiijicrobesm_0.nif"
CUBE = "pynifly/tests/tests/Skyrim/Cube.nif"  # Skyrim LE: NiNode, NiTriShape, NiTriShapeData


def no_normal_shapes(raw):
    return [data for data in (shape_tail(raw, i)[1] for i in raw.indices_of("NiTriShape"))
            if tri_shape_data(raw.blocks[data], raw.bs_version)["normals"] is None]  # fmt: skip


def check_kept_and_moved(data):
    """The file reads to the values of its bytes and writes back as it was; its no-normal shapes
    with their vertices moved write the same flags (and the same size) with the moved vertices."""
    raw, nif = RawNif(data), NifFile.from_bytes(data)
    shapes = no_normal_shapes(raw)
    assert shapes and nif.to_bytes() == data
    for index in shapes:
        fields, block = tri_shape_data(raw.blocks[index], raw.bs_version), nif.blocks[index]
        assert fields["bs_data_flags"] & 0x1000 and block.bs_data_flags == fields["bs_data_flags"]
        assert block.normals is None and block.tangents is None
        assert np.array_equal(block.vertices, fields["vertices"]) and np.array_equal(block.uv_sets[0], fields["uvs"])
        block.vertices = block.vertices + np.float32(2.5)
    written = nif.to_bytes()
    assert len(written) == len(data)
    out = RawNif(written)
    for index in shapes:
        before, after = tri_shape_data(raw.blocks[index], raw.bs_version), tri_shape_data(out.blocks[index], out.bs_version)
        assert after["bs_data_flags"] == before["bs_data_flags"] and after["normals"] is None
        assert np.allclose(after["vertices"], before["vertices"] + 2.5) and np.array_equal(after["uvs"], before["uvs"])


def test_a_bodyslide_robe_keeps_its_tangents_bit_without_normals(corpus):
    check_kept_and_moved((corpus / ROBE).read_bytes())


def test_a_built_shape_without_normals_keeps_its_flags(corpus):
    raw = RawNif.read(corpus / CUBE)
    (shape,) = raw.indices_of("NiTriShape")
    _, data = shape_tail(raw, shape)
    vertices = np.array([(0, 0, 0), (10, 0, 0), (0, 10, 0), (10, 10, 5)], np.float64)
    uvs = np.array([(0, 0), (1, 0), (0, 1), (1, 1)], np.float64)
    raw.blocks[data] = bytearray(pack_geometry_data(vertices, [(0, 1, 2), (2, 1, 3)], raw.bs_version, 0x1001, uvs=uvs))
    check_kept_and_moved(raw.to_bytes())


def test_normals_decide_the_bit_where_they_are_stored(corpus):
    """With normals the bit follows the tangents: removed tangents clear it, and the tangents
    given back set it again (read by the tests' reader at the right place)."""
    raw = RawNif.read(corpus / CUBE)
    (shape,) = raw.indices_of("NiTriShape")
    _, data = shape_tail(raw, shape)
    nif = NifFile.from_bytes(raw.to_bytes())
    block = nif.blocks[data]
    assert block.normals is not None and block.tangents is not None
    tangents, bitangents = block.tangents, block.bitangents
    block.tangents = block.bitangents = None
    fields = tri_shape_data(RawNif(nif.to_bytes()).blocks[data], raw.bs_version)
    assert not fields["bs_data_flags"] & 0x1000 and fields["tangents"] is None
    block.tangents, block.bitangents = tangents, bitangents
    fields = tri_shape_data(RawNif(nif.to_bytes()).blocks[data], raw.bs_version)
    assert fields["bs_data_flags"] & 0x1000 and np.array_equal(fields["tangents"], tangents)
