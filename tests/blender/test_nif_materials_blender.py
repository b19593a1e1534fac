"""Materials in real Blender: one per shader block, textures found case-insensitively under a
Data folder and loaded, every field kept so an untouched import writes back byte for byte, and
edits or new materials reaching the blocks."""

import importlib
import struct

import numpy as np
import pytest

from archive_writer import dds_bytes
from nif_rewriter import RawNif
from precombined_nif.core.materials.bgsm import MaterialFile
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.materials import ROLES, material_blocks, texture_key

FO4_ALARM = "pynifly/tests/tests/FO4/AlarmClock.nif"
FO4_POSTER = "havok/V111SafetyPosterSmall01.nif"
FONV_SMG = "pynifly/tests/tests/FONV/22smg.nif"
FONV_OUTFIT = "pynifly/tests/tests/FONV/outfitf_simple.nif"
FO3_EMIT = "niftools/todo/old_nifs/fo3/test_emit.nif"
FO3_ALPHA = "niftools/history/test/nif/base_vertex_alpha0.nif"
SSE_SCAR = "pynifly/tests/tests/FO4/VaaMaleScarR04.nif"  # in the FO4 folder, but a Skyrim SE file (bs 100)
ALARM_BGSM = "pynifly/tests/tests/FO4/Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
FILES = [
    FO4_ALARM,
    FO4_POSTER,
    "pynifly/tests/tests/FO4/GlowingOneTEST.nif",
    "pynifly/io_scene_nifly/blender_assets/EditorMarker.nif",
    "nifly/tests/input/TestNifFile_Static_FO4.nif",
    "nifly/tests/input/TestNifFile_Static_FO4_139.nif",
    "pynifly/tests/tests/FO4/Helmet.nif",
    FONV_SMG,
    "pynifly/tests/tests/FONV/9mmscp.nif",
    FONV_OUTFIT,
    FO3_EMIT,
    FO3_ALPHA,
]


def module(addon, name):
    """A module of the installed add-on (not all are imported when it is enabled)."""
    return importlib.import_module(f"{addon.__name__}.{name}")


def build(addon, path, data_folders=()):
    """Import through the add-on's SceneBuilder: (builder, {shape index: mesh object})."""
    import bpy

    nif = module(addon, "core.nif").NifFile.read(path)
    collection = bpy.data.collections.new(path.stem)
    builder = module(addon, "io.nif.importer").SceneBuilder(nif, collection, data_folders=data_folders)
    objects = builder.build()
    shapes = {index: obj for index, obj in objects.items() if getattr(obj, "type", None) == "MESH"}
    return builder, shapes


def export_materials(addon, path, shapes, game):
    exporter = module(addon, "io.nif.exporter").NifExporter(game=game, nif=module(addon, "core.nif").NifFile.read(path))
    for index, obj in sorted(shapes.items()):
        material = obj.data.materials[0] if obj.data.materials else None
        module(addon, "io.nif.material_export").write_material(exporter, index, material)
    return exporter.nif


def game_of(nif):
    return "FO3" if nif.header.bs_version <= 34 else "FO4"


@pytest.mark.parametrize("name", FILES)
def test_one_material_per_shader_block(clean_scene, corpus, addon, name):
    path = corpus / name
    nif = NifFile.read(path)
    _, shapes = build(addon, path)
    assert shapes
    expected = {}  # shader block (or property list without a shader) -> shape indices
    for index in shapes:
        shape = nif.blocks[index]
        if nif.header.bs_version <= 34:
            props = [i for i in np.asarray(shape.properties).tolist() if nif.blocks[i].type_name in ROLES]
            shader = [i for i in props if "Shader" in nif.blocks[i].type_name]
            key = shader[0] if shader else tuple(props)
        else:
            key = shape.shader_property
        if key not in (-1, ()):
            expected.setdefault(key, []).append(index)
    materials = {obj.data.materials[0] for obj in shapes.values() if obj.data.materials}
    assert len(materials) == len(expected)
    for key, indices in expected.items():
        (material,) = {shapes[i].data.materials[0] for i in indices}
        if isinstance(key, int):
            assert material["nif_blocks"]["shader"] == key
            assert material["nif_record"]["shader"]["type"] == nif.blocks[key].type_name


@pytest.mark.parametrize("name", FILES)
def test_untouched_materials_write_back_byte_for_byte(clean_scene, corpus, addon, tmp_path, name):
    path = corpus / name
    nif = NifFile.read(path)
    data = tmp_path / "Data"
    for shader in nif.blocks:
        for texture in getattr(shader, "textures", ()):
            if texture:  # upper-cased on disk: found whatever the case stored in the file
                target = data / "TEXTURES" / texture_key(texture).upper()
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(dds_bytes())
    _, shapes = build(addon, path, [str(data)])
    assert export_materials(addon, path, shapes, game_of(nif)).to_bytes() == path.read_bytes()


def test_textures_found_case_insensitively_and_loaded(clean_scene, corpus, addon, tmp_path):
    path = corpus / FONV_SMG
    data = tmp_path / "Data"
    (data / "TEXTURES/Weapons/2HANDAUTOMATIC").mkdir(parents=True)
    (data / "TEXTURES/Weapons/2HANDAUTOMATIC/22smg.DDS").write_bytes(dds_bytes(8, 4))
    builder, shapes = build(addon, path, [str(tmp_path / "nowhere"), str(data)])
    material = shapes[8].data.materials[0]
    node = material.node_tree.nodes["NIF diffuse"]
    assert node.image is not None and tuple(node.image.size) == (8, 4)
    pixels = np.empty(8 * 4 * 4, np.float32)
    node.image.pixels.foreach_get(pixels)
    np.testing.assert_allclose(pixels.reshape(-1, 4)[0], (1.0, 0.0, 0.0, 1.0), atol=1e-3)
    assert node.image in builder.rollback.created and material in builder.rollback.created
    # One image for the five shapes using that texture; one warning for the five missing normal
    # maps (the environment textures are kept on the material, not shown).
    assert len({obj.data.materials[0].node_tree.nodes["NIF diffuse"].image for obj in shapes.values()}) == 1
    missing = [w for w in builder.warnings() if w.startswith("texture")]
    assert missing == ["texture textures\\weapons\\2handautomatic\\22SMG_n.dds not found in the Data folders"]
    assert material.node_tree.nodes["NIF normal"].image is None


def test_missing_textures_warn_without_data_folders(clean_scene, corpus, addon):
    builder, shapes = build(addon, corpus / FO4_ALARM)
    assert shapes and builder.warnings()
    assert all("none set in the preferences" in w for w in builder.warnings() if w.startswith("texture"))


def test_node_tree_shows_the_shader(clean_scene, corpus, addon):
    path = corpus / FO3_EMIT
    nif = NifFile.read(path)
    _, shapes = build(addon, path)
    material = shapes[1].data.materials[0]
    bsdf = material.node_tree.nodes["Principled BSDF"]
    prop = nif.blocks[4]
    np.testing.assert_allclose(bsdf.inputs["Emission Color"].default_value[:3], prop.emissive_color, rtol=1e-6)
    assert bsdf.inputs["Emission Strength"].default_value == pytest.approx(prop.emissive_mult)
    assert material["nif_record"]["stencil"]["flags"] == "0x0"  # draw mode 0: not two-sided
    assert material.use_backface_culling
    alpha = build(addon, corpus / FO3_ALPHA)[1][1].data.materials[0]
    assert alpha.surface_render_method == "BLENDED"
    poster = build(addon, corpus / FO4_POSTER)[1]
    (material,) = {obj.data.materials[0] for obj in poster.values()}
    assert material.node_tree.nodes["NIF specular"].label == "NIF specular"
    shader = material["nif_record"]["shader"]
    assert bsdf is not None and shader["shader_flags_1"] == "0x80400201"


def test_edits_update_the_blocks_in_place(clean_scene, corpus, addon, tmp_path):
    import bpy

    path = corpus / FO4_POSTER
    nif = NifFile.read(path)
    _, shapes = build(addon, path)
    material = next(iter(shapes.values())).data.materials[0]
    bsdf = material.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Emission Strength"].default_value = 2.5
    material.use_backface_culling = False
    image_file = tmp_path / "Data/Textures/new/Poster_d.dds"
    image_file.parent.mkdir(parents=True)
    image_file.write_bytes(dds_bytes())
    material.node_tree.nodes["NIF diffuse"].image = bpy.data.images.load(str(image_file))
    written = export_materials(addon, path, shapes, "FO4")
    assert len(written.blocks) == len(nif.blocks)
    shader_index = material["nif_blocks"]["shader"]
    before, after = nif.blocks[shader_index], written.blocks[shader_index]
    assert after.emissive_multiple == 2.5 and after.shader_flags_2 == before.shader_flags_2 | 0x10
    assert after.smoothness == before.smoothness and after.wetness == before.wetness
    textures = written.blocks[after.texture_set].textures
    assert textures[0] == "Textures\\new\\Poster_d.dds"
    assert textures[1:] == nif.blocks[before.texture_set].textures[1:]
    reread = NifFile.from_bytes(written.to_bytes())
    assert reread.blocks[shader_index].emissive_multiple == 2.5


def test_fo3_edits_add_the_properties_they_need(clean_scene, corpus, addon):
    path = corpus / FONV_OUTFIT
    nif = NifFile.read(path)
    _, shapes = build(addon, path)
    material = shapes[1].data.materials[0]
    material.use_backface_culling = False
    material.surface_render_method = "BLENDED"
    written = export_materials(addon, path, shapes, "FO3")
    added = written.blocks[len(nif.blocks) :]
    assert sorted(b.type_name for b in added) == ["NiAlphaProperty", "NiStencilProperty"]
    found = material_blocks(written, written.blocks[1])
    assert written.blocks[found["stencil"]].flags & 0x0C00 == 0x0C00
    assert written.blocks[found["alpha"]].flags & 0x201 == 0x1
    assert found["shader"] == 2 and found["material"] == 4
    NifFile.from_bytes(written.to_bytes())


@pytest.mark.parametrize("game", ["FO4", "FO3"])
def test_new_material_is_shared_between_shapes(clean_scene, corpus, addon, tmp_path, game):
    import bpy

    path = corpus / (FO4_ALARM if game == "FO4" else FONV_SMG)
    nif = NifFile.read(path)
    _, shapes = build(addon, path)
    material = bpy.data.materials.new("painted")
    tree = module(addon, "io.compat").material_node_tree(material)
    image_file = tmp_path / "Textures/Painted_d.dds"
    image_file.parent.mkdir(parents=True)
    image_file.write_bytes(dds_bytes())
    image = tree.nodes.new("ShaderNodeTexImage")
    image.image = bpy.data.images.load(str(image_file))
    bsdf = tree.nodes["Principled BSDF"]
    tree.links.new(image.outputs["Color"], bsdf.inputs["Base Color"])
    bsdf.inputs["Emission Strength"].default_value = 0.25
    material.use_backface_culling = True
    for obj in shapes.values():
        obj.data.materials.clear()
        obj.data.materials.append(material)
    written = export_materials(addon, path, shapes, game)
    added = written.blocks[len(nif.blocks) :]
    shader_type = "BSLightingShaderProperty" if game == "FO4" else "BSShaderPPLightingProperty"
    expected = [shader_type, "BSShaderTextureSet"] + (["NiMaterialProperty"] if game == "FO3" else [])
    assert sorted(b.type_name for b in added) == sorted(expected)
    shader = next(b for b in added if b.type_name == shader_type)
    assert written.blocks[shader.texture_set].textures[0] == "Textures\\Painted_d.dds"
    for index in shapes:
        found = material_blocks(written, written.blocks[index])
        assert written.blocks[found["shader"]] is shader
    strength = shader.emissive_multiple if game == "FO4" else next(b for b in added if b.type_name == "NiMaterialProperty").emissive_mult
    assert strength == 0.25
    assert NifFile.from_bytes(written.to_bytes()).blocks[-1].type_name == added[-1].type_name


def test_shape_without_material_gets_the_default_shader(clean_scene, addon):
    BSTriShape = module(addon, "core.nif.blocks.tri_shape").BSTriShape
    exporter = module(addon, "io.nif.exporter").NifExporter(game="FO4")
    shape = exporter.add(BSTriShape(name="shape"))
    module(addon, "io.nif.material_export").write_material(exporter, shape, None)
    block = exporter.nif.blocks[shape]
    shader = exporter.nif.blocks[block.shader_property]
    assert shader.type_name == "BSLightingShaderProperty" and shader.shader_flags_1 == 0x80400201
    assert exporter.nif.blocks[shader.texture_set].textures == [""] * 10
    assert block.alpha_property == -1


def sse_static_file(corpus, tmp_path):
    """A Skyrim SE static: the corpus's one SSE file with a texture set is skinned (its geometry in
    its skin partition), so its shape is rewritten, apart from
    the product's reader and writer, as the unskinned BSTriShape of SSE statics: a quad at the
    scar, float positions and UVs inline, the same shader, texture set and alpha property."""
    nif = RawNif.read(corpus / SSE_SCAR)
    assert nif.bs_version == 100
    (shape,) = nif.indices_of("BSDynamicTriShape")
    block = nif.blocks[shape]
    at = nif.av_offsets(shape)["end"] + 16  # after the bounding sphere
    _skin, shader, alpha = struct.unpack_from("<3i", block, at)
    x, y, z = struct.unpack_from("<3f", block, at - 16)
    corners = [(-3.0, -3.0, 0.0, 0.0), (3.0, -3.0, 1.0, 0.0), (3.0, 3.0, 1.0, 1.0), (-3.0, 3.0, 0.0, 1.0)]
    vertices = b"".join(struct.pack("<4f2e", x + dx, y, z + dz, 0.0, u, v) for dx, dz, u, v in corners)
    triangles = struct.pack("<6H", 0, 1, 2, 0, 2, 3)
    desc = 5 | 4 << 8 | (0x1 | 0x2 | 0x400) << 44  # 20-byte vertex: position (float), UV at byte 16
    nif.blocks[shape] = block[:at] + struct.pack("<3iQ2HI", -1, shader, alpha, desc, 2, 4, len(vertices) + len(triangles))
    nif.blocks[shape] += vertices + triangles + struct.pack("<I", 0)  # no particle data
    nif.set_type(shape, "BSTriShape")
    path = tmp_path / "ScarStatic.nif"
    path.write_bytes(nif.to_bytes())
    return path


@pytest.mark.parametrize("setting, name", [
    ("fnv_data", FONV_SMG),
    ("fo4_data", FO4_ALARM),
    pytest.param("sse_data", sse_static_file, id="sse_data-ScarStatic.nif"),
])
def test_file_import_finds_textures_in_the_preferences_data_folder(clean_scene, corpus, addon, tmp_path, setting, name):
    """File > Import > NIF looks in the Data folder of the file's game, set in the preferences."""
    import bpy

    path = name(corpus, tmp_path) if callable(name) else corpus / name
    nif = NifFile.read(path)
    texture = next(str(b.textures[0]) for b in nif.blocks if b.type_name == "BSShaderTextureSet" and b.textures[0])  # a diffuse map
    relative = texture.replace("\\", "/")
    relative = relative if relative.lower().startswith("textures/") else f"textures/{relative}"
    target = tmp_path / "Data" / relative.upper()  # a case-sensitive file system, a differently cased tree
    target.parent.mkdir(parents=True)
    target.write_bytes(dds_bytes())
    preferences = addon.preferences.get(bpy.context)
    setattr(preferences, setting, str(tmp_path / "Data"))
    try:
        assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    finally:
        setattr(preferences, setting, "")
    images = {
        node.image.filepath
        for obj in bpy.data.collections[path.stem].all_objects
        if obj.type == "MESH" and obj.active_material is not None
        for node in obj.active_material.node_tree.nodes
        if node.type == "TEX_IMAGE" and node.image is not None
    }
    assert str(target) in {bpy.path.abspath(p) for p in images}


def fallout_76_material(path):
    """A corpus BGSM (Fallout 4's version 2) as Fallout 76 writes it: version 20, the fields later
    versions added left at zero, each texture in its slot of the same name."""
    class Zeros(dict):
        def get(self, name, default=None):
            return super().get(name, default if default is not None else (0.0, 0.0, 0.0) if name.endswith("_color") else 0)

    material = MaterialFile.read(path)
    material.version, material.fields = 20, Zeros(material.fields)
    data = material.to_bytes()
    assert MaterialFile.from_bytes(data).textures["diffuse"] == material.textures["diffuse"]
    return data


def test_fallout_76_import_finds_its_material_and_textures_in_the_preferences_data_folder(clean_scene, corpus, addon, tmp_path):
    """No Fallout 76 file is in the corpus: the nifly golden as Fallout 76 writes it, its shaders
    naming a material file, finds that file and the file's textures in the FO76 Data folder."""
    import bpy
    from nif_rewriter import FO76_MATERIAL as MATERIAL, fo76_file

    path = fo76_file(corpus, tmp_path)
    data = tmp_path / "Data"
    material = data / MATERIAL.replace("\\", "/")
    material.parent.mkdir(parents=True)
    material.write_bytes(fallout_76_material(corpus / ALARM_BGSM))
    textures = set()
    for slot in ("diffuse", "normal", "smooth_spec"):  # the three AlarmClock.BGSM names
        stored = MaterialFile.read(corpus / ALARM_BGSM).textures[slot]
        assert stored
        target = data / "Textures" / stored.replace("\\", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(dds_bytes())
        textures.add(str(target))
    preferences = addon.preferences.get(bpy.context)
    preferences.fo76_data = str(data)
    try:
        assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    finally:
        preferences.fo76_data = ""
    meshes = [obj for obj in bpy.data.collections[path.stem].all_objects if obj.type == "MESH"]
    assert meshes
    for obj in meshes:
        assert bpy.path.abspath(obj.active_material.get("bgsm_file", "")) == str(material)
        images = {
            bpy.path.abspath(node.image.filepath)
            for node in obj.active_material.node_tree.nodes
            if node.type == "TEX_IMAGE" and node.image is not None
        }
        assert images == textures


def material_description(material):
    """What an import made of a material: its custom properties, and its tree's nodes (name,
    type, label, texture path as stored, image file) and links."""
    tree = material.node_tree
    from precombined_nif.io import schema

    nodes = sorted((node.name, node.bl_idname, node.label, node.get(schema.NIF_TEXTURE),
                    node.image.filepath if getattr(node, "image", None) is not None else None) for node in tree.nodes)
    links = sorted((link.from_node.name, link.from_socket.identifier, link.to_node.name, link.to_socket.identifier)
                   for link in tree.links)
    plain = lambda value: value.to_dict() if hasattr(value, "to_dict") else value.to_list() if hasattr(value, "to_list") else value  # noqa: E731
    return sorted((key, repr(plain(material[key]))) for key in material.keys()), nodes, links, material.surface_render_method


@pytest.mark.slow  # 18 corpus files imported together, then each alone
def test_materials_made_after_other_files_are_those_made_alone(clean_scene, corpus):
    """Many files in one import (later materials are copies of the first of their texture roles,
    issue 44): each file's materials are what importing it alone makes, property for property,
    node for node, link for link."""
    import bpy

    from precombined_nif.io.file_import import import_cells

    paths = sorted((corpus / "pynifly/tests/tests/FO4").glob("*.nif"))[:18]
    collections, _ = import_cells(bpy.context, [str(p) for p in paths])
    assert len(collections) == len(paths)
    together = {c.name: sorted(map(material_description, {m for o in c.all_objects if o.type == "MESH"
                                                          for m in o.data.materials if m})) for c in collections}
    assert sum(map(len, together.values())) > 20
    for path in paths:
        for collection in list(bpy.data.collections):
            bpy.data.collections.remove(collection)
        for kind in ("objects", "meshes", "materials", "actions", "armatures"):
            for block in list(getattr(bpy.data, kind)):
                getattr(bpy.data, kind).remove(block)
        (collection,), _ = import_cells(bpy.context, [str(path)])
        alone = sorted(map(material_description, {m for o in collection.all_objects if o.type == "MESH"
                                                  for m in o.data.materials if m}))
        assert together[collection.name] == alone, path.name
