"""The packfile container: header, sections, objects and their fixups.

Reading finds the objects through the virtual fixups, gives every local and global fixup to the
object holding its pointer (a local fixup must stay inside that object), and decodes the
objects of classes with a typed reader for the file's version (64-bit pointers: the physics
classes for hk_2014, the animation classes for hk_2010 and hk_2014); the others stay
``RawObject``. A caller may name the classes it wants decoded (``classes``): an animation file's
physics is then carried as it is.

Sections other than the class names and the data (``__types__``: the hkClass descriptions some
exporters write) are kept whole, fixup tables included, after checking every fixup lands inside
the file's sections. Some converters put a number of their own (the object's number in the Havok
XML the file came from) in front of every object: each object then begins with a pointer-size
value no fixup patches and every pointer leads to that value. Such files are recognised from
that pattern and their objects read after it.

Writing rebuilds the whole file from the object graph: objects in the order of a depth-first
walk from the contents object through the global fixups (the order Havok's writer uses), then
the fixup tables, class names and headers. A file read and not changed is written back as the
bytes it was read from, whatever writer laid it out; one with object numbers only so.
"""

from copy import copy
from pathlib import Path

import numpy as np

from ..errors import FormatError
from ..stream import ReadStream, WriteStream
from .classnames import BASE_CLASSES, ClassNames
from .fixups import GLOBAL, LOCAL, VIRTUAL, read_table, write_table
from .header import FileHeader, SectionHeader
from .objects import HavokObject, ObjectReader, RawObject, typed_class

CLASSNAMES = "__classnames__"
DATA = "__data__"
MAX_SECTIONS = 64


class Packfile:
    """A Havok binary packfile. ``root`` is the contents object; everything reachable from it
    is written."""

    def __init__(self, root=None):
        self.header = FileHeader()
        self.section_names = [CLASSNAMES, "__types__", DATA]
        self.raw_sections = {}  # {index: (SectionHeader, bytes)}: sections kept whole; others absent are empty
        self.classnames = ClassNames.listing(self.header.file_version, BASE_CLASSES)
        self.root = root
        self.contents_class = None  # the header's contents class name; None: the root's class
        self.source = None  # (bytes, classes) the packfile was read from and with
        self.object_numbers = 0  # bytes of a converter's number before each object, as read
        self._numbered_state = None  # such a file's state as read: it is only ever written back as read

    # -- reading -------------------------------------------------------------------------
    @classmethod
    def read(cls, path, classes=None):
        path = Path(path)
        try:
            return cls.from_bytes(path.read_bytes(), classes)
        except FormatError as error:
            raise error.located(path=path) from None

    @classmethod
    def from_bytes(cls, data, classes=None):
        """``classes``: the names of the classes to decode with their typed readers (None:
        every class that has one); objects of the others stay RawObject."""
        source = bytes(data)
        data = bytearray(data)  # a private copy: the objects' arrays are writable views of it
        if data.lstrip()[:1] == b"<":
            raise FormatError("XML Havok file: only binary packfiles are supported", offset=0)
        packfile = cls()
        s = ReadStream(data)
        header = packfile.header
        header.sync(s)
        size = header.section_header_size
        if not 0 < header.num_sections <= MAX_SECTIONS or header.num_sections * size > s.remaining:
            raise FormatError(f"{header.num_sections} section headers cannot fit in the file", offset=0x14)
        sections = []
        for _ in range(header.num_sections):
            section = SectionHeader()
            section.sync(s, header.file_version)
            _check_section(section, s.pos - size, len(data))
            sections.append(section)
        packfile.section_names = [section.name for section in sections]
        if CLASSNAMES not in packfile.section_names:
            raise FormatError(f"no {CLASSNAMES} section", offset=s.pos - size * len(sections))
        names_index = packfile._index_of(CLASSNAMES)
        data_index = header.contents_section
        if data_index >= len(sections) or data_index == names_index:
            raise FormatError(f"contents section {data_index} is not a data section", offset=0x18)

        names = sections[names_index]
        if names.local != names.end:
            raise FormatError(f"section {names.name} has fixups", offset=names.start)
        packfile.classnames = ClassNames.from_bytes(data[names.start : names.start + names.local], names.start)
        if header.contents_class_section != names_index:
            raise FormatError("the contents class name is not in the class names section", offset=0x20)
        packfile.contents_class = packfile.classnames.name_at(header.contents_class_offset)
        if packfile.contents_class is None:
            raise FormatError(f"no class name at offset {header.contents_class_offset}", offset=0x24)
        for index, section in enumerate(sections):
            if index not in (names_index, data_index):
                _check_kept_section(data, section, index, names_index, packfile.classnames, header.pointer_size)
                packfile.raw_sections[index] = (section, bytes(data[section.start : section.start + section.end]))

        objects, starts, packfile.object_numbers = _read_objects(
            data, sections[data_index], data_index, names_index, packfile.classnames, header, classes
        )
        root = np.searchsorted(starts, header.contents_offset)
        if root >= len(starts) or starts[root] != header.contents_offset:
            raise FormatError(f"no object starts at the contents offset {header.contents_offset}", offset=0x1C)
        packfile.root = objects[root]
        packfile.source = (source, classes)
        if packfile.object_numbers:
            packfile._numbered_state = packfile._state()
        return packfile

    def _index_of(self, name):
        if name not in self.section_names:
            raise FormatError(f"no {name} section")
        return self.section_names.index(name)

    # -- writing -------------------------------------------------------------------------
    def objects(self):
        """The objects reachable from the root, in file order, each with its encoding."""
        encoded = {}
        order = []
        stack = [iter([self.root])]
        while stack:
            obj = next(stack[-1], StopIteration)
            if obj is StopIteration:
                stack.pop()
                continue
            if id(obj) in encoded:
                continue
            if not isinstance(obj, HavokObject):
                raise FormatError(f"a packfile holds Havok objects, not {type(obj).__name__}")
            encoded[id(obj)] = obj.encode(self.header.file_version, self.header.pointer_size)
            order.append((obj, encoded[id(obj)]))
            stack.append(target for _, target, _ in encoded[id(obj)][2])
        return order

    def to_bytes(self):
        """The file: the bytes it was read from while nothing in it changed, else rebuilt. A
        file whose objects carry a converter's numbers is written back only unchanged: its
        objects kept as bytes are laid out around their numbers, which a rebuild would shift."""
        if self.root is None:
            raise FormatError("a packfile needs a contents object")
        order = self.objects()
        built = None if self.object_numbers else self._build(order)
        if self.source is not None:
            data, classes = self.source
            if built == data or self._state(order) == (self._numbered_state or Packfile.from_bytes(data, classes)._state()):
                return data
        if built is None:
            raise FormatError("this file's objects carry a converter's numbers: it is written back only unchanged")
        return built

    def _state(self, order=None):
        """Everything a written file is made of, objects named by their position in the file;
        ``order``: ``objects()``, when known."""
        order = order or self.objects()
        position = {id(obj): index for index, (obj, _) in enumerate(order)}
        head = WriteStream()
        self.header.sync(head)
        return (
            bytes(head.out), list(self.section_names), list(self.classnames.entries), self.contents_class,
            {index: raw for index, (_, raw) in self.raw_sections.items()},
            [
                (obj.class_name, raw, local, [(src, position[id(target)], delta) for src, target, delta in global_])
                for obj, (raw, local, global_) in order
            ],
        )  # fmt: skip

    def _build(self, order):
        names_index = self._index_of(CLASSNAMES)
        data_index = self.header.contents_section
        if data_index >= len(self.section_names) or data_index == names_index:
            raise FormatError(f"contents section {data_index} is not a data section")
        offsets = {}
        position = 0
        for obj, (raw, _, _) in order:
            offsets[id(obj)] = position
            position += len(raw)
        local_rows, global_rows, virtual_rows = [], [], []
        for obj, (raw, local_fixups, global_fixups) in order:
            base = offsets[id(obj)]
            local_rows += [(base + src, base + dst) for src, dst in local_fixups]
            global_rows += [
                (base + src, data_index, offsets[id(target)] + delta) for src, target, delta in global_fixups
            ]
            virtual_rows.append((base, names_index, self.classnames.offset_of(obj.class_name, self.header.file_version)))
        body = b"".join(raw for _, (raw, _, _) in order)
        tables = [write_table(local_rows, LOCAL), write_table(global_rows, GLOBAL), write_table(virtual_rows, VIRTUAL)]

        header = copy(self.header)
        header.num_sections = len(self.section_names)
        header.contents_offset = 0
        header.contents_class_section = names_index
        header.contents_class_offset = self.classnames.offset_of(self.contents_class or self.root.class_name,
                                                                 header.file_version)
        head = WriteStream()
        header.sync(head)
        position = len(head.out) + len(self.section_names) * header.section_header_size
        out = bytearray()
        for index, name in enumerate(self.section_names):
            section = SectionHeader(name)
            if index == data_index:
                section.set_sizes(position, len(body), *map(len, tables))
                chunk = body + b"".join(tables)
            elif index == names_index:
                chunk = self.classnames.to_bytes()
                section.set_sizes(position, len(chunk), 0, 0, 0)
            elif index in self.raw_sections:
                kept, chunk = self.raw_sections[index]
                section = copy(kept)
                section.start = position
            else:
                chunk = b""
                section.set_sizes(position, 0, 0, 0, 0)
            section.sync(head, header.file_version)
            out += chunk
            position += len(chunk)
        return bytes(head.out + out)

    def write(self, path):
        Path(path).write_bytes(self.to_bytes())


def _check_section(section, at, file_size):
    offsets = (section.local, section.global_, section.virtual, section.exports, section.imports, section.end)
    if section.start > file_size or section.start + section.end > file_size:
        raise FormatError(f"section {section.name} runs past the end of the file", offset=at)
    if list(offsets[:4]) != sorted(offsets[:4]):
        raise FormatError(f"section {section.name}: fixup table offsets out of order", offset=at)
    if not section.exports == section.imports == section.end:
        raise FormatError(f"section {section.name}: export and import tables are not supported", offset=at)


def _check_kept_section(data, section, index, names_index, classnames, pointer):
    """A section kept whole (``__types__``): its fixups patch pointers inside it, lead inside it
    and name listed classes, as the game's loader applies them."""
    if not section.end:
        return  # empty (as in the games' animation files): no table to check
    base, size = section.start, section.local
    local = read_table(data, base + section.local, base + section.global_, LOCAL, "local")
    global_ = read_table(data, base + section.global_, base + section.virtual, GLOBAL, "global")
    virtual = read_table(data, base + section.virtual, base + section.exports, VIRTUAL, "virtual")
    name = section.name
    sources = np.concatenate([local["src"], global_["src"]]).astype(np.int64)
    if len(sources) and sources.max() + pointer > size:
        raise FormatError(f"section {name}: a fixup's pointer lies outside the section", offset=base + section.local)
    if len(local) and local["dst"].max() > size:
        raise FormatError(f"section {name}: a local fixup leads outside the section", offset=base + section.local)
    if len(global_) and ((global_["section"] != index).any() or global_["dst"].max() >= size):
        raise FormatError(f"section {name}: a global fixup leads outside the section", offset=base + section.global_)
    if len(virtual) and ((virtual["section"] != names_index).any() or virtual["object"].max() >= size):
        raise FormatError(f"section {name}: a virtual fixup lies outside the section or its class names", offset=base + section.virtual)
    missing = [int(offset) for offset in virtual["name"] if classnames.name_at(int(offset)) is None]
    if missing:
        raise FormatError(f"section {name}: a virtual fixup names no class (offset {missing[0]})", offset=base + section.virtual)


def _read_objects(data, section, data_index, names_index, classnames, header, classes=None):
    """The data section's objects (typed where a reader exists and ``classes`` allows), their
    start offsets and the size of the number before each (0: none)."""
    base = section.start
    size = section.local
    local = read_table(data, base + section.local, base + section.global_, LOCAL, "local")
    global_ = read_table(data, base + section.global_, base + section.virtual, GLOBAL, "global")
    virtual = read_table(data, base + section.virtual, base + section.exports, VIRTUAL, "virtual")
    table_at = base + section.virtual

    if not len(virtual):
        raise FormatError("the data section holds no objects", offset=table_at)
    order = virtual["object"].argsort(kind="stable")
    virtual = virtual[order]
    starts = virtual["object"].astype(np.int64)
    if starts[0] != 0:
        raise FormatError(f"{starts[0]} bytes of data before the first object", offset=base)
    # the last object may be empty: a file with nothing in it holds one hkBaseObject of no bytes
    if (starts[1:] <= starts[:-1]).any() or starts[-1] > size:
        raise FormatError("virtual fixups: object offsets repeated or outside the data", offset=table_at)
    if (virtual["section"] != names_index).any():
        raise FormatError("virtual fixup names a class outside the class names section", offset=table_at)
    class_names = [classnames.name_at(int(offset)) for offset in virtual["name"]]
    if None in class_names:
        bad = int(virtual["name"][class_names.index(None)])
        raise FormatError(f"virtual fixup names no class (offset {bad})", offset=table_at)
    ends = np.concatenate([starts[1:], [size]])

    pointer = header.pointer_size
    sources = np.concatenate([local["src"], global_["src"]]).astype(np.int64)
    if len(sources) and (sources.max() + pointer > size):
        raise FormatError("a fixup's pointer lies outside the data", offset=base + section.local)
    if len(set(sources.tolist())) != len(sources):
        raise FormatError("two fixups patch the same pointer", offset=base + section.local)
    if len(global_) and ((global_["section"] != data_index).any() or global_["dst"].max() >= size):
        raise FormatError("a global fixup leads outside the data section", offset=base + section.global_)
    if len(local) and local["dst"].max() > size:
        raise FormatError("a local fixup leads outside the data section", offset=base + section.local)

    owner = starts.searchsorted(local["src"], "right") - 1
    if (starts.searchsorted(local["dst"], "right") - 1 != owner).any() or (local["dst"] > ends[owner]).any():
        raise FormatError("a local fixup leads out of its object", offset=base + section.local)
    targets = starts.searchsorted(global_["dst"], "right") - 1
    number = _object_number_size(data, base, starts, ends, sources, pointer)
    if number:
        starts_of = starts[owner]
        if (local["dst"] < starts_of + number).any():
            raise FormatError("a local fixup leads into an object's number", offset=base + section.local)
        delta = global_["dst"] - starts[targets]
        if ((delta > 0) & (delta < number)).any():
            raise FormatError("a global fixup leads into an object's number", offset=base + section.global_)
    # sources and local destinations from where each object's fields start (after its number)
    fields_at = starts + number
    local_shift = fields_at[owner]
    local_rows = _per_object([local["src"] - local_shift, local["dst"] - local_shift], owner, len(starts))
    global_owner = starts.searchsorted(global_["src"], "right") - 1
    global_rows = _per_object([global_["src"] - fields_at[global_owner], targets, global_["dst"]], global_owner, len(starts))

    objects = []
    for name in class_names:
        cls = typed_class(name, header.file_version, pointer) if classes is None or name in classes else None
        objects.append(cls() if cls else RawObject(name, b""))
    body = memoryview(data)[base : base + size]
    starts = starts.tolist()
    for index, obj in enumerate(objects):
        start, end = starts[index] + number, int(ends[index])
        local_fixups = local_rows[index]
        global_fixups = [(src, objects[target], max(dst - starts[target] - number, 0)) for src, target, dst in global_rows[index]]
        if isinstance(obj, RawObject):
            obj.data = bytes(body[start:end])
            obj.local_fixups = local_fixups
            obj.global_fixups = global_fixups
            continue
        pointers = {src: (target, delta) for src, target, delta in global_fixups}
        reader = ObjectReader(body[start:end], base + start, dict(local_fixups), pointers, header.file_version, pointer)
        obj.load(reader)
    return objects, np.array(starts), number


def _object_number_size(data, base, starts, ends, sources, pointer):
    """The size of the number a converter wrote before every object: the pointer size when
    each object starts with a distinct non-zero value that no fixup patches, else 0 (a
    Havok-written object starts with a null vtable slot or a patched pointer)."""
    if (ends - starts <= pointer).any():
        return 0
    values = np.frombuffer(data, np.uint8)[base + starts[:, None] + np.arange(pointer)]
    values = values.copy().view("<u8" if pointer == 8 else "<u4").ravel()
    if (values == 0).any() or len(set(values.tolist())) != len(values):
        return 0
    if len(sources) and (sources - starts[starts.searchsorted(sources, "right") - 1] < pointer).any():
        return 0
    return pointer


def _per_object(columns, owner, count):
    """The rows of each object (tuples of the ``columns``' values; ``owner``: each row's object),
    each object's in table order."""
    order = owner.argsort(kind="stable")
    cuts = owner[order].searchsorted(np.arange(count + 1)).tolist()
    rows = list(zip(*(column[order].tolist() for column in columns)))
    return [rows[cuts[k] : cuts[k + 1]] for k in range(count)]
