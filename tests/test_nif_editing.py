"""Editing geometry through the codec: values survive a write and a read, dependent fields
(counts, data size, bounding sphere) follow, and impossible data is refused clearly."""

import numpy as np
import pytest

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile, samples
from precombined_nif.core.nif import vertex_format as vf
from precombined_nif.core.nif.blocks.geometry import NiTriShapeData, NiTriStripsData, strips_to_triangles
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape

HALF_STEP = 2.0**-10  # relative spacing of binary16
BYTE_STEP = 1.0 / 255 + 1e-6  # worst error of a [-1, 1] value stored in a byte


def reread(nif):
    return NifFile.from_bytes(nif.to_bytes())


def first_shape(nif):
    return next(block for block in nif.blocks if isinstance(block, BSTriShape) and block.vertex_data is not None)


def assert_sphere_encloses(shape, positions):
    center = np.array(shape.bound_center)
    distances = np.linalg.norm(positions - center, axis=1)
    assert distances.max() <= shape.bound_radius * (1 + 1e-5) + 1e-4
    assert distances.max() >= shape.bound_radius * (1 - 1e-5) - 1e-4  # tight: touches the farthest vertex


def test_sample_cube_decodes_to_the_values_written():
    geometry = samples.cube_geometry(64.0)
    nif = reread(samples.fo4_cube(64.0))
    shape = first_shape(nif)
    assert shape.vertex_desc == vf.build_desc(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, False)
    assert vf.stride_of(shape.vertex_desc) == 20
    np.testing.assert_array_equal(shape.positions, geometry["positions"])  # ±32 is exact in half
    np.testing.assert_array_equal(shape.uvs, geometry["uvs"])
    np.testing.assert_allclose(shape.normals, geometry["normals"], atol=BYTE_STEP)
    np.testing.assert_allclose(shape.tangents, geometry["tangents"], atol=BYTE_STEP)
    np.testing.assert_allclose(shape.bitangents, geometry["bitangents"], atol=BYTE_STEP)
    np.testing.assert_array_equal(shape.triangles, geometry["triangles"])
    assert shape.num_vertices == 24 and shape.num_triangles == 12
    assert_sphere_encloses(shape, geometry["positions"])
    assert shape.bound_center == (0.0, 0.0, 0.0)


def test_edit_positions_uvs_normals_of_a_corpus_shape(corpus):
    nif = NifFile.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    shape = first_shape(nif)
    old_radius = shape.bound_radius
    positions = shape.positions * 2 + np.float32(10)
    uvs = 1 - shape.uvs
    normals = -shape.normals
    shape.positions, shape.uvs, shape.normals = positions, uvs, normals
    back = first_shape(reread(nif))
    np.testing.assert_allclose(back.positions, positions, rtol=HALF_STEP, atol=HALF_STEP)
    np.testing.assert_allclose(back.uvs, uvs, rtol=HALF_STEP, atol=HALF_STEP)
    np.testing.assert_allclose(back.normals, normals, atol=BYTE_STEP)
    assert back.bound_radius == pytest.approx(2 * old_radius, rel=0.02)
    assert_sphere_encloses(back, back.positions)


def test_edit_vertex_count_and_triangles(corpus):
    nif = NifFile.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    index, shape = next((i, b) for i, b in enumerate(nif.blocks) if isinstance(b, BSTriShape) and b.vertex_data is not None)
    assert shape.num_vertices != 24
    cube = samples.cube_geometry(10.0)
    shape.positions = cube["positions"]
    shape.uvs = cube["uvs"]
    shape.normals = cube["normals"]
    shape.set_triangles(cube["triangles"][:10])
    data = nif.to_bytes()
    back = NifFile.from_bytes(data).blocks[index]
    assert (back.num_vertices, back.num_triangles) == (24, 10)
    np.testing.assert_array_equal(back.positions, cube["positions"])
    np.testing.assert_array_equal(back.uvs, cube["uvs"])
    np.testing.assert_array_equal(back.triangles, cube["triangles"][:10])
    stride = vf.stride_of(back.vertex_desc)
    assert NifFile.from_bytes(data).header.block_sizes[index] > 0
    assert back._data_size() == stride * 24 + 6 * 10
    assert_sphere_encloses(back, cube["positions"])


def test_more_than_65535_vertices_is_refused():
    shape = first_shape(samples.fo4_cube())
    with pytest.raises(FormatError, match="65535"):
        shape.positions = np.zeros((70000, 3), np.float32)
    nif = samples.fo4_cube()
    first_shape(nif).vertex_data = np.zeros(70000, first_shape(nif).vertex_data.dtype)
    with pytest.raises(FormatError, match="at most 65535.*split"):
        nif.to_bytes()


def test_triangles_naming_missing_vertices_are_refused():
    nif = samples.fo4_cube()
    first_shape(nif).set_triangles([[0, 1, 24]])
    with pytest.raises(FormatError, match="vertex 24 of only 24"):
        nif.to_bytes()


def test_half_precision_range_is_enforced():
    shape = first_shape(samples.fo4_cube())
    with pytest.raises(FormatError, match="half precision"):
        shape.positions = np.full((24, 3), 70000.0, np.float32)


def test_full_precision_and_new_attributes():
    nif = samples.fo4_cube()
    shape = first_shape(nif)
    positions = shape.positions * 1000.5
    shape.set_vertex_flags(shape.vertex_flags | vf.COLORS | vf.SKINNED, full_precision=True)
    shape.positions = positions
    colors = np.linspace(0, 1, 24 * 4, dtype=np.float32).reshape(24, 4)
    shape.colors = colors
    weights = np.tile(np.float32([0.5, 0.25, 0.25, 0.0]), (24, 1))
    shape.bone_weights = weights
    shape.bone_indices = np.tile(np.uint8([3, 2, 1, 0]), (24, 1))
    back = first_shape(reread(nif))
    assert back.full_precision and back.vertex_flags & vf.FULL_PRECISION
    np.testing.assert_array_equal(back.positions, positions)
    np.testing.assert_allclose(back.colors, colors, atol=0.5 / 255 + 1e-7)
    np.testing.assert_array_equal(back.bone_weights, weights)
    np.testing.assert_array_equal(back.bone_indices[0], [3, 2, 1, 0])
    np.testing.assert_array_equal(back.uvs, samples.cube_geometry(64.0)["uvs"])  # kept through the re-layout


def test_missing_attribute_says_how_to_add_it():
    shape = first_shape(samples.fo4_cube())
    with pytest.raises(FormatError, match="no colors data.*set_vertex_flags"):
        shape.colors = np.ones((24, 4))


def test_edit_fo3_tri_shape_data(corpus):
    nif = NifFile.read(corpus / "niftools/history/test/nif/base_vertex_color0.nif")
    index, data = next((i, b) for i, b in enumerate(nif.blocks) if isinstance(b, NiTriShapeData))
    moved = data.vertices + np.float32([100, 0, 0])
    data.vertices = moved
    data.triangles = data.triangles[:1]
    back = NifFile.from_bytes(nif.to_bytes()).blocks[index]
    np.testing.assert_array_equal(back.vertices, moved)
    assert back.triangle_count == 1
    center = np.array(back.bound_center)
    assert np.linalg.norm(moved - center, axis=1).max() == pytest.approx(back.bound_radius, rel=1e-5)
    assert center[0] > 50


def test_fo3_vertex_arrays_must_agree(corpus):
    nif = NifFile.read(corpus / "niftools/history/test/nif/base_vertex_color0.nif")
    data = next(b for b in nif.blocks if isinstance(b, NiTriShapeData))
    data.vertex_colors = data.vertex_colors[:-1]
    with pytest.raises(FormatError, match="different lengths"):
        nif.to_bytes()


def test_strips_become_triangles_with_alternating_winding():
    triangles = strips_to_triangles([np.array([0, 1, 2, 3, 3, 4, 5])])
    # (0,1,2) (2,1,3) then degenerates with a repeated 3 dropped, then (3,4,5) at even parity.
    np.testing.assert_array_equal(triangles, [[0, 1, 2], [2, 1, 3], [3, 4, 5]])


def test_corpus_strips_decode_within_vertex_range(corpus):
    for path in corpus.glob("pynifly/tests/tests/FONV/*.nif"):
        nif = NifFile.read(path)
        for block in nif.blocks:
            if isinstance(block, NiTriStripsData):
                triangles = block.triangles
                assert len(triangles) > 0 and triangles.max() < block.num_vertices
