"""What ``cli.py info`` reports: a JSON-ready summary of a file and its human rendering."""

import struct
from pathlib import Path

from . import counted
from ..core.bsm2 import Bsm2File
from ..core.errors import FormatError
from ..core.archives.data import split_archive_path
from ..core.formats import read_file, read_plugin_or_material
from ..core.havok.animation.summary import hkx_info, render_hkx_text
from ..core.havok.summary import system_summary
from ..core.materials.mat import MatFile
from ..core.nif.blocks.bs_geometry import BSGeometry
from ..core.nif.blocks.collision import bhkSystem
from ..core.nif.blocks.connect_points import BSConnectPointParents
from ..core.nif.blocks.geometry import NiTriBasedGeom, NiTriBasedGeomData
from ..core.nif.blocks.objects import NiObjectNET
from ..core.nif.blocks.packed_geometry import STREAM_TYPE_NAMES, BSPackedAdditionalGeometryData, stream_semantics
from ..core.nif.blocks.precombined import BSPackedCombinedGeomDataExtra
from ..core.nif.blocks.tri_shape import BSTriShape
from ..core.nif import skinning
from ..core.nif.header import version_string
from ..core.starfield.mesh import MeshData, mesh_name
from ..core.starfield.morphs import MorphFile
from ..core.tri import BodySlideTri, FaceGenTri
from ..core.tri.summary import bodyslide_info, facegen_info, render_tri_text


def shape_summary(nif, index, block):
    if isinstance(block, BSGeometry):
        return geometry_summary(nif, index, block)
    if isinstance(block, BSTriShape):
        vertices = block.vertex_count if block.vertex_data is not None else block.num_vertices
        triangles = block.triangle_count
        if block.vertex_data is None:  # Skyrim SE skinned: the triangles are the skin partition's
            try:
                found = skinning.partition_geometry(nif, block)
            except FormatError:
                found = None
            if found is not None:
                vertices, triangles = len(found.positions), len(found.triangles)
    else:
        data = nif.blocks[block.data] if 0 <= block.data < len(nif.blocks) else None
        if isinstance(data, NiTriBasedGeomData):
            vertices, triangles = data.num_vertices, data.triangle_count
        else:
            vertices = triangles = 0
    return {
        "block": index,
        "type": block.type_name,
        "name": block.name,
        "vertices": int(vertices),
        "triangles": int(triangles),
        "skinned": block.skinned,
    }


def geometry_summary(nif, index, block):
    """A Starfield shape: its LOD slots' counts (as the NIF states them) and meshes, and the
    material file its shader names."""
    lods = [
        {"lod": number, "mesh": None if slot.data is not None else slot.name,
         "vertices": slot.num_vertices, "triangles": slot.triangle_count}
        for number, slot in block.lods
    ]
    first = lods[0] if lods else {"vertices": 0, "triangles": 0}
    return {
        "block": index,
        "type": block.type_name,
        "name": block.name,
        "vertices": first["vertices"],
        "triangles": first["triangles"],
        "skinned": block.skinned,
        "internal": block.internal,
        "lods": lods,
        "material": getattr(nif.block_at(block.shader_property, NiObjectNET), "name", None),
    }


def precombined_summary(nif, index, block):
    objects = block.objects if block.shared else None
    return {
        "block": index,
        "layout": block.layout,
        "objects": [
            {
                "hash": f"{int(objects[i]['filename_hash']):08X}" if objects is not None else None,
                "offset": int(objects[i]["data_offset"]) if objects is not None else None,
                "vertices": record.num_vertices,
                "lod_triangles": list(record.lod_counts),
                "instances": len(record.instances),
            }
            for i, record in enumerate(block.records)
        ],
    }


def packed_summary(index, block):
    """An Xbox 360 packed vertex block: its streams in offset order, named by layout."""
    streams = block.streams
    return {
        "block": index,
        "vertices": block.num_vertices,
        "stride": block.stride,
        "streams": [
            {
                "name": name,
                "type": STREAM_TYPE_NAMES.get(int(streams[i]["type"]), str(int(streams[i]["type"]))),
                "offset": int(streams[i]["offset"]),
                "unit_size": int(streams[i]["unit_size"]),
            }
            for name, i in stream_semantics(streams)
        ],
    }


def nif_info(nif):
    header = nif.header
    return {
        "format": "nif",
        "version": version_string(header.version),
        "user_version": header.user_version,
        "bs_version": header.bs_version,
        "endian": "big" if header.big_endian else "little",
        "game": header.game,
        "blocks": [
            {"index": index, "type": block.type_name, "size": int(size)}
            for index, (block, size) in enumerate(zip(nif.blocks, header.block_sizes))
        ],
        "shapes": [shape_summary(nif, index, block) for index, block in nif.blocks_of(BSTriShape, NiTriBasedGeom, BSGeometry)],
        "roots": list(nif.roots),
        "precombined": [precombined_summary(nif, index, block) for index, block in nif.blocks_of(BSPackedCombinedGeomDataExtra)],
        "havok": [system_summary(index, block) for index, block in nif.blocks_of(bhkSystem)],
        "packed": [packed_summary(index, block) for index, block in nif.blocks_of(BSPackedAdditionalGeometryData)],
        "connect_points": [
            {"block": index, "name": point.name, "parent": point.parent, "rotation": list(point.rotation),
             "translation": list(point.translation), "scale": point.scale}
            for index, block in nif.blocks_of(BSConnectPointParents)
            for point in block.points
        ],  # fmt: skip
        "warnings": list(nif.warnings),
    }


def bsm2_info(bsm):
    return {
        "format": "bsm2",
        "vertices": len(bsm.vertices),
        "indices": len(bsm.indices),
        "subsets": len(bsm.subsets),
        "bones": bsm.num_bones,
        "materials": list(bsm.materials),
        "animations": [
            {
                "name": animation.name,
                "keys": len(animation.keys),
                "duration_ns": animation.duration_ns,
                "interval_ns": animation.interval_ns,
            }
            for animation in bsm.animations
        ],
        "hierarchy": bsm.hierarchy is not None,
        "warnings": list(bsm.warnings),
    }


def cdx_info(path):
    """A .cdx's rows by cell and kind, each named where the cell's combined meshes (under the
    Data folder holding the .cdx, ``meshes\\precombined\\[<master>\\]``) tell."""
    from ..core.archives.data import path_in_folder
    from ..core.nif import NifFile
    from ..core.plugin.load_order import GAME_MASTERS
    from ..core.precombined import cdx
    from ..core.precombined.cell_files import mesh_file_name, read_sibling

    index = cdx.CdxFile.read(path)
    folder = Path(path).parent
    stem = Path(path).stem
    plugins = [f"{stem}{suffix}" for suffix in (".esp", ".esm", ".esl")] + list(GAME_MASTERS)
    places = [str(path_in_folder(folder, f"meshes/precombined/{sub}") / "x") for sub in ["", *plugins]]
    cells, found = [], 0
    keys = sorted({cdx.cell_key(row["cell"], row["kind"]) for row in index.rows})
    for key in keys:
        rows = index.rows[index.cell_mask(key)]
        meshes = rows[(rows["kind"] & 0x7F | cdx.INTERIOR) == cdx.MESH]
        cell_id = int(meshes["extra"][0]) if len(meshes) else (key[0] if not key[1] else None)
        names = {}
        for mesh in meshes["value"].tolist():
            data, where = read_sibling(places, mesh_file_name(cell_id, mesh)) if cell_id is not None else (None, None)
            if data is not None:
                found += 1
                try:
                    names.update(cdx.resource_names(NifFile.from_bytes(bytearray(data), path=where)))
                except FormatError:
                    continue
        kinds = {}
        for row in rows:
            kind = cdx.resource_kind(int(row["kind"]))
            kinds.setdefault(cdx.KIND_NAMES[kind], []).append({
                "value": f"{int(row['value']):08X}", "extra": f"{int(row['extra']):08X}",
                "name": cdx.row_name(kind, cell_id, int(row["value"]), int(row["extra"]), names, plugins)})
        location = {"world": f"{key[0]:08X}", "grid": list(cdx.grid_of(key[1]))} if key[1] else "interior"
        cells.append({"cell": f"{cell_id:08X}" if cell_id is not None else None, "location": location,
                      "rows": len(rows), "kinds": kinds})
    return {"format": "cdx", "rows": len(index.rows), "cells": cells, "meshes_found": found}


def render_cdx_text(path, info):
    lines = [f"{path}: precombined resource index (.cdx), {info['rows']} rows, {len(info['cells'])} cells, "
             f"{info['meshes_found']} combined meshes found to name them"]
    for cell in info["cells"]:
        where = "interior" if cell["location"] == "interior" else \
            f"world {cell['location']['world']} at {tuple(cell['location']['grid'])}"
        counts = ", ".join(f"{len(rows)} {kind}" for kind, rows in cell["kinds"].items())
        lines.append(f"  CELL {cell['cell'] or '?'} ({where}): {counts}")
        for kind, rows in cell["kinds"].items():
            lines += [f"    {kind} {row['value']} {row['extra']}" + (f"  {row['name']}" if row["name"] else "")
                      for row in rows]
    return "\n".join(lines)


def mesh_info(mesh):
    """A Starfield .mesh: counts, position scale and extent, and the name its bytes give it."""
    vertices = mesh.vertices
    return {
        "format": "mesh",
        "version": mesh.version,
        "name": mesh_name(mesh.to_bytes()),
        "vertices": len(mesh.positions),
        "triangles": len(mesh.triangles),
        "scale": mesh.scale,
        "min": vertices.min(axis=0).tolist() if len(vertices) else None,
        "max": vertices.max(axis=0).tolist() if len(vertices) else None,
        "uv_sets": int(len(mesh.uvs) > 0) + int(len(mesh.uvs2) > 0),
        "colors": len(mesh.colors) > 0,
        "weights_per_vertex": mesh.weights_per_vertex,
        "lod_triangles": [len(lod) for lod in mesh.lods],
        "meshlets": None if mesh.meshlets is None else len(mesh.meshlets),
    }


def mat_info(material):
    return {
        "format": "mat",
        "objects": len(material.data.get("Objects", [])) if isinstance(material.data, dict) else 0,
        "textures": material.textures,
    }


def morph_info(morphs):
    return {
        "format": "morph",
        "morphs": list(morphs.names),
        "vertices": len(morphs.vertices),
        "rows": len(morphs.rows),
    }


READERS_INFO = ((Bsm2File, bsm2_info), (MeshData, mesh_info), (MatFile, mat_info), (MorphFile, morph_info),
                (FaceGenTri, facegen_info), (BodySlideTri, bodyslide_info))


def plugin_info(plugin):
    """A plugin: its masters, flags, record counts by type, and the cells with precombined meshes
    (their XCRI: the combined meshes and the references they combine)."""
    from ..core.plugin.file import LIGHT_FLAG, MASTER_FLAG

    counts, cells = {}, []
    for record in plugin.records():
        counts[record.type] = counts.get(record.type, 0) + 1
        xcri = record.field("XCRI") if record.type == "CELL" else None
        if xcri is not None and len(xcri) >= 8:
            meshes, values = struct.unpack_from("<II", xcri)
            cells.append({"cell": f"{record.form_id:08X}", "editor_id": record.text("EDID"), "meshes": meshes,
                          "references": values // 2})
    flags = plugin.header.flags
    return {
        "format": "plugin",
        "masters": plugin.masters,
        "flags": [name for name, bit in (("master", MASTER_FLAG), ("light", LIGHT_FLAG), ("localized", 0x80)) if flags & bit],
        "author": plugin.header.text("CNAM"),
        "description": plugin.header.text("SNAM"),
        "records": dict(sorted(counts.items())),
        "precombined_cells": cells,
    }


def material_file_info(material):
    """A BGSM or BGEM material file: its version, fields and textures as stored."""
    plain = {name: value for name, value in material.fields.items()}
    return {"format": "material", "kind": material.kind, "version": material.version,
            "fields": {name: list(value) if isinstance(value, tuple) else value for name, value in plain.items()},
            "textures": dict(material.textures)}


def file_info(path):
    if Path(path).suffix.lower() == ".cdx":
        return cdx_info(path)
    if Path(path).suffix.lower() == ".hkx":
        return hkx_info(path)
    other = read_plugin_or_material(path) if split_archive_path(path) is None else None
    if other is not None:
        return plugin_info(other) if hasattr(other, "groups") else material_file_info(other)
    data = read_file(path)
    return next((info(data) for kind, info in READERS_INFO if isinstance(data, kind)), None) or nif_info(data)


GAME_NAMES = {
    "FO3": "Fallout 3 / New Vegas",
    "FO4": "Fallout 4",
    "FO76": "Fallout 76",
    "SF": "Starfield",
    "SSE": "Skyrim Special Edition",
    "SKYRIM": "Skyrim",
    "unknown": "unknown game",
}


def render_text(path, info):
    if info["format"] in TEXT:
        return TEXT[info["format"]](path, info)
    lines = [
        f"{path}: NIF {info['version']} ({GAME_NAMES[info['game']]}), user {info['user_version']}, "
        f"bs {info['bs_version']}, {info['endian']}-endian, {len(info['blocks'])} blocks",
    ]
    for shape in info["shapes"]:
        skinned = ", skinned" if shape["skinned"] else ""
        if "lods" in shape:
            lods = "; ".join(f"LOD {lod['lod']} {lod['mesh'] or 'inline'}: {lod['vertices']} vertices, "
                             f"{lod['triangles']} triangles" for lod in shape["lods"])
            material = f", material {shape['material']}" if shape["material"] else ""
            lines.append(f"  shape {shape['block']} {shape['type']} {shape['name']!r}{skinned}{material}: {lods or 'no LOD'}")
            continue
        lines.append(
            f"  shape {shape['block']} {shape['type']} {shape['name']!r}: "
            f"{shape['vertices']} vertices, {shape['triangles']} triangles{skinned}"
        )
    counts = {}
    for block in info["blocks"]:
        counts[block["type"]] = counts.get(block["type"], 0) + 1
    lines.append("  blocks: " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items())))
    for cell in info["precombined"]:
        instances = sum(o["instances"] for o in cell["objects"])
        lines.append(
            f"  precombined block {cell['block']} ({cell['layout']}): {counted(len(cell['objects']), 'object')}, "
            f"{counted(instances, 'instance')}"
        )
    for packed in info["packed"]:
        streams = ", ".join(f"{s['name']} {s['type']} @{s['offset']}" for s in packed["streams"])
        lines.append(f"  packed block {packed['block']}: {packed['vertices']} vertices, stride {packed['stride']}: {streams}")
    if info["connect_points"]:
        points = ", ".join(f"{p['name']} on {p['parent'] or 'the root'}" for p in info["connect_points"])
        lines.append(f"  connect points: {points}")
    for system in info["havok"]:
        state = system.get("error") or system.get("kept") or f"{len(system['bodies'])} bodies, {system['constraints']} constraints"
        lines.append(f"  havok block {system['block']} ({system['kind']}): {state}")
    lines.extend(f"  warning: {warning}" for warning in info["warnings"])
    return "\n".join(lines)


def render_bsm2_text(path, info):
    hierarchy = ", with hierarchy" if info["hierarchy"] else ""
    lines = [
        f"{path}: Banuba skinned mesh (.bsm2), {info['vertices']} vertices, {info['indices'] // 3} triangles, "
        f"{info['subsets']} subsets, {info['bones']} bones{hierarchy}",
        "  materials: " + ", ".join(repr(name) for name in info["materials"]),
    ]
    for animation in info["animations"]:
        lines.append(
            f"  animation {animation['name']!r}: {animation['keys']} keys every {animation['interval_ns'] / 1e6:g} ms, "
            f"{animation['duration_ns'] / 1e9:g} s"
        )
    lines.extend(f"  warning: {warning}" for warning in info["warnings"])
    return "\n".join(lines)


def render_mesh_text(path, info):
    extent = f", from {fmt(info['min'])} to {fmt(info['max'])}" if info["min"] else ""
    lods = ", LODs of " + ", ".join(map(str, info["lod_triangles"])) + " triangles" if info["lod_triangles"] else ""
    weights = f", {info['weights_per_vertex']} bone weights per vertex" if info["weights_per_vertex"] else ""
    meshlets = "no meshlets" if info["meshlets"] is None else f"{info['meshlets']} meshlets"
    return (f"{path}: Starfield mesh version {info['version']}, {info['vertices']} vertices, {info['triangles']} triangles, "
            f"scale {info['scale']:g}{extent}{weights}{lods}, {meshlets}\n  name for its bytes: {info['name']}")


def fmt(values):
    return "(" + ", ".join(f"{v:.4g}" for v in values) + ")"


def render_mat_text(path, info):
    lines = [f"{path}: Starfield material, {info['objects']} objects, {len(info['textures'])} textures"]
    lines.extend(f"  texture {name}" for name in info["textures"])
    return "\n".join(lines)


def render_morph_text(path, info):
    return (f"{path}: Starfield morphs for {info['vertices']} vertices ({info['rows']} rows): "
            + ", ".join(repr(name) for name in info["morphs"]))


def render_plugin_text(path, info):
    records = sum(info["records"].values())
    flags = f" ({', '.join(info['flags'])})" if info["flags"] else ""
    lines = [f"{path}: plugin{flags}, {records} record{'s' if records != 1 else ''}, masters: "
             + (", ".join(info["masters"]) or "none"),
             "  records: " + ", ".join(f"{count} {kind}" for kind, count in info["records"].items())]
    cells = info["precombined_cells"]
    lines.append(f"  {len(cells)} cell{'s' if len(cells) != 1 else ''} with precombined meshes"
                 + (":" if cells else ""))
    lines += [f"    CELL {cell['cell']}{' ' + cell['editor_id'] if cell['editor_id'] else ''}: {cell['meshes']} combined "
              f"mesh{'es' if cell['meshes'] != 1 else ''}, {cell['references']} reference"
              f"{'s' if cell['references'] != 1 else ''} combined" for cell in cells]
    return "\n".join(lines)


def render_material_text(path, info):
    textures = {slot: texture for slot, texture in info["textures"].items() if texture}
    lines = [f"{path}: Fallout 4 material file ({info['kind']} version {info['version']}), {len(info['fields'])} fields, "
             f"{len(textures)} texture{'s' if len(textures) != 1 else ''}"]
    lines += [f"  texture {slot}: {texture}" for slot, texture in textures.items()]
    lines.append("  fields: " + ", ".join(f"{name} {value}" for name, value in info["fields"].items()))
    return "\n".join(lines)


TEXT = {"plugin": render_plugin_text, "material": render_material_text, "cdx": render_cdx_text, "hkx": render_hkx_text, "bsm2": render_bsm2_text, "mesh": render_mesh_text,
        "mat": render_mat_text, "morph": render_morph_text, "tri": render_tri_text}
