"""Blender materials back into shader and property blocks. A material an import made carries
its blocks' fields (``nif_record``); what its node tree shows is compared with what those fields
would show, and only real edits change them, so an untouched material in its template writes
the same bytes. New materials and materials from other files become new blocks, one set per
material however many shapes use it."""

import json
import weakref

import bpy
import numpy as np

from ...core.nif.blocks.geometry import NiTriBasedGeomData
from ...core.nif.blocks.shaders import BSShaderTextureSet
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.nif import versions
from ...core.nif import vertex_format as vf
from ...core.nif.materials import (
    BLOCK_CLASSES,
    ROLE_ORDER,
    ROLES,
    apply_fields,
    apply_look,
    changed_look,
    game_texture_path,
    new_record,
    record_from_props,
)
from ..starfield.material_export import write_mat_files
from .. import compat, schema

_written = weakref.WeakKeyDictionary()  # exporter -> {material name: {role: block index}}


def write_material(exporter, shape_index, material):
    """Make the material blocks of ``blocks[shape_index]`` match ``material``. None: a shape of a
    template keeps what it has, a shape of a new file gets the game's default shader."""
    nif = exporter.nif
    if material is None and exporter.template:
        return
    shape = nif.blocks[shape_index]
    bs_version = nif.header.bs_version
    written = _written.setdefault(exporter, {})
    key = material.name if material is not None else None
    if key not in written:
        record, found = stored_record(exporter, material)
        if record is None:
            path = material_file_path(exporter, material) if exporter.game == "FO76" else None
            record, found = new_record(exporter.game, skinned=shape.skinned, colors=has_colors(nif, shape), material_path=path), {}
        if material is not None:
            apply_look(record, changed_look(record, shown_look(material), bs_version, built_from(material)), bs_version)
        written[key] = write_blocks(exporter, record, found)
    link_blocks(nif, shape, written[key])


def material_file_path(exporter, material):
    """The material file a new Fallout 76 shader names (the game takes everything from it): the
    one the material was imported with, else one named after the material, reported."""
    told = "Fallout 76 shaders take their look from a material file: "
    if material is None:
        path = "Materials\\Default.bgsm"
        exporter.warn(f"{told}shapes without a material name {path} (give them a material whose "
                      f"{schema.NIF_MATERIAL_PATH} names another)")
        return path
    if schema.NIF_MATERIAL_PATH in material:
        return material[schema.NIF_MATERIAL_PATH]
    path = f"Materials\\{material.name}.bgsm"
    exporter.warn(f"{told}material {material.name!r} names {path} (set its {schema.NIF_MATERIAL_PATH} to name another)")
    return path


def has_colors(nif, shape):
    """Whether the shape's vertices have colours (Skyrim LE flags its shaders so only then)."""
    if isinstance(shape, BSTriShape):
        return bool(shape.vertex_flags & vf.COLORS)
    data = nif.block_at(shape.data, NiTriBasedGeomData)
    return data is not None and data.vertex_colors is not None


def built_from(material):
    """The look an imported material's tree was built from when a material file gave it (the
    NIF's own blocks say otherwise, and are kept unless the tree was edited), else None."""
    if material is None or schema.BGSM_LOOK not in material:
        return None
    return json.loads(material[schema.BGSM_LOOK])


def write_material_files(nif_path, objects):
    """Write the BGSM/BGEM file of every material of ``objects`` whose node tree was edited
    since a material file gave it its look: the file as read, with the edits, at its material
    path under the Data folder the NIF is written into (the folder holding its ``meshes``
    folder), else beside the NIF; and Starfield's .mat files (io/starfield/material_export).
    Returns the paths written."""
    from pathlib import Path

    from ...core.archives.data import path_in_folder, read_path
    from ...core.materials.bgsm import MaterialFile

    materials = {m for o in objects if o.type == "MESH" for m in o.data.materials if m is not None and schema.BGSM_LOOK in m}
    nif_path = Path(nif_path).resolve()
    data = next((folder.parent for folder in nif_path.parents if folder.name.lower() == "meshes"), None)
    written = []
    for material in sorted(materials, key=lambda m: m.name):
        changes = changed_look(None, shown_look(material), 0, built_from(material))
        if not changes:
            continue
        material_file = MaterialFile.from_bytes(read_path(material[schema.BGSM_FILE]), material[schema.BGSM_FILE])
        material_file.apply_look(changes)
        parts = material[schema.NIF_MATERIAL_PATH].replace("\\", "/").split("/")
        if parts[0].lower() != "materials":
            parts = ["materials", *parts]
        target = path_in_folder(data, "/".join(parts)) if data is not None else nif_path.parent / parts[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        material_file.write(target)
        written.append(target)
    return written + write_mat_files(nif_path, objects)


def stored_record(exporter, material):
    """(record, {role: block index}) kept on a material by an import: the indices only when the
    material came from the template being written and its blocks are still the same types;
    (None, {}) for materials made in Blender or for another game."""
    if material is None or schema.NIF_RECORD not in material:
        return None, {}
    if material.get(schema.NIF_BS_VERSION) != exporter.nif.header.bs_version:
        return None, {}
    record = record_from_props(material[schema.NIF_RECORD].to_dict())
    found = {}
    blocks = exporter.nif.blocks
    if exporter.template and material.get(schema.NIF_FILE) == str(exporter.nif.path or ""):
        stored = material.get(schema.NIF_BLOCKS, {}).to_dict() if schema.NIF_BLOCKS in material else {}
        found = {
            role: index
            for role, index in stored.items()
            if role in record and 0 <= index < len(blocks) and blocks[index].type_name == record[role]["type"]
        }
    return record, found


def shown_look(material):
    """What the node tree shows, in the terms of ``core.nif.materials.look``."""
    tree = compat.material_node_tree(material)
    bsdf = next((node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled"), None)
    shown = {
        "two_sided": not material.use_backface_culling,
        "blend": material.surface_render_method == "BLENDED",
        "alpha_test": False,
    }
    if bsdf is None:
        return shown
    inputs = bsdf.inputs
    shown["emission"] = tuple(inputs["Emission Color"].default_value[:3])
    shown["emission_strength"] = inputs["Emission Strength"].default_value
    shown["alpha"] = inputs["Alpha"].default_value
    shown["roughness"] = inputs["Roughness"].default_value
    test = upstream(inputs["Alpha"], lambda node: node.bl_idname == "ShaderNodeMath" and node.operation == "GREATER_THAN")
    if test is not None:
        shown["alpha_test"] = True
        shown["threshold"] = round(test.inputs[1].default_value * 255.0)
    textures = {}
    for role, socket in (
        ("diffuse", "Base Color"),
        ("normal", "Normal"),
        ("glow", "Emission Color"),
        ("specular", "Specular IOR Level"),
    ):
        node = upstream(inputs[socket], lambda node: node.bl_idname == "ShaderNodeTexImage")
        if node is None:
            textures[role] = ""
        elif node.image is not None and node.image.filepath:
            path = game_texture_path(bpy.path.abspath(node.image.filepath))
            if path is not None:
                textures[role] = path
        # An image node without a file (a texture missing at import) keeps the stored path.
    shown["textures"] = textures
    return shown


def upstream(socket, wanted, depth=3):
    """The first node satisfying ``wanted`` linked into ``socket``, up to ``depth`` nodes back."""
    for link in socket.links:
        node = link.from_node
        if wanted(node):
            return node
        if depth > 1:
            for entry in node.inputs:
                found = upstream(entry, wanted, depth - 1)
                if found is not None:
                    return found
    return None


def write_blocks(exporter, record, found):
    """Update the blocks in ``found`` from the record and append the ones it lacks; returns
    {role: block index}."""
    nif = exporter.nif
    result = {}
    for role in ROLE_ORDER:
        entry = record.get(role)
        if entry is None:
            continue
        values = {key: value for key, value in entry.items() if key != "type"}
        index = found.get(role)
        new = index is None
        if new:
            block = BLOCK_CLASSES[entry["type"]]()
            apply_fields(block, values)
            index = exporter.add(block)
        else:
            apply_fields(nif.blocks[index], values)
        result[role] = index
        if role == "shader" and entry["type"] != "BSEffectShaderProperty":
            write_texture_set(exporter, nif.blocks[index], record.get("textures") or [], new)
    return result


def write_texture_set(exporter, shader, textures, new_shader):
    """The shader's texture set gets the record's paths; a new shader always gets one, an old one
    without (material files carry the textures) only when paths were added."""
    nif = exporter.nif
    textures = [str(path) for path in textures]
    index = shader.texture_set
    if 0 <= index < len(nif.blocks) and isinstance(nif.blocks[index], BSShaderTextureSet):
        texture_set = nif.blocks[index]
        if [str(path) for path in texture_set.textures] != textures:
            texture_set.textures = textures
    elif new_shader or any(textures):
        shader.texture_set = exporter.add(BSShaderTextureSet(textures=textures))


def link_blocks(nif, shape, found):
    """Point the shape at its material blocks, leaving references that already match alone."""
    if versions.after_fo3(nif.header.bs_version):
        for field, role in (("shader_property", "shader"), ("alpha_property", "alpha")):
            index = found.get(role, -1)
            if getattr(shape, field) != index:
                setattr(shape, field, index)
        return
    current = np.asarray(shape.properties).tolist()
    blocks = nif.blocks
    ours = [index for index in current if 0 <= index < len(blocks) and blocks[index].type_name in ROLES]
    if sorted(ours) == sorted(found.values()):
        return
    others = [index for index in current if index not in ours]
    shape.properties = np.array(others + [found[role] for role in ROLE_ORDER if role in found], dtype=np.int32)
