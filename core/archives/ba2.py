"""BA2 archives (``BTDX``): Fallout 4's and Fallout 76's (versions 1, 7 and 8) and Starfield's
(versions 2 and 3). GNRL archives hold files stored or packed; DX10 archives hold textures as
mip chunks without their .dds header, which extraction rebuilds (dds.py). The record table and
the name table are read when the archive is opened; file data only when a file is extracted.

Starfield's header goes on after version 1's 24 bytes: a u64 (1) from version 2, then from
version 3 a u32 naming how pieces are packed, 0 zlib or 3 LZ4 blocks (raw, no frame). Records
and chunks keep version 1's layout."""

import numpy as np

from .archive import FIRST_READ, Archive, Entry
from .dds import FORMATS, dds_header
from .lz4 import decompress_raw

VERSIONS = (1, 2, 3, 7, 8)
HEADER = np.dtype([("magic", "S4"), ("version", "<u4"), ("type", "S4"), ("count", "<u4"), ("names", "<u8")])
HEADER_SIZES = {2: 32, 3: 36}  # Starfield's; the others', HEADER's 24 bytes
COMPRESSION_AT = 32  # version 3's u32
COMPRESSIONS = {0: "zlib", 3: "lz4"}
GNRL_RECORD = np.dtype([
    ("name_hash", "<u4"), ("ext", "S4"), ("dir_hash", "<u4"), ("flags", "<u4"),
    ("offset", "<u8"), ("packed", "<u4"), ("size", "<u4"), ("sentinel", "<u4"),
])
DX10_RECORD = np.dtype([
    ("name_hash", "<u4"), ("ext", "S4"), ("dir_hash", "<u4"), ("unknown", "u1"), ("chunk_count", "u1"),
    ("chunk_header_size", "<u2"), ("height", "<u2"), ("width", "<u2"), ("mip_count", "u1"),
    ("format", "u1"), ("flags", "u1"), ("tile_mode", "u1"),
])
DX10_CHUNK = np.dtype([
    ("offset", "<u8"), ("packed", "<u4"), ("size", "<u4"), ("first_mip", "<u2"), ("last_mip", "<u2"), ("sentinel", "<u4"),
])
CUBEMAP_FLAG = 0x1
CHUNK_COUNT_AT = DX10_RECORD.fields["chunk_count"][1]
TEXTURE_GUESS = DX10_RECORD.itemsize + 3 * DX10_CHUNK.itemsize  # table bytes of a texture, as first guessed
# The .dds header's length per format: the legacy one, or with the DX10 extension.
DDS_HEADER_SIZES = {dxgi: len(dds_header(dxgi, 4, 4, 1, False)) for dxgi in FORMATS}
MAX_NAME = 0xFFFF


class Ba2Archive(Archive):
    kind = "BA2"

    def _read_directory(self):
        header = np.frombuffer(self.read_at(0, HEADER.itemsize, "header"), HEADER)[0]
        self.version = int(header["version"])
        if self.version not in VERSIONS:
            raise self.error(f"BA2 version {self.version} is not supported (only {', '.join(map(str, VERSIONS))})")
        self.type = header["type"].decode("ascii", "replace")
        self.table_start = HEADER_SIZES.get(self.version, HEADER.itemsize)
        self.compression = "zlib"
        if self.version == 3:
            method = int.from_bytes(self.read_at(COMPRESSION_AT, 4, "compression method"), "little")
            if method not in COMPRESSIONS:
                raise self.error(f"compression method {method} is not supported (0 zlib, 3 LZ4)")
            self.compression = COMPRESSIONS[method]
        count = int(header["count"])
        if self.type == "GNRL":
            records = self._records(count, GNRL_RECORD)
            # Whole columns at once: the base game's archives hold up to some 100k files each.
            self._check_data(records)
            sizes = records["size"].tolist()
            locations = list(zip(records["offset"].tolist(), records["packed"].tolist(), sizes))
        elif self.type == "DX10":
            locations, sizes = self._textures(count)
        else:
            raise self.error(f"BA2 type {self.type!r} is not supported (GNRL or DX10)")
        for path, location, size in zip(self._names(int(header["names"]), count), locations, sizes):
            self.add(Entry(path, size, location))

    def _records(self, count, dtype):
        end = self.table_start + count * dtype.itemsize
        if end > self.file_size:
            raise self.error(f"{count} {self.type} records do not fit in the file ({self.file_size} bytes)")
        # The data lies after the table: the first records say where it starts, so a damaged
        # count that still fits in the file is refused before the rest is read.
        first = min(count, FIRST_READ // dtype.itemsize)
        head = np.frombuffer(self.read_at(self.table_start, first * dtype.itemsize, "record table"), dtype)
        stored = head[(head["packed"] > 0) | (head["size"] > 0)]
        data_start = int(stored["offset"].min()) if len(stored) else self.file_size
        if end > data_start:
            raise self.error(f"{count} {self.type} records run into the files' data at {data_start}")
        rest = self.read_at(self.table_start + first * dtype.itemsize, (count - first) * dtype.itemsize, "record table")
        return np.concatenate([head, np.frombuffer(rest, dtype)])

    def _check_data(self, pieces, files=None):
        """Every piece's stored bytes (GNRL records, DX10 chunks) lie inside the file; ``files``:
        the file of each piece (default: its index). Unsigned arithmetic that cannot wrap: the
        offset inside the file, then the bytes after it."""
        offsets, packed, size = pieces["offset"], pieces["packed"].astype(np.uint64), pieces["size"].astype(np.uint64)
        stored = np.where(packed > 0, packed, size)
        outside = (offsets > self.file_size) | (stored > self.file_size - np.minimum(offsets, self.file_size))
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            index = first if files is None else int(files[first])
            raise self.error(f"file {index}: its {stored[first]} bytes at {offsets[first]} run past the end of the file "
                             f"({self.file_size} bytes)")

    def _textures(self, count):
        # Records have their chunks after them: the table is read in pieces of growing size,
        # walked over the chunk counts to find the records, then taken apart as whole arrays
        # (the base game's archives hold thousands). The data lies after the table, so a walk
        # reaching a chunk's data (a damaged count) stops there instead of reading on.
        if self.table_start + count * DX10_RECORD.itemsize > self.file_size:
            raise self.error(f"{count} DX10 records do not fit in the file ({self.file_size} bytes)")
        table, at, starts, data_start = b"", 0, [], self.file_size
        for index in range(count):
            end = at + DX10_RECORD.itemsize
            if end > len(table):
                table = self._texture_table(table, end, index, count)
            chunk_count = table[at + CHUNK_COUNT_AT]
            if chunk_count:
                end += chunk_count * DX10_CHUNK.itemsize
                if end > len(table):
                    table = self._texture_table(table, end, index, count)
                first_chunk = at + DX10_RECORD.itemsize  # its data offset comes first
                data_start = min(data_start, int.from_bytes(table[first_chunk:first_chunk + 8], "little"))
            if self.table_start + end > data_start:
                raise self.error(f"texture {index}'s record and chunks run into texture data at {data_start}")
            starts.append(at)
            at = end
        data = np.frombuffer(table, np.uint8)
        starts = np.array(starts, np.int64)
        records = data[starts[:, None] + np.arange(DX10_RECORD.itemsize)].view(DX10_RECORD)[:, 0]
        counts = records["chunk_count"].astype(np.int64)
        owners = np.repeat(np.arange(count), counts)  # the texture of each chunk
        numbers = np.arange(len(owners)) - np.repeat(np.cumsum(counts) - counts, counts)
        chunk_starts = starts[owners] + DX10_RECORD.itemsize + numbers * DX10_CHUNK.itemsize
        chunks = data[chunk_starts[:, None] + np.arange(DX10_CHUNK.itemsize)].view(DX10_CHUNK)[:, 0]
        self._check_data(chunks, owners)
        headers = np.array([DDS_HEADER_SIZES.get(int(dxgi), 0) for dxgi in records["format"]], np.int64)
        sizes = headers + np.bincount(owners, weights=chunks["size"], minlength=count).astype(np.int64)
        locations = list(zip(records, np.split(chunks, np.cumsum(counts)[:-1])))
        return locations, sizes.tolist()

    def _texture_table(self, table, needed, index, count):
        """The texture table of ``count`` textures read further than ``table``: its first
        ``needed`` bytes at least, twice as many as before (at first a guess, at most
        FIRST_READ) while the file lasts."""
        first = min(count * TEXTURE_GUESS, FIRST_READ)
        wanted = max(needed, min(max(2 * len(table), first), self.file_size - self.table_start))
        return self.read_at(self.table_start, wanted, f"texture {index}'s record and chunks")

    def _names(self, offset, count):
        if count == 0:  # an empty archive may end before its (empty) name table
            return []
        if offset == 0 or offset >= self.file_size:
            raise self.error(f"name table offset {offset} lies outside the file ({self.file_size} bytes)")
        # Bounded by the longest names possible, so a damaged count cannot make it read gigabytes.
        table = self.read_at(offset, min(self.file_size - offset, count * (2 + MAX_NAME)), "name table")
        # Decoded once: cp1252 gives one character per byte, so the text's offsets are the bytes'.
        text = table.decode("cp1252", "replace").replace("\\", "/")
        names, at, end = [], 0, len(table)
        for index in range(count):
            if at + 2 > end:
                raise self.error(f"name table ends after {index} of {count} names")
            start = at + 2
            at = start + (table[at] | table[at + 1] << 8)
            if at > end:
                raise self.error(f"name {index} runs past the end of the file")
            names.append(text[start:at])
        return names

    @staticmethod
    def _header(record):
        return dds_header(int(record["format"]), int(record["width"]), int(record["height"]),
                          int(record["mip_count"]), bool(record["flags"] & CUBEMAP_FLAG))

    def _piece(self, entry, offset, packed, size):
        if packed and self.compression == "lz4":
            return decompress_raw(self.read_at(offset, packed, entry.path), size, self.error, entry.path)
        if packed:
            return self.inflate(self.read_at(offset, packed, entry.path), size, entry.path)
        return self.read_at(offset, size, entry.path)

    def _extract(self, entry):
        if self.type == "GNRL":
            return self._piece(entry, *entry.location)
        record, chunks = entry.location
        if int(record["format"]) not in FORMATS:
            raise self.error(f"{entry.path}: DXGI format {int(record['format'])} is not supported")
        parts = [self._header(record)]
        for chunk in chunks:
            parts.append(self._piece(entry, int(chunk["offset"]), int(chunk["packed"]), int(chunk["size"])))
        return b"".join(parts)
