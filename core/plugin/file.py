"""A whole plugin as a tree of groups and records, read and written with records.py's header and
field encoding: what a patch is assembled into and read back from (records.Plugin reads large
plugins lazily instead).

A group header (xEdit's wbDefinitionsCommon.pas, fopdoc): ``GRUP``, u32 size of the whole group,
a 4-byte label (a record type for top groups, a FormID for a WRLD's (type 1) or a CELL's (6, 8,
9) children, a block number or a grid position), i32 group type, u16 date stamp, u16 unknown,
u32 version control. TES4 (the plugin's header record) HEDR: f32 version, i32 number of
records and groups, u32 next object id; MAST + DATA (u64) per master.
"""

import struct

from ..errors import FormatError
from ..files import read_bytes, write_replacing
from ..stream import decode_text, encode_text
from .records import GROUP, HEADER, HEADER_SIZE, Record

GROUP_HEADER = struct.Struct("<4sI4siHHI")
HEDR = struct.Struct("<fiI")
TOP = 0  # group type of the top groups, labelled by record type
MASTER_FLAG, LIGHT_FLAG = 0x1, 0x200
FIRST_OBJECT_ID = 0x800  # object ids below are the engine's
MAX_DEPTH = 16  # WRLD > world children > block > sub-block > cell children > temporary: 6 in practice


class Group:
    """A group: ``label`` (4 bytes), ``group_type``, ``stamp``, ``unknown``, ``vci`` and its
    ``children`` (Records and Groups) in file order."""

    def __init__(self, label, group_type, stamp=0, unknown=0, vci=0, children=None):
        self.label, self.group_type, self.stamp, self.unknown, self.vci = label, group_type, stamp, unknown, vci
        self.children = children if children is not None else []

    @classmethod
    def from_header(cls, head):
        _, _, label, group_type, stamp, unknown, vci = GROUP_HEADER.unpack_from(head)
        return cls(label, group_type, stamp, unknown, vci)

    @property
    def label_id(self):
        return int.from_bytes(self.label, "little")

    def same(self, other):
        return (self.label, self.group_type) == (other.label, other.group_type)

    def to_bytes(self):
        body = b"".join(child.to_bytes() for child in self.children)
        return GROUP_HEADER.pack(GROUP, HEADER_SIZE + len(body), self.label, self.group_type, self.stamp, self.unknown,
                                 self.vci) + body

    def count(self):
        """Records and groups in this group, itself included (what HEDR counts)."""
        return 1 + sum(child.count() if isinstance(child, Group) else 1 for child in self.children)

    def walk(self):
        for child in self.children:
            if isinstance(child, Group):
                yield from child.walk()
            else:
                yield child


class PluginFile:
    """A plugin: its TES4 ``header`` Record and its top ``groups``."""

    def __init__(self, header, groups=None, path=None):
        self.header = header
        self.groups = groups if groups is not None else []
        self.path = path

    # -- reading --------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data, path=None):
        try:
            header = Record.decode(data, 0)
            if header.type != "TES4":
                raise FormatError(f"not a plugin (first record {header.type!r}, not TES4)", offset=0)
            groups = cls._children(data, HEADER_SIZE + HEADER.unpack_from(data, 0)[1], len(data), 0)
        except FormatError as error:
            raise error.located(path=str(path) if path is not None else None) from None
        if any(not isinstance(child, Group) for child in groups):
            raise FormatError("a record lies outside every group", path=str(path) if path is not None else None)
        return cls(header, groups, path)

    @classmethod
    def read(cls, path):
        return cls.from_bytes(read_bytes(path), path)

    @classmethod
    def _children(cls, data, at, end, depth):
        if depth > MAX_DEPTH:
            raise FormatError(f"groups nest deeper than {MAX_DEPTH}", offset=at)
        out = []
        while at < end:
            if at + HEADER_SIZE > end:
                raise FormatError(f"header at {at} runs past its group (ends at {end})", offset=at)
            if bytes(data[at:at + 4]) == GROUP:
                size = GROUP_HEADER.unpack_from(data, at)[1]
                if size < HEADER_SIZE or at + size > end:
                    raise FormatError(f"group at {at} of {size} bytes does not fit its parent (ends at {end})", offset=at)
                group = Group.from_header(data[at:at + HEADER_SIZE])
                group.children = cls._children(data, at + HEADER_SIZE, at + size, depth + 1)
                out.append(group)
                at += size
            else:
                record = Record.decode(data, at, end)
                out.append(record)
                at += HEADER_SIZE + len(record.body())
        return out

    # -- what it holds --------------------------------------------------------------------
    @property
    def masters(self):
        return [decode_text(data.split(b"\0", 1)[0]) for kind, data in self.header.fields if kind == "MAST"]

    @property
    def light(self):
        return bool(self.header.flags & LIGHT_FLAG)

    def records(self):
        for group in self.groups:
            yield from group.walk()

    def record(self, form_id, kind=None):
        return next((r for r in self.records() if r.form_id == form_id and kind in (None, r.type)), None)

    def next_object_id(self):
        hedr = self.header.field("HEDR")
        return HEDR.unpack_from(hedr)[2] if hedr is not None and len(hedr) >= HEDR.size else FIRST_OBJECT_ID

    # -- writing --------------------------------------------------------------------------
    def update_header(self, next_object_id):
        """HEDR's record count (records and groups, TES4 aside) and next object id."""
        hedr = self.header.field("HEDR")
        version = HEDR.unpack_from(hedr)[0] if hedr is not None and len(hedr) >= HEDR.size else 1.0
        count = sum(group.count() for group in self.groups)
        self.header.set_field("HEDR", HEDR.pack(version, count, next_object_id) + (hedr or b"")[HEDR.size:])

    def to_bytes(self):
        return self.header.to_bytes() + b"".join(group.to_bytes() for group in self.groups)

    def write(self, path):
        write_replacing(path, self.to_bytes())

    def top_group(self, record_type):
        label = record_type.encode("ascii")
        found = next((g for g in self.groups if g.label == label and g.group_type == TOP), None)
        if found is None:
            found = Group(label, TOP)
            self.groups.append(found)
        return found


def new_header(masters, version=1.0, light=False, author="Precombined NIF"):
    """A TES4 record for a plugin whose masters are ``masters`` (names, in load order)."""
    fields = [("HEDR", HEDR.pack(version, 0, FIRST_OBJECT_ID)), ("CNAM", encode_text(author) + b"\0")]
    for master in masters:
        fields += [("MAST", encode_text(master) + b"\0"), ("DATA", bytes(8))]
    return Record("TES4", 0, LIGHT_FLAG if light else 0, fields)
