"""Skinned NIFs through Blender: armatures, vertex groups and deformation against the file's own
skinning math; export back through io.nif.skin_export onto the imported file as template."""

import numpy as np
import pytest
from raw_skin import bs_skin
from scene import export, imported
from support import CORPUS, corpus_bytes, corpus_files_holding

from precombined_nif.core.nif import NifFile, segments, skinning
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape

FO4_BODY = "pynifly/tests/tests/FO4/MaleBody.nif"
FO4_GOLDEN = "nifly/tests/input/TestNifFile_Skinned_FO4.nif"
FNV_OUTFIT = "pynifly/tests/tests/FONV/outfitf_simple.nif"
BODY_OFF_BIND = "pynifly/tests/tests/FO4/BTMaleBody.nif"  # nodes 120 units from the bind pose


def skinned_shapes(nif):
    return [(i, b) for i, b in enumerate(nif.blocks) if getattr(b, "skinned", False)]


def file_skin(nif, index, block):
    """(bone node indices, binds, dense normalised weights, positions) straight from the codec."""
    instance_index = block.skin if isinstance(block, BSTriShape) else block.skin_instance
    instance, data, partition = skinning.skin_blocks(nif, instance_index)
    if isinstance(block, BSTriShape):
        positions = block.positions
        if block.vertex_data is None:  # Skyrim SE: the dynamic vertices, else the partition's buffer
            dynamic = getattr(block, "dynamic_vertices", None)
            positions = dynamic[:, :3] if dynamic is not None and len(dynamic) else partition.positions
        weights = skinning.shape_weights(instance, data, partition, len(positions), (block.bone_indices, block.bone_weights))
    else:
        positions = nif.blocks[block.data].vertices
        weights = skinning.shape_weights(instance, data, partition, len(positions))
    weights = weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-12)
    return [int(b) for b in instance.bones], skinning.bind_matrices(instance, data), weights, positions


def evaluated_positions(obj):
    import bpy

    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).to_mesh()
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    obj.evaluated_get(depsgraph).to_mesh_clear()
    return co.reshape(-1, 3).astype(np.float64)


@pytest.mark.parametrize("name", [FO4_BODY, FO4_GOLDEN, FNV_OUTFIT, "pynifly/tests/tests/FO4/Baby.nif"])
def test_armature_bones_and_groups_match_the_codec(clean_scene, corpus, name):
    nif = NifFile.read(corpus / name)
    collection = imported(corpus / name)
    armatures = [o for o in collection.all_objects if o.type == "ARMATURE"]
    bone_nodes = {int(b) for _, shape in skinned_shapes(nif) for b in file_skin(nif, _, shape)[0]}
    assert {bone["nif_block"] for a in armatures for bone in a.data.bones} == bone_nodes
    for index, block in skinned_shapes(nif):
        obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
        bones, _binds, weights, _ = file_skin(nif, index, block)
        modifier = obj.modifiers["Armature"]
        names = {bone["nif_block"]: bone.name for bone in modifier.object.data.bones}
        assert len(obj.vertex_groups) == len(bones)
        for column, node in enumerate(bones[:5]):
            group = obj.vertex_groups[names[node]]
            got = np.zeros(len(weights))
            for vertex in obj.data.vertices:
                for element in vertex.groups:
                    if element.group == group.index:
                        got[vertex.index] = element.weight
            raw = skinning.shape_weights(*skinning.skin_blocks(nif, block.skin if isinstance(block, BSTriShape) else block.skin_instance), len(weights), (block.bone_indices, block.bone_weights) if isinstance(block, BSTriShape) else None)
            np.testing.assert_allclose(got, raw[:, column], atol=1e-6)


def skinned_files():
    """Skinned NIFs of the games the import builds meshes for (Starfield's BSGeometry is not
    imported yet: its meshes live in .mesh files)."""
    skins = (b"BSSkin::Instance", b"NiSkinInstance", b"BSDismemberSkinInstance")
    return [p for p in corpus_files_holding("**/*.nif", *skins) if p.name != "Corrupt.nif" and b"BSGeometry" not in corpus_bytes(p)]


def drawn_positions(path, nif, index, block, moved=None):
    """Where the game draws a skinned shape's vertices: sum_i w_i * node_i @ bind_i @ v, with
    the bone nodes' world matrices composed from the file's bytes (``moved``: {node: extra
    local matrix} applied after a node's own transform)."""
    from raw_nodes import read_nodes, world_matrices

    nodes, roots = read_nodes(path)
    for node, extra in (moved or {}).items():
        nodes[node].local = nodes[node].local @ extra
    worlds = world_matrices(nodes, roots)
    bones, binds, weights, positions = file_skin(nif, index, block)
    homogeneous = np.c_[positions, np.ones(len(positions))]
    drawn = np.zeros((len(positions), 3))
    for column, (bone, bind) in enumerate(zip(bones, binds)):
        drawn += weights[:, column : column + 1] * (homogeneous @ (worlds[bone] @ bind).T)[:, :3]
    return drawn


def world_positions(obj):
    evaluated = evaluated_positions(obj)
    matrix = np.array(obj.matrix_world)
    return evaluated @ matrix[:3, :3].T + matrix[:3, 3]


@pytest.mark.slow
@pytest.mark.parametrize("path", skinned_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_skinned_meshes_show_where_the_game_draws_them(clean_scene, path):
    nif = NifFile.read(path)
    collection = imported(path)
    for index, block in skinned_shapes(nif):
        obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
        assert obj.type == "MESH", obj.name  # Skyrim SE shapes too, their geometry in the partition
        if "Armature" not in obj.modifiers:
            continue  # a skin the import reported as unreadable
        weighted = file_skin(nif, index, block)[2].sum(axis=1) > 0  # the game has no place for the rest
        assert weighted.any()
        np.testing.assert_allclose(world_positions(obj)[weighted], drawn_positions(path, nif, index, block)[weighted], atol=2e-3)


@pytest.mark.parametrize("name", [FO4_BODY, FNV_OUTFIT, BODY_OFF_BIND])
def test_posed_bone_deforms_as_the_file_skins(clean_scene, corpus, name):
    import bpy
    from mathutils import Matrix

    nif = NifFile.read(corpus / name)
    index, block = skinned_shapes(nif)[0]
    bones, _binds, weights, _positions = file_skin(nif, index, block)
    collection = imported(corpus / name)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    column = int(np.argmax((weights > 0).sum(axis=0)))  # the bone weighting the most vertices
    armature = obj.modifiers["Armature"].object
    bone = next(b for b in armature.data.bones if b["nif_block"] == bones[column])
    assert not bone.children
    turn = Matrix.Rotation(0.5, 4, "X") @ Matrix.Translation((1.0, 2.0, 3.0))
    pose_bone = armature.pose.bones[bone.name]
    pose_bone.matrix_basis = pose_bone.matrix_basis @ turn
    bpy.context.view_layer.update()
    # posing a bone in Blender moves its node in the node's own frame, as the game would
    expected = drawn_positions(corpus / name, nif, index, block, {bones[column]: np.array(turn)})
    np.testing.assert_allclose(world_positions(obj), expected, atol=2e-3)


def test_fnv_body_parts_become_face_attributes(clean_scene, corpus):
    nif = NifFile.read(corpus / FNV_OUTFIT)
    index, block = skinned_shapes(nif)[0]
    collection = imported(corpus / FNV_OUTFIT)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    instance = nif.blocks[block.skin_instance]
    partition = nif.blocks[instance.skin_partition]
    values = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes["nif_body_part"].data.foreach_get("value", values)
    counts = {}
    for part, record in zip(partition.partitions, instance.partitions):
        counts[int(record["body_part"])] = counts.get(int(record["body_part"]), 0) + int(part.num_triangles)
    assert {int(v): int(n) for v, n in zip(*np.unique(values, return_counts=True))} == counts
    assert [tuple(p) for p in obj["nif_body_parts"]] == [tuple(int(v) for v in (r["body_part"], r["part_flag"])) for r in instance.partitions]


def test_skin_option_off_keeps_bones_as_empties(clean_scene, corpus):
    import bpy

    from precombined_nif.io.nif.importer import SceneBuilder

    nif = NifFile.read(corpus / FO4_GOLDEN)
    collection = bpy.data.collections.new("noskin")
    builder = SceneBuilder(nif, collection, skin=False)
    builder.build()
    assert not [o for o in collection.objects if o.type == "ARMATURE"]
    assert {o.name for o in collection.objects if o.type == "EMPTY"} >= {"BoneA", "BoneB"}
    bpy.data.collections.remove(collection)


def exported(path, game, collection):
    from precombined_nif.io.nif.exporter import NifExporter

    exporter = NifExporter(game, nif=NifFile.read(path))
    return NifFile.from_bytes(bytearray(exporter.export(list(collection.all_objects)).to_bytes()))


@pytest.mark.parametrize("name, game", [(FO4_GOLDEN, "FO4"), (FO4_BODY, "FO4"), (FNV_OUTFIT, "FO3")])
def test_unedited_skin_reexports_byte_identical(clean_scene, corpus, name, game):
    from precombined_nif.io.nif.exporter import NifExporter

    collection = imported(corpus / name)
    exporter = NifExporter(game, nif=NifFile.read(corpus / name))
    assert bytes(exporter.export(list(collection.all_objects)).to_bytes()) == (corpus / name).read_bytes()


@pytest.mark.parametrize("name, game", [(FO4_GOLDEN, "FO4"), (FNV_OUTFIT, "FO3")])
def test_edited_weights_are_rewritten_in_place(clean_scene, corpus, name, game):
    nif = NifFile.read(corpus / name)
    index, block = skinned_shapes(nif)[0]
    collection = imported(corpus / name)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    group = obj.vertex_groups[0]
    group.add(list(range(10)), 1.0, "REPLACE")  # the first ten vertices now also follow this bone
    out = exported(corpus / name, game, collection)
    assert [b.type_name for b in out.blocks] == [b.type_name for b in nif.blocks]
    shape = out.blocks[index]
    bones, binds, weights, _ = file_skin(out, index, shape)
    original_bones, original_binds, _, _ = file_skin(nif, index, block)
    assert bones == original_bones
    for a, b in zip(binds, original_binds):
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert (weights > 0).sum(axis=1).max() <= 4
    np.testing.assert_allclose(weights.sum(axis=1)[: len(weights)], 1.0, atol=2e-3)
    column = bones.index(next(b["nif_block"] for b in obj.modifiers["Armature"].object.data.bones if b.name == group.name))
    assert (weights[:10, column] > 0).all()


SEGMENT_BODIES = ["pynifly/tests/tests/FO4/MaleBody.nif", "pynifly/tests/tests/FO4/BodyRegression/MaleBody.nif"]


def sub_index_object(collection):
    obj = next(o for o in collection.all_objects if o.get("nif_type") == "BSSubIndexTriShape")
    return obj, obj["nif_block"]


def face_values(mesh, name):
    values = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes[name].data.foreach_get("value", values)
    return values


def edit_faces(obj, edit):
    """'move' a vertex, 'delete' every seventh face (across all segments), or 'reassign' faces
    to other segments without touching the geometry."""
    import bmesh

    mesh = obj.data
    if edit == "move":
        mesh.vertices[0].co.z += 0.5
    elif edit == "delete":
        bm = bmesh.new()
        bm.from_mesh(mesh)
        bm.faces.ensure_lookup_table()
        bmesh.ops.delete(bm, geom=[bm.faces[i] for i in range(0, len(bm.faces), 7)], context="FACES_ONLY")
        bm.to_mesh(mesh)
        bm.free()
    else:
        segment, sub = face_values(mesh, "nif_segment"), face_values(mesh, "nif_subsegment")
        picked = np.arange(0, len(segment), 11)
        segment[picked] = np.where(segment[picked] == segment.max(), segment.min(), segment.max())
        sub[picked] = 0  # both the first and the last segment of the body have sub-segments
        mesh.attributes["nif_segment"].data.foreach_set("value", segment)
        mesh.attributes["nif_subsegment"].data.foreach_set("value", sub)
    mesh.update()


def corner_keys(points, triangles):
    """One sortable key per triangle: its corners' positions as stored (half floats), in order."""
    corners = np.asarray(points, np.float16)[np.asarray(triangles)].astype(np.float64)
    return [tuple(sorted(map(tuple, t))) for t in corners.tolist()]


def blender_triangles(mesh):
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3), corners.reshape(-1, 3)


def check_segments(shape, source_shape):
    """Segments in order, each contiguous, together covering every triangle once; sub-segments
    split their segment; the layout and shared data are the source's."""
    start = 0
    for seg in shape.segments:
        assert seg.start_index == (3 * start if seg.num_primitives else 0)
        subs = np.asarray(seg.sub_segments).reshape(-1, 4).tolist()
        position = start
        for sub_start, count, _parent, _unused in subs:
            assert sub_start == (3 * position if count else 0)
            position += count
        assert not subs or position == start + seg.num_primitives
        start += seg.num_primitives
    assert start == len(shape.triangles)
    assert segments.segment_layout(shape) == segments.segment_layout(source_shape)


# Reassigning faces needs a body with several segments (the regression body has one).
SEGMENT_EDITS = [(name, edit) for name in SEGMENT_BODIES for edit in ("move", "delete")] + [(SEGMENT_BODIES[0], "reassign")]


@pytest.mark.parametrize("name, edit", SEGMENT_EDITS)
def test_edited_sub_index_shape_gets_its_faces_segments(clean_scene, corpus, tmp_path, name, edit):
    source = NifFile.read(corpus / name)
    collection = imported(corpus / name)
    obj, index = sub_index_object(collection)
    edit_faces(obj, edit)
    out = export(collection, tmp_path / "out.nif")
    shape = out.blocks[index]
    assert shape.type_name == "BSSubIndexTriShape"
    assert len(shape.triangles) == len(obj.data.polygons)
    check_segments(shape, source.blocks[index])
    segment, sub = segments.face_segments(shape)
    # Each exported triangle's (segment, sub-segment) is its Blender face's.
    points, faces = blender_triangles(obj.data)
    wanted = sorted(zip(corner_keys(points, faces), face_values(obj.data, "nif_segment").tolist(), face_values(obj.data, "nif_subsegment").tolist()))
    got = sorted(zip(corner_keys(shape.positions, shape.triangles), segment.tolist(), sub.tolist()))
    assert got == wanted
    if edit == "reassign":
        assert not np.array_equal(np.asarray(shape.triangles), np.asarray(source.blocks[index].triangles))


def test_faces_without_segments_go_to_the_first_filled_segment(clean_scene, corpus, tmp_path):
    name = SEGMENT_BODIES[0]
    source = NifFile.read(corpus / name)
    collection = imported(corpus / name)
    obj, index = sub_index_object(collection)
    obj.data.attributes.remove(obj.data.attributes["nif_segment"])
    obj.data.attributes.remove(obj.data.attributes["nif_subsegment"])
    obj.data.vertices[0].co.z += 0.5
    shape = export(collection, tmp_path / "out.nif").blocks[index]
    check_segments(shape, source.blocks[index])
    first = segments.first_filled_segment(source.blocks[index])
    segment, sub = segments.face_segments(shape)
    assert (segment == first).all() and (sub == 0).all()


def test_unskinned_sub_index_shape_keeps_segments(clean_scene, corpus, tmp_path):
    """Without its armature the body is written unskinned; its segments still follow its faces."""
    name = SEGMENT_BODIES[0]
    source = NifFile.read(corpus / name)
    collection = imported(corpus / name)
    obj, index = sub_index_object(collection)
    obj.modifiers.remove(obj.modifiers["Armature"])
    edit_faces(obj, "delete")
    shape = export(collection, tmp_path / "out.nif").blocks[index]
    assert shape.skin == -1 and not shape.skinned
    check_segments(shape, source.blocks[index])
    segment, _ = segments.face_segments(shape)
    assert sorted(segment.tolist()) == sorted(face_values(obj.data, "nif_segment").tolist())


SSE_SCAR = "pynifly/tests/tests/FO4/VaaMaleScarR04.nif"  # in the FO4 folder, but Skyrim SE (bs 100)


def sse_exported(collection, path):
    from precombined_nif.io.nif.exporter import export_nif

    _nif, messages = export_nif(str(path), list(collection.all_objects))
    return path.read_bytes(), messages


@pytest.mark.parametrize("edit", ["none", "unbound"])
def test_sse_skinned_shape_untouched_or_unbound(clean_scene, corpus, tmp_path, edit):
    """An untouched Skyrim SE skinned shape writes back byte for byte; one whose armature
    modifier was removed is written unskinned, its vertices in the shape (edited skins:
    test_sse_skin_blender.py)."""
    collection = imported(corpus / SSE_SCAR)
    obj = next(o for o in collection.all_objects if o.get("nif_type") == "BSDynamicTriShape")
    if edit == "unbound":
        obj.modifiers.remove(obj.modifiers["Armature"])
    data, messages = sse_exported(collection, tmp_path / "out.nif")
    assert messages == []
    if edit == "none":
        assert data == (corpus / SSE_SCAR).read_bytes()
        return
    shape = NifFile.read(tmp_path / "out.nif").blocks[obj["nif_block"]]
    assert not shape.skinned and shape.vertex_data is not None
    np.testing.assert_allclose(shape.positions, np.asarray(shape.dynamic_vertices)[:, :3])
    assert len(shape.positions) == len(obj.data.vertices) and len(shape.triangles) == len(obj.data.polygons)


CK_FACEGEN = "realmods/furrifier-fo4/tests/fixtures/ck_reference/Rosalind_CK_0005E562.nif"


def test_ck_facegen_hair_sharing_the_head_bones_writes_back_byte_identical(clean_scene, corpus, tmp_path):
    """The CK's hair binds Head and Head_skin 3e-4 units away from the head's binds: it joins the
    head's armature (binds within skin_import.AGREE are one bind pose), whose rests then
    reproduce its binds only that closely. Untouched, the hair's skin still writes back as
    stored: no skeleton root moved, no bound or weight recomputed."""
    from nif_rewriter import RawNif
    from precombined_nif.io.nif.skin_import import AGREE

    path = corpus / CK_FACEGEN
    raw = RawNif.read(path)
    head = bs_skin(raw, raw.indices_of("BSSkin::Instance")[0])[2]
    hair = bs_skin(raw, 35)[2]
    gaps = [np.abs(head[bone] - hair[bone]).max() for bone in set(head) & set(hair)]
    assert gaps and 1e-4 < max(gaps) < AGREE  # the layout this test is about
    collection = imported(path)
    deformed_by = {o.get("nif_block"): o.modifiers["Armature"].object for o in collection.all_objects if o.type == "MESH"}
    assert deformed_by[33] is deformed_by[22]
    from precombined_nif.io.nif.exporter import export_nif

    export_nif(tmp_path / "out.nif", list(collection.all_objects))
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


def test_edited_ck_facegen_skin_keeps_its_skeleton_root(clean_scene, corpus, tmp_path):
    """A moved vertex and an edited weight rewrite the hair's skin; its skeleton root stays the
    BSFaceGenNiNodeSkinned node the Creation Kit recorded, and the untouched head's skin stays
    as stored."""
    from nif_rewriter import RawNif
    from precombined_nif.io.nif.exporter import export_nif

    path = corpus / CK_FACEGEN
    raw = RawNif.read(path)
    collection = imported(path)
    hair = next(o for o in collection.all_objects if o.get("nif_block") == 33)
    hair.data.vertices[0].co.z += 1.0
    hair.vertex_groups[0].add(list(range(10)), 1.0, "REPLACE")
    export_nif(tmp_path / "out.nif", list(collection.all_objects))
    out = RawNif.read(tmp_path / "out.nif")
    for instance in raw.indices_of("BSSkin::Instance"):
        root, bones, _ = bs_skin(out, instance)
        assert raw.node_name(root) == "BSFaceGenNiNodeSkinned" and raw.type_of(root) == "NiNode"
        assert (root, bones) == bs_skin(raw, instance)[:2]
    assert out.blocks[36] != raw.blocks[36]  # the hair's bone data was written anew
    assert out.blocks[23:25] == raw.blocks[23:25]  # the head's skin was not
