"""What ``cli.py info`` reports about a .tri file: its morphs, their counts, the shapes they name."""

import numpy as np

from .naming import ROLE_NAMES, facegen_role


def facegen_info(tri):
    """What a FaceGenTri holds; its role is told by its file's name (``tri.path``)."""
    layout = None if tri.uvs is None else ("per corner" if tri.uv_triangles is not None else "per vertex")
    return {
        "format": "tri",
        "kind": "facegen",
        "role": facegen_role(tri.path or "").lower(),
        "vertices": len(tri.vertices),
        "triangles": len(tri.triangles),
        "quads": len(tri.quads),
        "uvs": 0 if tri.uvs is None else len(tri.uvs),
        "uv_layout": layout,
        "morphs": [
            {"name": m.name, "kind": m.kind, "vertices": int(np.count_nonzero(np.any(m.values != 0, axis=1))),
             "scale": float(m.scale)}
            for m in tri.morphs
        ]
        + [{"name": m.name, "kind": m.kind, "vertices": len(m.indices)} for m in tri.modifiers],
        "modifier_vertices": sum(len(m.indices) for m in tri.modifiers) + len(tri.unused_modifier_vertices),
        "labelled_vertices": [{"index": v.index, "label": v.label} for v in tri.labelled_vertices],
        "surface_points": [{"triangle": p.triangle, "label": p.label} for p in tri.surface_points],
        "warnings": list(tri.warnings),
    }


def _shapes(shapes):
    return [
        {"name": shape.name, "morphs": [{"name": m.name, "vertices": len(m.offsets), "scale": float(m.scale)} for m in shape.morphs]}
        for shape in shapes
    ]


def bodyslide_info(tri):
    return {
        "format": "tri",
        "kind": "bodyslide",
        "shapes": _shapes(tri.shapes),
        "uv_shapes": None if tri.uv_shapes is None else _shapes(tri.uv_shapes),
        "warnings": list(tri.warnings),
    }


def _names(morphs):
    return ", ".join(f"{m['name']} ({m['vertices']})" for m in morphs)


def render_tri_text(path, info):
    if info["kind"] == "facegen":
        differences = [m for m in info["morphs"] if m["kind"] == "difference"]
        modifiers = [m for m in info["morphs"] if m["kind"] == "modifier"]
        lines = [
            f"{path}: FaceGen .tri ({ROLE_NAMES[info['role'].upper()]} morphs), {info['vertices']} vertices, "
            f"{info['triangles']} triangles, {len(differences)} difference and {len(modifiers)} modifier morphs"
        ]
        if differences:
            lines.append(f"  difference morphs (vertices moved): {_names(differences)}")
        if modifiers:
            lines.append(f"  modifier morphs (vertices listed): {_names(modifiers)}")
    else:
        count = sum(len(shape["morphs"]) for shape in info["shapes"])
        lines = [f"{path}: BodySlide .tri, {len(info['shapes'])} shape(s), {count} morphs"]
        for shape in info["shapes"]:
            lines.append(f"  shape {shape['name']!r}: {len(shape['morphs'])} morphs (vertices listed): {_names(shape['morphs'])}")
        for shape in info["uv_shapes"] or []:
            lines.append(f"  texture-coordinate morphs of {shape['name']!r}: {_names(shape['morphs'])}")
    lines.extend(f"  warning: {warning}" for warning in info["warnings"])
    return "\n".join(lines)
