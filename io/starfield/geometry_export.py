"""Starfield shapes back into a NIF (called by io/nif/exporter for a Starfield file): a shape's
object and its LOD objects (io/starfield/lod_objects) become a BSGeometry's four slots, each a
.mesh named by the SHA1 of its bytes (or inline, flag 0x200, when the block had its meshes
inline); its skin (SkinAttach, BSSkin::Instance naming no nodes, BSSkin::BoneData) and its
material (the shader naming the .mat, the MaterialID extra data).

A slot whose objects still hold what the import made of it (io.starfield.lod_objects
fingerprint) keeps its stored .mesh, and a slot the import could not read stays as stored;
others are encoded anew (io/starfield/mesh_export). The .mesh files go to the exporter's
``side_files`` ({Data-relative path: bytes, or where a kept one was read}), which the NIF's
export writes under its Data folder, or beside the NIF for the slots whose .mesh the import
found beside its NIF (``beside_files``)."""

from pathlib import Path

import numpy as np

from ...core import transforms
from ...core.archives.data import path_in_folder, read_path
from ...core.errors import FormatError, failure_text
from ...core.files import write_replacing
from ...core.materials.mat import material_id
from ...core.nif import skinning
from ...core.nif.blocks.bs_geometry import INTERNAL_GEOMETRY, BSGeometry, MeshSlot
from ...core.nif.blocks.extra_data import NiIntegerExtraData
from ...core.nif.blocks.shaders import BSLightingShaderProperty
from ...core.nif.blocks.skin import BSSkinBoneData, BSSkinInstance, SkinAttach, bone_transform_dtype
from ...core.starfield.lods import beside_parts
from ...core.starfield.mesh import mesh_path
from ...core.stream import WriteStream
from ..nif.skin_export import bone_rest, skin_source
from .lod_objects import SLOTS, group_weights, mesh_lod_objects, slot_fingerprint, slot_objects
from .mesh_export import encode_slot
from .skin_import import skin_names
from .. import schema

SHAPE_FLAGS = 0xE  # every shape of the game's files, with INTERNAL_GEOMETRY when inline
MATERIAL_ID = "MaterialID"
SKIN_ATTACH = "SkinBMP"  # the SkinAttach name of the game's files
BIND_NOISE = 1e-5  # a bind differing less from the stored one is the stored one


def write_shape(exporter, obj, index):
    """Write ``obj`` (a mesh object, or an empty bound to a shape whose LOD 0 the import could
    not read) into the BSGeometry ``index`` (None: a new one); returns the block's index."""
    nif = exporter.nif
    if index is None:
        index = exporter.add(BSGeometry("BSGeometry", name=obj.name, flags=SHAPE_FLAGS))
    shape = nif.blocks[index]
    if obj.type != "MESH":
        return index  # nothing of it shown: kept as stored
    source = skin_source(obj) if not exporter.keep_skin else None
    names = _bone_names(nif, shape, obj, source)
    if exporter.keep_skin and shape.skinned:
        names = skin_names(nif, shape) or []  # imported without its skin: the weights are not in Blender
    slots = slot_objects(obj)
    kept = {number for number in obj.get(schema.SF_LODS_KEPT, []) if isinstance(number, int)}
    meshes, encoded = [], None
    for number in range(SLOTS):
        stored = shape.meshes[number] if number < len(shape.meshes) else None
        lod = slots.get(number)
        if lod is None:
            meshes.append(stored if number in kept else None)
            continue
        if stored is not None and lod.get(schema.SF_SOURCE) == slot_fingerprint(lod):
            meshes.append(stored)
            if stored.data is None:
                _add_side_file(exporter, lod, mesh_path(stored.name), lod.get(schema.SF_MESH_FILE) or None)
            continue
        exporter.require_writable(f"the geometry of {lod.name!r}")
        if exporter.keep_skin and shape.skinned:
            raise FormatError(f"{lod.name}: its geometry changed, but it was imported without its skin, whose weights "
                              f"its .mesh holds: re-import with Skin to edit skinned meshes")
        mesh = encode_slot(lod, names, reorder=schema.SF_SOURCE not in lod)
        data = mesh.to_bytes()
        slot = MeshSlot()
        name = slot.attach(data, inline=shape.internal)
        if not shape.internal:
            _add_side_file(exporter, lod, mesh_path(name), data)
        meshes.append(slot)
        if number == 0:
            encoded = mesh
    shape.meshes = meshes
    if not any(meshes):
        exporter.warn(f"{obj.name}: no LOD holds a mesh")
    if not exporter.keep_skin:
        _write_skin(exporter, index, shape, obj, source, names, encoded)
    if encoded is not None:  # after the skin: skinned shapes keep the game's unset bounds
        shape.set_bounds(encoded.vertices)
    _write_material(exporter, index, shape, obj.data.materials[0] if len(obj.data.materials) else None)
    return index


def _bone_names(nif, shape, obj, source):
    """The skin's bone names: the stored ones in their order (the .mesh weights index them),
    then the other bones any LOD object's vertex groups name."""
    if source is None:
        return []
    names = (skin_names(nif, shape) or []) if shape.skinned else []
    bones = source["armature"].data.bones
    for lod in [obj, *(o for slot in slot_objects(obj).values() for o in [slot, *mesh_lod_objects(slot)])]:
        group_names, weights = group_weights(lod)
        used = (weights > 0).any(axis=0)
        names += [name for name, weighted in zip(group_names, used) if weighted and name in bones and name not in names]
    return names


# -- skin ------------------------------------------------------------------------------------------
def _write_skin(exporter, index, shape, obj, source, names, encoded):
    nif = exporter.nif
    if source is None:
        if shape.skinned:
            shape.skin_instance = -1
            shape.extra_data = np.array([r for r in np.asarray(shape.extra_data).tolist()
                                         if nif.block_at(r, SkinAttach) is None], np.int32)
        return
    armature = source["armature"]
    where = np.array(armature.matrix_world.inverted() @ obj.matrix_world)
    binds = [np.linalg.inv(bone_rest(armature.data.bones[name])) @ where for name in names]
    instance = nif.block_at(shape.skin_instance, BSSkinInstance)
    data = nif.block_at(instance.data, BSSkinBoneData) if instance is not None else None
    stored_names = skin_names(nif, shape) if data is not None else None
    stored = dict(zip(stored_names, data.bones)) if stored_names is not None else {}
    if stored_names == names and len(data.bones) == len(names):
        stored_binds = skinning.bind_matrices(instance, data)
        if all(np.abs(old - new).max() <= BIND_NOISE for old, new in zip(stored_binds, binds)):
            return
    exporter.require_writable(f"the skin of {obj.name!r}")
    if instance is None:
        instance = BSSkinInstance("BSSkin::Instance")
        shape.skin_instance = exporter.add(instance)
    if data is None:
        data = BSSkinBoneData("BSSkin::BoneData")
        instance.data = exporter.add(data)
    instance.skeleton_root = nif.roots[0] if nif.roots else -1
    instance.bones = np.full(len(names), -1, np.int32)  # the game's files name no bone nodes
    records = np.zeros(len(names), bone_transform_dtype(WriteStream(nif.header)))
    bounds = _bone_bounds(encoded, names, binds) if encoded is not None else None
    for number, (record, name, bind) in enumerate(zip(records, names, binds)):
        rotation, translation, scale = transforms.transform_parts(bind)
        record["rotation"] = np.asarray(rotation).reshape(3, 3)
        record["translation"] = translation
        record["scale"] = scale
        if bounds is not None:
            record["bound_center"], record["bound_radius"] = bounds[number]
        elif name in stored:  # the geometry is as stored: so are the bones' spheres
            record["bound_center"], record["bound_radius"] = stored[name]["bound_center"], stored[name]["bound_radius"]
    data.bones = records
    found = (nif.block_at(r, SkinAttach) for r in np.asarray(shape.extra_data).tolist())
    attach = next((block for block in found if block is not None), None)
    if attach is None:
        attach = SkinAttach("SkinAttach", name=SKIN_ATTACH)
        shape.extra_data = np.append(np.asarray(shape.extra_data, np.int32), exporter.add(attach)).astype(np.int32)
    attach.bones = list(names)


def _bone_bounds(mesh, names, binds):
    """Each bone's sphere (centre, radius, in its space) around the LOD 0 vertices it weights."""
    bones, weights = mesh.bone_weights
    return skinning.bone_bounds(mesh.vertices, skinning.dense_weights(bones, weights, len(names)), binds)


# -- material --------------------------------------------------------------------------------------
def _write_material(exporter, index, shape, material):
    """The shader names the material's .mat (an imported material's path, else
    ``Materials\\<name>.mat``); MaterialID holds its CRC. A shader other shapes share is left
    to them when this shape's path changes."""
    nif = exporter.nif
    shader = nif.block_at(shape.shader_property, BSLightingShaderProperty)
    if material is None:
        if shader is not None:
            return
        path = f"Materials\\{shape.name or 'default'}.mat"
    else:
        path = material.get(schema.NIF_MATERIAL_PATH, "")
        if not path.lower().endswith(".mat"):  # a material of no Starfield import
            path = f"Materials\\{material.name}.mat"
    if shader is not None and shader.name == path:
        return
    users = [i for i, block in nif.blocks_of(BSGeometry) if block.shader_property == shape.shader_property]
    if shader is None or users != [index]:
        shader = BSLightingShaderProperty("BSLightingShaderProperty", name=path)
        shape.shader_property = exporter.add(shader)
    shader.name = path
    found = (nif.block_at(r, NiIntegerExtraData) for r in np.asarray(shape.extra_data).tolist())
    crc = next((block for block in found if block is not None and block.name == MATERIAL_ID), None)
    if crc is None:
        crc = NiIntegerExtraData("NiIntegerExtraData", name=MATERIAL_ID)
        shape.extra_data = np.append(np.asarray(shape.extra_data, np.int32), exporter.add(crc)).astype(np.int32)
    crc.integer_data = material_id(path)


# -- the .mesh files -------------------------------------------------------------------------------
def _add_side_file(exporter, lod, relative, content):
    """Name ``relative`` (bytes, or where a kept .mesh was read) among the exporter's side files,
    to go where the slot's stored .mesh was found: beside the NIF, or under its Data folder."""
    if isinstance(content, bytes) or relative not in exporter.side_files:
        exporter.side_files[relative] = content
    if lod.get(schema.SF_MESH_BESIDE):
        exporter.beside_files.add(relative)


def output_data_folder(nif_path):
    """The Data folder a NIF written at ``nif_path`` names its meshes in: the folder holding its
    ``meshes`` folder, else the NIF's own folder."""
    nif_path = Path(nif_path).resolve()
    return next((folder.parent for folder in nif_path.parents if folder.name.lower() == "meshes"), nif_path.parent)


def write_side_files(side_files, nif_path, beside=()):
    """Write the .mesh files a NIF names under its Data folder, those of ``beside`` beside the
    NIF (new ones as encoded, kept ones copied from where the import read them, unless the
    target already holds those bytes). Returns (paths written, messages)."""
    folder = output_data_folder(nif_path)
    written, messages = [], []
    for relative, content in sorted(side_files.items()):
        if relative in beside:
            target = path_in_folder(Path(nif_path).resolve().parent, "\\".join(beside_parts(relative)))
        else:
            target = path_in_folder(folder, relative)
        if not isinstance(content, bytes):  # a kept mesh: where the import read it, if known
            if target.is_file():
                continue
            if not content:
                messages.append(f"{target}: not written: the NIF keeps naming this mesh, but where the import read it is not known")
                continue
            try:
                content = read_path(content)
            except (OSError, FormatError) as error:
                messages.append(f"{target}: not written: the NIF keeps naming this mesh, but {failure_text(content, error)}")
                continue
        if target.is_file() and target.read_bytes() == content:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write_replacing(target, content)
        written.append(target)
    return written, messages
