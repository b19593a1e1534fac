"""Small NIF files the project builds itself: the main job's input and test material."""

import numpy as np

from .blocks.nodes import NiNode
from .blocks.shaders import BSLightingShaderProperty, BSShaderTextureSet
from .blocks.tri_shape import BSTriShape
from .file import NifFile
from .header import Header
from . import vertex_format as vf

# Per face: normal, tangent (Bethesda's tangent = dP/dv, FORMAT-NOTES section 2) and the two
# in-plane axes the face's corners span.
_FACES = (
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    ((0, 0, -1), (1, 0, 0), (0, -1, 0)),
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    ((-1, 0, 0), (0, -1, 0), (0, 0, 1)),
    ((0, 1, 0), (-1, 0, 0), (0, 0, 1)),
    ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
)


def cube_geometry(size):
    """24 vertices (4 per face, so normals stay flat), 12 triangles, UVs per face."""
    half = size / 2.0
    positions, normals, uvs, tangents, bitangents, triangles = [], [], [], [], [], []
    for face, (normal, u_axis, v_axis) in enumerate(_FACES):
        n, u, v = (np.array(a, np.float32) for a in (normal, u_axis, v_axis))
        for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            positions.append((n + du * u + dv * v) * half)
            normals.append(n)
            uvs.append(((du + 1) / 2, (1 - dv) / 2))
            tangents.append(-v)
            bitangents.append(u)
        base = 4 * face
        triangles += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    return {
        "positions": np.array(positions, np.float32),
        "normals": np.array(normals, np.float32),
        "uvs": np.array(uvs, np.float32),
        "tangents": np.array(tangents, np.float32),
        "bitangents": np.array(bitangents, np.float32),
        "triangles": np.array(triangles, np.uint16),
    }


def fo4_cube(size=64.0):
    """A Fallout 4 file: BSFadeNode root, one textured BSTriShape cube with its shader."""
    geometry = cube_geometry(size)
    shape = BSTriShape(name="Cube", shader_property=2)
    shape.set_vertex_flags(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, full_precision=False)
    for attribute in ("positions", "uvs", "normals", "tangents", "bitangents"):
        setattr(shape, attribute, geometry[attribute])
    shape.set_triangles(geometry["triangles"])
    blocks = [
        NiNode("BSFadeNode", name="Cube.nif", children=[1]),
        shape,
        BSLightingShaderProperty(name="Materials\\Sample\\Cube.bgsm", texture_set=3, root_material=None),
        BSShaderTextureSet(textures=["Textures\\Sample\\Cube_d.dds", "Textures\\Sample\\Cube_n.dds"] + [""] * 8),
    ]
    return NifFile(Header(user_version=12, bs_version=130), blocks, roots=[0])


def precombined_cell(records=3, instances=4, size=64.0):
    """A precombined cell in the inline layout of seed 000: ``records`` cubes of different sizes,
    each placed ``instances`` times around the cell on a circle, turned and scaled."""
    from ..stream import WriteStream
    from .blocks.precombined import BSPackedCombinedGeomDataExtra, PackedGeomRecord, instance_dtype

    desc = vf.build_desc(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, False)
    built = []
    for index in range(records):
        geometry = cube_geometry(size * (index + 1) / records)
        record = PackedGeomRecord(inline=True)
        record.vertex_desc = desc
        for attribute in ("positions", "uvs", "normals", "tangents", "bitangents"):
            setattr(record, attribute, geometry[attribute])
        triangles = geometry["triangles"]
        record.triangles = np.concatenate([triangles, triangles[::2], triangles[::4]])
        counts = (len(triangles), len(triangles[::2]), len(triangles[::4]))
        record.lod_counts = counts
        record.lod_offsets = (0, 3 * counts[0], 3 * (counts[0] + counts[1]))
        placed = np.zeros(instances, instance_dtype(WriteStream()))
        angles = np.linspace(0, 2 * np.pi, instances, endpoint=False) + index
        cos, sin = np.cos(angles), np.sin(angles)
        placed["grayscale_scale"] = 1.0
        placed["rotation"][:, 0, 0], placed["rotation"][:, 0, 1] = cos, -sin
        placed["rotation"][:, 1, 0], placed["rotation"][:, 1, 1] = sin, cos
        placed["rotation"][:, 2, 2] = 1.0
        placed["translation"][:, 0] = 400.0 * (index + 1) * cos
        placed["translation"][:, 1] = 400.0 * (index + 1) * sin
        placed["scale"] = 1.0 + 0.25 * np.arange(instances)
        placed["bound_center"] = placed["translation"]
        placed["bound_radius"] = size * placed["scale"]
        record.instances = placed
        built.append(record)
    block = BSPackedCombinedGeomDataExtra("BSPackedCombinedSharedGeomDataExtra", vertex_desc=desc, records=built)
    block.objects = np.array([(0xDDF19A67, 0)] * records, [("filename_hash", "<u4"), ("data_offset", "<u4")])
    block.num_vertices = sum(r.vertex_count for r in built)
    block.num_triangles = sum(len(r.triangles) for r in built)
    root = NiNode("BSFadeNode", name="00012345_0ABCDEF0_OC.nif", extra_data=[1])
    return NifFile(Header(user_version=12, bs_version=130), [root, block], roots=[0])
