"""Blender objects sharing meshes back into a precombined block: each mesh a record, each
object one of its placed instances. Data an untouched import kept (packed vertices, every LOD,
raw placements) is reused as stored, so such a cell writes back byte for byte; anything edited
is encoded anew. Knows bpy and core objects, never file bytes."""

from pathlib import Path

import numpy as np

from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.nif import vertex_format as vf
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.precombined import BAKED, BSPackedCombinedGeomDataExtra, PackedGeomRecord, instance_dtype
from ...core.nif.header import Header
from ...core.nif.packed_vertices import bounding_sphere
from ...core.stream import WriteStream
from .instancing import instancer_matrices, instancer_source
from ..mesh_read import mesh_arrays

DEFAULT_DESC = vf.build_desc(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, False)
VANILLA_GEOMETRY_HASH = 0xDDF19A67  # "fallout4 - geometry"
LITTLE = WriteStream()


def kept_vertices(mesh, positions, uvs, normals, used):
    """The stored packed vertices when the mesh still holds what they decode to, else None."""
    words = mesh.get("precombined_vertex_words")
    desc_text = mesh.get("precombined_vertex_desc")
    if words is None or desc_text is None:
        return None, None
    desc = int(desc_text, 16)
    full = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    dtype = vf.vertex_dtype(desc, full)
    raw = np.frombuffer(bytes(np.frombuffer(words, np.int32).tobytes()), np.uint8)
    if len(raw) != dtype.itemsize * len(positions):
        return None, None
    record = PackedGeomRecord(inline=True)
    record.vertex_desc, record.full_precision = desc, full
    record.vertex_data = np.frombuffer(bytearray(raw), dtype)
    stored_type = np.float32 if full else np.float16
    if not np.array_equal(record.positions, positions.astype(stored_type).astype(np.float32)):
        return None, None
    if uvs is not None and record.uvs is not None and not np.allclose(record.uvs[used], uvs[used], atol=1e-3):
        return None, None
    if record.normals is not None and used.any():
        stored = record.normals[used]
        lengths = np.linalg.norm(stored, axis=1, keepdims=True)
        comparable = lengths[:, 0] > 0.5  # quantised near-zero normals have no direction to keep
        stored = stored[comparable] / lengths[comparable]
        if len(stored) and np.abs(stored - normals[used][comparable]).max() > 0.05:
            return None, None
    return desc, record.vertex_data


def encode_vertices(record, desc, arrays):
    """Fill a new buffer of layout ``desc`` with every attribute it has and the mesh gives."""
    record.vertex_desc = desc
    record.full_precision = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    record.positions = arrays["positions"]
    flags = vf.flags_of(desc)
    if flags & vf.UV and arrays["uvs"] is not None:
        record.uvs = arrays["uvs"]
    if flags & vf.NORMAL:
        record.normals = arrays["normals"]
    if flags & vf.TANGENT and arrays["tangents"] is not None:
        record.tangents = arrays["tangents"]
        record.bitangents = arrays["bitangents"]
    if flags & vf.COLORS:
        record.colors = arrays["colors"] if arrays["colors"] is not None else np.ones((len(arrays["positions"]), 4))


def record_from_mesh(mesh, scale):
    arrays = mesh_arrays(mesh, scale)
    positions, triangles, uvs, normals, used = (arrays[k] for k in ("positions", "triangles", "uvs", "normals", "used"))
    if len(positions) > 0xFFFF:
        raise FormatError(f"mesh {mesh.name!r} has {len(positions)} vertices: a record holds at most 65535")
    record = PackedGeomRecord(inline=True)
    desc, data = kept_vertices(mesh, positions, uvs, normals, used)
    if data is not None:
        record.vertex_desc, record.vertex_data = desc, data
        record.full_precision = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    else:
        desc_text = mesh.get("precombined_vertex_desc")
        encode_vertices(record, int(desc_text, 16) if desc_text else DEFAULT_DESC, arrays)
    stored = mesh.get("precombined_triangles")
    lod = int(mesh.get("precombined_lod", 0))
    counts, offsets = mesh.get("precombined_lod_counts"), mesh.get("precombined_lod_offsets")
    if stored is not None and counts is not None and offsets is not None:
        all_triangles = np.frombuffer(bytes(np.frombuffer(stored, np.int32).tobytes()), np.int32).reshape(-1, 3)
        start = int(offsets[lod]) // 3
        if np.array_equal(np.sort(all_triangles[start : start + int(counts[lod])], axis=None), np.sort(triangles, axis=None)) and len(
            all_triangles[start : start + int(counts[lod])]
        ) == len(triangles):
            record.triangles = all_triangles.astype(np.uint16)
            record.lod_counts = tuple(int(c) for c in counts)
            record.lod_offsets = tuple(int(o) for o in offsets)
            record.lod_levels = int(mesh.get("precombined_lod_levels", 3))
            return record
    # New or edited faces: every LOD gets them (the buffer holds LOD0, LOD1, LOD2 in turn).
    record.triangles = np.concatenate([triangles] * 3).astype(np.uint16)
    record.lod_counts = (len(triangles),) * 3
    record.lod_offsets = (0, 3 * len(triangles), 6 * len(triangles))
    return record


def placement(name, world, raw, grayscale, scale, record):
    """The 72-byte placement of one copy: kept as stored (``raw``) when it has not moved."""
    matrix = np.array(world, np.float64)
    matrix[:3, :] /= scale
    linear = matrix[:3, :3]
    size = float(np.cbrt(np.linalg.det(linear)))
    if size <= 0 or not np.allclose(linear.T @ linear, np.eye(3) * size * size, rtol=1e-4, atol=1e-6 * size * size):
        raise FormatError(
            f"object {name!r} is mirrored, sheared or scaled unevenly: a precombined instance takes a rotation, "
            f"a translation and one uniform scale"
        )
    rotation = linear / size
    translation = matrix[:3, 3]
    out = np.zeros(1, instance_dtype(LITTLE))[0]
    if raw is not None and len(raw) == 18:
        kept = np.array(raw, np.float32)
        if (
            np.allclose(kept[1:10].reshape(3, 3), rotation, atol=1e-5)
            and np.allclose(kept[10:13], translation, rtol=1e-6, atol=1e-3)
            and np.isclose(kept[13], size, rtol=1e-6)
        ):
            return np.frombuffer(kept.tobytes(), out.dtype)[0]
    center, radius = bounding_sphere(record.positions)
    out["grayscale_scale"] = grayscale
    out["rotation"] = rotation
    out["translation"] = translation
    out["scale"] = size
    out["bound_center"] = translation + rotation @ (size * np.array(center))
    out["bound_radius"] = size * radius
    return out


def copies_of(obj):
    """(mesh, [(name, world matrix, raw placement, grayscale), ...], sort key) of an object: one
    copy for an ordinary object, every point of a geometry-nodes instancer."""
    source = instancer_source(obj)
    if source is not None:
        stored = obj.data.get("precombined_instances_raw")
        raws = np.reshape(np.array(stored, np.float64), (-1, 18)) if stored is not None else []
        matrices = instancer_matrices(obj)
        copies = [
            (f"{obj.name} #{k}", m, raws[k] if k < len(raws) else None, float(raws[k][0]) if k < len(raws) else 1.0)
            for k, m in enumerate(matrices)
        ]
        return source.data, copies, (obj.get("precombined_object", 1 << 30), 0)
    copy = (obj.name, obj.matrix_world, obj.get("precombined_instance_raw"), float(obj.get("precombined_grayscale_scale", 1.0)))
    return obj.data, [copy], (obj.get("precombined_object", 1 << 30), obj.get("precombined_instance", 1 << 30))


def records_of(objects, scale):
    """Records in the order they were imported (then by name), each with its copies."""
    groups = {}
    for obj in objects:
        if obj.type != "MESH" or obj.data is None or "precombined_source" in obj:
            continue
        mesh, copies, key = copies_of(obj)
        groups.setdefault(mesh, []).append((key, obj.name, copies))
    if not groups:
        raise FormatError("no mesh objects to export: select the instances of a precombined cell")
    order = sorted(groups.items(), key=lambda item: (min(entry[0] for entry in item[1]), item[0].name))
    records, meshes = [], []
    for mesh, entries in order:
        record = record_from_mesh(mesh, scale)
        copies = [copy for _, _, group in sorted(entries, key=lambda e: (e[0], e[1])) for copy in group]
        record.instances = np.array([placement(*copy, scale, record) for copy in copies], instance_dtype(LITTLE))
        records.append(record)
        meshes.append(mesh)
    return records, meshes


def build_block(records, meshes, layout, unknown_flags=(0, 0)):
    block = BSPackedCombinedGeomDataExtra(
        "BSPackedCombinedGeomDataExtra" if layout == BAKED else "BSPackedCombinedSharedGeomDataExtra",
        vertex_desc=records[0].vertex_desc,
        records=records,
        layout=layout,
    )
    block.unknown_flags_1, block.unknown_flags_2 = (int(v) for v in unknown_flags)
    block.num_vertices = sum(r.vertex_count for r in records)
    block.num_triangles = sum(len(r.triangles) for r in records)
    if layout != BAKED:
        entries, offset = [], 0
        for record, mesh in zip(records, meshes):
            known = mesh.get("precombined_hash")
            entries.append((int(known, 16) if known else VANILLA_GEOMETRY_HASH, int(mesh.get("precombined_offset", offset))))
            offset += record.geometry_size()
        block.objects = np.array(entries, [("filename_hash", "<u4"), ("data_offset", "<u4")])
    return block


def build_cell(objects, *, layout="inline", scale=1.0, template=None, unknown_flags=(0, 0)):
    """A NifFile holding the objects as a precombined cell. ``template`` (the imported file) keeps
    every other block; without one the cell is a BSFadeNode root holding the block."""
    records, meshes = records_of(objects, scale)
    block = build_block(records, meshes, layout, unknown_flags)
    if template is not None:
        for index, existing in enumerate(template.blocks):
            if isinstance(existing, BSPackedCombinedGeomDataExtra):
                block.name = existing.name
                template.blocks[index] = block
                return template
    root = NiNode("BSFadeNode", name="precombined", extra_data=[1])
    return NifFile(Header(user_version=12, bs_version=130), [root, block], roots=[0])


def template_of(objects):
    """The imported file the objects came from, when it is still readable."""
    for collection in {c for o in objects for c in o.users_collection}:
        path = collection.get("nif_path")
        if path and Path(path).is_file():
            try:
                nif = NifFile.read(path)
            except FormatError:
                continue
            if any(isinstance(b, BSPackedCombinedGeomDataExtra) for b in nif.blocks):
                return nif, tuple(collection.get("precombined_unknown_flags", (0, 0)))
    return None, (0, 0)


def export_cell(path, objects, *, layout="inline", scale=1.0):
    template, flags = template_of(objects)
    nif = build_cell(objects, layout=layout, scale=scale, template=template, unknown_flags=flags)
    nif.write(path)
    return nif
