"""Fallout 4 / Skyrim SE plugin files: a 24-byte header per record (type, data size, flags,
FormID, Version Control Info 1, form version, Version Control Info 2) and per group (``GRUP``,
total size, label, group type, date stamp, ...). Opening a plugin walks the headers only and
indexes records by FormID; a record's fields (4-byte type, u16 size; ``XXXX`` gives the next
field a u32 size) are read when asked, inflated first when the record is compressed. The
header layout and the field encoding below serve reading and writing alike (file.py writes
whole plugins)."""

import mmap
import struct
import zlib

from ..errors import FormatError
from ..stream import decode_text

HEADER = struct.Struct("<4sIIIIHH")  # type, size, flags, FormID, Version Control Info 1, form version, VCI 2
HEADER_SIZE = 24
FIELD = struct.Struct("<4sH")
BIG_FIELD = b"XXXX"  # its u32 is the size of the next field, whose own size is then 0
COMPRESSED = 0x00040000
DELETED = 0x00000020
FORM_VERSION = 131  # Fallout 4's
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
        if kind == BIG_FIELD:
            next_size = int.from_bytes(data[at:at + 4], "little")
        else:
            yield kind, at, size
        at += size


def encode_fields(fields):
    """Field bytes of [(type, bytes)]: a field of more than 65535 bytes follows an ``XXXX``
    field holding its size, its own size 0."""
    out = bytearray()
    for kind, data in fields:
        name = kind.encode("ascii")
        if len(data) > 0xFFFF:
            out += FIELD.pack(BIG_FIELD, 4) + len(data).to_bytes(4, "little") + FIELD.pack(name, 0)
        else:
            out += FIELD.pack(name, len(data))
        out += data
    return bytes(out)


def deflate(data):
    """A compressed record's body: u32 inflated size, then zlib data."""
    return len(data).to_bytes(4, "little") + zlib.compress(data)


class Record:
    """One record: ``type`` (str), ``form_id`` (as stored: its top byte indexes the masters),
    ``flags``, ``fields``: [(type, bytes)] in file order, and the header's Version Control Info
    (``vci``: its low 16 bits the date of the last edit), ``form_version`` and ``vci2``. A
    record read keeps its stored body, written back as it was while its fields are unchanged
    (a compressed record's zlib stream is not the only one deflating to its fields)."""

    def __init__(self, type, form_id, flags, fields, vci=0, form_version=FORM_VERSION, vci2=0, stored=None):
        self.type = type
        self.form_id = form_id
        self.flags = flags
        self.fields = fields
        self.vci = vci
        self.form_version = form_version
        self.vci2 = vci2
        self._stored = (flags, list(fields), stored) if stored is not None else None

    def field(self, name):
        """The bytes of the first field ``name``, or None."""
        return next((data for kind, data in self.fields if kind == name), None)

    def text(self, name):
        data = self.field(name)
        return None if data is None else decode_text(bytes(data).split(b"\0", 1)[0])

    def set_field(self, name, data, before=None):
        """Replace the first field ``name`` (else insert it before the first field ``before``,
        else at the end)."""
        for index, (kind, _) in enumerate(self.fields):
            if kind == name:
                self.fields[index] = (name, bytes(data))
                return
        at = next((i for i, (kind, _) in enumerate(self.fields) if kind == before), len(self.fields))
        self.fields.insert(at, (name, bytes(data)))

    def remove_field(self, name):
        self.fields = [(kind, data) for kind, data in self.fields if kind != name]

    def body(self):
        if self._stored is not None and self._stored[:2] == (self.flags, self.fields):
            return self._stored[2]
        data = encode_fields(self.fields)
        return deflate(data) if self.flags & COMPRESSED else data

    def to_bytes(self):
        body = self.body()
        header = HEADER.pack(self.type.encode("ascii"), len(body), self.flags, self.form_id, self.vci,
                             self.form_version, self.vci2)
        return header + body

    def copy(self):
        return Record(self.type, self.form_id, self.flags, list(self.fields), self.vci, self.form_version, self.vci2)

    @classmethod
    def decode(cls, data, at=0, end=None):
        """The record whose header is at ``at`` of ``data`` (bytes or an mmap)."""
        end = len(data) if end is None else end
        if at + HEADER_SIZE > end:
            raise FormatError(f"record header at {at} runs past its end ({end})")
        kind, size, flags, form_id, vci, form_version, vci2 = HEADER.unpack_from(data, at)
        body = bytes(data[at + HEADER_SIZE:at + HEADER_SIZE + size])
        if len(body) != size or at + HEADER_SIZE + size > end:
            raise FormatError(f"record {form_id:08X} at {at}: its {size} bytes run past its end ({end})")
        label = kind.decode("ascii", "replace")
        fields = [(name.decode("ascii", "replace"), bytes(inflated[start:start + length]))
                  for inflated in (inflate(label, form_id, flags, body),)
                  for name, start, length in iter_fields(label, form_id, inflated)]
        return cls(label, form_id, flags, fields, vci, form_version, vci2, stored=body)


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
            if bytes(self._data[:4]) not in (b"TES4", b"TES3"):  # a NIF or text given as a plugin: say so
                raise FormatError(f"not a plugin (it starts with {bytes(self._data[:4])!r}, a plugin with a TES4 record)")
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
            kind, size, flags, form_id, *_ = self._header(at)
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
        return Record.decode(self._data, at)

    def group_path(self, form_id):
        """The headers (24 bytes each) of the groups holding the record ``form_id``, outermost
        first. A group of a WRLD's or a CELL's children (types 1, 6) names that record in its
        label."""
        at = self.records[form_id][1]
        path, start, end = [], HEADER_SIZE + self._header(0)[1], len(self._data)
        while start != at:
            kind, size = self._header(start)[:2]
            if kind == GROUP and start < at < start + size:
                path.append(bytes(self._data[start:start + HEADER_SIZE]))
                start, end = start + HEADER_SIZE, start + size
            else:
                start += size if kind == GROUP else HEADER_SIZE + size
            if start >= end:
                raise FormatError(f"record {form_id:08X} at {at} lies in no group")
        return path

    def close(self):
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
