"""New meshes written for Fallout 76 and Skyrim LE (the export dialog's Fallout 76 and Skyrim
options, ``--game FO76`` / ``SKYRIM``) as those games' files hold them: block order, flags,
vertex layouts, shader fields and the skin partition layout compared with the corpus files'
(the Skyrim LE files of pynifly/tests/tests/Skyrim and nifly's Fallout 76 sample), everything
read with struct (tests/raw_*.py); re-imported, they show what those bytes hold. No corpus file
holds a skinned Fallout 76 shape: a skinned one follows nif.xml, which gives Fallout 76 Fallout
4's BSSkin blocks and vertex layout, and is compared with Fallout 4's files."""

import struct

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_geometry import tri_shape_data, tri_shape_fields
from raw_nodes import read_nodes, world_matrices
from raw_skin import bs_skin, ni_skin_data, ni_skin_instance, ni_skin_partition
from raw_tri_shape import bs_tri_shape, lighting_shader, texture_set, vanilla_desc
from scene import blender_weights, cube, export_objects, imported, mesh_arrays, skinned_column
from support import CORPUS, corpus_files

LE = "pynifly/tests/tests/Skyrim/"
LE_STATIC = LE + "cheesewedge01.nif"  # a vanilla static without vertex colours
LE_ARMOUR = LE + "draugr.nif"
LE_SKINNED = [p for p in corpus_files(LE + "*.nif") + corpus_files("pynifly/tests/tests/SkyrimSE/**/*.nif")
              if RawNif.read(p).bs_version == 83 and RawNif.read(p).indices_of("NiSkinPartition")]
FO76_SAMPLE = "nifly/tests/input/TestNifFile_FO76.nif"
FO4_FILES = "pynifly/tests/tests/FO4/*.nif"
MATERIAL = "Materials\\Test\\Crate.bgsm"
SKYRIM_FLAGS = 0x8000E  # most Skyrim LE nodes and shapes (test_corpus_holds_what_new_files_copy)


def centre_and_extents(positions):
    low, high = positions.min(axis=0), positions.max(axis=0)
    return (*((low + high) / 2), *((high - low) / 2))


def check_shows(obj, positions, triangles, uvs, normals):
    """The re-imported mesh holds the file's vertices in its order, its triangles, UVs (v flipped)
    and corner normals."""
    got, got_triangles, got_uvs, got_normals = mesh_arrays(obj)
    np.testing.assert_array_equal(got, positions.astype(np.float32))
    np.testing.assert_array_equal(got_triangles, triangles)
    np.testing.assert_allclose(got_uvs, np.c_[uvs[triangles, 0].ravel(), 1 - uvs[triangles, 1].ravel()], atol=1e-6)
    expected = normals[triangles.ravel()]
    np.testing.assert_allclose(got_normals, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=3e-3)


def blender_places(obj):
    """{rounded world position: its (Lower, Upper) weights} of skinned_column's mesh."""
    order = [obj.vertex_groups[name].index for name in ("Lower", "Upper")]
    return {
        tuple(np.round(np.array(obj.matrix_world @ v.co), 3)): np.array([{g.group: g.weight for g in v.groups}.get(i, 0.0) for i in order])
        for v in obj.data.vertices
    }


def check_weights(weights, positions, world, names, places, atol):
    """Each file vertex ({vertex: {bone name: weight}}) carries the weights of the Blender
    vertex at its place, four at most, summing to 1."""
    assert len(weights) == len(positions)
    for vertex, position in enumerate(positions):
        bones = weights[vertex]
        assert len(bones) <= 4 and abs(sum(bones.values()) - 1.0) < atol
        place = tuple(np.round(world[:3, :3] @ position + world[:3, 3], 3))
        np.testing.assert_allclose([bones.get(name, 0.0) for name in names], places[place], atol=atol)


def check_binds(worlds, shape, nodes, binds, armature):
    """Each bone's bind maps the shape's vertices into the bone's space where the file places
    the bone, and the file places it at the Blender bone's rest."""
    for node, bind, name in zip(nodes, binds, ("Lower", "Upper")):
        np.testing.assert_allclose(worlds[node] @ bind, worlds[shape], atol=1e-5)
        np.testing.assert_allclose(worlds[node], np.array(armature.matrix_world @ armature.data.bones[name].matrix_local), atol=1e-5)


def reimported_weights(obj):
    """The re-imported mesh's weights as {vertex: {bone node: weight}}."""
    dense, columns = blender_weights(obj)
    return {v: {columns[c]: w for c, w in enumerate(row) if w > 0} for v, row in enumerate(dense)}


def partition_layout(part):
    """What a NiSkinPartition partition's layout says, apart from its numbers: strips, weights
    per vertex, which arrays it holds, LOD level, global VB, whether it lists four bones or more."""
    return (part["counts"][3], part["counts"][4], *(part[k] is not None for k in ("vertex_map", "vertex_weights", "triangles", "bone_indices")),
            part["lod_level"], part["global_vb"], part["counts"][2] >= 4)


def test_corpus_holds_what_new_files_copy(corpus):
    """The facts the files below are held to: Fallout 76 keeps each shape's box as its centre and
    half size; its lighting shaders name a material file and hold nothing else, a texture set of
    13 paths after each; Skyrim LE's partitions share one layout (triangles, four weights and
    at least four bones each: heads and eyes repeat bone 0) and its shapes mostly have flags
    0x8000E."""
    sample = RawNif.read(corpus / FO76_SAMPLE)
    for index in sample.indices_of("BSTriShape"):
        shape = bs_tri_shape(sample, index)
        np.testing.assert_allclose(shape["box"], centre_and_extents(shape["positions"]), atol=1e-6)
    shaders = sample.indices_of("BSLightingShaderProperty")
    assert shaders and all(lighting_shader(sample, i)["size"] == 12 and lighting_shader(sample, i)["name"].endswith(".BGSM") for i in shaders)
    assert all(sample.type_of(i + 1) == "BSShaderTextureSet" and len(texture_set(sample, i + 1)) == 13 for i in shaders)
    layouts = {partition_layout(part) for path in LE_SKINNED for part in ni_skin_partition(RawNif.read(path), RawNif.read(path).indices_of("NiSkinPartition")[0])}
    assert len(LE_SKINNED) == 4 and layouts == {(0, 4, True, True, True, True, 0, 0, True)}
    small = [part["bones"] for path in LE_SKINNED for part in ni_skin_partition(RawNif.read(path), RawNif.read(path).indices_of("NiSkinPartition")[0])
             if len(set(part["bones"])) < 4]
    assert small and all(len(bones) == 4 and set(bones[len(set(bones)):]) == {0} for bones in small)
    flags = [tri_shape_fields(nif, i)["flags"] for nif in map(RawNif.read, corpus_files(LE + "*.nif")) for i in nif.indices_of("NiTriShape")]
    assert max(set(flags), key=flags.count) == SKYRIM_FLAGS


def test_new_skyrim_le_cube_matches_vanilla_statics_and_reimports(clean_scene, corpus, tmp_path):
    import bpy

    box = cube()
    corners = {tuple(np.round(v.co, 4)) for v in box.data.vertices}
    path = tmp_path / "cube.nif"
    export_objects([box], path, game="SKYRIM")
    nif = RawNif.read(path)
    assert (nif.user_version, nif.bs_version) == (12, 83)
    # cheesewedge01 and staff04-collision without their markers and collision
    assert nif.block_types() == ["BSFadeNode", "NiTriShape", "NiTriShapeData", "BSLightingShaderProperty", "BSShaderTextureSet"]
    vanilla = RawNif.read(corpus / LE_STATIC)
    like = tri_shape_fields(vanilla, vanilla.indices_of("NiTriShape")[0])
    shape = tri_shape_fields(nif, 1)
    assert shape == {**like, "flags": SKYRIM_FLAGS, "data": 2, "shader": 3}
    assert nif.flags(0) == SKYRIM_FLAGS
    data, like_data = tri_shape_data(nif.blocks[2], 83), tri_shape_data(vanilla.blocks[like["data"]], 83)
    for field in ("group_id", "keep_flags", "compress_flags", "bs_data_flags", "material_crc", "consistency_flags", "additional_data", "match_groups"):
        assert data[field] == like_data[field], field
    assert like_data["colors"] is None and data["colors"] is None and data["tangents"] is not None
    centre, radius = np.array(data["bound"][:3]), data["bound"][3]
    assert np.linalg.norm(data["vertices"] - centre, axis=1).max() <= radius + 1e-5
    shader, like_shader = lighting_shader(nif, 3), lighting_shader(vanilla, like["shader"])
    assert shader["flags"] == like_shader["flags"] == (0x82400301, 0x8001) and shader["shader_type"] == 0
    assert shader["texture_set"] == 4 and len(texture_set(nif, 4)) == len(texture_set(vanilla, like_shader["texture_set"])) == 9
    bpy.data.objects.remove(box)
    (obj,) = [o for o in imported(path).all_objects if o.type == "MESH"]
    check_shows(obj, data["vertices"], data["triangles"], data["uvs"], data["normals"])
    assert {tuple(np.round(p, 4)) for p in data["vertices"]} == corners


def alpha_property(nif, index):
    """(flags, threshold) of a NiAlphaProperty: NiObjectNET (name, extra data count + refs,
    controller), flags u16, threshold byte."""
    (extra,) = struct.unpack_from("<I", nif.blocks[index], 4)
    flags, threshold = struct.unpack_from("<HB", nif.blocks[index], 12 + 4 * extra)
    return flags, threshold


def test_new_skyrim_le_blended_material_gets_the_vanilla_alpha_property(clean_scene, corpus, tmp_path):
    """A material blending its alpha: a NiAlphaProperty after the texture set, with the flags
    of eyeschild's (blending, source alpha over inverse source alpha, threshold 128)."""
    import bpy

    box = cube()
    material = bpy.data.materials.new("Glass")
    material.surface_render_method = "BLENDED"
    box.data.materials.append(material)
    path = tmp_path / "glass.nif"
    export_objects([box], path, game="SKYRIM")
    nif = RawNif.read(path)
    assert nif.block_types()[1:] == ["NiTriShape", "NiTriShapeData", "BSLightingShaderProperty", "BSShaderTextureSet", "NiAlphaProperty"]
    assert tri_shape_fields(nif, 1)["alpha"] == 5
    vanilla = RawNif.read(corpus / LE / "eyeschild.nif")
    assert alpha_property(nif, 5) == alpha_property(vanilla, tri_shape_fields(vanilla, vanilla.indices_of("NiTriShape")[0])["alpha"]) == (4333, 128)


@pytest.mark.parametrize("flat", [False, True], ids=["column", "plane"])
def test_new_skyrim_le_skinned_mesh_matches_vanilla_and_reimports(clean_scene, corpus, tmp_path, flat):
    import bpy

    armature, mesh = skinned_column(flat)
    places = blender_places(mesh)
    path = tmp_path / "skinned.nif"
    export_objects([armature, mesh], path, game="SKYRIM")
    nif = RawNif.read(path)
    types = nif.block_types()
    shape = types.index("NiTriShape")
    # draugr, eyeschild: the nodes, then the shape, its data, skin, shader and textures
    assert types[0] == "NiNode" and set(types[:shape]) == {"NiNode"}
    assert types[shape:] == ["NiTriShape", "NiTriShapeData", "NiSkinInstance", "NiSkinData", "NiSkinPartition",
                             "BSLightingShaderProperty", "BSShaderTextureSet"]
    fields = tri_shape_fields(nif, shape)
    assert (fields["flags"], fields["data"], fields["skin"], fields["shader"]) == (SKYRIM_FLAGS, shape + 1, shape + 2, shape + 5)
    vanilla = RawNif.read(corpus / LE_ARMOUR)
    like = tri_shape_fields(vanilla, vanilla.indices_of("NiTriShape")[0])
    assert lighting_shader(nif, shape + 5)["flags"] == lighting_shader(vanilla, like["shader"])["flags"] == (0x82400303, 0x8001)
    data = tri_shape_data(nif.blocks[shape + 1], 83)
    instance = ni_skin_instance(nif, shape + 2)
    assert (instance["data"], instance["partition"], instance["body_parts"]) == (shape + 3, shape + 4, None)
    assert [nif.node_name(node) for node in instance["bones"]] == ["Lower", "Upper"]
    skin = ni_skin_data(nif, shape + 3)
    names = ["Lower", "Upper"]
    weights = {vertex: {names[bone]: w for bone, w in bones.items()} for vertex, bones in skin["weights"].items()}
    worlds = world_matrices(*read_nodes(path))
    check_weights(weights, data["vertices"], worlds[shape], names, places, 1e-5)
    check_binds(worlds, shape, instance["bones"], skin["binds"], armature)
    covered = []
    for part in ni_skin_partition(nif, shape + 4):
        assert partition_layout(part) == (0, 4, True, True, True, True, 0, 0, True)  # as test_corpus_holds_what_new_files_copy
        bones = np.array(part["bones"])[part["bone_indices"]]
        for local, vertex in enumerate(part["vertex_map"].tolist()):
            held = {names[bone]: w for bone, w in zip(bones[local], part["vertex_weights"][local]) if w > 0}
            assert held.keys() == weights[vertex].keys()
            np.testing.assert_allclose(list(held.values()), [weights[vertex][name] for name in held], atol=1e-6)
        covered += part["vertex_map"][part["triangles"]].tolist()
    assert sorted(map(tuple, covered)) == sorted(map(tuple, data["triangles"].tolist()))
    bpy.data.objects.remove(mesh)
    bpy.data.objects.remove(armature)
    (obj,) = [o for o in imported(path).all_objects if o.type == "MESH"]
    check_shows(obj, data["vertices"], data["triangles"], data["uvs"], data["normals"])
    again = reimported_weights(obj)
    node_of = dict(zip(names, instance["bones"]))
    for vertex, bones in weights.items():
        assert again[vertex].keys() == {node_of[name] for name in bones}
        np.testing.assert_allclose([again[vertex][node_of[name]] for name in bones], list(bones.values()), atol=1e-6)


def test_new_fo76_cube_matches_the_fo76_sample_and_reimports(clean_scene, corpus, tmp_path):
    import bpy

    box = cube()
    material = bpy.data.materials.new("Crate")
    material["nif_material_path"] = MATERIAL
    box.data.materials.append(material)
    path = tmp_path / "cube.nif"
    export_objects([box], path, game="FO76")
    nif = RawNif.read(path)
    assert (nif.user_version, nif.bs_version) == (12, 155)
    # the sample's shapes: BSTriShape, its lighting shader, the texture set after it
    assert nif.block_types() == ["NiNode", "BSTriShape", "BSLightingShaderProperty", "BSShaderTextureSet"]
    shape = bs_tri_shape(nif, 1)
    sample = RawNif.read(corpus / FO76_SAMPLE)
    like = bs_tri_shape(sample, sample.indices_of("BSTriShape")[0])
    assert shape["desc"] == like["desc"] == vanilla_desc([corpus / FO76_SAMPLE], 0x1B) and shape["flags"] == like["flags"] == 0xE
    assert (shape["skin"], shape["shader"], shape["alpha"]) == (-1, 2, -1)
    np.testing.assert_allclose(shape["box"], centre_and_extents(shape["positions"]), atol=1e-6)
    centre, radius = np.array(shape["sphere"][:3]), shape["sphere"][3]
    assert np.linalg.norm(shape["positions"] - centre, axis=1).max() <= radius + 1e-5
    shader = lighting_shader(nif, 2)
    assert shader["name"] == MATERIAL and shader["size"] == 12 and shader["flags"] is None
    assert len(texture_set(nif, 3)) == 13
    bpy.data.objects.remove(box)
    (obj,) = [o for o in imported(path).all_objects if o.type == "MESH"]
    check_shows(obj, shape["positions"], shape["triangles"], shape["uvs"], shape["normals"])
    assert obj.active_material["nif_material_path"] == MATERIAL


@pytest.mark.parametrize("flat", [False, True], ids=["column", "plane"])
def test_new_fo76_skinned_mesh_follows_nif_xml_and_reimports(clean_scene, corpus, tmp_path, flat):
    import bpy

    from precombined_nif.io.nif.exporter import export_nif

    armature, mesh = skinned_column(flat)
    places = blender_places(mesh)
    path = tmp_path / "skinned.nif"
    _, messages = export_nif(str(path), [armature, mesh], game="FO76")
    assert messages == ["Fallout 76 shaders take their look from a material file: shapes without a material name "
                        "Materials\\Default.bgsm (give them a material whose nif_material_path names another)"]
    nif = RawNif.read(path)
    types = nif.block_types()
    index = types.index("BSTriShape")
    # Fallout 4's skinned shapes (nifly's Skinned_FO4, BaseMaleHead): the shape, its skin, its shader
    assert set(types[:index]) == {"NiNode"}
    assert types[index:] == ["BSTriShape", "BSSkin::Instance", "BSSkin::BoneData", "BSLightingShaderProperty", "BSShaderTextureSet"]
    shape = bs_tri_shape(nif, index)
    assert shape["desc"] == vanilla_desc(corpus_files(FO4_FILES), 0x5B) and shape["flags"] == 0xE
    np.testing.assert_allclose(shape["box"], centre_and_extents(shape["positions"]), atol=1e-6)
    assert lighting_shader(nif, index + 3)["name"] == "Materials\\Default.bgsm"
    root, nodes, rests = bs_skin(nif, shape["skin"])
    names = [nif.node_name(node) for node in nodes]
    assert names == ["Lower", "Upper"] and shape["skin"] == index + 1
    weights = {v: {names[b]: w for b, w in zip(shape["bones"][v], shape["weights"][v]) if w > 0} for v in range(len(shape["positions"]))}
    worlds = world_matrices(*read_nodes(path))
    check_weights(weights, shape["positions"], worlds[index], names, places, 2e-3)  # half-float weights
    check_binds(worlds, index, nodes, [np.linalg.inv(rests[node]) for node in nodes], armature)
    bpy.data.objects.remove(mesh)
    bpy.data.objects.remove(armature)
    (obj,) = [o for o in imported(path).all_objects if o.type == "MESH"]
    check_shows(obj, shape["positions"], shape["triangles"], shape["uvs"], shape["normals"])
    again = reimported_weights(obj)
    node_of = dict(zip(names, nodes))
    for vertex, bones in weights.items():
        assert again[vertex].keys() == {node_of[name] for name in bones}
        np.testing.assert_allclose([again[vertex][node_of[name]] for name in bones], list(bones.values()), atol=2e-3)


@pytest.mark.parametrize("name", [LE + "malehead.nif", LE + "eyeschild.nif", "pynifly/tests/tests/FONV/outfitf_simple.nif"])
def test_skinned_shape_losing_vertices_gets_its_skin_written_anew(clean_scene, corpus, tmp_path, name):
    """Deleting vertices renumbers the shape's vertices, so its skin is written anew for them (it
    was compared with the stored one, which names vertices the shape no longer has: "bone 0
    weights vertex 203 of only 162" for the eyes): the file's skin weights the vertices it has
    as Blender does, and its partitions hold its triangles."""
    import bmesh

    from precombined_nif.io.nif.exporter import export_nif

    collection = imported(corpus / name)
    obj = next(o for o in collection.all_objects if o.type == "MESH" and o.modifiers.get("Armature"))
    index = obj["nif_block"]
    edit = bmesh.new()
    edit.from_mesh(obj.data)
    edit.verts.ensure_lookup_table()
    bmesh.ops.delete(edit, geom=edit.verts[:40], context="VERTS")
    edit.to_mesh(obj.data)
    edit.free()
    dense, _ = blender_weights(obj)
    groups = [group.name for group in obj.vertex_groups]
    expected = {tuple(np.round(v.co, 4)): dense[v.index] / dense[v.index].sum() for v in obj.data.vertices}
    export_nif(str(tmp_path / "out.nif"), list(collection.all_objects))
    source, nif = RawNif.read(corpus / name), RawNif.read(tmp_path / "out.nif")
    fields = tri_shape_fields(nif, index)
    data = tri_shape_data(nif.blocks[fields["data"]], nif.bs_version)
    instance = ni_skin_instance(nif, fields["skin"])
    skin = ni_skin_data(nif, instance["data"])
    before = tri_shape_data(source.blocks[tri_shape_fields(source, index)["data"]], source.bs_version)
    assert len(data["vertices"]) < len(before["vertices"])
    assert sorted(skin["weights"]) == list(range(len(data["vertices"])))
    column = [groups.index(nif.node_name(node)) for node in instance["bones"]]
    for vertex, position in enumerate(data["vertices"]):
        want = expected[tuple(np.round(position, 4))]
        got = np.zeros(len(groups))
        for bone, weight in skin["weights"][vertex].items():
            got[column[bone]] += weight
        assert len(skin["weights"][vertex]) <= 4
        if np.count_nonzero(want) <= 4:
            np.testing.assert_allclose(got, want, atol=1e-5)
    covered = [tuple(part["vertex_map"][t]) for part in ni_skin_partition(nif, instance["partition"]) for t in part["triangles"].tolist()]
    assert sorted(covered) == sorted(map(tuple, data["triangles"].tolist()))


@pytest.mark.parametrize("name, game", [("pynifly/tests/tests/SkyrimSE/farmbench01.nif", "SKYRIM"), (LE_STATIC, "SSE")])
def test_static_with_collision_written_anew_for_skyrim_tells_the_game_in_bsxflags(clean_scene, corpus, tmp_path, name, game):
    """A static with collision written as a new Skyrim file (LE from SE, SE from LE): its root is a
    BSFadeNode whose BSXFlags (the block after it) has bHavok and bArticulated, as the games'
    statics with collision (dockstepsdownend01, farmhouse01, farmbench01, rocks01...)."""
    from precombined_nif.io.nif.exporter import export_nif

    collection = imported(corpus / name)
    export_nif(str(tmp_path / "out.nif"), list(collection.all_objects), game=game)
    nif = RawNif.read(tmp_path / "out.nif")
    (root,) = nif.roots()
    assert nif.type_of(root) == "BSFadeNode" and nif.type_of(root + 1) == "BSXFlags"
    _name, extra, flags_ref = struct.unpack_from("<iIi", nif.blocks[root])
    assert extra == 1 and flags_ref == root + 1 and struct.unpack("<iI", nif.blocks[root + 1]) == (nif.string_index("BSX"), 0x82)
    assert nif.indices_of("bhkCollisionObject")


def test_edited_fo76_import_is_written_as_fo76(clean_scene, corpus, tmp_path):
    """An edited Fallout 76 file (nifly's FO4 golden as Fallout 76 writes it) keeps its blocks;
    the moved vertex is written, the shape's box follows it, the shaders stay named."""
    from nif_rewriter import fo76_file

    from precombined_nif.io.nif.exporter import export_nif

    path = fo76_file(corpus, tmp_path)
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.type == "MESH")
    index = obj["nif_block"]
    obj.data.vertices[0].co.z += 50.0
    moved = np.array(obj.data.vertices[0].co)
    _, messages = export_nif(str(tmp_path / "out.nif"), list(collection.all_objects))
    assert not messages
    source, nif = RawNif.read(path), RawNif.read(tmp_path / "out.nif")
    assert nif.bs_version == 155 and nif.block_types() == source.block_types()
    shape = bs_tri_shape(nif, index)
    assert np.abs(shape["positions"] - moved).max(axis=1).min() < 0.05  # half floats
    np.testing.assert_allclose(shape["box"], centre_and_extents(shape["positions"]), atol=1e-6)
    for shader in nif.indices_of("BSLightingShaderProperty"):
        assert nif.blocks[shader] == source.blocks[shader]
