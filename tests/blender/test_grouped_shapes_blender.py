"""Shapes built on NiTriShape whose triangles come in groups: a Skyrim LE static's BSLODTriShapes
(the corpus) and a New Vegas landscape LOD tile's BSSegmentedTriShape (built by
tests/raw_geometry.py). They import as the meshes their bytes hold (read by struct in the test),
each face carrying its group; untouched they write back byte for byte; edited they stay their
block type, the triangles of each group together and the table saying where."""

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_geometry import LOD_SOURCE, geometry, groups_of, landscape_lod_file, lod_sizes, lone_vertex_segment_file, segments
from scene import export_bytes, imported

LOD_LEVEL, SEGMENT = "nif_lod_level", "nif_segment"
# A New Vegas Level4 LOD chunk: a NiTriShape, then BSSegmentedTriShapes of 1 vertex (a degenerate
# triangle in three empty segments) and of 10.
FNV_CHUNK = "realmods/Dry_Wells_Reloaded_2/Meshes/landscape/lod/adwDryWellsReloaded/adwDryWellsReloaded.Level4.X-2.Y-2.nif"


def object_of(collection, index):
    return next(obj for obj in collection.all_objects if obj.get("nif_block") == index)


def vertices_of(obj):
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def faces_of(obj):
    corners = np.empty(len(obj.data.loops), np.int32)
    obj.data.loops.foreach_get("vertex_index", corners)
    return corners.reshape(-1, 3).astype(np.int64)


def face_groups(obj, name):
    values = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes[name].data.foreach_get("value", values)
    return values.astype(np.int64)


def proper(triangles):
    return (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])


def group_corners(vertices, triangles, groups):
    """{group: sorted triangles as rounded corner positions, each triangle's corners rotated to
    start at its smallest}: what a group holds, whatever the vertex and triangle order."""
    out = {}
    for triangle, group in zip(triangles, groups):
        corners = [tuple(np.round(vertices[i], 3)) for i in triangle]
        start = corners.index(min(corners))
        out.setdefault(int(group), []).append(tuple(corners[start:] + corners[:start]))
    return {group: sorted(items) for group, items in out.items()}


@pytest.fixture
def landscape(corpus, tmp_path):
    data, shape, table = landscape_lod_file(corpus)
    path = tmp_path / "landscape_lod.nif"
    path.write_bytes(data)
    return path, shape, table


def lod_shapes(path):
    raw = RawNif.read(path)
    return raw, raw.indices_of("BSLODTriShape")


def test_skyrim_lod_shapes_import_as_their_meshes_with_each_face_in_its_level(clean_scene, corpus):
    raw, indices = lod_shapes(corpus / LOD_SOURCE)
    assert len(indices) == 2
    collection = imported(corpus / LOD_SOURCE)
    for index in indices:
        vertices, triangles = geometry(raw, index)
        obj = object_of(collection, index)
        assert obj.type == "MESH" and obj["nif_type"] == "BSLODTriShape"
        np.testing.assert_allclose(vertices_of(obj), vertices, atol=1e-4)
        kept = proper(triangles)
        assert np.array_equal(faces_of(obj), triangles[kept])
        expected = groups_of(lod_sizes(raw, index), len(triangles))[kept]
        assert np.array_equal(face_groups(obj, LOD_LEVEL), expected)
    assert sorted(np.unique(face_groups(object_of(collection, indices[1]), LOD_LEVEL))) == [0, 1]


def test_skyrim_lod_shapes_write_back_untouched_byte_for_byte(clean_scene, corpus, tmp_path):
    collection = imported(corpus / LOD_SOURCE)
    assert export_bytes(collection, tmp_path / "out.nif") == (corpus / LOD_SOURCE).read_bytes()


def test_edited_skyrim_lod_shape_stays_one_with_its_levels(clean_scene, corpus, tmp_path):
    raw, indices = lod_shapes(corpus / LOD_SOURCE)
    collection = imported(corpus / LOD_SOURCE)
    obj = object_of(collection, indices[1])
    obj.data.vertices[0].co.z += 5.0
    wanted = face_groups(obj, LOD_LEVEL)
    wanted[:10] = 2  # ten faces of level 0 go to level 2
    obj.data.attributes[LOD_LEVEL].data.foreach_set("value", wanted.astype(np.int32))
    expected = group_corners(vertices_of(obj), faces_of(obj), wanted)
    out = RawNif(export_bytes(collection, tmp_path / "out.nif"))
    assert out.type_of(indices[1]) == "BSLODTriShape" and out.type_of(indices[0]) == "BSLODTriShape"
    vertices, triangles = geometry(out, indices[1])
    sizes = lod_sizes(out, indices[1])
    assert list(sizes) == np.bincount(wanted, minlength=3).tolist() and sizes[2] == 10
    assert group_corners(vertices, triangles, groups_of(sizes, len(triangles))) == expected
    assert lod_sizes(out, indices[0]) == lod_sizes(raw, indices[0])  # the other shape as it was


def test_only_the_levels_edited_reorder_the_stored_triangles(clean_scene, corpus, tmp_path):
    """Geometry untouched, faces moved between levels: the stored triangles, grouped anew."""
    raw, indices = lod_shapes(corpus / LOD_SOURCE)
    vertices, triangles = geometry(raw, indices[1])
    collection = imported(corpus / LOD_SOURCE)
    obj = object_of(collection, indices[1])
    wanted = face_groups(obj, LOD_LEVEL)
    wanted[-5:] = 0  # five level-1 faces (the last ones) to level 0
    obj.data.attributes[LOD_LEVEL].data.foreach_set("value", wanted.astype(np.int32))
    out = RawNif(export_bytes(collection, tmp_path / "out.nif"))
    new_vertices, new_triangles = geometry(out, indices[1])
    assert np.array_equal(new_vertices, vertices)
    sizes = lod_sizes(out, indices[1])
    assert sizes == (234 + 5, 88 - 5, 0)
    assert group_corners(new_vertices, new_triangles, groups_of(sizes, len(new_triangles))) == group_corners(
        vertices, triangles[proper(triangles)], wanted
    )


def test_a_second_material_on_a_lod_shape_makes_a_second_lod_shape(clean_scene, corpus, tmp_path):
    import bpy

    raw, indices = lod_shapes(corpus / LOD_SOURCE)
    collection = imported(corpus / LOD_SOURCE)
    obj = object_of(collection, indices[1])
    obj.data.materials.append(bpy.data.materials.new("Second"))
    for polygon in obj.data.polygons[:20]:
        polygon.material_index = 1
    groups = face_groups(obj, LOD_LEVEL)
    out = RawNif(export_bytes(collection, tmp_path / "out.nif"))
    added = [i for i in out.indices_of("BSLODTriShape") if i not in indices]
    assert len(added) == 1
    assert sum(lod_sizes(out, added[0])) == 20 and lod_sizes(out, added[0]) == tuple(np.bincount(groups[:20], minlength=3))
    assert lod_sizes(out, indices[1]) == tuple(np.bincount(groups[20:], minlength=3))


def test_landscape_lod_segments_import_as_face_segments(clean_scene, landscape):
    path, shape, table = landscape
    raw = RawNif.read(path)
    vertices, triangles = geometry(raw, shape)
    collection = imported(path)
    obj = object_of(collection, shape)
    assert obj.type == "MESH" and obj["nif_type"] == "BSSegmentedTriShape"
    np.testing.assert_allclose(vertices_of(obj), vertices, atol=1e-4)
    assert np.array_equal(faces_of(obj), triangles)
    assert np.array_equal(face_groups(obj, SEGMENT), groups_of(table, len(triangles)))
    assert export_bytes(collection, path.parent / "out.nif") == path.read_bytes()


def test_edited_landscape_lod_keeps_its_segments_grouped(clean_scene, landscape, tmp_path):
    path, shape, table = landscape
    collection = imported(path)
    obj = object_of(collection, shape)
    obj.data.vertices[40].co.z += 25.0
    wanted = face_groups(obj, SEGMENT)
    wanted[[0, 1]] = 15  # two faces of the first cell join the last
    wanted[[8]] = -1  # one face of no segment: goes to the first holding triangles
    obj.data.attributes[SEGMENT].data.foreach_set("value", wanted.astype(np.int32))
    expected = group_corners(vertices_of(obj), faces_of(obj), np.where(wanted < 0, 0, wanted))
    out = RawNif(export_bytes(collection, tmp_path / "out.nif"))
    assert out.type_of(shape) == "BSSegmentedTriShape"
    written = segments(out, shape)
    counts = np.bincount(np.where(wanted < 0, 0, wanted), minlength=len(table))
    assert np.array_equal(written["num_triangles"], counts) and counts[15] == 10 and counts[1] == 7
    assert np.array_equal(written["start_index"], 3 * (np.cumsum(counts) - counts))
    assert np.array_equal(written["flags"], table["flags"])
    vertices, triangles = geometry(out, shape)
    assert group_corners(vertices, triangles, groups_of(written, len(triangles))) == expected


def check_segmented_shapes_import(raw, collection):
    """Each BSSegmentedTriShape an object of its vertices and proper triangles (read by struct),
    each face in its segment; the degenerate triangles make no face."""
    for index in raw.indices_of("BSSegmentedTriShape"):
        vertices, triangles = geometry(raw, index)
        obj = object_of(collection, index)
        assert obj["nif_type"] == "BSSegmentedTriShape"
        np.testing.assert_allclose(vertices_of(obj), vertices, atol=1e-4)
        kept = proper(triangles)
        assert np.array_equal(faces_of(obj), triangles[kept])
        assert np.array_equal(face_groups(obj, SEGMENT), groups_of(segments(raw, index), len(triangles))[kept])


def test_a_lone_vertex_segmented_shape_exports_exactly(clean_scene, corpus, tmp_path):
    """A segmented shape of one vertex and a degenerate triangle in no segment: untouched, the
    file writes back byte for byte; with the other shape edited, its blocks stay as they were."""
    data, lone = lone_vertex_segment_file(corpus)
    path = tmp_path / "lone.nif"
    path.write_bytes(data)
    raw = RawNif(data)
    collection = imported(path)
    check_segmented_shapes_import(raw, collection)
    obj = object_of(collection, lone)
    assert len(obj.data.vertices) == 1 and len(obj.data.polygons) == 0
    assert export_bytes(collection, tmp_path / "out.nif") == data
    (grid,) = [i for i in raw.indices_of("BSSegmentedTriShape") if i != lone]
    object_of(collection, grid).data.vertices[40].co.z += 25.0
    out = RawNif(export_bytes(collection, tmp_path / "edited.nif"))
    lone_data = geometry(raw, lone)
    assert out.blocks[lone] == raw.blocks[lone] and np.array_equal(geometry(out, lone)[1], lone_data[1])
    vertices, _ = geometry(out, grid)
    assert vertices[40][2] == pytest.approx(geometry(raw, grid)[0][40][2] + 25.0, abs=1e-3)


def test_the_new_vegas_lod_chunk_imports_and_exports_exactly(clean_scene, corpus, tmp_path):
    path = corpus / FNV_CHUNK
    raw = RawNif.read(path)
    assert len(raw.indices_of("BSSegmentedTriShape")) == 2
    collection = imported(path)
    check_segmented_shapes_import(raw, collection)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()
    big = max(raw.indices_of("BSSegmentedTriShape"), key=lambda index: len(geometry(raw, index)[0]))
    obj = object_of(collection, big)
    obj.data.vertices[3].co.z += 10.0
    out = RawNif(export_bytes(collection, tmp_path / "edited.nif"))
    for index in raw.indices_of("BSSegmentedTriShape"):
        if index != big:
            assert out.blocks[index] == raw.blocks[index]
    vertices, triangles = geometry(out, big)
    written = segments(out, big)
    assert np.array_equal(written["flags"], segments(raw, big)["flags"])
    old_vertices, old_triangles = geometry(raw, big)
    old_groups = groups_of(segments(raw, big), len(old_triangles))
    moved = old_vertices.copy()
    moved[3, 2] += 10.0
    assert group_corners(vertices, triangles, groups_of(written, len(triangles))) == group_corners(moved, old_triangles, old_groups)
