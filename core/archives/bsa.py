"""Oblivion-era (version 103, which New Vegas also loads and mods still ship), Fallout 3 / New
Vegas (version 104) and Skyrim SE (version 105) BSA archives. Versions 103 and 104 pack files
with zlib, 105 with LZ4 frames; any can store files whole. Version 103 shares 104's layout, but
its flag 0x100 does not embed names (Oblivion-era archives set it with another meaning). The
folder and file tables are read when the archive is opened, file data only when a file is
extracted."""

import numpy as np

from .archive import FIRST_READ, Archive, Entry
from .lz4 import decompress_frame
from ..errors import FormatError

HEADER = np.dtype([
    ("magic", "S4"), ("version", "<u4"), ("folder_offset", "<u4"), ("flags", "<u4"), ("folder_count", "<u4"),
    ("file_count", "<u4"), ("folder_names_length", "<u4"), ("file_names_length", "<u4"), ("file_flags", "<u2"),
    ("padding", "<u2"),
])
FOLDER_RECORD_32 = np.dtype([("hash", "<u8"), ("count", "<u4"), ("offset", "<u4")])
FOLDER_RECORD = {
    103: FOLDER_RECORD_32,
    104: FOLDER_RECORD_32,
    105: np.dtype([("hash", "<u8"), ("count", "<u4"), ("padding", "<u4"), ("offset", "<u8")]),
}
FILE_RECORD = np.dtype([("hash", "<u8"), ("size", "<u4"), ("offset", "<u4")])
HAS_FOLDER_NAMES, HAS_FILE_NAMES, COMPRESSED, EMBEDDED_NAMES = 0x1, 0x2, 0x4, 0x100
FIRST_EMBEDDING_VERSION = 104  # the first version whose flag 0x100 embeds names in the data
SIZE_MASK, COMPRESSION_TOGGLE = 0x3FFFFFFF, 0x40000000


class BsaArchive(Archive):
    kind = "BSA"

    def _read_directory(self):
        header = np.frombuffer(self.read_at(0, HEADER.itemsize, "header"), HEADER)[0]
        self.version = int(header["version"])
        folder_record = FOLDER_RECORD.get(self.version)
        if folder_record is None:
            raise self.error(
                f"BSA version {self.version} is not supported (103: Oblivion-era, 104: Fallout 3 / New Vegas, "
                f"105: Skyrim SE)"
            )
        self.flags = int(header["flags"])
        self.embedded_names = self.version >= FIRST_EMBEDDING_VERSION and bool(self.flags & EMBEDDED_NAMES)
        if not self.flags & HAS_FILE_NAMES or not self.flags & HAS_FOLDER_NAMES:
            raise self.error("the archive does not store its folder and file names")
        folders, files = int(header["folder_count"]), int(header["file_count"])
        names_length = int(header["file_names_length"])
        # Folder records, then per folder its name (length byte, text, NUL) and file records,
        # then the file names: all sizes the header gives, checked before reading.
        start = int(header["folder_offset"])
        size = (folders * folder_record.itemsize + folders + int(header["folder_names_length"])
                + files * FILE_RECORD.itemsize + names_length)
        if start + size > self.file_size:
            raise self.error(f"{folders} folders and {files} files do not fit in the file ({self.file_size} bytes)")
        if size > FIRST_READ:  # damaged counts may still fit in a large archive
            self._check_table_end(start, start + size, folder_record, folders)
        table = self.read_at(start, size, "folder and file tables")
        counts = np.frombuffer(table, folder_record, folders)["count"].astype(np.int64)
        if counts.sum() != files:
            raise self.error(f"the folders hold {counts.sum()} files, the header says {files}")
        # Decoded once: cp1252 gives one character per byte.
        file_names = table[len(table) - names_length:].decode("cp1252", "replace").split("\0")
        if len(file_names) < files + 1:
            raise self.error(f"{len(file_names) - 1} file names for {files} files")
        at = folders * folder_record.itemsize
        folder_names, record_starts = [], []
        for folder, count in enumerate(counts.tolist()):
            if at >= len(table) - names_length:
                raise self.error(f"folder {folder}: its name runs past the table")
            length = table[at]
            folder_names.append(table[at + 1:at + length].rstrip(b"\0").decode("cp1252", "replace"))
            at += 1 + length
            if at + count * FILE_RECORD.itemsize > len(table) - names_length:
                raise self.error(f"folder {folder} ({folder_names[-1]}): its file records run past the table")
            record_starts.append(at)
            at += count * FILE_RECORD.itemsize
        # The file records of every folder as whole columns (the base games' archives hold up to
        # some 100k files).
        owners = np.repeat(np.arange(folders), counts)  # the folder of each file
        numbers = np.arange(files) - np.repeat(np.cumsum(counts) - counts, counts)
        starts = np.array(record_starts, np.int64)[owners] + numbers * FILE_RECORD.itemsize
        data = np.frombuffer(table, np.uint8)
        records = data[starts[:, None] + np.arange(FILE_RECORD.itemsize)].view(FILE_RECORD)[:, 0]
        size_fields, offsets = records["size"].astype(np.int64), records["offset"].astype(np.int64)
        outside = np.flatnonzero(offsets + (size_fields & SIZE_MASK) > self.file_size)
        if len(outside):
            index = int(outside[0])
            path = f"{folder_names[owners[index]]}/{file_names[index]}"
            raise self.error(f"file {index} ({path}): its {size_fields[index] & SIZE_MASK} bytes at {offsets[index]} "
                             f"run past the end of the file")
        for owner, name, size_field, offset in zip(owners.tolist(), file_names, size_fields.tolist(), offsets.tolist()):
            self._add_file(f"{folder_names[owner]}/{name}".replace("\\", "/"), size_field, offset)

    def _check_table_end(self, start, end, folder_record, folders):
        """The tables end before the files' data, which the first folder's first file record
        locates: counts that still fit in the file but run into the data are refused before the
        whole table (up to the archive's size) is read."""
        folders_end = folders * folder_record.itemsize
        first_record_end = folders_end + 1 + 255 + FILE_RECORD.itemsize  # the longest first folder name
        if first_record_end > FIRST_READ:
            return  # some 40k folders: the table is read whole
        piece = self.read_at(start, first_record_end, "folder table")
        if np.frombuffer(piece, folder_record, 1)[0]["count"] == 0:
            return
        record = np.frombuffer(piece, FILE_RECORD, 1, folders_end + 1 + piece[folders_end])[0]
        data_start = int(record["offset"])
        if int(record["size"]) & SIZE_MASK and end > data_start:
            raise self.error(f"its folder and file tables ({end - start} bytes) run into the files' data at {data_start}")

    def _add_file(self, path, size_field, offset):
        stored = size_field & SIZE_MASK
        packed = bool(self.flags & COMPRESSED) != bool(size_field & COMPRESSION_TOGGLE)
        # A packed file's size sits in its data: unknown until it is extracted.
        size = None if packed or self.embedded_names else stored
        self.add(Entry(path, size, (offset, stored, packed)))

    def _prefix(self, entry):
        """Bytes before the file's own data: the embedded name, then the unpacked size."""
        offset, stored, packed = entry.location
        skip = 0
        if self.embedded_names:
            skip = 1 + self.read_at(offset, 1, f"{entry.path}: embedded name")[0]
        size = None
        if packed:
            size = int.from_bytes(self.read_at(offset + skip, 4, f"{entry.path}: unpacked size"), "little")
            skip += 4
        if skip > stored:
            raise self.error(f"{entry.path}: stored size {stored} is smaller than its header")
        return skip, stored - skip if size is None else size

    def _extract(self, entry):
        offset, stored, packed = entry.location
        skip, size = self._prefix(entry)
        data = self.read_at(offset + skip, stored - skip, entry.path)
        if not packed:
            return data
        if self.version < 105:
            return self.inflate(data, size, entry.path)
        try:
            return decompress_frame(data, size)
        except FormatError as error:
            raise self.error(f"{entry.path}: {error.message}") from None
