"""Packfile objects and the streams that read and write them.

An object is one entry of the data section: a struct followed by the blocks its pointers lead
to (array contents, strings), all inside the object's extent. Inside an object, pointers are
local fixups (to the object's own blocks); pointers to other objects are global fixups.

Typed classes describe their layout once in ``sync(s)``. ``ObjectReader`` resolves hkArray,
string and object pointers through the fixups; ``ObjectWriter`` lays the blocks out the way
Havok's packfile writer does, which the corpus shows: the struct, then each pointer member's
block in member order, each block followed at once by the blocks of its own items (depth
first), zero-padded to 16 after: the struct, a string, an array after its items and their own
blocks (so the first item's string follows the items at once: a track name straight after the
24-byte annotation track items). The strings of an hkArray<hkStringPtr> are padded to 2 only
(a skeleton's float slot names). Global fixups are listed in the order the
members are visited, so a pointer inside an array's items comes before a later member of the
struct that holds the array.

Objects of classes without a typed reader are ``RawObject``: their bytes and fixups, written
back unchanged.
"""

import struct
from itertools import repeat

import numpy as np

from ..errors import FormatError
from ..registry import Registry
from ..stream import ReadStream, WriteStream

ALIGN = 16
ARRAY_FLAGS = 0x80000000  # hkArray "do not deallocate": set on every array of a packfile
CAPACITY_MASK = 0x3FFFFFFF

POINTER = "pointer"  # item type of an hkArray of object pointers
STRING = "string"  # item type of an hkArray of hkStringPtr
_SLOTS = {8: struct.Struct("<Q"), 4: struct.Struct("<I")}  # a pointer slot, per pointer size
_NULLS = {8: "<u8", 4: "<u4"}
_SIZE_AND_CAPACITY = struct.Struct("<II")

HAVOK_CLASSES = Registry("Havok class")


def havok_class(name):
    """Class decorator: the class reads and writes objects of the Havok class ``name``."""

    def register(cls):
        cls.class_name = name
        return HAVOK_CLASSES.add(cls, (name,))

    return register


def typed_class(name, version=11, pointer_size=8):
    """The typed class of ``name`` when it describes the layout of packfile ``version`` with
    pointers of ``pointer_size`` bytes."""
    cls = HAVOK_CLASSES.get(name)
    return cls if cls is not None and version in cls.versions and pointer_size in cls.pointer_sizes else None


def padded(size, align=ALIGN):
    return -(-size // align) * align


class HavokObject:
    """An object of the data section. Subclasses describe their bytes in ``sync(s)``."""

    class_name = None
    versions = (11,)  # the packfile versions whose layout ``sync`` describes (s.version)
    pointer_sizes = (8,)  # and the pointer sizes (s.pointer_size)

    def sync(self, s):
        raise NotImplementedError

    def encode(self, version=11, pointer_size=8):
        """(bytes, local fixups [(src, dst)], global fixups [(src, target, delta)]), offsets
        relative to the object's start, in the layout of packfile ``version`` with pointers of
        ``pointer_size`` bytes."""
        writer = ObjectWriter(version=version, pointer_size=pointer_size)
        self.sync(writer)
        return writer.finish()

    def load(self, reader):
        """Read the fields; every fixup of the object must have been a pointer of the class."""
        self.sync(reader)
        reader.check_consumed(self.class_name)

    def __repr__(self):
        return f"<{self.class_name}>"


class RawObject(HavokObject):
    """An object of a class without a typed reader: its bytes and fixups, kept as they are."""

    def __init__(self, class_name, data, local_fixups=(), global_fixups=()):
        self.class_name = class_name
        self.data = bytes(data)
        self.local_fixups = list(local_fixups)  # [(src, dst)] within the object
        self.global_fixups = list(global_fixups)  # [(src, target object, offset in target)]

    def encode(self, version=None, pointer_size=None):
        return self.data, list(self.local_fixups), list(self.global_fixups)


class ObjectReader(ReadStream):
    """Reads one object's extent; ``base`` is its offset in the packfile (for messages)."""

    def __init__(self, data, base, local_fixups, global_fixups, version=11, pointer_size=8):
        super().__init__(data, base=base)
        self.local_fixups = local_fixups  # {src: dst}
        self.global_fixups = global_fixups  # {src: (target, delta)}
        self.version = version  # the packfile version: 8 = hk_2010, 11 = hk_2014
        self.pointer_size = pointer_size
        self.consumed = set()

    def at(self, pos):
        """A reader of the same object positioned at ``pos`` (a block a fixup leads to)."""
        sub = ObjectReader(self.data, self.base, self.local_fixups, self.global_fixups, self.version, self.pointer_size)
        sub.consumed = self.consumed
        if not 0 <= pos <= len(self.data):
            raise self.error(f"block at {pos} lies outside its object of {len(self.data)} bytes", 0)
        sub.pos = pos
        return sub

    def _slot(self):
        """A pointer slot: its position, after checking the stored value is the null the
        packfile writer leaves for the loader to patch."""
        at = self.pos
        if self._unpack(_SLOTS[self.pointer_size])[0]:
            raise self.error("pointer slot holds a value instead of a fixup", at)
        return at

    def check_consumed(self, class_name):
        unread = sorted((set(self.local_fixups) | set(self.global_fixups)) - self.consumed)
        if unread:
            raise self.error(f"{class_name}: fixup at {unread[0]} is not a pointer of this class", unread[0])

    # -- pointers ------------------------------------------------------------------------
    def pointer(self, value=None):
        """A pointer to another object (global fixup); None when null."""
        return self._target(self._slot())

    def _target(self, at):
        if at in self.local_fixups:
            raise self.error("object pointer has a local fixup", at)
        target = self.global_fixups.get(at)
        if target is None:
            return None
        self.consumed.add(at)
        obj, delta = target
        if delta:
            raise self.error(f"pointer leads {delta} bytes into a {obj.class_name}, not to its start", at)
        return obj

    def hk_array(self, value, item, *, what="array"):
        """hkArray: pointer (local fixup) + u32 size + u32 capacity|flags. ``item`` is a
        numpy dtype (the items come back as an array), a class with ``sync`` and ``size`` (a
        list), ``POINTER`` (a list of objects) or ``STRING`` (a list of texts)."""
        at = self._slot()
        size, capacity = self._unpack(_SIZE_AND_CAPACITY)
        return self._array(at, size, capacity, item, what)

    def _array(self, at, size, capacity, item, what):
        """The items of the hkArray whose pointer slot is at ``at``."""
        if capacity & CAPACITY_MASK != size or capacity & ~CAPACITY_MASK != ARRAY_FLAGS:
            raise self.error(f"{what}: capacity field 0x{capacity:08X} does not match its size {size}", at + 12)
        if at in self.global_fixups:
            raise self.error(f"{what}: array pointer has a global fixup", at)
        dst = self.local_fixups.get(at)
        if dst is None:
            if size:
                raise self.error(f"{what}: {size} items but no fixup for their pointer", at)
            return _empty(item)
        self.consumed.add(at)
        block = self.at(dst)
        if isinstance(item, np.dtype):
            return block.array(None, item, size)
        if item is POINTER:
            block.need(self.pointer_size * size, what)
            return [block.pointer() for _ in range(size)]
        if item is STRING:
            block.need(self.pointer_size * size, what)
            return [block.string_ptr() for _ in range(size)]
        # ``size`` is the 64-bit layout's: pointers at most halve it
        return block.items(None, item, size, min_size=item.size * self.pointer_size // 8)

    def string_ptr(self, value=None):
        """hkStringPtr: a pointer (local fixup) to NUL-terminated text; None when null."""
        at = self._slot()
        dst = self.local_fixups.get(at)
        if dst is None:
            return None
        self.consumed.add(at)
        return self._text(dst)

    def _text(self, at):
        """The NUL-terminated text at ``at``, looked for in growing pieces: copying the rest of a
        large object for every string costs more than the strings."""
        size = 64
        while True:
            piece = bytes(self.data[at : at + size])
            end = piece.find(b"\0")
            if end >= 0:
                return piece[:end].decode("utf-8", "surrogateescape")
            if at + size >= len(self.data):
                raise self.error("string has no terminating NUL inside its object", at)
            size *= 16

    def items(self, value, factory, count, min_size=1):
        """``count`` structures built by ``factory()`` and synced in turn. A class marked
        ``columns`` (its ``sync`` reads each field once, in a layout its values do not change)
        has its first item read alone, which gives the layout's size, and the others a field
        at a time, all together (_Columns): one pass of its ``sync`` for the lot."""
        if count < 2 or not getattr(factory, "columns", False):
            return super().items(value, factory, count, min_size)
        start = self.pos
        first = super().items(value, factory, 1, min_size)
        stride = self.pos - start
        self.need(stride * (count - 1), f"{count} structures of {stride} bytes")
        self.charge(count - 1)
        rest = _Columns(self, count - 1, stride).read(factory)
        self.pos = start + stride * count
        return first + rest

    def rel_array(self, value, item, *, what="relative array"):
        """hkRelArray: u16 count + u16 offset from the field's own address; the items are
        inside the object. ``item`` is a numpy dtype."""
        at = self.pos
        count = self.u16()
        offset = self.u16()
        if not count:
            return np.zeros(0, item), offset
        return self.at(at + offset).array(None, item, count), offset


class _Column(list):
    """One field of every item, read by _Columns."""


class _Columns(ObjectReader):
    """Reads ``count`` structures of ``stride`` bytes from the reader's position a field at a
    time: each read returns a _Column of that field's values, one per item."""

    def __init__(self, reader, count, stride):
        super().__init__(reader.data, reader.base, reader.local_fixups, reader.global_fixups, reader.version, reader.pointer_size)
        self.consumed = reader.consumed
        self.budget = reader.budget
        self.pos = self.first = reader.pos
        self.count = count
        self.stride = stride

    def read(self, factory):
        """The items: ``factory``'s ``sync`` run once here, its fields' columns dealt out."""
        layout = factory()
        layout.sync(self)
        fields = vars(layout)
        columns = {name: column for name, column in fields.items() if isinstance(column, _Column)}
        if len(columns) == len(fields):  # every field is read: the items need nothing from __init__
            items = [factory.__new__(factory) for _ in range(self.count)]
        else:
            items = [factory() for _ in range(self.count)]
        for name, column in columns.items():
            for item, value in zip(items, column):
                setattr(item, name, value)
        return items

    def _starts(self, size):
        """Where the field of ``size`` bytes at the current offset starts in every item."""
        at = self.pos
        if at + size > self.first + self.stride:
            raise self.error(f"a field of {size} bytes runs past its {self.stride}-byte structure")
        self.pos += size
        return range(at, at + self.count * self.stride, self.stride)

    def _field(self, code):
        """The field of numpy type ``code`` at the current offset, of every item."""
        dtype = np.dtype(code)
        return np.ndarray((self.count,), dtype, self.data, self._starts(dtype.itemsize).start, (self.stride,))

    def _unpack(self, packer):
        return tuple(map(_Column, zip(*(packer.unpack_from(self.data, at) for at in self._starts(packer.size)))))

    def raw(self, value=None, size=0):
        return _Column(bytes(self.data[at : at + size]) for at in self._starts(size))

    def _slot(self):
        values = self._field(_NULLS[self.pointer_size])
        slots = range(self.pos - self.pointer_size, self.pos - self.pointer_size + self.count * self.stride, self.stride)
        if values.any():
            raise self.error("pointer slot holds a value instead of a fixup", slots[int(np.argmax(values != 0))])
        return slots

    def pointer(self, value=None):
        return _Column(map(self._target, self._slot()))

    def string_ptr(self, value=None):
        slots = self._slot()
        targets = list(map(self.local_fixups.get, slots))
        self.consumed.update(at for at, dst in zip(slots, targets) if dst is not None)
        found = [dst for dst in targets if dst is not None]
        if not found:
            return _Column(targets)
        # one copy of the object's bytes serves every text: up to 256 bytes past the last one's
        # start (most texts are short), else up to the object's end
        low = min(found)
        for tail in bytes(self.data[low : max(found) + 256]), bytes(self.data[low:]):
            ends = [None if dst is None else tail.find(b"\0", dst - low) for dst in targets]
            if -1 not in ends:
                return _Column([None if dst is None else tail[dst - low : end].decode("utf-8", "surrogateescape") for dst, end in zip(targets, ends)])
        raise self.error("string has no terminating NUL inside its object", targets[ends.index(-1)])

    def hk_array(self, value, item, *, what="array"):
        slots = self._slot()
        sizes, capacities = self._field("<u4"), self._field("<u4")
        # every array empty, without a pointer, is the common case: checked for all at once
        if not sizes.any() and (capacities == ARRAY_FLAGS).all() and self.local_fixups.keys().isdisjoint(slots) \
                and self.global_fixups.keys().isdisjoint(slots):
            return _Column([np.zeros(0, item) for _ in slots] if isinstance(item, np.dtype) else [[] for _ in slots])
        return _Column(map(self._array, slots, sizes.tolist(), capacities.tolist(), repeat(item), repeat(what)))


def _empty(item):
    return np.zeros(0, item) if isinstance(item, np.dtype) else []


class _Layout:
    """What the writers of one object share: the global fixups in visiting order."""

    def __init__(self):
        self.global_fixups = []  # [(writer, position in it, target)]


class ObjectWriter(WriteStream):
    """Writes one object: the struct here, each block in a child writer, laid out by ``finish``."""

    def __init__(self, layout=None, version=11, pointer_size=8, depth=0):
        super().__init__()
        self.layout = layout or _Layout()
        self.version = version
        self.pointer_size = pointer_size
        self.depth = depth  # 0: the object's struct, 1: its blocks, 2: their items' blocks...
        self.holds_items = False  # the block of an array's items
        self.blocks = []  # [(position of the pointer slot, writer of the block, alignment after it)]
        self.base = 0

    def _child(self):
        return type(self)(self.layout, self.version, self.pointer_size, self.depth + 1)

    def pointer(self, value):
        if value is not None:
            if not isinstance(value, HavokObject):
                raise FormatError(f"a pointer must lead to a Havok object, not {type(value).__name__}")
            self.layout.global_fixups.append((self, self.pos, value))
        self.raw(bytes(self.pointer_size))
        return value

    def hk_array(self, value, item, *, what="array"):
        at = self.pos
        count = len(value)
        if count > CAPACITY_MASK:
            raise FormatError(f"{what}: {count} items do not fit an hkArray")
        self.raw(bytes(self.pointer_size))
        self.u32(count)
        self.u32(count | ARRAY_FLAGS)
        if count:
            block = self._child()
            block.holds_items = True
            if isinstance(item, np.dtype):
                block.array(value, item, count)
            elif item is POINTER:
                for target in value:
                    block.pointer(target)
            elif item is STRING:
                for text in value:
                    block.string_ptr(text, packed=True)
            else:
                block.items(value, item, count)
            self.blocks.append((at, block, ALIGN))
        return value

    def string_ptr(self, value, packed=False):
        at = self.pos
        self.raw(bytes(self.pointer_size))
        if value is not None:
            block = self._child()
            block.raw(value.encode("utf-8", "surrogateescape") + b"\0")
            self.blocks.append((at, block, 2 if packed else ALIGN))
        return value

    def rel_array(self, value, item, *, what="relative array"):
        """Writes the header only; the owner writes the items where ``value[1]`` says."""
        items, offset = value
        if len(items) > 0xFFFF or offset > 0xFFFF:
            raise FormatError(f"{what}: {len(items)} items at offset {offset} do not fit an hkRelArray")
        self.u16(len(items))
        self.u16(offset)
        return value

    def end_at(self, pos):
        """Zero-fill up to ``pos``, where the next inline array of the object goes."""
        if pos < self.pos:
            raise FormatError(f"inline data ends at {pos}, before the fields at {self.pos}")
        self.out += bytes(pos - self.pos)

    def _flatten(self, out, local_fixups):
        self.base = len(out)
        out += self.out
        # the struct, and items of an array inside another array's items, are padded before
        # their own blocks (32-bit Skyrim annotations: their text 16-aligned after 8-byte items)
        if self.depth == 0 or self.holds_items and self.depth >= 2:
            out += bytes(padded(len(out)) - len(out))
        for at, block, align in self.blocks:
            local_fixups.append((self.base + at, len(out)))
            block._flatten(out, local_fixups)  # an array pads after its items' own blocks
            out += bytes(padded(len(out), align) - len(out))

    def finish(self):
        out = bytearray()
        local_fixups = []
        self._flatten(out, local_fixups)
        out += bytes(padded(len(out)) - len(out))
        global_fixups = [(writer.base + at, target, 0) for writer, at, target in self.layout.global_fixups]
        return bytes(out), local_fixups, global_fixups
