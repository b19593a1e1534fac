"""Edits users make that lost data (issue 42), made as the UI makes them (operators, or the data
API where a panel or tool does the same), exported through File > Export, and the written file
read back with the tests' own struct readers (tests/raw_*.py, tests/sse_raw.py, nif_rewriter),
never the product's decoder: positions against the edit, flags against the layout, colours to
the byte."""

import struct

import numpy as np
import pytest
import raw_geometry
import raw_tri_shape
from nif_rewriter import RawNif
from scene import cube, export_file, imported
from sse_raw import raw_sse_shape, raw_sse_shapes
from support import CORPUS

pytestmark = pytest.mark.slow  # each test imports and exports through Blender


def vertex_of_position(positions, co, atol=1e-3):
    """For each file position, the Blender vertex at it (each one unique)."""
    distance = np.linalg.norm(positions[:, None, :] - co[None, :, :], axis=2)
    nearest = distance.argmin(axis=1)
    assert np.all(distance[np.arange(len(positions)), nearest] < atol)
    return nearest


# -- 5: the colour attribute the user paints -----------------------------------------------------
@pytest.mark.parametrize("domain", ["POINT", "CORNER"])
def test_the_active_colour_attribute_is_written(clean_scene, tmp_path, domain):
    """A cube with the "Color" layer an import makes, and a new colour attribute added as the
    Color Attributes panel's + does (it becomes the active one, the one Vertex Paint paints): the
    export writes the painted one, to the byte."""
    import bpy

    obj = cube("Painted")
    mesh = obj.data
    old = mesh.color_attributes.new("Color", "BYTE_COLOR", "POINT")
    old.data.foreach_set("color_srgb", np.tile(np.float32([1, 1, 1, 1]), len(old.data)))
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.geometry.color_attribute_add(name="Paint", domain=domain, data_type="BYTE_COLOR") == {"FINISHED"}
    painted = mesh.color_attributes["Paint"]
    assert mesh.color_attributes.active_color.name == "Paint"
    # what painting leaves: a colour of its own per vertex (the same on each of its corners)
    corner_vertex = np.array([loop.vertex_index for loop in mesh.loops])
    per_vertex = np.array([[(37 * v + 11) % 256, (91 * v + 50) % 256, (13 * v + 200) % 256, 255 - 9 * v] for v in range(8)])
    stored = per_vertex if domain == "POINT" else per_vertex[corner_vertex]
    painted.data.foreach_set("color_srgb", (stored / 255).astype(np.float32).ravel())
    collection = bpy.data.collections.new("Paint")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    out = export_file(collection, tmp_path / "painted.nif", game="FO4")
    nif = RawNif.read(out)
    (shape,) = nif.indices_of("BSTriShape")
    raw = raw_tri_shape.bs_tri_shape(nif, shape)
    assert raw["colors"] is not None
    co = np.array([v.co for v in mesh.vertices])
    vertices = vertex_of_position(raw["positions"], co)
    np.testing.assert_array_equal(np.round(raw["colors"] * 255).astype(np.int64), per_vertex[vertices])


# -- 8: float vertex colours -----------------------------------------------------------------------
FARMHOUSE = "pynifly/tests/tests/Skyrim/farmhouse01.nif"  # Skyrim LE: NiTriShapeData colours as floats


def shape_of_data(nif, data_index):
    return next(i for i in nif.indices_of("NiTriShape") if raw_geometry.tri_shape_fields(nif, i)["data"] == data_index)


def test_float_colours_off_the_byte_grid_survive_a_geometry_edit(clean_scene, corpus, tmp_path):
    """farmhouse01's NiTriShapeData colours are floats, 18 of one shape's 1,122 off the 1/255
    grid: the shape moved 10 units up (its vertices edited) and exported, every written vertex
    keeps the colour the file gave it, as a float, not rounded to a byte."""
    source = RawNif.read(corpus / FARMHOUSE)
    found = []
    for index in source.indices_of("NiTriShapeData"):
        data = raw_geometry.tri_shape_data(source.blocks[index], source.bs_version)
        if data["colors"] is not None and (np.abs(data["colors"] * 255 - np.round(data["colors"] * 255)) > 0.01).any():
            found.append((index, data))
    ((data_index, before),) = found
    off_grid = (np.abs(before["colors"] * 255 - np.round(before["colors"] * 255)) > 0.01).any(axis=1)
    assert off_grid.sum() == 18
    shape = shape_of_data(source, data_index)
    collection = imported(corpus / FARMHOUSE)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == shape)
    co = np.empty(3 * len(obj.data.vertices), np.float32)
    obj.data.vertices.foreach_get("co", co)
    obj.data.vertices.foreach_set("co", (co.reshape(-1, 3) + np.float32([0, 0, 10])).ravel())
    obj.data.update()
    out = RawNif.read(export_file(collection, tmp_path / "farmhouse01.nif"))
    after = raw_geometry.tri_shape_data(out.blocks[raw_geometry.tri_shape_fields(out, shape)["data"]], out.bs_version)
    np.testing.assert_allclose(after["vertices"], before["vertices"] + [0, 0, 10], atol=1e-4)  # the edit, in place
    # each written vertex is a stored one moved (same UV too): its colour is that one's
    key = lambda d, shift: np.round(np.c_[d["vertices"] - shift, d["uvs"]] * 1000).astype(np.int64)
    stored = {tuple(k): c for k, c in zip(key(before, 0), before["colors"])}
    written = np.array([stored[tuple(k)] for k in key(after, [0, 0, 10])])
    assert np.abs(written - after["colors"]).max() < 1e-6  # 1/4000 of a byte step
    assert (np.abs(after["colors"] * 255 - np.round(after["colors"] * 255)) > 0.01).any(axis=1).sum() == 18


# -- 9: faces of more than four corners ----------------------------------------------------------
@pytest.mark.parametrize("game", ["FO4", "SSE", "SKYRIM", "FO3", "FO76"])
def test_a_cylinder_with_16_gon_caps_exports_triangulated(clean_scene, tmp_path, game):
    """Add > Mesh > Cylinder (16 sides, n-gon caps), UV unwrapped as the primitive is: every
    game's export writes it, each cap as 14 triangles covering the cap, with tangents."""
    import bpy

    assert bpy.ops.mesh.primitive_cylinder_add(vertices=16, end_fill_type="NGON", calc_uvs=True) == {"FINISHED"}
    obj = bpy.context.active_object
    assert max(len(p.vertices) for p in obj.data.polygons) == 16
    collection = bpy.data.collections.new("Cylinder")
    bpy.context.scene.collection.children.link(collection)
    for owner in obj.users_collection:
        owner.objects.unlink(obj)
    collection.objects.link(obj)
    nif = RawNif.read(export_file(collection, tmp_path / "cylinder.nif", game=game))
    if game in ("SKYRIM", "FO3"):
        (shape,) = nif.indices_of("NiTriShape")
        data = raw_geometry.tri_shape_data(nif.blocks[raw_geometry.tri_shape_fields(nif, shape)["data"]], nif.bs_version)
        positions, triangles, tangents = data["vertices"], data["triangles"], data["tangents"]
    else:
        (shape,) = nif.indices_of("BSTriShape")
        raw = raw_tri_shape.bs_tri_shape(nif, shape)
        positions, triangles, tangents = raw["positions"], raw["triangles"], raw["tangents"]
    assert tangents is not None and np.all(np.linalg.norm(tangents, axis=1) > 0.9)
    p = positions[triangles]
    normals = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    caps = np.abs(p[:, :, 2] - p[:, :1, 2]).max(axis=1) < 1e-3  # all three corners at one height
    assert caps.sum() == 28 and len(triangles) == 28 + 32  # 16 side quads as 2 triangles each
    for height in (-1.0, 1.0):  # each cap's triangles cover its 16-gon: area 8 sin(pi / 8)
        cap = caps & np.isclose(p[:, 0, 2], height, atol=1e-3)
        area = 0.5 * np.linalg.norm(normals[cap], axis=1).sum()
        assert cap.sum() == 14 and area == pytest.approx(8 * np.sin(np.pi / 8), rel=1e-3)
        assert np.all(np.sign(normals[cap, 2]) == np.sign(height))  # facing out


# -- 7: collision deleted, BSXFlags kept ----------------------------------------------------------
def bsx_flags(nif):
    """The BSXFlags integer (NiExtraData: name string index u32, then the u32) of a raw file."""
    (index,) = nif.indices_of("BSXFlags")
    block = nif.blocks[index]
    assert len(block) == 8
    return struct.unpack_from("<I", block, 4)[0]


def delete_objects(objects):
    """Select the objects and Object > Delete, as a user removes them."""
    import bpy

    bpy.ops.object.select_all(action="DESELECT")
    for obj in objects:
        obj.select_set(True)
    assert bpy.ops.object.delete() == {"FINISHED"}


def test_deleting_all_collision_clears_the_havok_bsx_bit_and_warns(clean_scene, corpus, tmp_path, capfd):
    """farmhouse01 has one collision body and BSXFlags 0x82 (bHavok, bArticulated): with its
    collision objects deleted the export writes no collision object and BSXFlags without bit 1
    (nif.xml: "enable collision, bHavok (Skyrim)"), the other bits as stored, and says so."""
    source = RawNif.read(corpus / FARMHOUSE)
    before = bsx_flags(source)
    assert before & 0x2 and source.indices_of("bhkCollisionObject")
    collection = imported(corpus / FARMHOUSE)
    delete_objects([o for o in collection.all_objects if "havok_shape" in o])
    capfd.readouterr()
    out = RawNif.read(export_file(collection, tmp_path / "farmhouse01.nif"))
    assert not any(name.startswith("bhk") for name in out.block_types())
    assert bsx_flags(out) == before & ~0x2
    assert "BSXFlags" in capfd.readouterr().out


def test_collision_kept_keeps_the_havok_bsx_bit(clean_scene, corpus, tmp_path):
    """The same file with its collision moved (not deleted) keeps BSXFlags as stored."""
    collection = imported(corpus / FARMHOUSE)
    for obj in collection.all_objects:
        if "havok_shape" in obj and obj.parent is not None and "havok_shape" not in obj.parent:
            obj.location.z += 5.0
    out = RawNif.read(export_file(collection, tmp_path / "farmhouse01.nif"))
    assert out.indices_of("bhkCollisionObject")
    assert bsx_flags(out) == bsx_flags(RawNif.read(corpus / FARMHOUSE))


# -- 10: a roughness edit; the export's summary ----------------------------------------------------
DYNAMIC = ["pynifly/tests/tests/SkyrimSE/eyesmale.nif", "pynifly/tests/tests/SkyrimSE/malehead.nif"]


def glossiness_at(block):
    """Where a Skyrim BSLightingShaderProperty's glossiness is (nif.xml, bs 83 and 100): after the
    shader type, NiObjectNET (name, extra data count and refs, controller), two flag words, UV
    offset and scale, the texture set ref, emissive colour and multiple, clamp mode, alpha and
    refraction strength."""
    (extra,) = struct.unpack_from("<I", block, 8)
    return 4 + 8 + 4 * extra + 4 + 8 + 16 + 4 + 16 + 4 + 4 + 4


def glossiness(nif, index):
    block = nif.blocks[index]
    return struct.unpack_from("<f", block, glossiness_at(block))[0]


@pytest.mark.parametrize("name", DYNAMIC)
def test_a_roughness_edit_writes_skyrims_glossiness(clean_scene, corpus, tmp_path, name):
    """The Principled BSDF's Roughness (as the material panel sets it) of a Skyrim SE head or
    eyes (BSDynamicTriShape) edited to 0.8: glossiness, the specular power, becomes the one that
    roughness shows (alpha = roughness^2 = sqrt(2 / (power + 2)): 2 / 0.8^4 - 2), the rest of
    the shader block as stored; untouched, the stored glossiness is kept to the bit."""
    source = RawNif.read(corpus / name)
    (shader,) = source.indices_of("BSLightingShaderProperty")
    stored = glossiness(source, shader)
    collection = imported(corpus / name)
    (obj,) = [o for o in collection.all_objects if o.type == "MESH"]
    bsdf = obj.active_material.node_tree.nodes["Principled BSDF"]
    assert bsdf.inputs["Roughness"].default_value == pytest.approx((2 / (stored + 2)) ** 0.25, abs=1e-6)
    untouched = RawNif.read(export_file(collection, tmp_path / "untouched.nif"))
    assert untouched.blocks[shader] == source.blocks[shader]
    bsdf.inputs["Roughness"].default_value = 0.8
    out = RawNif.read(export_file(collection, tmp_path / "rough.nif"))
    (written,) = out.indices_of("BSLightingShaderProperty")
    assert glossiness(out, written) == pytest.approx(2 / 0.8**4 - 2, rel=1e-5)
    at = glossiness_at(source.blocks[shader])
    assert out.blocks[written][:at] == source.blocks[shader][:at] and out.blocks[written][at + 4 :] == source.blocks[shader][at + 4 :]


@pytest.mark.parametrize("name", DYNAMIC)
def test_the_export_summary_counts_dynamic_shapes(corpus, tmp_path, name):
    """``cli.py export`` of an imported BSDynamicTriShape file names as many shapes as the
    written file holds blocks of shape types."""
    from extension import blender_cli

    blend, out = tmp_path / "scene.blend", tmp_path / "out.nif"
    assert blender_cli("import", corpus / name, "--blend", blend).returncode == 0
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    shapes = [t for t in RawNif.read(out).block_types() if t in ("BSDynamicTriShape", "BSTriShape", "NiTriShape")]
    assert shapes == ["BSDynamicTriShape"]
    assert result.stdout.strip().endswith(", 1 shapes")


# -- 6: full precision on shapes the user did not touch ----------------------------------------------
MOUTFIT = "pynifly/tests/tests/FO4/MOutfit.nif"  # four skinned BSSubIndexTriShapes with segments


def buffer_and_tail(nif, index):
    """(fields, vertex arrays, triangles, the bytes after the triangles) of any BSTriShape type
    holding its vertices: raw_tri_shape's layout, a subclass's own fields left as bytes."""
    block = nif.blocks[index]
    fields, at = raw_tri_shape.shape_fields(nif, index)
    desc, (triangles, vertices) = fields["desc"], fields["counts"]
    stride = (desc & 0xF) * 4
    buffer = np.frombuffer(bytes(block[at : at + stride * vertices]), np.uint8).reshape(vertices, stride)
    at += stride * vertices
    faces = np.frombuffer(bytes(block[at : at + 6 * triangles]), "<u2").reshape(-1, 3).astype(np.int64)
    full = bool((desc >> 44) & raw_tri_shape.FULL_PRECISION)
    return fields, raw_tri_shape.vertex_buffer(buffer, desc, full), faces, bytes(block[at + 6 * triangles :])


def test_full_precision_export_converts_untouched_shapes(clean_scene, corpus, tmp_path):
    """MOutfit imported and exported untouched with Full Precision: every shape's vertices are
    written as 32-bit floats (the desc says so), each position the stored half exactly, every
    other attribute, the triangles and the segments as stored."""
    source = RawNif.read(corpus / MOUTFIT)
    shapes = source.indices_of("BSSubIndexTriShape")
    assert len(shapes) == 4
    collection = imported(corpus / MOUTFIT)
    out = RawNif.read(export_file(collection, tmp_path / "full.nif", full_precision=True))
    assert out.indices_of("BSSubIndexTriShape") == shapes
    for index in shapes:
        fields, before, faces, tail = buffer_and_tail(source, index)
        assert not (fields["desc"] >> 44) & raw_tri_shape.FULL_PRECISION
        written_fields, after, written_faces, written_tail = buffer_and_tail(out, index)
        assert (written_fields["desc"] >> 44) & raw_tri_shape.FULL_PRECISION
        assert (written_fields["desc"] >> 44) | raw_tri_shape.FULL_PRECISION == (fields["desc"] >> 44) | raw_tri_shape.FULL_PRECISION
        for name, values in before.items():
            np.testing.assert_array_equal(after[name], values, err_msg=name)
        np.testing.assert_array_equal(written_faces, faces)
        assert written_tail == tail and written_fields["counts"] == fields["counts"]
        assert written_fields["sphere"] == fields["sphere"]  # the same points


# -- 2 and 3: body parts and their partitions' flags -----------------------------------------------
CUIRASS = "pynifly/tests/tests/SkyrimSE/meshes/armor/daedric/daedriccuirass_1.nif"  # parts 32, 38, 34


def dismember_parts(nif, shape):
    """[(part flag, body part)] of the BSDismemberSkinInstance of a Skyrim SE shape (its skin ref
    after the bound sphere) or a NiTriShape (nif.xml: data, partition, skeleton root, bone count
    and refs, part count, (u16 flag, u16 part)...)."""
    if nif.type_of(shape) == "NiTriShape":
        skin = raw_geometry.tri_shape_fields(nif, shape)["skin"]
    else:
        (skin,) = struct.unpack_from("<i", nif.blocks[shape], nif.av_offsets(shape)["end"] + 16)
    assert nif.type_of(skin) == "BSDismemberSkinInstance"
    block = nif.blocks[skin]
    (bones,) = struct.unpack_from("<I", block, 12)
    (count,) = struct.unpack_from("<I", block, 16 + 4 * bones)
    return [struct.unpack_from("<2H", block, 20 + 4 * bones + 4 * i) for i in range(count)]


def cuirass_body(collection):
    """daedriccuirass_1's body shape (three body parts): its block index and object."""
    index = next(i for i, raw in raw_sse_shapes(CORPUS / CUIRASS).items() if len(raw["body_parts"]) == 3)
    return index, next(o for o in collection.all_objects if o.get("nif_block") == index)


def face_parts(obj):
    values = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes["nif_body_part"].data.foreach_get("value", values)
    return values


def select_faces(obj, faces):
    """Edit Mode on ``obj`` with ``faces`` selected (face select mode)."""
    import bmesh
    import bpy

    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_mode(type="FACE")
    bpy.ops.mesh.select_all(action="DESELECT")
    bm = bmesh.from_edit_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    for face in np.asarray(faces).tolist():
        bm.faces[face].select_set(True)
    bmesh.update_edit_mesh(obj.data)


def set_face_parts(obj, faces, part):
    """Select ``faces`` in Edit Mode and Mesh > Set Attribute, as a user reassigns them."""
    import bpy

    select_faces(obj, faces)
    obj.data.attributes.active = obj.data.attributes["nif_body_part"]  # picked in the Attributes list
    assert bpy.ops.mesh.attribute_set(value_int=part) == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")


def delete_faces(obj, faces):
    """Select ``faces`` in Edit Mode and Delete > Faces."""
    import bpy

    select_faces(obj, faces)
    assert bpy.ops.mesh.delete(type="FACE") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")


def written_parts(raw, parts):
    """Each written triangle's body part, from its partition."""
    return np.array([part for _flag, part in parts])[raw["part"]]


def corner_positions(points, triangles):
    return [tuple(sorted(map(tuple, np.round(points[t], 3).tolist()))) for t in triangles]


def check_faces_parts(obj, raw, parts):
    """Each written triangle's body part is its Blender face's (matched by corner positions)."""
    mesh = obj.data
    co = np.array([v.co for v in mesh.vertices], np.float64)
    faces = np.array([tuple(p.vertices) for p in mesh.polygons])
    wanted = sorted(zip(corner_positions(co, faces), face_parts(obj).tolist()))
    got = sorted(zip(corner_positions(raw["positions"], raw["triangles"]), written_parts(raw, parts).tolist()))
    assert got == wanted


def test_a_body_part_only_edit_is_written(clean_scene, corpus, tmp_path):
    """100 of daedriccuirass_1's body (32) faces set to 34 in Edit Mode, nothing else changed:
    the written partitions put those faces in body part 34, every other face where it was."""
    collection = imported(corpus / CUIRASS)
    index, obj = cuirass_body(collection)
    parts = face_parts(obj)
    chosen = np.flatnonzero(parts == 32)[:100]
    set_face_parts(obj, chosen, 34)
    assert (face_parts(obj) == 34).sum() == (parts == 34).sum() + 100
    out = RawNif.read(export_file(collection, tmp_path / "cuirass.nif"))
    raw, written = raw_sse_shape(out, index), dismember_parts(out, index)
    assert sorted({part for _flag, part in written}) == [32, 34, 38]
    check_faces_parts(obj, raw, written)
    assert np.bincount(written_parts(raw, written), minlength=39)[[32, 34, 38]].tolist() == [
        int((parts == 32).sum()) - 100, int((parts == 34).sum()) + 100, int((parts == 38).sum())]


def test_deleting_the_first_body_part_moves_the_start_net_boneset_flag(clean_scene, corpus, tmp_path):
    """daedriccuirass_1's body partitions are 32 (flag 0x101: editor visible, start net boneset),
    38 and 34 (0x1). All faces of 32 deleted: the first partition written starts the boneset,
    the others do not, every part editor visible as stored."""
    collection = imported(corpus / CUIRASS)
    index, obj = cuirass_body(collection)
    source = dismember_parts(RawNif.read(corpus / CUIRASS), index)
    assert source == [(0x101, 32), (0x1, 38), (0x1, 34)]
    delete_faces(obj, np.flatnonzero(face_parts(obj) == 32))
    out = RawNif.read(export_file(collection, tmp_path / "cuirass.nif"))
    written = dismember_parts(out, index)
    assert sorted(part for _flag, part in written) == [34, 38]
    assert [flag for flag, _part in written] == [0x101, 0x1]
    check_faces_parts(obj, raw_sse_shape(out, index), written)


def ladder(bones=24):
    """A strip of ``bones`` quads stacked along z and an armature of as many stacked bones, each
    level's vertices weighted to its bone alone: every quad uses two bones, so the Fallout 3
    export (18 bones a partition) splits one body part over two partitions."""
    import bpy

    bpy.ops.object.armature_add(location=(0.0, 0.0, 0.0))
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    edit = armature.data.edit_bones
    edit[0].name, edit[0].head, edit[0].tail = "B0", (0, 0, 0), (0, 0, 1)
    for number in range(1, bones):
        bone = edit.new(f"B{number}")
        bone.head, bone.tail, bone.parent = (0, 0, number), (0, 0, number + 1), edit[f"B{number - 1}"]
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh = bpy.data.meshes.new("Ladder")
    points = [(x, 0.0, float(z)) for z in range(bones + 1) for x in (0.0, 1.0)]
    quads = [(2 * z, 2 * z + 1, 2 * z + 3, 2 * z + 2) for z in range(bones)]
    mesh.from_pydata(points, [], quads)
    mesh.uv_layers.new(name="UVMap")
    obj = bpy.data.objects.new("Ladder", mesh)
    bpy.context.scene.collection.objects.link(obj)
    for number in range(bones):
        obj.vertex_groups.new(name=f"B{number}").add([2 * number, 2 * number + 1], 1.0, "REPLACE")
    obj.vertex_groups[f"B{bones - 1}"].add([2 * bones, 2 * bones + 1], 1.0, "REPLACE")
    obj.parent = armature
    obj.modifiers.new("Armature", "ARMATURE").object = armature
    return armature, obj


def test_a_body_part_split_over_partitions_starts_one_boneset(clean_scene, tmp_path):
    """A new skinned Fallout 3 mesh of 24 bones whose faces all get body part 3 (Attributes +,
    a face integer named nif_body_part): its partitions all say part 3, the first one alone
    starts the net boneset, all editor visible."""
    import bpy

    armature, obj = ladder()
    attribute = obj.data.attributes.new("nif_body_part", "INT", "FACE")
    attribute.data.foreach_set("value", np.full(len(obj.data.polygons), 3, np.int32))
    collection = bpy.data.collections.new("Ladder")
    bpy.context.scene.collection.children.link(collection)
    for item in (armature, obj):
        for owner in item.users_collection:
            owner.objects.unlink(item)
        collection.objects.link(item)
    out = RawNif.read(export_file(collection, tmp_path / "ladder.nif", game="FO3"))
    (shape,) = out.indices_of("NiTriShape")
    written = dismember_parts(out, shape)
    assert len(written) >= 2 and {part for _flag, part in written} == {3}
    assert [flag for flag, _part in written] == [0x101] + [0x1] * (len(written) - 1)


# -- 1: collision on a bone ------------------------------------------------------------------------
TREE = "pynifly/tests/tests/SkyrimSE/treeaspen03.nif"  # a bhkListShape of capsules on TrunkBone
SKYRIM_UNITS = 69.99125  # game units per Havok unit (Skyrim, as FO4)


def raw_blocks(nif):
    return {index: (nif.type_of(index), bytes(block)) for index, block in enumerate(nif.blocks)}


def node_worlds(nif):
    """{node index: world matrix} from the roots through children (raw_nodes' field reading)."""
    from raw_nodes import NODE_TYPES, _node, world_matrices

    nodes = {index: _node(bytes(nif.blocks[index]), 0, nif.bs_version, nif.strings, True)
             for index in range(len(nif.blocks)) if nif.type_of(index) in NODE_TYPES}
    return nodes, world_matrices(nodes, nif.roots())


def collision_world_points(nif):
    """{owner node name: world points of its shapes} (raw_havok's shape reading: capsules as
    their ends' bounding corners), through the body's transform when it is a bhkRigidBodyT (a
    bhkRigidBody's translation is not applied)."""
    import raw_havok
    import raw_skyrim_havok

    blocks = raw_blocks(nif)
    nodes, worlds = node_worlds(nif)
    found = {}
    for index, node in nodes.items():
        if node.collision < 0 or index not in worlds:
            continue
        _target, _flags, body_index = struct.unpack_from("<iHi", blocks[node.collision][1])
        body_type, body_raw = blocks[body_index]
        body = raw_skyrim_havok.read_body(body_raw)
        frame = np.eye(4)
        if body_type == "bhkRigidBodyT":
            x, y, z, w = body["rotation"]
            frame[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                             [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                             [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
            frame[:3, 3] = np.asarray(body["translation"]) * SKYRIM_UNITS
        found[node.name] = raw_havok.shape_vertices(blocks, body["shape"], worlds[index] @ frame, SKYRIM_UNITS)
    return found


def bone_collision(collection):
    (obj,) = [o for o in collection.all_objects if "havok_shape" in o and o.parent_type == "BONE"]
    return obj


@pytest.mark.parametrize("name", [TREE, "pynifly/tests/tests/SkyrimSE/meshes/weapons/glassbowskinned.nif"])
def test_collision_on_a_bone_moves_as_edited(clean_scene, corpus, tmp_path, name):
    """treeaspen03's capsules hang from TrunkBone (SSE), glassbowskinned's collision from a bone
    too (LE): the collision object moved 10 units up (in the world, as G Z 10 does) is written
    10 units up, no further (it drifted by the bone's head-to-tail vector)."""
    from mathutils import Matrix

    source = collision_world_points(RawNif.read(corpus / name))
    ((owner, points),) = source.items()
    collection = imported(corpus / name)
    obj = bone_collision(collection)
    assert obj.parent_bone == owner
    obj.matrix_world = Matrix.Translation((0.0, 0.0, 10.0)) @ obj.matrix_world
    written = collision_world_points(RawNif.read(export_file(collection, tmp_path / "out.nif")))
    assert list(written) == [owner]
    np.testing.assert_allclose(point_set(written[owner]), point_set(points + [0, 0, 10]), atol=2e-3)


def point_set(points):
    """Points in a fixed order (a capsule's two ends may be written either way round)."""
    points = np.asarray(points, np.float64)
    return points[np.lexsort(np.round(points, 1).T[::-1])]


# -- 4: a segmented part separated ------------------------------------------------------------------
def sub_index_tail(tail):
    """A BSSubIndexTriShape's fields after its triangles (nif.xml, bs 130 with data):
    {"primitives", "total", "segments": [(start index, count, parent, [(start, count, parent,
    unused)...])], "ssf" (None without shared data), "records": [(user index, bone id, cuts)]}."""
    at = 0

    def take(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, tail, at)
        at += struct.calcsize("<" + fmt)
        return values

    primitives, count, total = take("3I")
    out = {"primitives": primitives, "total": total, "segments": [], "ssf": None, "records": []}
    for _ in range(count):
        start, number, parent, subs = take("4I")
        out["segments"].append((start, number, parent, [take("4I") for _ in range(subs)]))
    if count < total:
        shared_count, shared_total = take("2I")
        assert (shared_count, shared_total) == (count, total)
        take(f"{count}I")
        for _ in range(total):
            user, bone, cuts = take("3I")
            out["records"].append((user, bone, take(f"{cuts}f")))
        (size,) = take("H")
        out["ssf"] = bytes(tail[at : at + size]).decode("latin-1")
        at += size
    assert at == len(tail)
    return out


def triangle_segments(info, count):
    """Each triangle's segment number from the table's ranges (-1: none)."""
    out = np.full(count, -1)
    for number, (start, size, _parent, _subs) in enumerate(info["segments"]):
        out[start // 3 : start // 3 + size] = number
    return out


def test_a_separated_segmented_part_keeps_its_segments(clean_scene, corpus, tmp_path):
    """MOutfit: the faces of segment 4 of a BSSubIndexTriShape separated (Edit Mode, P >
    Selection) into their own object: both written as BSSubIndexTriShapes with the source's
    segment table (its segments, total, flags and .ssf), the piece's triangles all in segment
    4 and the rest's where they were."""
    import bpy

    source = RawNif.read(corpus / MOUTFIT)
    collection = imported(corpus / MOUTFIT)
    for index in source.indices_of("BSSubIndexTriShape"):
        _fields, _arrays, faces, tail = buffer_and_tail(source, index)
        info = sub_index_tail(tail)
        if len(info["segments"]) > 4 and info["segments"][4][1] and info["segments"][4][1] < len(faces):
            break
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    values = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes["nif_segment"].data.foreach_get("value", values)
    chosen = np.flatnonzero(values == 4)
    assert len(chosen) == info["segments"][4][1]
    select_faces(obj, chosen)
    assert bpy.ops.mesh.separate(type="SELECTED") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    (piece,) = [o for o in bpy.context.selected_objects if o is not obj]
    assert len(piece.data.polygons) == len(chosen)
    out = RawNif.read(export_file(collection, tmp_path / "separated.nif"))
    written = {out.node_name(i): i for i in out.indices_of("BSSubIndexTriShape")}
    assert piece.name in written and obj.name in written  # the piece is a BSSubIndexTriShape too
    for shape, wanted in ((written[piece.name], len(chosen)), (written[obj.name], len(faces) - len(chosen))):
        _fields, _arrays, triangles, tail = buffer_and_tail(out, shape)
        table = sub_index_tail(tail)
        assert len(triangles) == wanted and table["primitives"] == wanted
        assert table["total"] == info["total"] and len(table["segments"]) == len(info["segments"])
        assert [s[2] for s in table["segments"]] == [s[2] for s in info["segments"]]  # parents
        assert table["ssf"] == info["ssf"] and table["records"] == info["records"]
        numbers = triangle_segments(table, len(triangles))
        assert (numbers == 4).all() if shape == written[piece.name] else not (numbers == 4).any()


# -- three edit-export-import cycles ---------------------------------------------------------------
def shift_uvs(obj):
    """An edit that re-encodes the geometry and moves no vertex: every UV one unit along u (the
    UV editor's G X 1)."""
    layer = obj.data.uv_layers.active
    uv = np.empty(2 * len(layer.data), np.float32)
    layer.data.foreach_get("uv", uv)
    uv[0::2] += 1.0
    layer.data.foreach_set("uv", uv)


def keyed(points, rows, values):
    """Sorted (corner positions of each row of ``rows``, value) pairs: what sits where."""
    return sorted(zip(corner_positions(points, rows), np.asarray(values).tolist()))


def tree_state(path):
    """treeaspen03's collision (world points), its two skinned shapes' partitions (the triangles
    each holds, by position) and colours, and a static shape's colours (bytes, by position)."""
    nif = RawNif.read(path)
    collision = point_set(collision_world_points(nif)["TrunkBone"])
    skinned = sorted((raw for raw in (raw_sse_shape(nif, i) for i in nif.indices_of("BSTriShape")) if raw is not None),
                     key=lambda raw: len(raw["triangles"]))
    static = raw_tri_shape.bs_tri_shape(nif, next(i for i in nif.indices_of("BSTriShape") if nif.node_name(i) == "TreeAspen03_1:0"))
    partitions = []
    for raw in skinned:
        groups = {}
        for key, part in keyed(raw["positions"], raw["triangles"], raw["part"]):
            groups.setdefault(part, []).append(key)
        partitions.append(sorted(groups.values()))
    # by position (a vertex split at a seam is one more vertex, its colour the same)
    colours = [sorted(set(map(repr, keyed(shape["positions"], np.arange(len(shape["positions"]))[:, None],
                                          np.round(shape["colors"] * 255).astype(int).tolist()))))
               for shape in (*skinned, static)]
    return collision, partitions, colours


def test_three_edit_cycles_keep_tree_collision_partitions_and_colours(clean_scene, corpus, tmp_path):
    """treeaspen03 imported, its bone collision moved 10 up and its shapes (two skinned, one of
    three partitions, all coloured) edited, exported; then twice more: the last export imported,
    edited again (UVs, the collision's friction: both re-encoded, nothing moved) and exported.
    Each cycle leaves the collision, the partitions' triangles and the colours where the first
    put them."""
    from mathutils import Matrix

    path, states = corpus / TREE, []
    for cycle in range(3):
        collection = imported(path)
        body = bone_collision(collection)
        if cycle == 0:
            body.matrix_world = Matrix.Translation((0.0, 0.0, 10.0)) @ body.matrix_world
        body["havok_friction"] = 0.3 + 0.1 * cycle  # as the collision panel sets it
        for obj in collection.all_objects:
            if obj.type == "MESH" and "havok_shape" not in obj:
                shift_uvs(obj)
        path = export_file(collection, tmp_path / f"cycle{cycle}.nif")
        states.append(tree_state(path))
        clean_scene_objects(collection)
    source = collision_world_points(RawNif.read(corpus / TREE))["TrunkBone"]
    np.testing.assert_allclose(states[0][0], point_set(source + [0, 0, 10]), atol=2e-3)
    assert states[0][2] == tree_state(corpus / TREE)[2]  # the file's colours, to the byte
    for later in states[1:]:
        np.testing.assert_allclose(later[0], states[0][0], atol=2e-3)
        assert later[1] == states[0][1]
        assert later[2] == states[0][2]


def clean_scene_objects(collection):
    """Remove an import's objects and collection (what the next cycle's import must not see)."""
    import bpy

    for obj in list(collection.all_objects):
        bpy.data.objects.remove(obj)
    bpy.data.collections.remove(collection)


def outfit_state(path):
    """MOutfit's segmented shapes: their tables (total, parents, shared records, .ssf) and each
    triangle's segment, by position."""
    nif = RawNif.read(path)
    out = {}
    for index in nif.indices_of("BSSubIndexTriShape"):
        _fields, arrays, triangles, tail = buffer_and_tail(nif, index)
        table = sub_index_tail(tail)
        numbers = triangle_segments(table, len(triangles))
        layout = (table["total"], [s[2] for s in table["segments"]], table["records"], table["ssf"])
        out[nif.node_name(index)] = (layout, keyed(arrays["positions"], triangles, numbers))
    return out


def test_three_edit_cycles_keep_outfit_segments(clean_scene, corpus, tmp_path):
    """MOutfit imported, 50 faces of its largest shape's first filled segment moved to the next
    segment (Edit Mode, Set Attribute on nif_segment) and every shape's UVs edited, exported;
    twice more imported, UVs edited and exported: each cycle leaves every triangle in the
    segment the first put it in, the tables as stored."""
    path, states = corpus / MOUTFIT, []
    for cycle in range(3):
        collection = imported(path)
        shapes = [o for o in collection.all_objects if o.get("nif_type") == "BSSubIndexTriShape"]
        if cycle == 0:
            largest = max(shapes, key=lambda o: len(o.data.polygons))
            values = np.empty(len(largest.data.polygons), np.int32)
            largest.data.attributes["nif_segment"].data.foreach_get("value", values)
            first = int(values.min())
            select_faces(largest, np.flatnonzero(values == first)[:50])
            largest.data.attributes.active = largest.data.attributes["nif_segment"]
            import bpy

            assert bpy.ops.mesh.attribute_set(value_int=first + 1) == {"FINISHED"}
            bpy.ops.object.mode_set(mode="OBJECT")
            moved = (largest.name, first)
        for obj in shapes:
            shift_uvs(obj)
        path = export_file(collection, tmp_path / f"cycle{cycle}.nif")
        states.append(outfit_state(path))
        clean_scene_objects(collection)
    source = outfit_state(corpus / MOUTFIT)
    name, first = moved
    assert states[0][name][0] == source[name][0]
    before = np.bincount([segment for _key, segment in source[name][1] if segment >= 0])
    after = np.bincount([segment for _key, segment in states[0][name][1] if segment >= 0], minlength=len(before))
    assert after[first] == before[first] - 50 and after[first + 1] == before[first + 1] + 50
    for later in states[1:]:
        assert later == states[0]
