"""Precombined geometry files (CSG-NOTES): ``.csg`` (zlib chunks of 64 KiB) and ``.psg``
(uncompressed), both a 20-byte object table and a "geometry space" that record data offsets
index. Only the chunks a read touches are inflated.

At a data offset: ``num verts`` vertices whose positions are always half floats, then
(LOD0 + LOD1 + LOD2) * 3 u16 indices.
"""

import zlib
from pathlib import Path

import numpy as np

from ..errors import FormatError
from ..files import write_replacing
from ..nif import vertex_format as vf

CHUNK_SIZE = 0x10000
ZLIB_LEVEL = 6  # the Creation Kit's: re-deflating its chunks at level 6 gives its bytes
ROW = np.dtype([("data_offset", "<u4"), ("vertex_desc", "<u8"), ("vertex_count", "<u4"), ("index_count", "<u4")])
CHUNK_ENTRY = np.dtype([("size", "<u4"), ("offset", "<u4")])


def on_disk_desc(desc):
    """The descriptor of the bytes actually stored: half positions. Retail descriptors claim
    full precision (position block 16 bytes) while 8 are stored, so every attribute moves
    down 8 bytes; a plain half-precision descriptor is already right."""
    flags = vf.flags_of(desc)
    if not flags & vf.FULL_PRECISION:
        return desc
    moved = desc & ~0xF | ((desc & 0xF) - 2)
    for nibble in range(2, 10):
        offset = (desc >> (4 * nibble)) & 0xF
        if offset >= 4:
            moved = moved & ~(0xF << (4 * nibble)) | ((offset - 2) << (4 * nibble))
    return moved & ~(vf.FULL_PRECISION << 44)


class GeometryFile:
    """A .csg or .psg file opened for random access to its geometry space."""

    def __init__(self, path):
        self.path = Path(path)
        self._handle = open(self.path, "rb")
        try:
            self._read_tables()
        except FormatError as error:
            self._handle.close()
            raise error.located(path=self.path) from None
        except BaseException:
            self._handle.close()
            raise
        self._chunks = {}

    def close(self):
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_exact(self, offset, size, what):
        self._handle.seek(offset)
        data = self._handle.read(size)
        if len(data) != size:
            raise FormatError(f"truncated: {what} needs {size} bytes", offset=offset)
        return data

    def _read_tables(self):
        file_size = self.path.stat().st_size
        magic = self._read_exact(0, 4, "magic")
        if magic == b"bcsg":
            objects, chunks = np.frombuffer(self._read_exact(4, 8, "header"), "<u4")
            if 8 * int(chunks) + 20 * int(objects) > file_size:
                raise FormatError(f"{objects} objects and {chunks} chunks cannot fit in {file_size} bytes", offset=4)
            table = np.frombuffer(self._read_exact(12, 8 * int(chunks), "chunk table"), CHUNK_ENTRY)
            self.chunk_sizes, self.chunk_offsets = table["size"].astype(np.int64), table["offset"].astype(np.int64)
            if len(table) and (self.chunk_offsets + self.chunk_sizes > file_size).any():
                raise FormatError("a chunk lies past the end of the file", offset=12)
            rows_at = 12 + 8 * int(chunks)
            self.compressed = True
        elif magic == b"bpsg":
            (objects,) = np.frombuffer(self._read_exact(4, 4, "header"), "<u4")
            if 20 * int(objects) > file_size:
                raise FormatError(f"{objects} objects cannot fit in {file_size} bytes", offset=4)
            rows_at = 8
            self.compressed = False
            self.space_offset = 8 + 20 * int(objects)
            self.space_size = file_size - self.space_offset
        else:
            raise FormatError(f"not a precombined geometry file (magic {magic!r}, expected b'bcsg' or b'bpsg')", offset=0)
        self.rows = np.frombuffer(self._read_exact(rows_at, 20 * int(objects), "object table"), ROW)
        if self.compressed:
            self.space_size = CHUNK_SIZE * len(self.chunk_sizes)  # an upper bound: the last chunk is shorter

    def _chunk(self, index):
        chunk = self._chunks.get(index)
        if chunk is None:
            raw = self._read_exact(int(self.chunk_offsets[index]), int(self.chunk_sizes[index]), f"chunk {index}")
            try:
                inflater = zlib.decompressobj()
                chunk = inflater.decompress(raw, CHUNK_SIZE + 1)
            except zlib.error as error:
                raise FormatError(f"chunk {index} does not inflate: {error}", offset=int(self.chunk_offsets[index])) from None
            if len(chunk) > CHUNK_SIZE or (len(chunk) < CHUNK_SIZE and index != len(self.chunk_sizes) - 1):
                raise FormatError(f"chunk {index} inflates to {len(chunk)} bytes, not {CHUNK_SIZE}")
            self._chunks[index] = chunk
        return chunk

    def whole_space(self):
        """The geometry space, every chunk inflated."""
        if not self.compressed:
            return self._read_exact(self.space_offset, self.space_size, "geometry")
        return b"".join(self._chunk(i) for i in range(len(self.chunk_sizes)))

    def read_space(self, offset, size):
        """``size`` bytes of the geometry space from ``offset``."""
        if offset < 0 or offset + size > self.space_size:
            raise FormatError(f"geometry at {offset} (+{size} bytes) lies outside the file's geometry space")
        if not self.compressed:
            return self._read_exact(self.space_offset + offset, size, "geometry")
        first, last = offset // CHUNK_SIZE, (offset + max(size, 1) - 1) // CHUNK_SIZE
        joined = b"".join(self._chunk(i) for i in range(first, last + 1))
        start = offset - first * CHUNK_SIZE
        if start + size > len(joined):
            raise FormatError(f"geometry at {offset} (+{size} bytes) runs past the last chunk")
        return joined[start : start + size]

    def record_geometry(self, data_offset, vertex_desc, num_vertices, lod_counts):
        """(vertex array, triangles) of a record: half positions whatever the desc says."""
        desc = on_disk_desc(vertex_desc)
        dtype = vf.vertex_dtype(desc, False)
        count = sum(lod_counts)
        data = self.read_space(int(data_offset), dtype.itemsize * num_vertices + 6 * count)
        buffer = bytearray(data)
        vertices = np.frombuffer(buffer, dtype, num_vertices)
        triangles = np.frombuffer(buffer, np.dtype(("<u2", (3,))), count, dtype.itemsize * num_vertices)
        if count and int(triangles.max()) >= num_vertices:
            raise FormatError(f"geometry at {data_offset}: a triangle uses vertex {int(triangles.max())} of {num_vertices}")
        return desc, vertices, triangles


class GeometryFiles:
    """Geometry files opened once each (by path) and closed together: the import's, whose
    records of many cells share a few files, and the export's, reading back what records were
    imported from."""

    def __init__(self):
        self._files = {}

    def open(self, path):
        if path not in self._files:
            self._files[path] = GeometryFile(path)
        return self._files[path]

    def close(self):
        for geometry in self._files.values():
            geometry.close()
        self._files.clear()


def record_bytes(vertex_data, triangles):
    """What a record's data offset points at: its packed vertices, then every LOD's indices."""
    return vertex_data.tobytes() + np.ascontiguousarray(triangles, "<u2").tobytes()


class GeometryWriter:
    """A .csg being assembled: the rows and geometry space of an existing file (or none), then
    appended records; identical geometry already stored is shared, not stored again."""

    def __init__(self, source=None):
        self.rows = [tuple(int(v) for v in row) for row in source.rows] if source is not None else []
        self.space = bytearray(source.whole_space() if source is not None else b"")
        self._stored = {}  # (desc, vertex count, index count) -> offsets holding such a record
        for offset, *layout in self.rows:
            self._stored.setdefault(tuple(layout), []).append(offset)

    def add(self, vertex_desc, num_vertices, index_count, data):
        """The data offset of a record's bytes, appended unless the same bytes are stored."""
        layout = (vertex_desc, num_vertices, index_count)
        for offset in self._stored.get(layout, ()):
            if self.space[offset : offset + len(data)] == data:
                return offset
        offset = len(self.space)
        if offset + len(data) > 0xFFFFFFFF:
            raise FormatError("the geometry file would outgrow the 4 GiB its u32 offsets can address")
        self.space += data
        self.rows.append((offset, *layout))
        self._stored.setdefault(layout, []).append(offset)
        return offset

    def to_bytes(self):
        """bcsg: counts, chunk table, object table, then the space in 64 KiB zlib chunks."""
        chunks = [zlib.compress(bytes(self.space[i : i + CHUNK_SIZE]), ZLIB_LEVEL) for i in range(0, len(self.space), CHUNK_SIZE)]
        rows = np.array(self.rows, ROW) if self.rows else np.zeros(0, ROW)
        table = np.zeros(len(chunks), CHUNK_ENTRY)
        table["size"] = [len(chunk) for chunk in chunks]
        start = 12 + CHUNK_ENTRY.itemsize * len(chunks) + ROW.itemsize * len(rows)
        table["offset"] = start + np.concatenate([[0], np.cumsum(table["size"][:-1], dtype=np.int64)])[: len(chunks)]
        header = b"bcsg" + np.array([len(rows), len(chunks)], "<u4").tobytes()
        return header + table.tobytes() + rows.tobytes() + b"".join(chunks)

    def write(self, path):
        write_replacing(path, self.to_bytes())
