"""Fallout 4 / Skyrim SE plugin files: a 24-byte header per record (type, data size, flags,
FormID, version control, form version) and per group (``GRUP``, total size, label, group
type, ...). Opening a plugin walks the headers only and indexes records by FormID; a record's
fields (4-byte type, u16 size; ``XXXX`` gives the next field a u32 size) are read when asked,
inflated first when the record is compressed."""

import mmap
import struct
import zlib

from ..errors import FormatError
from ..stream import decode_text

HEADER = struct.Struct("<4sIII4xHH")  # type, size, flags, FormID, (version control), form version, unknown
HEADER_SIZE = 24
FIELD = struct.Struct("<4sH")
COMPRESSED = 0x00040000
GROUP = b"GRUP"
INFLATED_LIMIT = 64 << 20  # a record's fields; a header claiming more is damaged


def inflate(label, form_id, flags, body):
    """A record's field bytes, inflated when the record is compressed (u32 size, zlib data)."""
    if not flags & COMPRESSED:
        return body
    if len(body) < 4:
        raise FormatError(f"{label} {form_id:08X}: compressed record without its size")
    expected = int.from_bytes(body[:4], "little")
    if expected > INFLATED_LIMIT:
        raise FormatError(f"{label} {form_id:08X}: claims {expected} bytes inflated")
    try:
        data = zlib.decompressobj().decompress(body[4:], expected + 1)  # never more than claimed
    except zlib.error as error:
        raise FormatError(f"{label} {form_id:08X}: damaged zlib data ({error})") from None
    if len(data) != expected:
        size = f"more than {expected}" if len(data) > expected else len(data)
        raise FormatError(f"{label} {form_id:08X}: inflates to {size} bytes, its header says {expected}")
    return data


def iter_fields(label, form_id, data):
    """(type as bytes, start, size) of each field of a record's field bytes, in file order;
    ``XXXX`` gives the next field a u32 size."""
    at, next_size = 0, None
    while at < len(data):
        if at + 6 > len(data):
            raise FormatError(f"{label} {form_id:08X}: field header at {at} runs past the record")
        kind, size = FIELD.unpack_from(data, at)
        at += 6
        if next_size is not None:
            size, next_size = next_size, None
        if at + size > len(data):
            name = kind.decode("ascii", "replace")
            raise FormatError(f"{label} {form_id:08X}: field {name} of {size} bytes runs past the record")
        if kind == b"XXXX":
            next_size = int.from_bytes(data[at:at + 4], "little")
        else:
            yield kind, at, size
        at += size


class Record:
    """One record: ``type`` (str), ``form_id`` (as stored: its top byte indexes the masters),
    ``flags`` and ``fields``: [(type, bytes)] in file order."""

    def __init__(self, type, form_id, flags, fields):
        self.type = type
        self.form_id = form_id
        self.flags = flags
        self.fields = fields

    def field(self, name):
        """The bytes of the first field ``name``, or None."""
        return next((data for kind, data in self.fields if kind == name), None)

    def text(self, name):
        data = self.field(name)
        return None if data is None else decode_text(bytes(data).split(b"\0", 1)[0])


CELL_CHILDREN = (8, 9, 10)  # persistent, temporary and visible-when-distant children groups: label the CELL


class Plugin:
    """A plugin file opened read-only: its masters and where each record is. ``records`` maps
    a FormID as stored in this file to (type, offset of the record header); ``cell_of`` maps
    the FormID of a record inside a cell's children groups to that CELL's FormID."""

    def __init__(self, path):
        self.path = str(path)
        try:
            with open(self.path, "rb") as handle:
                self._data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if handle.seek(0, 2) else b""
        except OSError as error:
            raise FormatError(f"cannot be read: {error.strerror}", path=self.path) from None
        try:
            header = self._read_record(0)
            if header.type not in ("TES4", "TES3"):
                raise FormatError(f"not a plugin (first record {header.type!r}, not TES4)")
            self.header = header
            self.masters = [decode_text(bytes(data).rstrip(b"\0")) for kind, data in header.fields if kind == "MAST"]
            self.records = {}
            self.cell_of = {}
            self._index(HEADER_SIZE + self._header(0)[1], len(self._data), None)
        except FormatError as error:
            raise error.located(path=self.path) from None

    @property
    def name(self):
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]

    def local_index(self):
        """The top byte of this plugin's own FormIDs: the number of its masters."""
        return len(self.masters)

    def _header(self, at):
        if at + HEADER_SIZE > len(self._data):
            raise FormatError(f"record header at {at} runs past the end of the file ({len(self._data)} bytes)")
        return HEADER.unpack_from(self._data, at)

    def _index(self, at, end, cell):
        while at < end:
            kind, size, flags, form_id, _, _ = self._header(at)
            if kind == GROUP:
                if size < HEADER_SIZE or at + size > end:
                    raise FormatError(f"group at {at} has a size of {size} that does not fit its parent")
                # A group header's label and type sit where a record's flags and FormID do; the label
                # of a cell's children groups is the CELL.
                label, group_type = flags, form_id
                self._index(at + HEADER_SIZE, at + size, label if group_type in CELL_CHILDREN else cell)
                at += size
                continue
            if at + HEADER_SIZE + size > end:
                raise FormatError(f"record {form_id:08X} at {at}: its {size} bytes run past its group")
            if form_id not in self.records:
                self.records[form_id] = (kind.decode("ascii", "replace"), at)
                if cell is not None:
                    self.cell_of[form_id] = cell
            at += HEADER_SIZE + size

    def record(self, form_id):
        """The Record with this FormID (as stored in this file), or None."""
        found = self.records.get(form_id)
        if found is None:
            return None
        try:
            return self._read_record(found[1])
        except FormatError as error:
            raise error.located(path=self.path) from None

    def _read_record(self, at):
        kind, size, flags, form_id, _, _ = self._header(at)
        data = self._data[at + HEADER_SIZE:at + HEADER_SIZE + size]
        if len(data) != size:
            raise FormatError(f"record {form_id:08X} runs past the end of the file")
        label = kind.decode("ascii", "replace")
        data = inflate(label, form_id, flags, data)
        return Record(label, form_id, flags, self._fields(label, form_id, data))

    @staticmethod
    def _fields(label, form_id, data):
        return [(name.decode("ascii", "replace"), bytes(data[start:start + size]))
                for name, start, size in iter_fields(label, form_id, data)]

    def close(self):
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
