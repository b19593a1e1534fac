"""NiTriShape-based geometry read straight from a NIF's bytes with struct, apart from the
product's decoders (nif.xml's layouts for 20.2.0.7, FO3 to Skyrim LE, little-endian), and a New
Vegas landscape LOD file built by hand (the corpus holds no BSSegmentedTriShape).

NiTriShapeData = NiGeometryData (Group ID, Num Vertices, Keep / Compress Flags, Has Vertices,
Vertices, BS Data Flags, Material CRC after bs 34, Has Normals, Normals [+ tangents and
bitangents when BS Data Flags has 0x1000], Bounding Sphere, Has Vertex Colors, Colors, UV sets
(BS Data Flags & 1), Consistency Flags, Additional Data), Num Triangles (u16), Num Triangle
Points (u32), Has Triangles, Triangles, Num Match Groups (u16) + groups.
The shapes' own fields after NiAVObject: Data, Skin Instance, Num Materials + (name, extra)
pairs, Active Material, Material Needs Update (byte), after bs 34 Shader and Alpha Property; then
BSLODTriShape's three u32 LOD sizes, or BSSegmentedTriShape's u32 count and segments of (flags
byte, start index u32, triangle count u32)."""

import struct

import numpy as np
from nif_rewriter import RawNif

LOD_SOURCE = "pynifly/tests/tests/Skyrim/dockstepsdownend01.nif"  # a Skyrim LE static with two BSLODTriShapes
GRID_SOURCE = "niftools/history/test/nif/base_vertex_color0.nif"  # FO3: BSFadeNode, NiTriShape, NiTriShapeData
SEGMENT = np.dtype([("flags", "u1"), ("start_index", "<u4"), ("num_triangles", "<u4")])


def tri_shape_data(raw, bs):
    """Every field of a NiTriShapeData's bytes: {"group_id", "keep_flags", "compress_flags",
    "vertices", "bs_data_flags", "material_crc" (None up to bs 34), "normals", "tangents",
    "bitangents", "bound" (centre xyz, radius), "colors", "uvs" (absent arrays: None),
    "consistency_flags", "additional_data", "triangles", "match_groups"}; the whole block read."""
    out = {}
    at = 0
    out["group_id"], count, out["keep_flags"], out["compress_flags"], has_vertices = struct.unpack_from("<iHBBB", raw, at)
    at += 9

    def floats(width):
        nonlocal at
        values = np.frombuffer(raw, "<f4", width * count, at).reshape(count, width).astype(np.float64)
        at += 4 * width * count
        return values

    out["vertices"] = floats(3) if has_vertices else None
    (flags,) = struct.unpack_from("<H", raw, at)
    out["bs_data_flags"] = flags
    at += 2
    out["material_crc"] = None
    if bs > 34:
        (out["material_crc"],) = struct.unpack_from("<I", raw, at)
        at += 4
    has_normals = raw[at]
    at += 1
    out["normals"] = floats(3) if has_normals else None
    tangents = has_normals and flags & 0x1000
    out["tangents"] = floats(3) if tangents else None
    out["bitangents"] = floats(3) if tangents else None
    out["bound"] = struct.unpack_from("<4f", raw, at)
    at += 16
    has_colors = raw[at]
    at += 1
    out["colors"] = floats(4) if has_colors else None
    out["uvs"] = floats(2) if flags & 1 else None
    out["consistency_flags"], out["additional_data"], triangle_count, points = struct.unpack_from("<HiHI", raw, at)
    at += 12
    assert raw[at] == 1 and points == 3 * triangle_count  # has triangles
    out["triangles"] = np.frombuffer(raw, "<u2", 3 * triangle_count, at + 1).reshape(-1, 3).astype(np.int64)
    at += 1 + 6 * triangle_count
    (groups,) = struct.unpack_from("<H", raw, at)
    out["match_groups"] = groups
    assert groups == 0 and at + 2 == len(raw)
    return out


def read_tri_shape_data(raw, bs):
    """(vertices (n, 3), triangles (m, 3)) of a NiTriShapeData's bytes."""
    data = tri_shape_data(raw, bs)
    return data["vertices"], data["triangles"]


def tri_shape_fields(nif, index):
    """{"flags" (NiAVObject's), "data", "skin", "materials", "active_material",
    "material_needs_update", "shader", "alpha" (None up to bs 34), "tail" (a subclass's bytes)}
    of a NiTriShape-based block."""
    raw = nif.blocks[index]
    flags = nif.flags(index)
    at = nif.av_offsets(index)["end"]
    data, skin, materials = struct.unpack_from("<iiI", raw, at)
    at += 12 + 8 * materials
    active, needs_update = struct.unpack_from("<iB", raw, at)
    at += 5
    shader = alpha = None
    if nif.bs_version > 34:
        shader, alpha = struct.unpack_from("<ii", raw, at)
        at += 8
    return {"flags": flags, "data": data, "skin": skin, "materials": materials, "active_material": active,
            "material_needs_update": needs_update, "shader": shader, "alpha": alpha, "tail": bytes(raw[at:])}


def shape_tail(nif, index):
    """The bytes after a NiTriShape-based block's NiTriBasedGeom fields, and its data ref."""
    fields = tri_shape_fields(nif, index)
    return fields["tail"], fields["data"]


def lod_sizes(nif, index):
    tail, _ = shape_tail(nif, index)
    assert len(tail) == 12
    return struct.unpack("<3I", tail)


def segments(nif, index):
    tail, _ = shape_tail(nif, index)
    (count,) = struct.unpack_from("<I", tail)
    assert len(tail) == 4 + SEGMENT.itemsize * count
    return np.frombuffer(tail, SEGMENT, count, 4)


def geometry(nif, index):
    """(vertices, triangles) of shape ``index``'s NiTriShapeData."""
    _, data = shape_tail(nif, index)
    return read_tri_shape_data(nif.blocks[data], nif.bs_version)


def groups_of(sizes_or_segments, count):
    """Each triangle's group from LOD sizes (consecutive) or segments (start index / 3, count)."""
    out = np.full(count, -1, np.int64)
    if isinstance(sizes_or_segments, np.ndarray):
        ranges = [(int(s["start_index"]) // 3, int(s["num_triangles"])) for s in sizes_or_segments]
    else:
        starts = np.cumsum((0, *sizes_or_segments[:-1]))
        ranges = list(zip(starts.tolist(), sizes_or_segments))
    for number, (start, size) in enumerate(ranges):
        out[start : start + size] = number
    return out


# -- a New Vegas landscape LOD tile --------------------------------------------------------------
GRID = 8  # quads per side; segments are GRID_CELLS x GRID_CELLS cells of 2 x 2 quads
GRID_CELLS = 4
SPACING = 64.0


def grid_mesh():
    """(vertices, triangles, segment of each triangle): a 9 x 9 vertex height field, two
    triangles a quad, listed cell by cell (as landscape LOD keeps each segment's together)."""
    xs, ys = np.meshgrid(np.arange(GRID + 1), np.arange(GRID + 1), indexing="xy")
    heights = 10.0 * np.sin(xs * 0.7) * np.cos(ys * 0.5)
    vertices = np.stack([xs * SPACING, ys * SPACING, heights], axis=-1).reshape(-1, 3)
    triangles, owner = [], []
    size = GRID // GRID_CELLS
    for cell_y in range(GRID_CELLS):
        for cell_x in range(GRID_CELLS):
            for y in range(cell_y * size, (cell_y + 1) * size):
                for x in range(cell_x * size, (cell_x + 1) * size):
                    a, b = y * (GRID + 1) + x, y * (GRID + 1) + x + 1
                    c, d = a + GRID + 1, b + GRID + 1
                    triangles += [(a, b, d), (a, d, c)]
                    owner += [cell_y * GRID_CELLS + cell_x] * 2
    return vertices, np.array(triangles, np.int64), np.array(owner, np.int64)


def pack_tri_shape_data(vertices, triangles):
    """NiTriShapeData (bs 34) of vertices and triangles, normals up, no UVs or colours."""
    vertices = np.asarray(vertices, np.float64)
    centre = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    normals = np.tile((0.0, 0.0, 1.0), (len(vertices), 1))
    out = struct.pack("<iHBBB", 0, len(vertices), 0, 0, 1) + vertices.astype("<f4").tobytes()
    out += struct.pack("<HB", 0, 1) + normals.astype("<f4").tobytes()
    out += struct.pack("<4fBHi", *centre, radius, 0, 0x4000, -1)
    out += struct.pack("<HIB", len(triangles), 3 * len(triangles), 1) + np.asarray(triangles, "<u2").tobytes()
    return out + struct.pack("<H", 0)


def landscape_lod_file(corpus):
    """(file bytes, shape index, packed segments): the FO3 corpus file's NiTriShape turned into
    a BSSegmentedTriShape over the grid, its 16 segments' flags alternating 0 / 1."""
    nif = RawNif.read(corpus / GRID_SOURCE)
    (shape,) = nif.indices_of("NiTriShape")
    _, data = shape_tail(nif, shape)
    vertices, triangles, owner = grid_mesh()
    nif.blocks[data] = bytearray(pack_tri_shape_data(vertices, triangles))
    counts = np.bincount(owner, minlength=GRID_CELLS**2)
    table = np.zeros(len(counts), SEGMENT)
    table["flags"] = np.arange(len(counts)) % 2
    table["start_index"] = 3 * (np.cumsum(counts) - counts)
    table["num_triangles"] = counts
    nif.blocks[shape] += struct.pack("<I", len(table)) + table.tobytes()
    nif.set_type(shape, "BSSegmentedTriShape")
    return nif.to_bytes(), shape, table


def pack_geometry_data(vertices, triangles, bs, flags, normals=None, tangents=None, bitangents=None, uvs=None):
    """NiTriShapeData of these arrays (None: absent) with BS Data Flags ``flags`` as given, the
    tangent pair written only after normals (as the layout stores them), whatever the flags say."""
    vertices = np.asarray(vertices, np.float64)
    centre = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())

    def arrays(*values):
        return b"".join(np.asarray(v, "<f4").tobytes() for v in values if v is not None)

    out = struct.pack("<iHBBB", 0, len(vertices), 0, 0, 1) + arrays(vertices) + struct.pack("<H", flags)
    out += struct.pack("<I", 0) if bs > 34 else b""
    out += struct.pack("<B", normals is not None)
    if normals is not None:
        out += arrays(normals, tangents, bitangents)
    out += struct.pack("<4fB", *centre, radius, 0) + arrays(uvs) + struct.pack("<Hi", 0x4000, -1)
    out += struct.pack("<HIB", len(triangles), 3 * len(triangles), 1) + np.asarray(triangles, "<u2").tobytes()
    return out + struct.pack("<H", 0)


def lone_vertex_segment_file(corpus):
    """(file bytes, index of the new shape): the landscape tile with a second BSSegmentedTriShape
    as a New Vegas LOD chunk holds one (realmods' Dry Wells Level4 tile): one vertex at the
    origin, one triangle (0, 0, 0), no normals, three segments of no triangles."""
    data, shape, _ = landscape_lod_file(corpus)
    nif = RawNif(data)
    offsets = nif.av_offsets(shape)
    lone_data = nif.add_block("NiTriShapeData", pack_geometry_data([(0.0, 0.0, 0.0)], [(0, 0, 0)], nif.bs_version, 0))
    block = bytearray(nif.blocks[shape][: -len(shape_tail(nif, shape)[0])])
    block += struct.pack("<I", 3) + np.zeros(3, SEGMENT).tobytes()
    struct.pack_into("<i", block, offsets["name"], nif.string_index("Lone"))
    struct.pack_into("<i", block, offsets["end"], lone_data)
    lone = nif.add_block("BSSegmentedTriShape", block)
    (root,) = nif.roots()
    nif.set_children(root, nif.node_children(root) + [lone])
    return nif.to_bytes(), lone
