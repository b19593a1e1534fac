"""BSTriShape vertex buffers decoded a second time, independently of the codec.

This module reads the corpus files with its own small parser written from FORMAT-NOTES
sections 1-4 and nif.xml (header, block offsets, the BSTriShape fields before the vertex
buffer) and decodes each packed vertex with ``struct`` at the offsets the vertex descriptor
gives. It uses nothing of the codec's ``vertex_format`` / ``packed_vertices`` modules; the
codec is only the thing compared against. Big shapes are sampled (up to ``SAMPLE`` vertices
spread over the buffer); triangles are always compared whole.

Positions are the raw local coordinates of the buffer: the shape's transform is never
applied (the comparison is exact, and shapes with non-identity transforms are among those
checked).

The corpus has no inline full-precision buffer (its only Skyrim SE file keeps its vertices in
the skin partition), so full precision is checked on files built here: a real FO4 shape
re-encoded with float positions, and a minimal Skyrim SE file (bs 100 always uses floats).
"""

import math
import struct
from collections import defaultdict

import numpy as np
import pytest
from support import CORPUS, corpus_bytes, corpus_files, unavailable  # conftest.py makes precombined_nif importable

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape

FAMILY = ("BSTriShape", "BSSubIndexTriShape", "BSMeshLODTriShape", "BSDynamicTriShape")
SAMPLE = 200
CORRUPT = "pynifly/tests/tests/FO4/Corrupt.nif"  # genuinely corrupt (after its header): left out

# BSVertexDesc attribute flags ((desc >> 44) & 0xFFF), FORMAT-NOTES section 3.
VERTEX, UV, UV2, NORMAL, TANGENT, COLORS, SKINNED, LAND, EYE, INSTANCE, FULL = (1 << bit for bit in range(11))
# Offset nibbles (in units of 4 bytes).
NIB_UV, NIB_NORMAL, NIB_TANGENT, NIB_COLOR, NIB_SKIN, NIB_EYE = 2, 4, 5, 6, 7, 9


# -- an independent reader ------------------------------------------------------------------
class Reader:
    def __init__(self, data, pos=0, order="<"):
        self.data, self.pos, self.order = data, pos, order

    def take(self, fmt):
        fmt = self.order + fmt
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def one(self, fmt):
        return self.take(fmt)[0]

    def short_string(self):
        n = self.one("B")
        text = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return text

    def sized_string(self):
        n = self.one("I")
        text = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return text


def parse_header(data):
    """FORMAT-NOTES section 1. Returns a dict with the versions, the block types per block, the
    block offsets and sizes, and where the block size table is (to patch it)."""
    end = data.index(b"\n")
    assert data[:end].startswith(b"Gamebryo File Format, Version 20.2.0.7"), data[:end]
    r = Reader(data, end + 1)
    version = r.one("I")
    assert version == 0x14020007, hex(version)
    endian = r.one("B")
    assert endian in (0, 1)
    user_version, num_blocks, bs = r.take("III")
    r.short_string()  # author
    if bs > 130:
        r.one("I")
    else:
        r.short_string()  # process script
    r.short_string()  # export script
    if bs >= 103:
        r.short_string()  # max filepath
    r.order = "<" if endian == 1 else ">"
    types = [r.sized_string().decode("cp1252") for _ in range(r.one("H"))]
    type_indices = r.take(f"{num_blocks}H")
    sizes_at = r.pos
    sizes = r.take(f"{num_blocks}I")
    num_strings = r.one("I")
    r.one("I")  # max string length
    strings = [r.sized_string() for _ in range(num_strings)]
    r.take(f"{r.one('I')}I")  # groups
    offsets, pos = [], r.pos
    for size in sizes:
        offsets.append(pos)
        pos += size
    return {
        "bs": bs,
        "user": user_version,
        "order": r.order,
        "block_types": [types[i & 0x7FFF] for i in type_indices],
        "offsets": offsets,
        "sizes": sizes,
        "sizes_at": sizes_at,
        "strings": strings,
        "blocks_end": pos,
    }


def walk_tri_shape(data, offset, bs, order):
    """The BSTriShape fields up to the vertex buffer (FORMAT-NOTES sections 2 and 4)."""
    r = Reader(data, offset, order)
    shape = {"name": r.one("i")}
    r.take(f"{r.one('I')}i")  # extra data refs
    r.one("i")  # controller
    r.one("I" if bs > 26 else "H")  # flags
    shape["translation"] = r.take("3f")
    shape["rotation"] = r.take("9f")
    shape["scale"] = r.one("f")
    if bs <= 34:
        r.take(f"{r.one('I')}i")  # properties
    r.one("i")  # collision object
    shape["bound"] = r.take("4f")
    if bs >= 155:
        r.take("6f")
    shape["skin"], shape["shader"], shape["alpha"] = r.take("3i")
    desc_at = r.pos
    shape["desc"] = r.one("Q")
    shape["num_triangles"] = r.one("I" if bs >= 130 else "H")
    shape["num_vertices"] = r.one("H")
    shape["data_size_at"] = r.pos
    shape["data_size"] = r.one("I")
    shape["vertices_at"] = r.pos
    shape["desc_at"] = desc_at
    return shape


def stride_of(desc):
    return (desc & 0xF) * 4


def offset_of(desc, nibble):
    return ((desc >> (4 * nibble)) & 0xF) * 4


def flags_of(desc):
    return (desc >> 44) & 0xFFF


def is_full_precision(desc, bs):
    return bs == 100 or bool(flags_of(desc) & FULL)


def unorm(byte):
    """Normal/tangent/bitangent bytes: 0..255 to -1..1."""
    return byte / 255 * 2 - 1


def field(data, at, size):
    return bytes(data[at : at + size])


def decode_vertex(data, at, desc, full, order):
    """One packed vertex at byte ``at``, attribute by attribute, at the descriptor's offsets."""
    flags = flags_of(desc)
    out = {}
    if flags & VERTEX:
        x, y, z, w = struct.unpack_from(order + ("4f" if full else "4e"), data, at)
        out["position"] = (x, y, z)
        if flags & TANGENT:
            out["bitangent_x"] = w
    if flags & UV:
        out["uv"] = struct.unpack_from(order + "2e", data, at + offset_of(desc, NIB_UV))
    if flags & NORMAL:
        b = field(data, at + offset_of(desc, NIB_NORMAL), 4)
        out["normal"] = tuple(unorm(v) for v in b[:3])
        out["bitangent_y"] = unorm(b[3])
        if flags & TANGENT:
            b = field(data, at + offset_of(desc, NIB_TANGENT), 4)
            out["tangent"] = tuple(unorm(v) for v in b[:3])
            out["bitangent_z"] = unorm(b[3])
    if flags & COLORS:
        b = field(data, at + offset_of(desc, NIB_COLOR), 4)
        out["color"] = tuple(v / 255 for v in b)
    if flags & SKINNED:
        at_skin = at + offset_of(desc, NIB_SKIN)
        out["weights"] = struct.unpack_from(order + "4e", data, at_skin)
        out["indices"] = tuple(data[at_skin + 8 : at_skin + 12])
    if flags & EYE:
        out["eye"] = struct.unpack_from(order + "f", data, at + offset_of(desc, NIB_EYE))[0]
    return out


def sample_indices(n):
    if n <= SAMPLE:
        return list(range(n))
    return sorted({round(i * (n - 1) / (SAMPLE - 1)) for i in range(SAMPLE)})


def raw_triangles(data, shape, order):
    start = shape["vertices_at"] + stride_of(shape["desc"]) * shape["num_vertices"]
    count = 3 * shape["num_triangles"]
    return np.array(struct.unpack_from(f"{order}{count}H", data, start), np.uint16).reshape(-1, 3)


# -- the corpus, surveyed by the reader above ---------------------------------------------
def survey(path):
    """Every BSTriShape-family block of one file: (index, type, fields before the buffer)."""
    data = corpus_bytes(path)
    header = parse_header(data)
    shapes = []
    for index, (type_name, offset) in enumerate(zip(header["block_types"], header["offsets"])):
        if type_name in FAMILY:
            shapes.append((index, type_name, walk_tri_shape(data, offset, header["bs"], header["order"])))
    return header, shapes


def rel(path):
    return str(path.relative_to(CORPUS))


def survey_corpus():
    files, unreadable = {}, {}
    for path in corpus_files("**/*.nif"):
        if rel(path) == CORRUPT:
            continue
        try:
            header, shapes = survey(path)
        except (AssertionError, struct.error, ValueError, IndexError) as error:
            unreadable[path] = error
            continue
        if shapes:
            files[path] = (header, shapes)
    return files, unreadable


SURVEY, UNREADABLE = survey_corpus() if CORPUS.is_dir() else ({}, {})
INLINE_FILES = sorted(path for path, (_, shapes) in SURVEY.items() if any(s["data_size"] for _, _, s in shapes))


def layouts():
    """Vertex descriptor -> the corpus files holding an inline buffer of that layout."""
    found = defaultdict(list)
    for path in INLINE_FILES:
        header, shapes = SURVEY[path]
        for _, _, shape in shapes:
            if shape["data_size"] and path not in found[shape["desc"]]:
                found[shape["desc"]].append(path)
    return found


def chosen_files():
    """Per layout: the smallest and the largest file holding it, plus the other BS versions
    and block types it occurs with, so every (layout, bs, block type) combination is read."""
    chosen = set()
    seen = set()
    for desc, paths in layouts().items():
        by_size = sorted(paths, key=lambda p: p.stat().st_size)
        chosen.update((by_size[0], by_size[-1]))
        for path in by_size:
            header, shapes = SURVEY[path]
            for _, type_name, shape in shapes:
                key = (desc, header["bs"], type_name)
                if shape["desc"] == desc and shape["data_size"] and key not in seen:
                    seen.add(key)
                    chosen.add(path)
    return sorted(chosen)


CHOSEN = chosen_files()


# -- comparing one shape ------------------------------------------------------------------
def check_shape(data, header, index, type_name, shape, block):
    bs, order = header["bs"], header["order"]
    where = f"block {index} ({type_name})"
    desc, nv, nt = shape["desc"], shape["num_vertices"], shape["num_triangles"]
    flags, stride = flags_of(desc), stride_of(desc)
    full = is_full_precision(desc, bs)

    assert isinstance(block, BSTriShape), where
    assert block.type_name == type_name, where
    assert block.vertex_desc == desc, where
    assert block.full_precision == full, where
    assert shape["data_size"] == stride * nv + 6 * nt, f"{where}: data size vs desc and counts"
    assert block.num_vertices == nv and block.vertex_count == nv, where
    np.testing.assert_array_equal(block.triangles, raw_triangles(data, shape, order), err_msg=where)
    assert block.triangles.dtype == np.uint16 and block.triangles.shape == (nt, 3), where

    arrays = {
        "positions": (VERTEX, 3, block.positions),
        "uvs": (UV, 2, block.uvs),
        "normals": (NORMAL, 3, block.normals),
        "tangents": (NORMAL | TANGENT, 3, block.tangents),
        "bitangents": (VERTEX | NORMAL | TANGENT, 3, block.bitangents),
        "colors": (COLORS, 4, block.colors),
        "bone_weights": (SKINNED, 4, block.bone_weights),
        "bone_indices": (SKINNED, 4, block.bone_indices),
        "eye_data": (EYE, None, block.eye_data),
    }
    for name, (needs, width, array) in arrays.items():
        if flags & needs != needs:
            assert array is None, f"{where}: {name} present though the layout 0x{desc:016X} lacks it"
            continue
        assert array is not None, f"{where}: {name} missing"
        assert array.shape == ((nv, width) if width else (nv,)), f"{where}: {name} shape {array.shape}"

    rows = sample_indices(nv)
    decoded = [decode_vertex(data, shape["vertices_at"] + i * stride, desc, full, order) for i in rows]

    def expect(key, *parts):
        return np.array([[v[k] for k in parts] if parts else v[key] for v in decoded], np.float64)

    def same(name, expected, atol=0.0):
        actual = arrays[name][2][rows]
        if atol:
            np.testing.assert_allclose(actual, expected, rtol=0, atol=atol, err_msg=f"{where}: {name}")
        else:
            np.testing.assert_array_equal(actual, expected.astype(actual.dtype), err_msg=f"{where}: {name}")

    byte_tol = 1e-6  # one float32 rounding of b / 255 * 2 - 1; a byte step is 0.0078
    if flags & VERTEX:
        same("positions", expect("position"))
    if flags & UV:
        same("uvs", expect("uv"))
    if flags & NORMAL:
        same("normals", expect("normal"), byte_tol)
        if flags & TANGENT:
            same("tangents", expect("tangent"), byte_tol)
            if flags & VERTEX:
                bitangents = np.array([[v["bitangent_x"], v["bitangent_y"], v["bitangent_z"]] for v in decoded])
                np.testing.assert_allclose(
                    block.bitangents[rows], bitangents, rtol=0, atol=byte_tol, err_msg=f"{where}: bitangents"
                )
                assert np.array_equal(block.bitangents[rows, 0], bitangents[:, 0].astype(np.float32)), where
    if flags & COLORS:
        same("colors", expect("color"), 1e-7)
    if flags & SKINNED:
        same("bone_weights", expect("weights"))
        np.testing.assert_array_equal(
            block.bone_indices[rows], np.array([v["indices"] for v in decoded], np.uint8), err_msg=where
        )
        assert block.bone_indices.dtype == np.uint8, where
    if flags & EYE:
        same("eye_data", expect("eye"))

    # Plausibility of the independent decode itself, so a mistake shared by both decoders
    # (wrong offset, wrong byte mapping) cannot pass unnoticed.
    cx, cy, cz, radius = shape["bound"]
    if flags & VERTEX and nv:
        positions = expect("position")
        assert np.isfinite(positions).all(), where
    if flags & VERTEX and nv and radius > 0:  # some exporters leave the bound at zero
        distance = np.linalg.norm(positions - (cx, cy, cz), axis=1)
        slack = 1e-3 * max(radius, 1.0) + (0.0 if full else 2e-3 * (radius + math.dist((0, 0, 0), (cx, cy, cz))))
        assert distance.max() <= radius + slack, f"{where}: raw positions outside the bounding sphere"
    if flags & NORMAL and nv:
        lengths = np.linalg.norm(expect("normal"), axis=1)
        assert np.median(lengths) == pytest.approx(1.0, abs=0.02), f"{where}: normals are not unit length"
        if flags & TANGENT:
            tangents = expect("tangent")
            lengths = np.linalg.norm(tangents, axis=1)
            assert np.median(lengths) == pytest.approx(1.0, abs=0.02), f"{where}: tangents are not unit length"
    if flags & UV and nv:
        assert np.isfinite(expect("uv")).all(), where
    if flags & SKINNED and nv:
        weights, sums = expect("weights"), expect("weights").sum(axis=1)
        assert (weights >= 0).all() and (sums <= 1.01).all(), f"{where}: weights"
        # Normalised, or left unweighted by a test file (pynifly's Cube.nif).
        assert np.mean((np.abs(sums - 1) < 0.01) | (sums == 0)) > 0.5, f"{where}: weights do not add up to 1"
        if shape["skin"] >= 0 and header["block_types"][shape["skin"]] == "BSSkin::Instance":
            r = Reader(data, header["offsets"][shape["skin"]] + 8, order)  # skeleton root, bone data
            bones = r.one("I")
            indices = np.array([v["indices"] for v in decoded])
            assert indices[weights > 0].max(initial=0) < bones, f"{where}: bone index beyond {bones} bones"


# -- tests --------------------------------------------------------------------------------
def test_corpus_surveyed(corpus):
    """The survey read every corpus file with BSTriShapes, and found inline buffers."""
    assert INLINE_FILES, f"no BSTriShape with inline vertex data under {corpus}"
    assert not UNREADABLE, UNREADABLE


@pytest.mark.parametrize("path", CHOSEN, ids=rel)
def test_vertices_match_independent_decode(path):
    data = path.read_bytes()
    header, shapes = SURVEY[path]
    nif = NifFile.from_bytes(data, path=path)
    codec_shapes = [(i, b.type_name) for i, b in enumerate(nif.blocks) if isinstance(b, BSTriShape)]
    assert codec_shapes == [(i, t) for i, t, _ in shapes]
    assert len(nif.blocks) == len(header["offsets"])
    for index, type_name, shape in shapes:
        block = nif.blocks[index]
        if not shape["data_size"]:
            assert block.vertex_data is None and block.positions is None, index
            continue
        check_shape(data, header, index, type_name, shape, block)


@pytest.mark.parametrize("path", sorted(SURVEY), ids=rel)
def test_shape_fields_match(path):
    """Every corpus file with BSTriShapes: descriptor, counts and the 'no inline data' case
    (the Skyrim SE BSDynamicTriShape) agree with the walk above."""
    header, shapes = SURVEY[path]
    nif = NifFile.read(path)
    for index, type_name, shape in shapes:
        block = nif.blocks[index]
        assert isinstance(block, BSTriShape) and block.type_name == type_name
        assert block.vertex_desc == shape["desc"]
        assert block.num_vertices == shape["num_vertices"]
        assert block.triangle_count == shape["num_triangles"]
        assert (block.vertex_data is not None) == bool(shape["data_size"])
        if shape["data_size"]:
            assert len(block.vertex_data) == shape["num_vertices"]
        assert tuple(np.float32(v) for v in block.bound_center) == tuple(np.float32(v) for v in shape["bound"][:3])


def test_every_layout_is_covered(corpus):
    present = set(layouts())
    covered = {
        s["desc"] for path in CHOSEN for _, _, s in SURVEY[path][1] if s["data_size"]
    }
    assert covered == present, {f"0x{d:016X}" for d in present ^ covered}

    # The codec, over the whole corpus, finds the same inline layouts (the survey missed none).
    codec = set()
    for path in sorted(corpus.rglob("*.nif")):
        if rel(path) == CORRUPT:
            continue
        for block in NifFile.read(path).blocks:
            if isinstance(block, BSTriShape) and block.vertex_data is not None:
                codec.add(block.vertex_desc)
    assert codec == present

    flags = {desc: flags_of(desc) for desc in covered}
    assert any(not f & FULL for f in flags.values()), "no half-precision layout"
    assert any(f & SKINNED for f in flags.values()), "no skinned layout"
    assert any(f & COLORS for f in flags.values()), "no coloured layout"
    assert any(f & COLORS and f & SKINNED for f in flags.values()), "no coloured skinned layout"
    assert any(not f & UV for f in flags.values()), "no layout without UVs"
    # Full precision is not in the corpus: test_full_precision_* cover it. Should a corpus file
    # gain one, it is then covered by the parametrized test like every other layout.
    # Real descriptors quoted in FORMAT-NOTES section 3 must be among the covered.
    assert {0x0001B00000430205, 0x0005B00050430208, 0x0003B00005430206} <= covered

    # Raw local coordinates: shapes with a non-identity transform were among those compared.
    identity = (1, 0, 0, 0, 1, 0, 0, 0, 1)
    moved = [
        (rel(path), index)
        for path in CHOSEN
        for index, _, s in SURVEY[path][1]
        if s["data_size"] and (s["rotation"] != identity or any(s["translation"]) or s["scale"] != 1)
    ]
    assert moved, "no transformed shape checked: positions-are-local would go untested"


# -- full precision, built here -----------------------------------------------------------
def patch_u32(buffer, at, value, order="<"):
    struct.pack_into(order + "I", buffer, at, value)


def full_precision_variant(data, index):
    """The file with its half-precision BSTriShape ``index`` re-encoded with float positions
    (FULL_PRECISION set, every other attribute 8 bytes further on). Returns the new bytes and
    the decoded original vertices."""
    header = parse_header(data)
    order, bs = header["order"], header["bs"]
    offset, size = header["offsets"][index], header["sizes"][index]
    assert header["block_types"][index] in FAMILY
    shape = walk_tri_shape(data, offset, bs, order)
    assert shape["data_size"] and not is_full_precision(shape["desc"], bs)
    desc, nv = shape["desc"], shape["num_vertices"]
    stride = stride_of(desc)
    new_desc = desc + 2  # stride + 8 bytes
    for nibble in (NIB_UV, 3, NIB_NORMAL, NIB_TANGENT, NIB_COLOR, NIB_SKIN, 8, NIB_EYE):
        if offset_of(desc, nibble):
            new_desc += 2 << (4 * nibble)
    new_desc |= FULL << 44
    vertices = bytearray()
    start = shape["vertices_at"]
    for i in range(nv):
        at = start + i * stride
        vertices += struct.pack(order + "4f", *struct.unpack_from(order + "4e", data, at))
        vertices += data[at + 8 : at + stride]
    end_of_vertices = start + stride * nv
    block = bytearray(data[offset : offset + size])
    struct.pack_into(order + "Q", block, shape["desc_at"] - offset, new_desc)
    patch_u32(block, shape["data_size_at"] - offset, shape["data_size"] + 8 * nv, order)
    block[start - offset : end_of_vertices - offset] = vertices
    out = bytearray(data[:offset]) + block + data[offset + size :]
    patch_u32(out, header["sizes_at"] + 4 * index, len(block), order)
    original = [decode_vertex(data, start + i * stride, desc, False, order) for i in range(nv)]
    return bytes(out), original


@pytest.mark.parametrize(
    "name, index, stride",
    [
        ("nifly/tests/input/TestNifFile_Static_FO4.nif", 3, 28),  # 0x0001B00000430205
        ("pynifly/tests/tests/FO4/FemaleEyesAO.nif", 3, 44),  # 0x0007B00065430209: colours, skin
        ("pynifly/tests/tests/FO4/Workshop_BldWoodPDoor02.nif", 31, 20),  # 0x0000900000020003: no UV
    ],
)
def test_full_precision_fo4(corpus, name, index, stride):
    source = corpus / name
    if not source.is_file():
        unavailable(f"{source} missing")
    data, original = full_precision_variant(source.read_bytes(), index)
    header = parse_header(data)
    shape = walk_tri_shape(data, header["offsets"][index], header["bs"], header["order"])
    assert flags_of(shape["desc"]) & FULL and stride_of(shape["desc"]) == stride

    nif = NifFile.from_bytes(data)
    block = nif.blocks[index]
    assert block.full_precision
    check_shape(data, header, index, header["block_types"][index], shape, block)
    # The float positions are exactly the halves they were made from; the rest is unchanged.
    np.testing.assert_array_equal(block.positions, np.array([v["position"] for v in original], np.float32))
    reference = NifFile.read(source).blocks[index]
    attributes = ("uvs", "normals", "tangents", "bitangents", "colors", "bone_weights", "bone_indices", "triangles")
    for attribute in attributes:
        expected = getattr(reference, attribute)
        if expected is None:
            assert getattr(block, attribute) is None, attribute
        else:
            np.testing.assert_array_equal(getattr(block, attribute), expected, err_msg=attribute)
    assert nif.to_bytes() == data


def minimal_sse_file(positions, uvs, normal_bytes, triangles):
    """A Skyrim SE (bs 100) file holding one BSTriShape: no FULL_PRECISION flag, yet float
    positions. Layout: position + bitangent x (16), uv (4), normal + bt y (4), tangent + bt z (4)."""
    flags = VERTEX | UV | NORMAL | TANGENT
    desc = 7 | (4 << 8) | (5 << 16) | (6 << 20) | (flags << 44)
    out = bytearray(b"Gamebryo File Format, Version 20.2.0.7\n")
    out += struct.pack("<IBIII", 0x14020007, 1, 12, 1, 100)
    out += b"\x01\x00" * 3  # author, process script, export script (no max filepath below 103)
    out += struct.pack("<HI", 1, 10) + b"BSTriShape"
    block = bytearray()
    block += struct.pack("<iIi", 0, 0, -1)  # name "shape", no extra data, no controller
    block += struct.pack("<I3f9ff", 14, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0, 0, 1, 2.0)  # rotated and scaled
    block += struct.pack("<i", -1)
    block += struct.pack("<4f", 0, 0, 0, 1e6)
    block += struct.pack("<3iQHHI", -1, -1, -1, desc, len(triangles), len(positions), 28 * len(positions) + 6 * len(triangles))
    for (x, y, z), (u, v), (n, t) in zip(positions, uvs, normal_bytes):
        block += struct.pack("<4f2e", x, y, z, 0.5, u, v) + bytes(n) + bytes(t)
    for tri in triangles:
        block += struct.pack("<3H", *tri)
    block += struct.pack("<I", 0)  # no particle data
    out += struct.pack("<HI", 0, len(block))
    out += struct.pack("<II", 1, 5) + struct.pack("<I", 5) + b"shape"
    out += struct.pack("<I", 0)  # groups
    out += block + struct.pack("<Ii", 1, 0)
    return bytes(out), desc


def test_full_precision_sse():
    positions = [(1234.5678, -0.1234567, 70000.25), (1e-8, 3.3333333, -98765.4), (0.1, 0.2, 0.3)]
    uvs = [(0.25, 0.75), (1.5, -0.5), (0.0, 1.0)]
    normal_bytes = [
        ((128, 128, 255, 64), (255, 128, 128, 192)),
        ((0, 128, 128, 4), (128, 255, 128, 8)),
        ((128, 128, 0, 0), (128, 0, 128, 255)),
    ]
    triangles = [(0, 1, 2), (2, 1, 0)]
    data, desc = minimal_sse_file(positions, uvs, normal_bytes, triangles)

    nif = NifFile.from_bytes(data)
    assert nif.header.bs_version == 100 and nif.header.game == "SSE"
    block = nif.blocks[0]
    assert block.vertex_desc == desc and block.full_precision
    np.testing.assert_array_equal(block.positions, np.array(positions, np.float32))  # not halves
    np.testing.assert_array_equal(block.uvs, np.array(uvs, np.float32))
    expected_normals = np.array([[unorm(b) for b in n[:3]] for n, _ in normal_bytes])
    np.testing.assert_allclose(block.normals, expected_normals, rtol=0, atol=1e-6)
    np.testing.assert_allclose(block.tangents, [[unorm(b) for b in t[:3]] for _, t in normal_bytes], rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        block.bitangents, [[0.5, unorm(n[3]), unorm(t[3])] for n, t in normal_bytes], rtol=0, atol=1e-6
    )
    np.testing.assert_array_equal(block.triangles, np.array(triangles, np.uint16))
    assert block.colors is None and block.bone_weights is None and block.eye_data is None

    header = parse_header(data)
    shape = walk_tri_shape(data, header["offsets"][0], 100, "<")
    assert shape["rotation"] != (1, 0, 0, 0, 1, 0, 0, 0, 1) and shape["scale"] == 2.0
    check_shape(data, header, 0, "BSTriShape", shape, block)
    assert nif.to_bytes() == data

