"""What ``cli.py info`` reports: a JSON-ready summary of a file and its human rendering."""

from pathlib import Path

from ..core.bsm2 import Bsm2File
from ..core.errors import FormatError
from ..core.formats import read_file
from ..core.havok.animation.summary import hkx_info, render_hkx_text
from ..core.havok.summary import system_summary
from ..core.nif.blocks.collision import bhkSystem
from ..core.nif.blocks.connect_points import BSConnectPointParents
from ..core.nif.blocks.geometry import NiTriBasedGeom, NiTriBasedGeomData
from ..core.nif.blocks.packed_geometry import STREAM_TYPE_NAMES, BSPackedAdditionalGeometryData, stream_semantics
from ..core.nif.blocks.precombined import BSPackedCombinedGeomDataExtra
from ..core.nif.blocks.tri_shape import BSTriShape
from ..core.nif import skinning
from ..core.nif.header import version_string
from ..core.tri import BodySlideTri, FaceGenTri
from ..core.tri.summary import render_tri_text, tri_info


def shape_summary(nif, index, block):
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
        "shapes": [shape_summary(nif, index, block) for index, block in nif.blocks_of(BSTriShape, NiTriBasedGeom)],
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


def file_info(path):
    if Path(path).suffix.lower() == ".hkx":
        return hkx_info(path)
    data = read_file(path)
    if isinstance(data, (FaceGenTri, BodySlideTri)):
        return tri_info(data, path)
    return bsm2_info(data) if isinstance(data, Bsm2File) else nif_info(data)


GAME_NAMES = {
    "FO3": "Fallout 3 / New Vegas",
    "FO4": "Fallout 4",
    "FO76": "Fallout 76",
    "SSE": "Skyrim Special Edition",
    "SKYRIM": "Skyrim",
    "unknown": "unknown game",
}


def render_text(path, info):
    if info["format"] == "hkx":
        return render_hkx_text(path, info)
    if info["format"] == "bsm2":
        return render_bsm2_text(path, info)
    if info["format"] == "tri":
        return render_tri_text(path, info)
    lines = [
        f"{path}: NIF {info['version']} ({GAME_NAMES[info['game']]}), user {info['user_version']}, "
        f"bs {info['bs_version']}, {info['endian']}-endian, {len(info['blocks'])} blocks",
    ]
    for shape in info["shapes"]:
        skinned = ", skinned" if shape["skinned"] else ""
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
            f"  precombined block {cell['block']} ({cell['layout']}): {len(cell['objects'])} objects, {instances} instances"
        )
    for packed in info["packed"]:
        streams = ", ".join(f"{s['name']} {s['type']} @{s['offset']}" for s in packed["streams"])
        lines.append(f"  packed block {packed['block']}: {packed['vertices']} vertices, stride {packed['stride']}: {streams}")
    if info["connect_points"]:
        points = ", ".join(f"{p['name']} on {p['parent'] or 'the root'}" for p in info["connect_points"])
        lines.append(f"  connect points: {points}")
    for system in info["havok"]:
        state = system.get("error") or f"{len(system['bodies'])} bodies, {system['constraints']} constraints"
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
