"""Starfield in real Blender: every corpus NIF imports with every LOD of its meshes where the
file places them (checked against struct reads of the NIF and .mesh bytes), its skin posed by
the skeleton where the game draws it, its .mat material with textures and its morph.dat as
shape keys; untouched imports write the NIF and its .mesh files back byte for byte; edits
(a vertex moved or added, a weight changed, a LOD added) write new .mesh files named by the
SHA1 of their bytes and come back; new files are written from scratch; meshes are found in the
preferences' Data folder and its Starfield archives; a missing or damaged mesh is reported
naming the NIF and the mesh while the other shapes import."""

import hashlib
import importlib
import json
import shutil
import struct

import numpy as np
import pytest
from archive_writer import make_dds, write_ba2_gnrl
from nif_rewriter import RawNif
from raw_starfield import (
    SF, bone_binds, geometry_slots, mesh_file, node_placements, read_mesh, read_morphs, skin_attach_names, transform,
)
from support import CORPUS, corpus_files

NIFS = [path for path in corpus_files(f"{SF}/**/*.nif") if path.name != "skeleton.nif"]
BODY = f"{SF}/naked_f.nif"
HEAD = f"{SF}/meshes/malehead.nif"
SKELETON = f"{SF}/skeleton.nif"
MORPHS = f"{SF}/morphs/female_chargen_body_morph.dat"
BODY_MAT = f"{SF}/materials/Actors/Human/Naked_Body/Female/Naked_F_Body.mat"
STEP = 2.0 / 32767  # the body's position step (scale 2)


def ids(path):
    return path.relative_to(CORPUS / SF).as_posix()


def module(addon, name):
    return importlib.import_module(f"{addon.__name__}.{name}")


def import_nif(addon, path, **options):
    """(collection, warnings) of an import through the import loop's NIF import."""
    import bpy

    imported = module(addon, "io.file_import").import_nif(bpy.context, str(path), **options)
    bpy.context.view_layer.update()  # world matrices
    return imported


def export(addon, collection, path, **options):
    """Export the collection's objects to ``path``: (NifFile, messages)."""
    objects = module(addon, "io.collection_objects").objects_in(collection)
    return module(addon, "io.nif.exporter").export_nif(str(path), objects, **options)


def shape_object(collection):
    (obj,) = [o for o in collection.objects if o.get("nif_type") == "BSGeometry"]
    return obj


def lods_of(obj):
    return sorted((o for o in obj.children_recursive if "sf_lod_slot" in o or "sf_mesh_lod" in o), key=lambda o: o.name)


def coordinates(mesh):
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def faces(mesh):
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    return corners.reshape(-1, 3)


def deformed(obj):
    """World positions of the evaluated (armature-deformed) mesh's vertices."""
    import bpy

    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    matrix = np.array(evaluated.matrix_world)
    return coordinates(evaluated.data) @ matrix[:3, :3].T + matrix[:3, 3]


def group_weights(obj, names):
    weights = np.zeros((len(obj.data.vertices), len(names)), np.float32)
    column = {g.index: names.index(g.name) for g in obj.vertex_groups}
    for vertex in obj.data.vertices:
        for entry in vertex.groups:
            weights[vertex.index, column[entry.group]] = entry.weight
    return weights


def stored_weights(mesh, count):
    """Dense (vertices, bones) weights of a struct-read .mesh."""
    per = mesh["per_vertex"]
    weights = np.zeros((len(mesh["positions"]), count), np.float32)
    for vertex in range(len(mesh["positions"])):
        for bone, weight in mesh["weights"][vertex * per:(vertex + 1) * per]:
            weights[vertex, bone] += weight / 65535
    return weights


def data_folder(corpus, folder, nif=BODY):
    """A Data folder holding the NIF under meshes/ and the .mesh it names."""
    (folder / "meshes").mkdir(parents=True)
    target = folder / "meshes" / (corpus / nif).name
    shutil.copy(corpus / nif, target)
    raw = RawNif.read(corpus / nif)
    for slot in geometry_slots(raw, raw.indices_of("BSGeometry")[0]):
        if slot is not None:
            source = mesh_file(corpus / SF, slot[3])
            mesh_file(folder, slot[3]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, mesh_file(folder, slot[3]))
    return target


# -- import ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", NIFS, ids=ids)
def test_every_lod_imports_where_the_file_places_it(clean_scene, addon, path):
    """Each BSGeometry is an object placed by its transform holding its LOD 0 mesh: positions,
    triangles, UVs (v flipped), normals, colours and every weight as the bytes say; each
    triangle list inside the .mesh is a hidden object under it using the vertices it names."""
    collection, warnings = import_nif(addon, path)
    raw = RawNif.read(path)
    (index,) = raw.indices_of("BSGeometry")
    (_, _, _, name), *others = geometry_slots(raw, index)
    assert not any(others)
    mesh = read_mesh(mesh_file(CORPUS / SF, name).read_bytes())
    obj = shape_object(collection)
    root = np.array(transform(raw, raw.roots()[0]))
    np.testing.assert_allclose(np.array(obj.matrix_world), root @ np.array(transform(raw, index)), atol=1e-6)
    np.testing.assert_allclose(coordinates(obj.data), mesh["positions"], atol=1e-6)
    np.testing.assert_array_equal(faces(obj.data), mesh["triangles"])
    uv = np.empty(2 * len(obj.data.loops), np.float32)
    obj.data.uv_layers[0].data.foreach_get("uv", uv)
    stored_uv = np.array(mesh["uvs"], np.float32)[np.array(mesh["triangles"]).ravel()]
    np.testing.assert_allclose(uv.reshape(-1, 2), np.c_[stored_uv[:, 0], 1 - stored_uv[:, 1]], atol=1e-6)
    normals = np.empty(3 * len(obj.data.loops), np.float32)
    obj.data.corner_normals.foreach_get("vector", normals)
    stored = np.array(mesh["normals"])[np.array(mesh["triangles"]).ravel()]
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    assert np.abs(normals.reshape(-1, 3) - stored).max() < 3e-3  # Blender keeps custom normals to about this
    colors = np.empty(4 * len(obj.data.vertices), np.float32)
    obj.data.color_attributes["Color"].data.foreach_get("color_srgb", colors)
    np.testing.assert_allclose(colors.reshape(-1, 4), np.array(mesh["colors"])[:, [2, 1, 0, 3]] / 255, atol=1e-6)
    names = skin_attach_names(raw, raw.indices_of("SkinAttach")[0])
    np.testing.assert_allclose(group_weights(obj, names), stored_weights(mesh, len(names)), atol=1e-6)
    lods = lods_of(obj)
    assert [lod["sf_mesh_lod"] for lod in lods] == list(range(1, len(mesh["lods"]) + 1))
    for lod, triangles in zip(lods, mesh["lods"]):
        assert lod.hide_get() and lod.hide_render and lod.parent is obj
        corners = coordinates(lod.data)[faces(lod.data)]
        np.testing.assert_allclose(corners, np.array(mesh["positions"])[np.array(triangles)], atol=1e-6)
        np.testing.assert_allclose(group_weights(lod, names), stored_weights(mesh, len(names))[np.unique(triangles)], atol=1e-6)
    assert [w for w in warnings if "not imported" in w] == []


@pytest.mark.parametrize("nif", [BODY, HEAD])
def test_skin_posed_by_the_skeleton_lands_where_the_game_draws_it(clean_scene, addon, corpus, nif):
    """With the skeleton NIF, each vertex lands at sum(weight x node x bind) x position: the nodes
    placed as skeleton.nif's bytes place them, the binds and weights as the NIF's and the
    .mesh's bytes hold them (the body stands from the feet up to the neck, the head above it)."""
    collection, warnings = import_nif(addon, corpus / nif, skeleton=str(corpus / SKELETON))
    raw = RawNif.read(corpus / nif)
    (index,) = raw.indices_of("BSGeometry")
    mesh = read_mesh(mesh_file(corpus / SF, geometry_slots(raw, index)[0][3]).read_bytes())
    names = skin_attach_names(raw, raw.indices_of("SkinAttach")[0])
    binds = np.array(bone_binds(raw, raw.indices_of("BSSkin::BoneData")[0]))
    nodes = node_placements(RawNif.read(corpus / SKELETON))
    skinning = np.array([nodes[name] @ bind for name, bind in zip(names, binds)])
    weights = stored_weights(mesh, len(names))
    positions = np.c_[np.array(mesh["positions"]), np.ones(len(mesh["positions"]))]
    expected = np.einsum("vb,bij,vj->vi", weights, skinning, positions)[:, :3]
    drawn = deformed(shape_object(collection))
    assert np.abs(drawn - expected).max() < 1e-4
    assert not [w for w in warnings if "skeleton" in w]
    if nif == BODY:
        assert drawn[:, 2].min() == pytest.approx(0.0, abs=0.01) and 1.4 < drawn[:, 2].max() < 1.6
    armature = collection.objects["ExportScene"]
    assert armature.type == "ARMATURE" and sorted(b.name for b in armature.data.bones) == sorted(names)
    chest = armature.data.bones.get("C_Chest")
    assert chest is not None and chest.parent is not None  # the skeleton's hierarchy


def test_without_a_skeleton_the_skin_shows_its_bind_pose(clean_scene, addon, corpus):
    collection, _ = import_nif(addon, corpus / BODY)
    obj = shape_object(collection)
    np.testing.assert_allclose(deformed(obj), coordinates(obj.data), atol=1e-5)  # the NIF places it alone


def test_morphs_become_shape_keys(clean_scene, addon, corpus):
    collection, warnings = import_nif(addon, corpus / BODY, starfield_morphs=str(corpus / MORPHS))
    obj = shape_object(collection)
    names, count, deltas = read_morphs((corpus / MORPHS).read_bytes())
    keys = obj.data.shape_keys.key_blocks
    assert [key.name for key in keys] == ["Basis", *names] and count == len(obj.data.vertices)
    basis = coordinates(obj.data)
    for number, name in enumerate(names):
        co = np.empty(3 * count, np.float32)
        keys[name].data.foreach_get("co", co)
        expected = np.zeros((count, 3), np.float32)
        for (morph, vertex), (delta, _) in deltas.items():
            if morph == number:
                expected[vertex] = delta
        np.testing.assert_allclose(co.reshape(-1, 3) - basis, expected, atol=1e-6)
    head, warnings = import_nif(addon, corpus / HEAD, starfield_morphs=str(corpus / MORPHS))
    assert shape_object(head).data.shape_keys is None
    assert any("no shape has their 6616 vertices" in w for w in warnings)


def test_material_from_its_mat_file_with_textures(clean_scene, addon, corpus, tmp_path):
    """The .mat the shader names gives the node material: its first texture set's colour,
    normal, roughness and metal textures feed the BSDF, found case-insensitively in the Data
    folder; the rest are image nodes of their own. A swapped texture writes the .mat back, only
    that file name changed, when asked."""
    data = tmp_path / "Data"
    nif = data_folder(corpus, data)
    mat = data / "materials/Actors/Human/Naked_Body/Female/Naked_F_Body.mat"
    mat.parent.mkdir(parents=True)
    shutil.copy(corpus / BODY_MAT, mat)
    stored = [c["Data"]["FileName"] for c in json.loads(mat.read_text())["Objects"][0]["Components"]
              if c["Type"] == "BSMaterial::MRTextureFile"]
    for number, name in enumerate(stored):
        target = data / name.replace("\\", "/").removeprefix("Data/").lower()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(make_dds(87, 4, 4, 1, seed=number))
    collection, warnings = import_nif(addon, nif)
    assert not [w for w in warnings if "texture" in w or "material" in w]
    material = shape_object(collection).data.materials[0]
    assert material.name == "Naked_F_Body" and material["nif_material_path"].endswith("Naked_F_Body.mat")
    nodes = {node["nif_texture"]: node for node in material.node_tree.nodes if "nif_texture" in node}
    assert sorted(nodes) == sorted(stored) and all(node.image is not None for node in nodes.values())
    bsdf = material.node_tree.nodes["Principled BSDF"]
    fed = {link.to_socket.name: link.from_node for link in material.node_tree.links if link.to_node == bsdf}
    assert fed["Base Color"]["nif_texture"].endswith("body_color.dds")
    assert fed["Roughness"]["nif_texture"].endswith("body_rough.dds") and fed["Metallic"]["nif_texture"].endswith("body_metal.dds")
    assert fed["Normal"].bl_idname == "ShaderNodeNormalMap"
    assert all(lod.data.materials[0] == material for lod in lods_of(shape_object(collection)))
    # a swapped colour texture
    import bpy

    swapped = data / "textures/sf/test/body_color_tan.dds"
    swapped.write_bytes(make_dds(87, 4, 4, 1, seed=9))
    nodes[stored[0]].image = bpy.data.images.load(str(swapped))
    out = tmp_path / "out" / "meshes" / "naked_f.nif"
    out.parent.mkdir(parents=True)
    export(addon, collection, out)
    written = module(addon, "io.nif.material_export").write_material_files(out, list(collection.objects))
    (target,) = written  # at the path the shader names, under the Data folder the NIF went to
    assert target == tmp_path / "out/Materials/Actors/Human/Naked_Body/Female/Naked_F_Body.mat"
    expected = mat.read_bytes().replace(b"Data\\\\Textures\\\\SF\\\\test\\\\body_color.dds", b"Data\\\\textures\\\\sf\\\\test\\\\body_color_tan.dds")
    assert target.read_bytes() == expected
    assert module(addon, "io.nif.material_export").write_material_files(tmp_path / "other.nif", []) == []


# -- export ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", NIFS, ids=ids)
def test_untouched_import_writes_the_nif_and_its_meshes_back(clean_scene, addon, tmp_path, path):
    collection, _ = import_nif(addon, path, skeleton=str(CORPUS / SKELETON))
    out = tmp_path / "meshes" / path.name
    out.parent.mkdir()
    _, messages = export(addon, collection, out)
    assert out.read_bytes() == path.read_bytes() and messages == []
    raw = RawNif.read(path)
    name = geometry_slots(raw, raw.indices_of("BSGeometry")[0])[0][3]
    assert mesh_file(tmp_path, name).read_bytes() == mesh_file(CORPUS / SF, name).read_bytes()


@pytest.mark.parametrize("path", NIFS, ids=ids)
def test_an_import_encoded_anew_gives_back_the_stored_vertices(clean_scene, addon, path):
    """What an edit writes for the vertices it left alone: the stored positions, UVs, colours,
    triangles and triangle lists exactly, weights to a unit, normals to a quantisation step,
    tangents along the stored ones and every bitangent sign bit as stored (Blender's tangents
    with the v flip undone)."""
    collection, _ = import_nif(addon, path)
    obj = shape_object(collection)
    raw = RawNif.read(path)
    stored = read_mesh(mesh_file(CORPUS / SF, geometry_slots(raw, 2)[0][3]).read_bytes())
    names = skin_attach_names(raw, raw.indices_of("SkinAttach")[0])
    written = read_mesh(module(addon, "io.starfield.mesh_export").encode_slot(obj, names, reorder=False).to_bytes())
    for key in ("raw_positions", "uvs", "colors", "triangles"):
        assert np.array_equal(written[key], stored[key]), key  # (arrays: pytest's diff of long lists takes minutes)
    assert len(written["lods"]) == len(stored["lods"]) and all(map(np.array_equal, written["lods"], stored["lods"]))
    assert written["scale"] == stored["scale"]
    assert np.abs(np.array(written["normals"]) - np.array(stored["normals"])).max() <= 1.5 / 511.5
    along = (np.array(written["tangents"]) * np.array(stored["tangents"])).sum(axis=1)
    assert np.percentile(along, 1) > 0.99
    signs = np.array(written["raw_tangents"]) >> 30, np.array(stored["raw_tangents"]) >> 30
    assert np.array_equal(*signs), f"{(signs[0] != signs[1]).sum()} bitangent signs differ"
    assert {t >> 30 for t in stored["raw_tangents"]} <= {0, 3} and {n >> 30 for n in written["raw_normals"]} == {1}
    np.testing.assert_allclose(stored_weights(written, len(names)), stored_weights(stored, len(names)), atol=1.5 / 65535)


def test_edits_write_new_meshes_named_by_their_bytes_and_come_back(clean_scene, addon, corpus, tmp_path):
    """Move a vertex, change a weight, add a vertex, add a LOD: the NIF names new .mesh files
    whose names are the SHA1 of their bytes, and the re-import holds every edit."""
    import bmesh
    import bpy

    collection, _ = import_nif(addon, corpus / BODY, skeleton=str(corpus / SKELETON))
    body = shape_object(collection)
    original = read_mesh(mesh_file(corpus / SF, geometry_slots(RawNif.read(corpus / BODY), 2)[0][3]).read_bytes())
    body.data.vertices[100].co.z += 0.05
    body.vertex_groups["C_Chest"].add([10], 0.5, "REPLACE")
    bm = bmesh.new()
    bm.from_mesh(body.data)
    bm.faces.new([bm.verts.new(corner) for corner in ((0.0, 0.3, 0.9), (0.05, 0.3, 0.9), (0.0, 0.3, 0.95))])
    bm.to_mesh(body.data)
    bm.free()
    body.vertex_groups["C_Chest"].add([len(body.data.vertices) - 3], 1.0, "REPLACE")
    source = next(lod for lod in lods_of(body) if lod["sf_mesh_lod"] == 2)
    lod = source.copy()
    lod.data = source.data.copy()
    collection.objects.link(lod)
    del lod["sf_mesh_lod"]
    lod["sf_lod_slot"] = 1
    out = tmp_path / "meshes" / "naked_f.nif"
    out.parent.mkdir()
    export(addon, collection, out)
    slots = geometry_slots(RawNif.read(out), 2)
    assert slots[0] is not None and slots[1] is not None and slots[2:] == [None, None]
    files = {}
    for number in (0, 1):
        data = mesh_file(tmp_path, slots[number][3]).read_bytes()
        digest = hashlib.sha1(data).hexdigest()
        assert slots[number][3] == f"{digest[:20]}\\{digest[20:]}"
        files[number] = read_mesh(data)
        assert (slots[number][0], slots[number][1]) == (len(files[number]["triangles"]), len(files[number]["positions"]))
    written = files[0]
    positions, before = np.array(written["positions"]), np.array(original["positions"])
    assert np.abs(positions[100] - before[100] - (0, 0, 0.05)).max() <= STEP
    untouched = np.setdiff1d(np.arange(len(before)), [100])
    np.testing.assert_array_equal(np.array(written["raw_positions"])[untouched], np.array(original["raw_positions"])[untouched])
    assert len(positions) == len(before) + 3 and np.abs(positions[-3] - (0.0, 0.3, 0.9)).max() <= STEP
    assert len(written["triangles"]) == len(original["triangles"]) + 1
    assert len(files[1]["triangles"]) == len(original["lods"][1]) and not files[1]["lods"]
    names = skin_attach_names(RawNif.read(out), RawNif.read(out).indices_of("SkinAttach")[0])
    weights = stored_weights(written, len(names))
    old = stored_weights(original, len(names))
    chest = names.index("C_Chest")
    expected = old[10].copy()
    expected[chest] = 0.5
    np.testing.assert_allclose(weights[10], expected / expected.sum(), atol=2e-5)
    unweighted = np.setdiff1d(untouched, [10])
    np.testing.assert_allclose(weights[unweighted], old[unweighted], atol=2e-5)
    assert weights[-3, chest] == 1.0
    # and back
    again, warnings = import_nif(addon, out, skeleton=str(corpus / SKELETON))
    body = shape_object(again)
    assert len(body.data.vertices) == len(before) + 3
    assert body.data.vertices[100].co.z == pytest.approx(before[100][2] + 0.05, abs=STEP)
    assert [o["sf_lod_slot"] for o in lods_of(body) if "sf_lod_slot" in o] == [1]
    assert not [w for w in warnings if "not imported" in w]
    _, messages = export(addon, again, tmp_path / "meshes" / "again.nif")
    assert (tmp_path / "meshes" / "again.nif").read_bytes() == out.read_bytes() and messages == []


def test_new_files_are_written_from_scratch(clean_scene, addon, tmp_path):
    """A new static and a new skinned mesh exported for Starfield: BSGeometry naming a .mesh of
    their vertices, bounds about a static one, a skin naming its bone, and both import back."""
    import bpy

    from scene import cube, skinned_column

    box = cube("Box", size=2.0)
    bpy.ops.mesh.uv_texture_add()
    nif, _ = module(addon, "io.nif.exporter").export_nif(str(tmp_path / "box.nif"), [box], game="SF")
    raw = RawNif.read(tmp_path / "box.nif")
    assert raw.bs_version == 173 and raw.types[raw.type_indices[1]] == "BSGeometry"
    (slot, *rest) = geometry_slots(raw, 1)
    mesh = read_mesh(mesh_file(tmp_path, slot[3]).read_bytes())
    assert not any(rest) and len(mesh["triangles"]) == 12
    corners = {tuple(np.round(p, 4)) for p in mesh["positions"]}
    assert corners == {(x, y, z) for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)}
    bounds = struct.unpack_from("<10f", raw.blocks[1], raw.av_offsets(1)["end"])
    assert bounds == pytest.approx((0, 0, 0, 3 ** 0.5, 0, 0, 0, 1, 1, 1), abs=1e-4)
    armature, column = skinned_column()
    module(addon, "io.nif.exporter").export_nif(str(tmp_path / "column.nif"), [armature, column], game="SF")
    raw = RawNif.read(tmp_path / "column.nif")
    assert skin_attach_names(raw, raw.indices_of("SkinAttach")[0]) == ["Lower", "Upper"]
    (index,) = raw.indices_of("BSGeometry")
    mesh = read_mesh(mesh_file(tmp_path, geometry_slots(raw, index)[0][3]).read_bytes())
    weights = stored_weights(mesh, 2)
    heights = np.array(mesh["positions"])[:, 2]
    np.testing.assert_allclose(weights[:, 1], np.clip(heights / 2.0, 0, 1), atol=1e-4)
    collection, warnings = import_nif(addon, tmp_path / "column.nif")
    back = shape_object(collection)
    assert len(back.data.vertices) == len(mesh["positions"]) and {g.name for g in back.vertex_groups} == {"Lower", "Upper"}


# -- where meshes are found, and what goes wrong ---------------------------------------------
def test_meshes_found_in_the_preferences_starfield_archives(clean_scene, addon, corpus, tmp_path):
    """A Data folder of Starfield archives (version 3, LZ4): the NIF from an archive finds its
    mesh in another, and File > Import > NIF from Data lists it once the preference is set."""
    import bpy

    data = tmp_path / "Data"
    data.mkdir()
    raw = RawNif.read(corpus / BODY)
    name = geometry_slots(raw, 2)[0][3]
    inner = "geometries/" + name.replace("\\", "/") + ".mesh"
    write_ba2_gnrl(data / "Starfield - Meshes01.ba2", {"meshes/actors/naked_f.nif": (corpus / BODY).read_bytes()},
                   version=3, compression="lz4")
    write_ba2_gnrl(data / "Starfield - MeshesPatch.ba2", {inner: mesh_file(corpus / SF, name).read_bytes()},
                   version=3, compression="lz4")
    folders = module(addon, "io.file_import").UserFolders({"SF": str(data)})
    collection, warnings = import_nif(addon, f"{data / 'Starfield - Meshes01.ba2'}:meshes/actors/naked_f.nif", folders=folders)
    obj = shape_object(collection)
    assert len(obj.data.vertices) == 6616 and obj["sf_mesh_file"].endswith(f"Starfield - MeshesPatch.ba2:{inner}")
    preferences = bpy.context.preferences.addons[addon.__name__].preferences
    preferences.sf_data = str(data)
    try:
        items = module(addon, "operators.data_import").mesh_items(None, bpy.context)
        assert [item[1] for item in items] == ["meshes/actors/naked_f.nif"]
    finally:
        preferences.sf_data = ""


def two_shapes(corpus, folder, missing="0000000000000000000a\\0000000000000000000b"):
    """The body NIF with a second BSGeometry (a copy of the first, naming the mesh ``missing``)
    under its root, and the body's mesh, in a Data folder."""
    nif = data_folder(corpus, folder)
    raw = RawNif.read(nif)
    block = raw.blocks[2]
    name = geometry_slots(raw, 2)[0][3]
    copy = block[:len(block) - 3 - len(name)] + missing.encode() + block[len(block) - 3:]
    index = raw.add_block("BSGeometry", copy)
    raw.set_children(0, raw.node_children(0) + [index])
    nif.write_bytes(raw.to_bytes())
    return nif


def test_missing_mesh_leaves_the_other_shapes_imported_and_kept(clean_scene, addon, corpus, tmp_path):
    nif = two_shapes(corpus, tmp_path / "Data")
    collection, warnings = import_nif(addon, nif)
    shapes = sorted((o for o in collection.objects if o.get("nif_type") == "BSGeometry"), key=lambda o: o["nif_block"])
    assert [o.type for o in shapes] == ["MESH", "EMPTY"] and list(shapes[1]["sf_lods_kept"]) == [0]
    (warning,) = [w for w in warnings if "not imported" in w]
    assert warning.startswith(f"{nif}, block 8 (BSGeometry): LOD 0 (mesh 0000000000000000000a\\0000000000000000000b): ")
    assert "geometries\\0000000000000000000a\\0000000000000000000b.mesh is in none of the Data folders" in warning
    out = tmp_path / "Data" / "meshes" / "out.nif"
    export(addon, collection, out)
    assert out.read_bytes() == nif.read_bytes()


def test_truncated_mesh_is_reported_naming_the_nif_and_the_mesh(clean_scene, addon, corpus, tmp_path):
    import bpy

    nif = data_folder(corpus, tmp_path / "Data")
    name = geometry_slots(RawNif.read(nif), 2)[0][3]
    mesh = mesh_file(tmp_path / "Data", name)
    mesh.write_bytes(mesh.read_bytes()[:5000])
    collection, warnings = import_nif(addon, nif)
    assert shape_object(collection).type == "EMPTY"
    (warning,) = [w for w in warnings if "not imported" in w]
    assert warning.startswith(f"{nif}, block 2 (BSGeometry): LOD 0 (mesh {name}): {mesh}, offset 4 (0x4): triangle indices")
    # File > Import reports it and imports what it can
    assert bpy.ops.import_scene.precombined_nif(filepath=str(nif)) == {"FINISHED"}


def test_file_import_and_dropped_files_know_starfield(clean_scene, addon, corpus):
    """The operator File > Import > NIF and drag-and-drop run (several files, dropped: the
    directory and file names) take Starfield's skeleton option."""
    import bpy

    before = set(bpy.data.collections)
    result = bpy.ops.import_scene.precombined_nif(directory=str(corpus / SF) + "/", files=[{"name": "naked_f.nif"}],
                                                  starfield_skeleton=str(corpus / SKELETON))
    assert result == {"FINISHED"}
    (collection,) = set(bpy.data.collections) - before
    assert deformed(shape_object(collection))[:, 2].max() > 1.4  # standing: the skeleton posed it
    handler = module(addon, "operators.nif_import").IO_FH_nif
    assert handler.bl_import_operator == "import_scene.precombined_nif" and ".nif" in handler.bl_file_extensions


@pytest.mark.slow
def test_command_line_imports_and_exports_starfield(corpus, tmp_path):
    """blender -b --python cli.py -- import / export: the skeleton option, the untouched NIF
    and its mesh written back, and a new file for Starfield."""
    from extension import blender_cli

    blend = tmp_path / "body.blend"
    result = blender_cli("import", corpus / BODY, "--blend", blend, "--starfield-skeleton", corpus / SKELETON,
                         "--starfield-morphs", corpus / MORPHS)
    assert result.returncode == 0, result.stderr
    assert "naked_f: 4 objects, 3 meshes, 38 bones" in result.stdout
    out = tmp_path / "meshes" / "naked_f.nif"
    out.parent.mkdir()
    result = blender_cli("export", blend, out)
    assert result.returncode == 0, result.stderr
    assert "SF NIF" in result.stdout and out.read_bytes() == (corpus / BODY).read_bytes()
    name = geometry_slots(RawNif.read(out), 2)[0][3]
    assert mesh_file(tmp_path, name).read_bytes() == mesh_file(corpus / SF, name).read_bytes()
