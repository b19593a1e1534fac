"""Imports from a Data folder: material files (BGSM) giving the shaders their look, and a NIF,
its material and textures taken from archives alone giving what loose files give."""

import importlib
import shutil

import pytest

from archive_writer import make_dds, write_ba2_dx10, write_ba2_gnrl

ALARM = "pynifly/tests/tests/FO4/AlarmClock.nif"
ALARM_BGSM = "pynifly/tests/tests/FO4/Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
HAIR_BGSM = "pynifly/tests/tests/FO4/Materials/actors/Character/HumanHair/HairCurly1_1bit.BGSM"
TEXTURES = {  # AlarmClock.BGSM's textures, as stored in the file
    "setdressing/alarmclock/alarmclock01_d.dds": make_dds(87, 4, 4, 1, seed=1),
    "setdressing/alarmclock/alarmclock01_n.dds": make_dds(87, 4, 4, 1, seed=2),
    "setdressing/alarmclock/alarmclock01_s.dds": make_dds(87, 4, 4, 1, seed=3),
}


def import_nif(addon, path, **options):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    collection, warnings = file_import.import_nif(bpy.context, str(path), **options)
    return collection, warnings


def loose_data(corpus, folder):
    (folder / "Meshes/SetDressing").mkdir(parents=True)
    shutil.copy(corpus / ALARM, folder / "Meshes/SetDressing/AlarmClock.nif")
    target = folder / "Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
    target.parent.mkdir(parents=True)
    shutil.copy(corpus / ALARM_BGSM, target)
    for name, dds in TEXTURES.items():
        target = folder / "Textures" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(dds)
    return folder


def archived_data(corpus, folder):
    folder.mkdir(parents=True)
    write_ba2_gnrl(folder / "Fallout4 - Meshes.ba2", {"Meshes/SetDressing/AlarmClock.nif": (corpus / ALARM).read_bytes()})
    write_ba2_gnrl(folder / "Fallout4 - Materials.ba2",
                   {"Materials/SetDressing/AlarmClock/AlarmClock.BGSM": (corpus / ALARM_BGSM).read_bytes()})
    write_ba2_dx10(folder / "Fallout4 - Textures1.ba2", {f"Textures/{name}": dds for name, dds in TEXTURES.items()})
    return folder


def node_values(material):
    """Every node of a material with its inputs' values and its links: what the shader shows."""
    def value(socket):
        default = getattr(socket, "default_value", None)
        return tuple(default) if hasattr(default, "__len__") and not isinstance(default, str) else default

    nodes = sorted((n.bl_idname, n.name, getattr(n, "operation", None), tuple(value(i) for i in n.inputs))
                   for n in material.node_tree.nodes)
    links = sorted((link.from_node.name, link.from_socket.identifier, link.to_node.name, link.to_socket.identifier)
                   for link in material.node_tree.links)
    return nodes, links


SOURCES = {"nif_file", "bgsm_file", "nif_path"}  # where the data was read from: a loose path or ARCHIVE:inner


def properties(holder):
    """The custom properties of ``holder`` as plain values, those naming the source left out."""
    def plain(value):
        for convert in ("to_dict", "to_list"):
            if hasattr(value, convert):
                return getattr(value, convert)()
        if isinstance(value, list):  # a list of arrays, e.g. obj["nif_body_parts"]
            return [plain(item) for item in value]
        return value

    return {key: plain(holder[key]) for key in holder.keys() if key not in SOURCES}


def summary(collection):
    """Everything an import shows: objects, geometry, UVs, properties, materials (their nodes
    and values) and their images' pixels."""
    out = {}
    for obj in sorted(collection.all_objects, key=lambda o: o.name):
        entry = {"type": obj.type, "matrix": [list(row) for row in obj.matrix_world],
                 "properties": properties(obj)}
        if obj.type == "MESH":
            mesh = obj.data
            entry["vertices"] = [tuple(v.co) for v in mesh.vertices]
            entry["faces"] = [tuple(p.vertices) for p in mesh.polygons]
            entry["uvs"] = {layer.name: [tuple(d.uv) for d in layer.data] for layer in mesh.uv_layers}
            entry["mesh properties"] = properties(mesh)
            materials = []
            for material in obj.data.materials:
                images = {}
                for node in material.node_tree.nodes:
                    if node.bl_idname == "ShaderNodeTexImage":
                        image = node.image
                        images[node.name] = None if image is None else (image.name, tuple(round(p, 5) for p in image.pixels[:]))
                materials.append((material.name, material.get("nif_material_path"), images, material.use_backface_culling,
                                  material.surface_render_method, node_values(material),
                                  properties(material)))
            entry["materials"] = materials
        out[obj.name] = entry
    return out


def test_material_file_gives_the_shader_its_textures(clean_scene, corpus, addon, tmp_path):
    data = loose_data(corpus, tmp_path / "Data")
    collection, warnings = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)],
                                      cache_folder=str(tmp_path / "cache"))
    materials = {m for o in collection.all_objects if o.type == "MESH" for m in o.data.materials}
    bgsm = [m for m in materials if m.get("bgsm_file")]
    assert bgsm and bgsm[0]["nif_material_path"] == r"Materials\SetDressing\AlarmClock\AlarmClock.BGSM"
    images = {n.name: n.image for n in bgsm[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage"}
    assert {name: image.filepath.replace("\\", "/").rsplit("/", 1)[-1] for name, image in images.items()} == {
        "NIF diffuse": "alarmclock01_d.dds", "NIF normal": "alarmclock01_n.dds", "NIF specular": "alarmclock01_s.dds"}
    assert not any("not found" in w and "alarmclock01" in w for w in warnings)


def test_archives_alone_give_what_loose_files_give(clean_scene, corpus, addon, tmp_path):
    loose = loose_data(corpus, tmp_path / "Loose" / "Data")
    archived = archived_data(corpus, tmp_path / "Archived" / "Data")
    from_loose, loose_warnings = import_nif(addon, loose / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(loose)],
                                            cache_folder=str(tmp_path / "cache"))
    expected = summary(from_loose)
    import bpy

    bpy.data.collections.remove(from_loose)
    for kind in ("objects", "meshes", "materials", "images"):  # so names come out the same
        for datablock in list(getattr(bpy.data, kind)):
            getattr(bpy.data, kind).remove(datablock)
    from_archive, archive_warnings = import_nif(addon, f"{archived / 'Fallout4 - Meshes.ba2'}:meshes\\setdressing\\alarmclock.nif",
                                                cache_folder=str(tmp_path / "cache"))
    assert from_archive.name == "AlarmClock"  # as the archive spells it, not as asked for
    assert from_archive["nif_path"] == f"{archived / 'Fallout4 - Meshes.ba2'}:Meshes/SetDressing/AlarmClock.nif"
    assert summary(from_archive) == expected
    pixels = [images["NIF diffuse"][1] for entry in expected.values() for _, _, images, *_ in entry.get("materials", ())
              if images.get("NIF diffuse")]
    assert pixels and len(pixels[0]) == 4 * 4 * 4 and len(set(pixels[0])) > 4  # Blender decoded the DDS
    assert len(archive_warnings) == len(loose_warnings)
    # A damaged archive beside them is skipped with one warning naming it.
    (archived / "Broken - Textures.ba2").write_bytes(b"BTDX" + bytes(4))
    for kind in ("objects", "meshes", "materials", "images"):
        for datablock in list(getattr(bpy.data, kind)):
            getattr(bpy.data, kind).remove(datablock)
    again, warnings = import_nif(addon, f"{archived / 'Fallout4 - Meshes.ba2'}:meshes\\setdressing\\alarmclock.nif",
                                 cache_folder=str(tmp_path / "cache"))
    assert summary(again) == expected
    assert [w for w in warnings if "archive skipped" in w] == [
        f"archive skipped: {archived / 'Broken - Textures.ba2'}: header (24 bytes at 0) runs past the end of the file (8 bytes)"]
    # The textures Blender loaded are the archive's, extracted into the cache.
    (cached,) = (tmp_path / "cache").glob("Fallout4 - Textures1.ba2 */Textures/setdressing/alarmclock/alarmclock01_d.dds")
    assert cached.read_bytes() == TEXTURES["setdressing/alarmclock/alarmclock01_d.dds"]


def test_material_file_alpha_two_sided_and_palette(clean_scene, corpus, addon, tmp_path):
    """HairCurly1_1bit.BGSM: alpha test at 162, two-sided, grayscale-to-palette with its palette."""
    data = loose_data(corpus, tmp_path / "Data")
    target = data / "Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
    shutil.copy(corpus / HAIR_BGSM, target)
    collection, warnings = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)])
    material = next(m for o in collection.all_objects if o.type == "MESH" for m in o.data.materials if m.get("bgsm_file"))
    nodes = material.node_tree.nodes
    test = next(n for n in nodes if n.bl_idname == "ShaderNodeMath" and n.operation == "GREATER_THAN")
    assert round(test.inputs[1].default_value * 255) == 162
    assert not material.use_backface_culling
    assert "NIF palette" in nodes
    assert any("HairColor_Lgrad_d.dds" in w for w in warnings)  # the palette is named, not in this Data folder


def test_untouched_bgsm_material_exports_the_nif_unchanged(clean_scene, corpus, addon, tmp_path):
    data = loose_data(corpus, tmp_path / "Data")
    collection, _ = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)])
    exporter_module = importlib.import_module(f"{addon.__name__}.io.nif.exporter")
    out = tmp_path / "out.nif"
    exporter_module.export_nif(str(out), list(collection.all_objects))
    assert out.read_bytes() == (corpus / ALARM).read_bytes()


def test_import_from_data_lists_archived_meshes_and_imports_one(clean_scene, corpus, addon, tmp_path):
    import bpy

    data = archived_data(corpus, tmp_path / "Data")
    write_ba2_gnrl(data / "AMod - Main.ba2", {"Meshes/Precombined/00001E58_1200ADBE_OC.NIF": (
        corpus / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF").read_bytes(), "Meshes/readme.txt": b"x"})
    settings = bpy.context.preferences.addons[addon.__name__].preferences
    settings.fo4_data = str(data)
    try:
        data_import = importlib.import_module(f"{addon.__name__}.operators.data_import")
        items = data_import.mesh_items(None, bpy.context)
        assert [item[1] for item in items] == ["Meshes/Precombined/00001E58_1200ADBE_OC.NIF", "Meshes/SetDressing/AlarmClock.nif"]
        assert items[1][2] == f"{data / 'Fallout4 - Meshes.ba2'}:Meshes/SetDressing/AlarmClock.nif"
        assert bpy.ops.import_scene.precombined_nif_from_data(mesh="1") == {"FINISHED"}
        assert "AlarmClock" in bpy.data.collections
        assert bpy.ops.import_scene.precombined_nif_from_data(mesh="0") == {"FINISHED"}
        cell = bpy.data.collections["00001E58_1200ADBE_OC"]
        assert sum("precombined_instance" in o for o in cell.all_objects) == 13
        # A mod installed while Blender runs is listed the next time.
        write_ba2_gnrl(data / "BMod - Main.ba2", {"Meshes/BMod/Lamp.nif": (corpus / ALARM).read_bytes()})
        assert "Meshes/BMod/Lamp.nif" in [item[1] for item in data_import.mesh_items(None, bpy.context)]
    finally:
        settings.fo4_data = ""


def test_formats_blender_cannot_decode_are_reported_once(clean_scene, corpus, addon, tmp_path):
    data = loose_data(corpus, tmp_path / "Data")
    folder = data / "Textures/setdressing/alarmclock"
    (folder / "alarmclock01_d.dds").write_bytes(make_dds(84, 8, 8, 1))  # BC5_SNORM ("BC5S")
    (folder / "alarmclock01_n.dds").write_bytes(make_dds(84, 8, 8, 1, seed=5))
    (folder / "alarmclock01_s.dds").write_bytes(make_dds(41, 8, 8, 1))  # R32_FLOAT (DX10 header)
    _, warnings = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)])
    undecodable = sorted(w for w in warnings if "cannot be decoded" in w)
    assert len(undecodable) == 2
    assert undecodable[0].startswith("textures in BC5S cannot be decoded by Blender (first: ")
    assert undecodable[1].startswith("textures in R32_FLOAT cannot be decoded by Blender (first: ")


FO4 = "pynifly/tests/tests/FO4"
# Corpus NIFs whose shaders name a material file of the corpus Materials folder (plain, CK
# absolute, and Data\-prefixed names).
NAMING_MATERIALS = ["AlarmClock.nif", "BTBaseMaleBody.nif", "BaseMaleHead.nif", "FemaleHair25.nif", "HeadAllTextures.nif",
                    "HeadGear1.nif", "Helmet.nif", "Pack_UnderArmor_03_M.nif", "ScaffFrame1x2Str01.nif",
                    "Workshop_BldWoodPDoor02.nif"]


@pytest.mark.parametrize("name", NAMING_MATERIALS)
def test_corpus_shapes_get_the_material_their_shader_names(clean_scene, corpus, addon, name):
    bgsm = importlib.import_module(f"{addon.__name__}.core.materials.bgsm")
    data_paths = importlib.import_module(f"{addon.__name__}.core.data_paths")
    collection, warnings = import_nif(addon, corpus / FO4 / name, data_folders=[str(corpus / FO4)])
    materials = {m for o in collection.all_objects if o.type == "MESH" for m in o.data.materials}
    named = [m for m in materials if m["nif_record"]["shader"]["name"].lower().endswith((".bgsm", ".bgem"))]
    assert named
    assert any("bgsm_file" in m for m in named)
    for material in named:
        relative = data_paths.data_relative(material["nif_record"]["shader"]["name"])
        assert material["nif_material_path"] == relative
        if "bgsm_file" not in material:  # Helmet.nif's helmet.BGSM is not in the corpus: said so
            assert any(f"material file {relative} not found" in w for w in warnings)
            continue
        # Found whatever the case of the folders.
        source = material["bgsm_file"]
        assert source.lower().replace("\\", "/").endswith(relative.lower().replace("\\", "/").removeprefix("data/"))
        expected = bgsm.MaterialFile.read(source).look()
        nodes = {n.name[4:]: n["nif_texture"] for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage"}
        assert nodes == {role: path for role, path in expected["textures"].items() if path}
        assert material.use_backface_culling == (not expected["two_sided"])
        assert (material.surface_render_method == "BLENDED") == expected["blend"]


def test_edited_material_writes_its_bgsm_only_when_asked(clean_scene, corpus, addon, tmp_path):
    import bpy

    data = loose_data(corpus, tmp_path / "Data")
    bgsm_path = data / "Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
    original = bgsm_path.read_bytes()
    new_texture = data / "Textures/setdressing/alarmclock/Repainted_d.dds"
    new_texture.write_bytes(make_dds(87, 4, 4, 1, seed=9))
    collection, _ = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)])
    objects = list(collection.all_objects)
    export = importlib.import_module(f"{addon.__name__}.io.nif.material_export")
    exporter = importlib.import_module(f"{addon.__name__}.io.nif.exporter")
    out = data / "Meshes/SetDressing/Repainted.nif"
    assert export.write_material_files(out, objects) == []  # untouched: nothing to write
    material = next(m for o in objects if o.type == "MESH" for m in o.data.materials if "bgsm_file" in m)
    material.node_tree.nodes["NIF diffuse"].image = bpy.data.images.load(str(new_texture))
    material.use_backface_culling = False
    exporter.export_nif(str(out), objects)
    assert bgsm_path.read_bytes() == original  # not asked: the material file stays
    assert export.write_material_files(out, objects) == [bgsm_path]
    bgsm = importlib.import_module(f"{addon.__name__}.core.materials.bgsm")
    written, before = bgsm.MaterialFile.read(bgsm_path), bgsm.MaterialFile.from_bytes(original)
    assert written.textures["diffuse"] == "setdressing/alarmclock/Repainted_d.dds"
    assert written.look()["two_sided"] and not before.look()["two_sided"]
    assert {k: v for k, v in written.textures.items() if k != "diffuse"} == {k: v for k, v in before.textures.items() if k != "diffuse"}
    assert {k: v for k, v in written.fields.items() if k != "two_sided"} == {k: v for k, v in before.fields.items() if k != "two_sided"}
    # The NIF still names the material file.
    nif = importlib.import_module(f"{addon.__name__}.core.nif").NifFile.read(out)
    assert any(str(getattr(b, "name", "")) == r"Materials\SetDressing\AlarmClock\AlarmClock.BGSM" for b in nif.blocks)


def test_material_file_uv_transform_and_emission(clean_scene, corpus, addon, tmp_path):
    bgsm = importlib.import_module(f"{addon.__name__}.core.materials.bgsm")
    data = loose_data(corpus, tmp_path / "Data")
    path = data / "Materials/SetDressing/AlarmClock/AlarmClock.BGSM"
    edited = bgsm.MaterialFile.read(path)
    edited.fields.update(u_offset=0.25, v_offset=-0.5, u_scale=2.0, v_scale=3.0, emit_enabled=1,
                         emittance_color=(0.5, 0.25, 1.0), emittance_mult=4.0)
    edited.write(path)
    collection, _ = import_nif(addon, data / "Meshes/SetDressing/AlarmClock.nif", data_folders=[str(data)])
    material = next(m for o in collection.all_objects if o.type == "MESH" for m in o.data.materials if "bgsm_file" in m)
    nodes = material.node_tree.nodes
    mapping = next(n for n in nodes if n.bl_idname == "ShaderNodeMapping")
    # Blender's v is 1 - the file's: v' = v * 3 - 0.5 in file terms is v' = v * 3 + (1 - 3 + 0.5) here.
    assert tuple(mapping.inputs["Location"].default_value)[:2] == (0.25, -1.5)
    assert tuple(mapping.inputs["Scale"].default_value)[:2] == (2.0, 3.0)
    images = [n for n in nodes if n.bl_idname == "ShaderNodeTexImage"]
    assert images and all(n.inputs["Vector"].links[0].from_node == mapping for n in images)
    bsdf = next(n for n in nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
    assert tuple(bsdf.inputs["Emission Color"].default_value)[:3] == (0.5, 0.25, 1.0)
    assert bsdf.inputs["Emission Strength"].default_value == 4.0


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_data_folder_imports_on_other_blender_versions(extension_zip, corpus, tmp_path, version):
    import subprocess
    from pathlib import Path

    import extension
    from support import unavailable

    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    data = archived_data(corpus, tmp_path / "Data")
    cell = corpus / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
    command = [extension.python(venv), Path(__file__).with_name("smoke_data.py"), extension_zip, tmp_path / "user", data,
               cell, corpus / "ck-precombined/AlootHomePlate.esp"]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "imported from archives, references named" in result.stdout


def clear_imported_data():
    import bpy

    for kind in ("collections", "objects", "meshes", "materials", "images"):  # so names come out the same
        for datablock in list(getattr(bpy.data, kind)):
            getattr(bpy.data, kind).remove(datablock)


@pytest.mark.parametrize("nif, meshes_bsa, textures_bsa, version, shown", [
    ("pynifly/tests/tests/FONV/22smg.nif", "Fallout - Meshes.bsa", "Fallout - Textures.bsa", 104, 10),
    # The corpus' one Skyrim SE NIF: its shape keeps its geometry in the skin partition; its
    # mesh shows both textures of its set (diffuse, normal map), from the LZ4 archive as loose.
    ("pynifly/tests/tests/FO4/VaaMaleScarR04.nif", "Skyrim - Meshes0.bsa", "Skyrim - Textures0.bsa", 105, 2),
])
def test_bsa_archives_alone_give_what_loose_files_give(clean_scene, corpus, addon, tmp_path, nif, meshes_bsa,
                                                      textures_bsa, version, shown):
    """New Vegas (zlib) and Skyrim SE (LZ4) NIFs and their textures from BSAs, as from loose files."""
    from archive_writer import write_bsa

    nif_module = importlib.import_module(f"{addon.__name__}.core.nif")
    source = corpus / nif
    names = {t for b in nif_module.NifFile.read(source).blocks if type(b).__name__ == "BSShaderTextureSet"
             for t in b.textures if t}
    # Lower case, as BSAs store their names (Blender names images after their files).
    textures = {name.replace("\\", "/").lower(): make_dds(87, 4, 4, 1, seed=n) for n, name in enumerate(sorted(names))}
    inner = f"meshes/test/{source.name.lower()}"
    loose, archived = tmp_path / "Loose" / "Data", tmp_path / "Archived" / "Data"
    for name, body in {inner: source.read_bytes(), **textures}.items():
        (loose / name).parent.mkdir(parents=True, exist_ok=True)
        (loose / name).write_bytes(body)
    archived.mkdir(parents=True)
    write_bsa(archived / meshes_bsa, {inner: source.read_bytes()}, version=version)
    write_bsa(archived / textures_bsa, textures, version=version)
    from_loose, loose_warnings = import_nif(addon, loose / inner, data_folders=[str(loose)], cache_folder=str(tmp_path / "cache"))
    expected = summary(from_loose)
    loaded = [image for entry in expected.values() for _, _, images, *_ in entry.get("materials", ())
              for image in images.values() if image]
    assert len(loaded) == shown and not [w for w in loose_warnings if "not found" in w]
    clear_imported_data()
    from_archive, archive_warnings = import_nif(addon, f"{archived / meshes_bsa}:{inner.upper()}",
                                                cache_folder=str(tmp_path / "cache"))
    assert summary(from_archive) == expected
    assert archive_warnings == loose_warnings
