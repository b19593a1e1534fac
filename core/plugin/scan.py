"""One pass over a plugin for what precombines depend on, reading as little as it can.

Only the CELL and WRLD top groups are entered (every other group is skipped by its header's
size). In them a CELL record is inflated and its fields kept; placed references (REFR and the
projectile kinds xEdit's ``sigReferences`` lists) and LAND records are kept as their 24-byte
header only, and only when they override a master's record (the children groups of cells a plugin defines
are skipped whole: overrides there are references moved into a new cell, which the game
ignores). A kept reference's fields are read
later, and only if its cell needs them.

Group types (xEdit's wbDefinitionsFO4.pas / fopdoc): 1 world children (label: the WRLD), 2-5
interior and exterior blocks, 6 cell children (label: the CELL), 8 persistent and 9 temporary
children. The record header is type, data size, flags, FormID, Version Control Info 1 (u32),
form version (u16), Version Control Info 2 (u16) (wbDefinitionsCommon.pas ``wbRecordHeader``).
"""

import mmap
import struct

from ..errors import FormatError
from .records import inflate, iter_fields

HEADER = struct.Struct("<4sIIII")  # type, data size, flags, FormID, Version Control Info 1
PERSISTENT = 0x00000400
REFERENCES = frozenset((b"REFR", b"PGRE", b"PHZD", b"PMIS", b"PARW", b"PBAR", b"PBEA", b"PCON", b"PFLA"))
CELL_FIELDS = frozenset(("EDID", "DATA", "VISI", "RVIS", "PCMB", "XCLC", "XPRI", "XCRI"))


class CellRecord:
    """A CELL as one plugin has it: ``key``, ``entry`` (the plugin), header ``flags``, ``vci``
    (Version Control Info 1), ``world`` (the key of its WRLD, None inside), ``fields`` {type: bytes}."""

    __slots__ = ("key", "entry", "flags", "vci", "world", "fields")

    def __init__(self, key, entry, flags, vci, world, fields):
        self.key, self.entry, self.flags, self.vci, self.world, self.fields = key, entry, flags, vci, world, fields


class Override:
    """A REFR or LAND overriding a master's: ``key``, ``entry``, header ``flags``, ``vci``, ``cell``
    (the key of the cell whose group holds it), ``offset`` of its header in the file."""

    __slots__ = ("key", "entry", "flags", "vci", "cell", "offset")

    def __init__(self, key, entry, flags, vci, cell, offset):
        self.key, self.entry, self.flags, self.vci, self.cell, self.offset = key, entry, flags, vci, cell, offset


def fields_of(kind, form_id, data, wanted=None):
    """{field type: bytes} (the first of each type, those ``wanted`` when given) of a record's
    field bytes."""
    fields = {}
    for name, start, size in iter_fields(kind, form_id, data):
        label = name.decode("ascii", "replace")
        if (wanted is None or label in wanted) and label not in fields:
            fields[label] = bytes(data[start:start + size])
    return fields


class PluginScan:
    """What one plugin holds for precombines: ``cells`` [CellRecord], ``references`` and
    ``lands`` [Override], ``problems`` (records skipped, each named)."""

    def __init__(self, load_order, entry):
        self.entry = entry
        self.cells, self.references, self.lands, self.problems = [], [], [], []
        codes, masks = load_order.origins(entry)
        self._codes, self._masks, self._own = codes, masks, entry.code
        self._overrides = bool(entry.masters)
        try:
            with open(entry.path, "rb") as handle:
                size = handle.seek(0, 2)
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as error:
            raise FormatError(f"cannot be read: {error.strerror}", path=str(entry.path)) from None
        try:
            self._data = data
            if len(data) < 24:
                raise FormatError(f"{len(data)} bytes: not even a record header")
            self._top(24 + HEADER.unpack_from(data, 0)[1], len(data))
        except FormatError as error:
            raise error.located(path=str(entry.path)) from None
        finally:
            self._data = None
            if isinstance(data, mmap.mmap):
                data.close()

    def _key(self, form_id):
        index = form_id >> 24
        return self._codes[index] << 24 | form_id & self._masks[index]

    def _group(self, at, end):
        if at + 24 > end:
            raise FormatError(f"header at {at} runs past its group (ends at {end})")
        kind, size, label, group_type = struct.unpack_from("<4sI4si", self._data, at)
        if kind != b"GRUP":
            raise FormatError(f"{kind!r} at {at} where a group belongs")
        self._check_group(at, size, end)
        return label, group_type, at + size

    def _check_group(self, at, size, end):
        if at + size > len(self._data):
            raise FormatError(f"group at {at} of {size} bytes runs past the end of the file ({len(self._data)} bytes)")
        if size < 24 or at + size > end:
            raise FormatError(f"group at {at} of {size} bytes does not fit its parent (ends at {end})")

    def _top(self, at, end):
        while at < end:
            label, _, group_end = self._group(at, end)
            if label in (b"CELL", b"WRLD"):
                self._children(at + 24, group_end, None, None)
            at = group_end

    def _children(self, at, end, world, cell):
        """Records and groups from ``at`` to ``end``, inside ``world`` (a WRLD key) and ``cell``
        (the key of the CELL whose children these are)."""
        data = self._data
        unpack = HEADER.unpack_from
        while at < end:
            if at + 24 > end:
                raise FormatError(f"record header at {at} runs past its group (ends at {end})")
            kind, size, flags, form_id, vci = unpack(data, at)
            if kind == b"GRUP":
                group_type = struct.unpack_from("<i", data, at + 12)[0]
                self._check_group(at, size, end)
                if group_type == 1:
                    self._children(at + 24, at + size, self._key(flags), None)
                elif group_type == 6:
                    # Overrides in the children of a cell this plugin defines are references moved
                    # into a new cell, which the game ignores for precombines: skipped unread.
                    if self._overrides and self._codes[flags >> 24] != self._own:
                        self._children(at + 24, at + size, world, self._key(flags))
                elif group_type in (8, 9):
                    self._children(at + 24, at + size, world, cell)
                elif group_type in (2, 3, 4, 5):
                    self._children(at + 24, at + size, world, None)
                at += size
                continue
            record_end = at + 24 + size
            if record_end > end:
                raise FormatError(f"{kind!r} {form_id:08X} at {at}: its {size} bytes run past its group (ends at {end})")
            if kind in REFERENCES or kind == b"LAND":
                index = form_id >> 24
                if self._codes[index] != self._own:
                    found = Override(self._codes[index] << 24 | form_id & self._masks[index], self.entry, flags, vci,
                                     cell, at)
                    (self.lands if kind == b"LAND" else self.references).append(found)
            elif kind == b"CELL":
                try:
                    body = inflate("CELL", form_id, flags, data[at + 24:record_end])
                    fields = fields_of("CELL", form_id, body, CELL_FIELDS)
                except FormatError as error:
                    self.problems.append(f"{self.entry.path}: {error.message} at {at}: skipped")
                else:
                    self.cells.append(CellRecord(self._key(form_id), self.entry, flags, vci, world, fields))
            at = record_end


def reference_fields(entry, offset):
    """{field: bytes} of the reference whose header is at ``offset`` of ``entry``'s file."""
    try:
        with open(entry.path, "rb") as handle:
            handle.seek(offset)
            head = handle.read(24)
            if len(head) < 24:
                raise FormatError(f"record at {offset} runs past the end of the file")
            kind, size, flags, form_id, _ = HEADER.unpack_from(head)
            body = handle.read(size)
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(entry.path)) from None
    if len(body) != size:
        raise FormatError(f"record {form_id:08X} at {offset} runs past the end of the file", path=str(entry.path))
    label = kind.decode("ascii", "replace")
    try:
        return fields_of(label, form_id, inflate(label, form_id, flags, body))
    except FormatError as error:
        raise error.located(path=str(entry.path)) from None
