"""Precombined cell decode speed: the codec against a straightforward per-vertex
``struct.unpack`` reader of the same layout, in one run.

    python benchmarks/precombined_decode.py [OBJECTS VERTICES TRIANGLES INSTANCES]

Default cell: 200 objects x 5000 vertices x 8000 triangles x 50 instances (about 37 MB,
10k instances), inline layout, stride-20 vertices. "Full decode" parses the NIF and decodes
every vertex attribute, every LOD's triangles and every instance matrix.
"""

import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.nif import NifFile, RawBlock  # noqa: E402
from precombined_nif.core.nif.blocks.nodes import NiNode  # noqa: E402
from precombined_nif.core.nif.blocks.precombined import instance_matrices  # noqa: E402
from precombined_nif.core.nif.header import Header  # noqa: E402

DESC = 0x0041B00000650407  # full-precision positions + bitangent x, UV, normal, tangent: stride 28
STRIDE = 28


def build_cell(objects, vertices, triangles, instances):
    rng = np.random.default_rng(1)
    body = [struct.pack("<iQ5I", -1, DESC, objects * vertices, objects * triangles, 0, 0, objects)]
    record_size = vertices * STRIDE + triangles * 6
    entries = [(0xDDF19A67, index * record_size) for index in range(objects)]  # as vanilla: one .csg, own offsets
    body.append(np.array(entries, "<u4").tobytes())
    lod = (triangles // 2, triangles // 4, triangles - triangles // 2 - triangles // 4)
    for _ in range(objects):
        body.append(struct.pack("<8I", vertices, 3, lod[0], 0, lod[1], 3 * lod[0], lod[2], 3 * (lod[0] + lod[1])))
        body.append(struct.pack("<I", instances))
        placements = rng.uniform(-1, 1, (instances, 18)).astype("<f4")
        body.append(placements.tobytes())
        body.append(struct.pack("<Q", DESC))
        vertex_bytes = rng.integers(0, 255, (vertices, STRIDE), dtype=np.uint8)
        vertex_bytes[:, :16] = rng.uniform(-4096, 4096, (vertices, 4)).astype("<f4").view(np.uint8)
        vertex_bytes[:, 17] &= 0x3B  # finite half UVs
        vertex_bytes[:, 19] &= 0x3B
        body.append(vertex_bytes.tobytes())
        first = rng.integers(0, vertices, triangles)  # distinct corners: valid faces for Blender
        body.append(((first[:, None] + np.array([0, 1, 2])) % vertices).astype("<u2").tobytes())
    blocks = [NiNode("BSFadeNode", name="cell", extra_data=[1]), RawBlock("BSPackedCombinedSharedGeomDataExtra", b"".join(body))]
    return NifFile(Header(), blocks, [0]).to_bytes()


def codec_decode(data):
    block = NifFile.from_bytes(data).blocks[1]
    total = 0
    for record in block.records:
        for array in (record.positions, record.uvs, record.normals, record.tangents, record.bitangents):
            total += array.size
        total += sum(record.lod_triangles(lod).size for lod in range(3))
        total += instance_matrices(record.instances).size
    return total


def read_vertex(buf, o, vsize, flags):
    """Seed 000's reference reader, vertex by vertex."""
    v = {}
    if vsize <= 16:
        if flags & 0x400:
            x, y, z, btx = struct.unpack_from("<4f", buf, o)
            o += 16
        else:
            x, y, z, btx = struct.unpack_from("<4e", buf, o)
            o += 8
    else:
        x, y, z = struct.unpack_from("<3f", buf, o)
        o += 12
        extra = (vsize - 16) // 4
        v["extra"] = struct.unpack_from(f"<{extra}f", buf, o)
        o += extra * 4
        (btx,) = struct.unpack_from("<f", buf, o)
        o += 4
    v["pos"], v["btx"] = (x, y, z), btx
    if flags & 0x2:
        v["uv"] = struct.unpack_from("<2e", buf, o)
        o += 4
    if flags & 0x8:
        nx, ny, nz, bty = struct.unpack_from("<4B", buf, o)
        o += 4
        v["normal"] = (nx / 127.5 - 1, ny / 127.5 - 1, nz / 127.5 - 1)
        v["bty"] = bty / 127.5 - 1
        if flags & 0x10:
            tx, ty, tz, btz = struct.unpack_from("<4B", buf, o)
            o += 4
            v["tangent"] = (tx / 127.5 - 1, ty / 127.5 - 1, tz / 127.5 - 1)
            v["btz"] = btz / 127.5 - 1
    if flags & 0x20:
        v["color"] = struct.unpack_from("<4B", buf, o)
        o += 4
    return v, o


def naive_decode(data):
    """What a first reader would write (seed 000's pseudocode): struct.unpack, vertex by vertex."""
    line_end = data.index(b"\n") + 1
    num_blocks = struct.unpack_from("<I", data, line_end + 9)[0]
    pos = line_end + 17
    for _ in range(4):
        pos += 1 + data[pos]
    num_types = struct.unpack_from("<H", data, pos)[0]
    pos += 2
    for _ in range(num_types):
        pos += 4 + struct.unpack_from("<I", data, pos)[0]
    pos += 2 * num_blocks
    sizes = struct.unpack_from(f"<{num_blocks}I", data, pos)
    pos += 4 * num_blocks
    num_strings = struct.unpack_from("<I", data, pos)[0]
    pos += 8
    for _ in range(num_strings):
        pos += 4 + struct.unpack_from("<I", data, pos)[0]
    pos += 4 + 4 * struct.unpack_from("<I", data, pos)[0]
    pos += sizes[0] + 4 + 8
    count = struct.unpack_from("<5I", data, pos)[4]
    pos += 20 + 8 * count
    records = []
    for _ in range(count):
        nv, lods, c0, _, c1, _, c2, _ = struct.unpack_from("<8I", data, pos)
        (ni,) = struct.unpack_from("<I", data, pos + 32)
        pos += 36
        combined = []
        for _ in range(ni):
            combined.append(struct.unpack_from("<f9f3ff3ff", data, pos))
            pos += 72
        (desc,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        vsize, flags = ((desc >> 8) & 0xFF) * 4, (desc >> 44) & 0xFFFF
        verts = []
        for _ in range(nv):
            vertex, pos = read_vertex(data, pos, vsize, flags)
            verts.append(vertex)
        total = c0 + c1 + c2
        tris = list(struct.iter_unpack("<3H", data[pos : pos + total * 6]))
        pos += total * 6
        records.append((combined, verts, tris))
    return records


def timed(function, data):
    start = time.perf_counter()
    result = function(data)
    return time.perf_counter() - start, result


def main():
    shape = tuple(int(a) for a in sys.argv[1:5]) if len(sys.argv) >= 5 else (200, 5000, 8000, 50)
    data = bytearray(build_cell(*shape))  # as NifFile.read() holds a file it has read
    print(f"cell: {shape[0]} objects x {shape[1]} vertices x {shape[2]} triangles x {shape[3]} instances, {len(data) / 1e6:.1f} MB")
    codec = min(timed(codec_decode, data)[0] for _ in range(3))
    naive, _ = timed(naive_decode, data)
    print(f"codec full decode: {codec * 1e3:.0f} ms ({len(data) / codec / 1e6:.0f} MB/s)")
    print(f"per-vertex struct.unpack reader: {naive * 1e3:.0f} ms ({len(data) / naive / 1e6:.1f} MB/s)")
    print(f"ratio naive/codec: {naive / codec:.0f}x")


if __name__ == "__main__":
    main()
