"""Skyrim SE skinned shapes through Blender, every layout the corpus holds (counts 0 with the
geometry in the partition's buffer, BSDynamicTriShape, several partitions, body parts, plain
NiSkinInstance): what Blender shows is checked against tests/sse_raw.py's struct reading."""

import numpy as np
import pytest
import raw_tri_shape
from nif_rewriter import RawNif
from scene import blender_weights, cube, export_objects, imported, mesh_arrays, skinned_column, snapshot
from sse_raw import raw_sse_shapes
from support import CORPUS, corpus_bytes, corpus_files

SSE_SKINNED = [
    p
    for p in corpus_files("pynifly/tests/tests/SkyrimSE/**/*.nif") + corpus_files("realmods/sse-deadly-mutilation/**/*.nif")
    + corpus_files("pynifly/tests/tests/FO4/VaaMaleScarR04.nif")
    if b"NiSkinPartition" in corpus_bytes(p) and RawNif(corpus_bytes(p)).bs_version == 100  # glassbowskinned is LE
]


def dense(weights, count, nodes):
    out = np.zeros((count, len(nodes)))
    column = {node: i for i, node in enumerate(nodes)}
    for vertex, bones in weights.items():
        for node, weight in bones.items():
            out[vertex, column[node]] = weight
    return out


def check_against_raw(obj, raw):
    """An imported SSE skinned shape shows what the bytes hold."""
    positions, triangles, uv, normals = mesh_arrays(obj)
    np.testing.assert_array_equal(positions, raw["positions"].astype(np.float32))
    t = raw["triangles"]
    real = (t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])
    np.testing.assert_array_equal(triangles, t[real])
    if raw["uvs"] is not None:
        np.testing.assert_allclose(uv, np.c_[raw["uvs"][triangles, 0].ravel(), 1 - raw["uvs"][triangles, 1].ravel()], atol=1e-6)
    if raw["normals"] is not None:
        expected = raw["normals"][triangles.ravel()]
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        # Blender keeps no normal on a face of no area, nor on the corners sharing its vertices
        p = raw["positions"][triangles]
        flat = triangles[np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1) == 0]
        skip = np.isin(triangles.ravel(), flat)
        assert skip.mean() < 0.01  # maleorchair27 has two such faces
        np.testing.assert_allclose(normals[~skip], expected[~skip], atol=3e-3)
    if raw["colors"] is not None:
        colors = np.empty(4 * len(positions), np.float32)
        obj.data.color_attributes["Color"].data.foreach_get("color_srgb", colors)
        np.testing.assert_allclose(colors.reshape(-1, 4), raw["colors"], atol=1e-6)
    got, nodes = blender_weights(obj)
    want = dense(raw["weights"], len(positions), nodes)
    # the buffer holds the weights as halves, the partitions (what Blender shows) as floats
    np.testing.assert_allclose(got / np.maximum(got.sum(axis=1, keepdims=True), 1e-9), want / np.maximum(want.sum(axis=1, keepdims=True), 1e-9), atol=2e-3)
    if raw["body_parts"] is not None:
        parts = np.empty(len(obj.data.polygons), np.int32)
        obj.data.attributes["nif_body_part"].data.foreach_get("value", parts)
        np.testing.assert_array_equal(parts, np.array(raw["body_parts"])[raw["part"][real]])


@pytest.mark.slow
@pytest.mark.parametrize("path", SSE_SKINNED, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_sse_skinned_shapes_import_as_their_partition_stores_them(clean_scene, path):
    shapes = raw_sse_shapes(path)
    assert shapes
    collection = imported(path)
    for index, raw in shapes.items():
        obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
        assert obj.type == "MESH", obj.name
        assert raw["counts"][0] in (0, raw["count"])  # the two layouts: counts 0, or the buffer's
        check_against_raw(obj, raw)


def test_corpus_holds_the_layouts(corpus):
    """The files above cover what the issue lists: counts 0 and counts set, BSDynamicTriShape,
    several partitions with maps that are not the identity, body parts, plain skin instances."""
    shapes = [raw for path in SSE_SKINNED for raw in raw_sse_shapes(path).values()]
    assert any(raw["counts"] == (0, 0) for raw in shapes) and any(raw["counts"][0] == raw["count"] for raw in shapes)
    assert any(len(raw["vertex_maps"]) > 2 and any(not np.array_equal(m, np.arange(len(m))) for m in raw["vertex_maps"]) for raw in shapes)
    # partition triangles name vertices beyond their partition's map: shape numbering
    assert any(raw["triangles"][raw["part"] == 0].max() >= len(raw["vertex_maps"][0]) for raw in shapes)
    assert any(raw["body_parts"] for raw in shapes) and any(raw["body_parts"] is None for raw in shapes)


FEET = "pynifly/tests/tests/SkyrimSE/femalefeet_0.nif"  # one shape, counts 0, one partition


def damaged_feet(corpus, damage):
    """femalefeet_0 with one field of its skin damaged at the byte layout sse_raw reads."""
    import struct

    nif = RawNif.read(corpus / FEET)
    ((index, raw),) = raw_sse_shapes(corpus / FEET).items()
    at = raw["at"]
    partition = nif.blocks[at["partition"]]
    count = raw["count"]
    if damage == "vertex map":  # "<2H" at counts: triangles, vertices
        struct.pack_into("<H", partition, at["vertex_map"][0], count + 40)
    elif damage == "bone index":
        partition[at["bone_indices"][0]] = 200
    elif damage == "vertex count":
        struct.pack_into("<H", nif.blocks[index], at["counts"] + 2, count - 1)
    elif damage == "triangle count":
        struct.pack_into("<H", nif.blocks[index], at["counts"], 5)
    elif damage == "short buffer":  # one vertex fewer: the partition still maps the last one
        size, stride = struct.unpack_from("<2I", partition, at["buffer"])
        struct.pack_into("<I", partition, at["buffer"], size - stride)
        del partition[at["buffer"] + 16 + size - stride : at["buffer"] + 16 + size]
    elif damage == "buffer past the block":
        struct.pack_into("<I", partition, at["buffer"], 0x7FFFFFF0 - 0x7FFFFFF0 % 40)
    return nif.to_bytes(), nif.blocks[index]


@pytest.mark.parametrize(
    "damage, message",
    [
        ("vertex map", "shape 'FootFemale_Big': skin partition 0 maps vertex 258 of only 218"),
        ("vertex count", "shape 'FootFemale_Big': it counts 217 vertices, its skin partition holds 218"),
        ("triangle count", "shape 'FootFemale_Big': it counts 5 triangles, its skin partitions hold 316"),
        ("short buffer", "shape 'FootFemale_Big': skin partition 0 maps vertex 217 of only 217"),
        ("buffer past the block", "NiSkinPartition"),
    ],
)
def test_damaged_sse_skin_fails_naming_the_shape_and_leaves_nothing(clean_scene, corpus, tmp_path, damage, message):
    import bpy

    data, _ = damaged_feet(corpus, damage)
    path = tmp_path / "feet.nif"
    path.write_bytes(data)
    before = snapshot()
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.import_scene.precombined_nif(filepath=str(path))
    assert message in str(caught.value) and str(path) in str(caught.value) and "internal error" not in str(caught.value)
    assert snapshot() == before


def test_partition_bone_index_past_its_bones_imports_unskinned_with_a_warning(clean_scene, corpus, tmp_path):
    import bpy

    from precombined_nif.io.file_import import import_nif

    data, _ = damaged_feet(corpus, "bone index")
    path = tmp_path / "feet.nif"
    path.write_bytes(data)
    collection, warnings = import_nif(bpy.context, str(path))
    (mesh,) = [o for o in collection.objects if o.type == "MESH"]
    assert len(mesh.data.vertices) == 218 and not mesh.vertex_groups
    assert any(w.startswith("FootFemale_Big: skin not imported (a skin partition names a bone") for w in warnings), warnings


def export_collection(collection, path):
    from precombined_nif.io.nif.exporter import export_nif

    _nif, messages = export_nif(str(path), list(collection.all_objects))
    return messages


def add_vertex(obj):
    """A new vertex beside vertex 0, with a triangle joining it to vertex 0's first face's edge,
    weighted as vertex 0. Returns its index."""
    import bmesh

    mesh = obj.data
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.verts.ensure_lookup_table()
    face = bm.verts[0].link_faces[0]
    a, b = [v for v in face.verts][:2]
    new = bm.verts.new(a.co + (a.co - face.calc_center_median()))
    bm.faces.new((b, a, new))
    beside = a.index
    bm.to_mesh(mesh)
    bm.free()
    index = len(mesh.vertices) - 1
    for element in mesh.vertices[beside].groups:
        obj.vertex_groups[element.group].add([index], element.weight, "REPLACE")
    return index, beside


EDITED = ["pynifly/tests/tests/SkyrimSE/malebody_1.nif", "pynifly/tests/tests/SkyrimSE/childhead.nif",
          "pynifly/tests/tests/SkyrimSE/treeaspen03.nif", "realmods/sse-deadly-mutilation/meshes/armor/bandit/body3m_1.nif"]


@pytest.mark.parametrize("name", EDITED)
def test_edited_sse_skinned_mesh_is_written_in_its_layout(clean_scene, corpus, tmp_path, name):
    """Vertices moved, a weight changed, a vertex added: the file keeps its layout (counts 0 and the
    buffer in the partition, or a BSDynamicTriShape's dynamic vertices), four normalised weights
    per vertex in partitions within the bone limit, and re-imports with the edits."""
    import bpy

    path = corpus / name
    before = raw_sse_shapes(path)
    index = next(iter(before))
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    moved = np.arange(0, len(obj.data.vertices), 50)
    for v in moved.tolist():
        obj.data.vertices[v].co.z += 2.0
    group = obj.vertex_groups[obj.data.vertices[1].groups[0].group]
    group.add([1], 0.25, "REPLACE")
    added, beside = add_vertex(obj)
    mesh_positions = mesh_arrays(obj)[0]
    edited_weights, nodes = blender_weights(obj)
    messages = export_collection(collection, tmp_path / "out.nif")
    faces = "1 faces have no body part of the file's; they are written in body part"
    parts = before[index]["body_parts"]
    assert [m for m in messages if obj.name in m] == ([f"{obj.name}: {faces} {parts[0]}"] if parts and 0 not in parts else [])
    after = raw_sse_shapes(tmp_path / "out.nif")
    raw = after[index]
    assert raw["counts"] == (raw["count"] if before[index]["counts"][0] else 0, 0 if not before[index]["counts"][1] else len(raw["triangles"]))
    assert set(map(tuple, raw["positions"].astype(np.float32).tolist())) == set(map(tuple, mesh_positions.tolist()))
    # four weights per vertex at most, normalised, every vertex weighted
    counted = [len(bones) for bones in raw["weights"].values()]
    assert len(raw["weights"]) == raw["count"] and max(counted) <= 4
    np.testing.assert_allclose([sum(b.values()) for b in raw["weights"].values()], 1.0, atol=2e-3)
    source, written = RawNif.read(path), RawNif.read(tmp_path / "out.nif")
    assert [written.type_of(i) for i in range(len(written.blocks))] == [source.type_of(i) for i in range(len(source.blocks))]
    if before[index]["body_parts"] is not None:
        assert set(raw["body_parts"]) == set(before[index]["body_parts"])
    assert raw["at"]["partition"] == before[index]["at"]["partition"] and raw["desc"] == before[index]["desc"]
    bpy.data.collections.remove(collection)
    again = imported(tmp_path / "out.nif")
    obj2 = next(o for o in again.all_objects if o.get("nif_block") == index)
    check_against_raw(obj2, raw)
    positions2 = mesh_arrays(obj2)[0]
    weights2, nodes2 = blender_weights(obj2)
    # each Blender vertex of the edited mesh is found, with its (limited, normalised) weights
    for v in [*moved[:5].tolist(), 1, added]:
        at = np.flatnonzero((positions2 == mesh_positions[v]).all(axis=1))
        assert len(at), v
        got = {nodes2[c]: w for c, w in enumerate(weights2[at[0]]) if w > 0}
        want = {nodes[c]: w for c, w in enumerate(edited_weights[v]) if w > 0}
        order = sorted(want, key=lambda n: -want[n])[:4]
        total = sum(want[n] for n in order)
        assert set(got) == set(order), v
        for node in order:
            assert abs(got[node] - want[node] / total) < 2e-3


def block_types(path):
    return RawNif.read(path).block_types()


def shape_fields(path, index):
    """(flags, vertex desc) of a BSTriShape, read with struct."""
    fields = raw_tri_shape.shape_fields(RawNif.read(path), index)[0]
    return fields["flags"], fields["desc"]


def shader_flags(path, index):
    """Shader flags 1 and 2 of a Skyrim SE BSLightingShaderProperty."""
    return raw_tri_shape.lighting_shader(RawNif.read(path), index)["flags"]


def vanilla_desc(flags):
    """The vertex desc a corpus SSE shape with these attribute flags holds."""
    paths = [p for p in corpus_files("pynifly/tests/tests/SkyrimSE/**/*.nif") if RawNif.read(p).bs_version == 100]
    return raw_tri_shape.vanilla_desc(paths, flags)


def test_new_sse_cube_matches_vanilla_statics_and_reimports(clean_scene, tmp_path):
    import bpy

    box = cube()
    positions = {tuple(np.round(v.co, 4)) for v in box.data.vertices}
    uvs = sorted(tuple(np.round(d.uv, 4)) for d in box.data.uv_layers[0].data)
    export_objects([box], tmp_path / "cube.nif", game="SSE")
    path = tmp_path / "cube.nif"
    # farmbench01 / noblecrate01: BSFadeNode, BSTriShape, BSLightingShaderProperty, BSShaderTextureSet
    assert block_types(path) == ["BSFadeNode", "BSTriShape", "BSLightingShaderProperty", "BSShaderTextureSet"]
    assert RawNif.read(path).bs_version == 100 and RawNif.read(path).user_version == 12
    flags, desc = shape_fields(path, 1)
    assert flags == 0x8000E and desc == vanilla_desc(0x1B)  # steeldagger's: position, UV, normal, tangent
    assert shader_flags(path, 2) == (0x82400301, 0x8021)
    bpy.data.objects.remove(box)
    again = imported(path)
    (obj,) = [o for o in again.all_objects if o.type == "MESH"]
    got, got_triangles, got_uvs, _ = mesh_arrays(obj)
    assert len(got_triangles) == 12 and len(got) == 24  # a UV-mapped, flat-shaded cube: 4 vertices a face
    assert {tuple(np.round(p, 4)) for p in got} == positions
    assert set(map(tuple, np.round(got_uvs, 4).tolist())) == set(uvs)


@pytest.mark.parametrize("flat", [False, True], ids=["column", "plane"])
def test_new_sse_skinned_mesh_matches_vanilla_armour_and_reimports(clean_scene, tmp_path, flat):
    import bpy

    armature, plane = skinned_column(flat)
    order = [plane.vertex_groups[name].index for name in ("Lower", "Upper")]
    by_position = {
        tuple(np.round(np.array(plane.matrix_world @ v.co), 3)): np.array([{g.group: g.weight for g in v.groups}.get(i, 0.0) for i in order])
        for v in plane.data.vertices
    }
    path = tmp_path / "skinned.nif"
    export_objects([armature, plane], path, game="SSE")
    types = block_types(path)
    # femalefeet_0: nodes, then BSTriShape, its skin (instance, data, partition), its shader and textures
    shape = types.index("BSTriShape")
    assert types[0] == "NiNode" and set(types[:shape]) == {"NiNode"}
    assert types[shape:] == ["BSTriShape", "NiSkinInstance", "NiSkinData", "NiSkinPartition", "BSLightingShaderProperty", "BSShaderTextureSet"]
    flags, desc = shape_fields(path, shape)
    assert flags == 0x8000E and desc == vanilla_desc(0x5B)  # malebody_1's loincloth: with the skin
    assert shader_flags(path, shape + 4) == (0x82400303, 0x8021)  # vanilla's, with the skinned bit
    (raw,) = raw_sse_shapes(path).values()
    assert raw["counts"] == (0, 0) and len(raw["weights"]) == raw["count"]
    np.testing.assert_allclose([sum(b.values()) for b in raw["weights"].values()], 1.0, atol=2e-3)
    bpy.data.objects.remove(plane)
    bpy.data.objects.remove(armature)
    again = imported(path)
    (obj,) = [o for o in again.all_objects if o.type == "MESH"]
    check_against_raw(obj, raw)
    got, nodes = blender_weights(obj)
    names = {bone["nif_block"]: bone.name for bone in obj.modifiers["Armature"].object.data.bones}
    assert [names[n] for n in nodes] == ["Lower", "Upper"]
    for vertex in obj.data.vertices:
        place = tuple(np.round(np.array(obj.matrix_world @ vertex.co), 3))
        np.testing.assert_allclose(got[vertex.index], by_position[place], atol=2e-3)


@pytest.mark.parametrize("name", ["pynifly/tests/tests/SkyrimSE/farmbench01.nif", "pynifly/tests/tests/SkyrimSE/steeldagger.nif"])
def test_edited_sse_static_is_written_as_sse(clean_scene, corpus, tmp_path, name):
    """An edited Skyrim SE static keeps its file (collision and all) and its vertex layout."""
    from precombined_nif.core.nif import NifFile

    path = corpus / name
    source = NifFile.read(path)
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.get("nif_type") == "BSTriShape" and o.type == "MESH")
    index = obj["nif_block"]
    obj.data.vertices[0].co.z += 3.0
    moved = np.array(obj.data.vertices[0].co)
    messages = export_collection(collection, tmp_path / "out.nif")
    assert not messages
    out = NifFile.read(tmp_path / "out.nif")
    assert out.header.game == "SSE" and block_types(tmp_path / "out.nif") == block_types(path)
    shape = out.blocks[index]
    assert shape.vertex_desc == source.blocks[index].vertex_desc and shape_fields(tmp_path / "out.nif", index) == shape_fields(path, index)
    assert (np.abs(shape.positions - moved).max(axis=1) < 1e-5).any()
    assert shape.bound_radius >= source.blocks[index].bound_radius - 1e-3


@pytest.mark.parametrize("name", ["pynifly/tests/tests/Skyrim/malehead.nif", "pynifly/tests/tests/Skyrim/draugr.nif"])
def test_edited_skyrim_le_skinned_mesh_is_written_as_skyrim(clean_scene, corpus, tmp_path, name):
    """Skyrim LE shares Skyrim SE's skin blocks (but keeps NiTriShape geometry, partitions
    numbered within themselves): a moved vertex and a changed weight are written into the file
    as Skyrim, four normalised weights per vertex, body parts kept."""
    import bpy

    from precombined_nif.core.nif import NifFile, skinning

    path = corpus / name
    source = NifFile.read(path)
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.type == "MESH" and o.modifiers.get("Armature"))
    index = obj["nif_block"]
    obj.data.vertices[0].co.z += 2.0
    moved = np.array(obj.data.vertices[0].co)
    obj.vertex_groups[obj.data.vertices[1].groups[0].group].add([1], 0.25, "REPLACE")
    messages = export_collection(collection, tmp_path / "out.nif")
    assert not [m for m in messages if "anew" in m or obj.name in m], messages
    out = NifFile.read(tmp_path / "out.nif")
    assert out.header.game == "SKYRIM" and block_types(tmp_path / "out.nif") == block_types(path)
    shape = out.blocks[index]
    vertices = out.blocks[shape.data].vertices
    assert (np.abs(vertices - moved).max(axis=1) < 1e-5).any()
    instance, data, partition = skinning.skin_blocks(out, shape.skin_instance)
    weights = skinning.shape_weights(instance, data, partition, len(vertices))
    assert ((weights > 0).sum(axis=1) <= 4).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    if hasattr(instance, "partitions"):
        old = skinning.skin_blocks(source, source.blocks[index].skin_instance)[0]
        assert set(instance.partitions["body_part"].tolist()) == set(old.partitions["body_part"].tolist())
    covered = np.concatenate([skinning.partition_triangles(part) for part in partition.partitions])
    assert len(covered) == len(out.blocks[shape.data].triangles)
    bpy.data.collections.remove(collection)
    again = imported(tmp_path / "out.nif")
    assert next(o for o in again.all_objects if o.get("nif_block") == index).vertex_groups


def test_sse_skinned_shape_with_inline_vertices_imports_and_writes_back(clean_scene, corpus, tmp_path):
    """The other layout tools write: the skinned shape counts and holds its vertices itself, the
    partition holding them too (made here from femalefeet_0 by sse_skin, which the exporter uses
    to write that layout back): Blender shows the shape's own vertices and the partition's
    weights; untouched it writes back byte for byte, edited in the same layout."""
    import bpy

    from precombined_nif.core.nif import NifFile, skinning, sse_skin

    nif = NifFile.read(corpus / FEET)
    ((index, raw),) = raw_sse_shapes(corpus / FEET).items()
    shape = nif.blocks[index]
    found = skinning.partition_geometry(nif, shape)
    instance, data, partition = skinning.skin_blocks(nif, shape.skin)
    indices, values = skinning.limit_weights(skinning.shape_weights(instance, data, partition, len(found.positions)))
    shape.positions, shape.uvs, shape.colors = found.positions, found.uvs, found.colors  # feet: no normals
    shape.set_triangles(found.triangles)
    sse_skin.store_in_partition(shape, partition, (True, True, True), indices, values)
    path = tmp_path / "inline.nif"
    nif.write(path)
    assert NifFile.read(path).blocks[index].num_vertices == raw["count"]
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    positions, triangles, _uv, _normals = mesh_arrays(obj)
    np.testing.assert_array_equal(positions, raw["positions"].astype(np.float32))
    np.testing.assert_array_equal(triangles, raw["triangles"])
    got, nodes = blender_weights(obj)
    want = dense(raw["weights"], len(positions), nodes)
    np.testing.assert_allclose(got / got.sum(axis=1, keepdims=True), want / want.sum(axis=1, keepdims=True), atol=2e-3)
    assert not export_collection(collection, tmp_path / "same.nif")
    assert (tmp_path / "same.nif").read_bytes() == path.read_bytes()
    obj.data.vertices[0].co.z += 1.0
    export_collection(collection, tmp_path / "edited.nif")
    edited = NifFile.read(tmp_path / "edited.nif").blocks[index]
    assert edited.vertex_data is not None and edited.num_vertices == len(edited.positions)
    written = NifFile.read(tmp_path / "edited.nif")
    np.testing.assert_array_equal(skinning.skin_blocks(written, edited.skin)[2].positions, edited.positions)
