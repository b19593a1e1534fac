"""Havok binary packfiles built here with struct to the documented byte layouts, apart from the
product's container and writers: skeleton files (root-level container, animation container,
skeletons: bones, parents, reference pose, float slots, local frames) and behaviour, character
and project files, for hk_2010 (32- or 64-bit pointers) and hk_2014, optionally with a
converter's number in front of every object (as the Skyrim SE skeleton Pandora ships has), a
``__types__`` section with fixups, and objects of other classes carried along.

Layouts: an hkReferencedObject starts with two pointer-size fields; an hkArray is a pointer, a
u32 size and a u32 capacity with 0x80000000 set; an hkStringPtr is a pointer to NUL-terminated
text. Members are aligned to their size (pointers, arrays: the pointer size). Blocks (array
items, text) follow the struct, 16-aligned; pointers inside an object are local fixups, pointers
to objects global fixups, and a virtual fixup names each object's class."""

import struct
import zlib

MAGIC = bytes.fromhex("57E0E05710C0C010")
ARRAY_FLAGS = 0x80000000
BASE_CLASSES = ("hkClass", "hkClassMember", "hkClassEnum", "hkClassEnumItem")
CONTENTS = {8: b"hk_2010.2.0-r1", 11: b"hk_2014.1.0-r1"}


def _pad(data, align, fill=b"\0"):
    data += fill * (-len(data) % align)


class Obj:
    """One object: class name, bytes (struct, then blocks), {src: dst} pointers into itself and
    {src: Obj} pointers to objects."""

    def __init__(self, class_name, size, pointer=8):
        self.class_name = class_name
        self.pointer = pointer
        self.data = bytearray(size)
        self.local = {}
        self.pointers = {}

    def put(self, at, fmt, *values):
        struct.pack_into("<" + fmt, self.data, at, *values)

    def block(self, raw):
        _pad(self.data, 16)
        at = len(self.data)
        self.data += raw
        return at

    def string(self, at, text):
        if text is not None:
            self.local[at] = self.block(text.encode() + b"\0")

    def array(self, at, count, items=b""):
        """The hkArray at ``at`` (size and capacity set); its items' position, or None."""
        self.put(at + self.pointer, "II", count, count | ARRAY_FLAGS)
        if not count:
            return None
        self.local[at] = self.block(items)
        return self.local[at]

    def string_array(self, at, texts):
        items = self.array(at, len(texts), bytes(self.pointer * len(texts)))
        for index, text in enumerate(texts):
            self.string(items + self.pointer * index, text)

    def pointer_array(self, at, targets):
        items = self.array(at, len(targets), bytes(self.pointer * len(targets)))
        for index, target in enumerate(targets):
            self.pointers[items + self.pointer * index] = target


class Members:
    """Member offsets in declaration order, each aligned to its size."""

    def __init__(self, pointer, referenced=True):
        self.pointer = pointer
        self.at = 2 * pointer if referenced else 0

    def take(self, size, align=None):
        align = align or min(size, self.pointer)
        self.at += -self.at % align
        at, self.at = self.at, self.at + size
        return at

    def ptr(self):
        return self.take(self.pointer)

    def array(self):
        return self.take(self.pointer + 8, self.pointer)

    def size(self):
        return self.at + -self.at % self.pointer


def root_container(variants, pointer=8):
    """hkRootLevelContainer of [(name, class name, Obj)] variants."""
    members = Members(pointer, referenced=False)
    at = members.array()
    root = Obj("hkRootLevelContainer", members.size(), pointer)
    item = 3 * pointer
    items = root.array(at, len(variants), bytes(item * len(variants)))
    for index, (name, class_name, obj) in enumerate(variants):
        root.string(items + item * index, name)
        root.string(items + item * index + pointer, class_name)
        root.pointers[items + item * index + 2 * pointer] = obj
    return root


def animation_container(skeletons, pointer=8):
    members = Members(pointer)
    arrays = [members.array() for _ in range(5)]  # skeletons, animations, bindings, attachments, skins
    container = Obj("hkaAnimationContainer", members.size(), pointer)
    container.pointer_array(arrays[0], skeletons)
    for at in arrays[1:]:
        container.array(at, 0)
    return container


def skeleton(name, bones, parents, pose, *, version=8, pointer=8, float_slots=(), reference_floats=(),
             local_frames=(), locks=None, extra_parents=()):
    """hkaSkeleton: ``pose`` (n, 12) floats (translation xyz_, rotation xyzw, scale xyz_);
    ``local_frames`` [(Obj, bone)]; ``extra_parents`` appended after one parent per bone."""
    members = Members(pointer)
    name_at, parents_at, bones_at, pose_at, floats_at, slots_at, frames_at = (
        members.ptr(), *(members.array() for _ in range(6)))
    partitions_at = members.array() if version >= 11 else None
    obj = Obj("hkaSkeleton", members.size(), pointer)
    obj.string(name_at, name)
    all_parents = list(parents) + list(extra_parents)
    obj.array(parents_at, len(all_parents), struct.pack(f"<{len(all_parents)}h", *all_parents))
    item = 2 * pointer
    items = obj.array(bones_at, len(bones), bytes(item * len(bones)))
    for index, bone in enumerate(bones):
        obj.put(items + item * index + pointer, "B", int(locks[index]) if locks is not None else 0)
    for index, bone in enumerate(bones):
        obj.string(items + item * index, bone)
    obj.array(pose_at, len(pose), b"".join(struct.pack("<12f", *row) for row in pose))
    obj.array(floats_at, len(reference_floats), struct.pack(f"<{len(reference_floats)}f", *reference_floats))
    obj.string_array(slots_at, list(float_slots))
    items = obj.array(frames_at, len(local_frames), bytes(item * len(local_frames)))
    for index, (frame, bone) in enumerate(local_frames):
        obj.pointers[items + item * index] = frame
        obj.put(items + item * index + pointer, "h", bone)
    if partitions_at is not None:
        obj.array(partitions_at, 0)
    return obj


def string_data(class_name, arrays, strings, pointer=8):
    """hkbProjectStringData / hkbCharacterStringData: hkArray<hkStringPtr> members, then
    hkStringPtr members, each list or text given in declaration order."""
    members = Members(pointer)
    array_at = [members.array() for _ in arrays]
    string_at = [members.ptr() for _ in strings]
    obj = Obj(class_name, members.size(), pointer)
    for at, texts in zip(array_at, arrays):
        obj.string_array(at, texts)
    for at, text in zip(string_at, strings):
        obj.string(at, text)
    return obj


def node(class_name, text, pointer=8, size=0xC0):
    """A behaviour graph node kept whole by the product: its hkStringPtr at +40 / +72 (the clip
    generator's animation, the behaviour reference's behaviour file)."""
    obj = Obj(class_name, size, pointer)
    obj.string(72 if pointer == 8 else 40, text)
    return obj


def holder(class_name, targets, pointer=8, at=None, size=0x60):
    """An object of another class holding pointers to ``targets`` (an array at ``at``, else
    right after the hkReferencedObject), the rest zero."""
    obj = Obj(class_name, size, pointer)
    obj.pointer_array(2 * pointer if at is None else at, targets)
    return obj


def depth_first(root):
    order, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        order.append(obj)
        stack += [obj.pointers[src] for src in sorted(obj.pointers, reverse=True)]
    return order


def _table(rows, fields):
    out = bytearray(b"".join(struct.pack(f"<{fields}I", *row) for row in rows))
    _pad(out, 16, b"\xff")
    return bytes(out)


def _section_header(name, start, sizes, version):
    """sizes: (data, local table, global table, virtual table)."""
    data, local, global_, virtual = sizes
    tag = name.encode().ljust(19, b"\0") + b"\xff"
    offsets = (data, data + local, data + local + global_, *(data + local + global_ + virtual,) * 3)
    return tag + struct.pack("<7I", start, *offsets) + (b"\xff" * 16 if version >= 11 else b"")


def packfile(root, *, version=8, pointer=8, numbered=False, types=None):
    """The file's bytes. ``numbered``: each object starts with a distinct pointer-size number
    (1000, 1001...) and pointers to it lead to that number. ``types``: (bytes, local rows,
    global rows, virtual rows) of a ``__types__`` section, its virtual rows naming classes by
    name (listed in the class names after the others)."""
    objects = depth_first(root)
    names = list(BASE_CLASSES) + [obj.class_name for obj in objects]
    names += [row[2] for row in (types[3] if types else ())]
    classnames, offsets = bytearray(), {}
    for name in dict.fromkeys(names):
        classnames += struct.pack("<IB", zlib.crc32(name.encode()), 9)
        offsets[name] = len(classnames)
        classnames += name.encode() + b"\0"
    _pad(classnames, 16, b"\xff")

    data, starts, local_rows, global_rows, virtual_rows = bytearray(), {}, [], [], []
    number = pointer if numbered else 0
    for index, obj in enumerate(objects):
        starts[id(obj)] = len(data)
        virtual_rows.append((len(data), 0, offsets[obj.class_name]))
        if numbered:
            data += (1000 + index).to_bytes(pointer, "little")
        base = len(data)
        data += obj.data
        _pad(data, 16)
        local_rows += [(base + src, base + dst) for src, dst in sorted(obj.local.items())]
    for obj in objects:
        base = starts[id(obj)] + number
        global_rows += [(base + src, 2, starts[id(target)]) for src, target in sorted(obj.pointers.items())]
    data_tables = [_table(local_rows, 2), _table(global_rows, 3), _table(virtual_rows, 3)]

    if types:
        raw, local, global_, virtual = types
        type_tables = [_table(local, 2), _table(global_, 3), _table([(o, s, offsets[n]) for o, s, n in virtual], 3)]
    else:
        raw, type_tables = b"", [b"", b"", b""]

    head = MAGIC + struct.pack("<II", 0, version) + bytes((pointer, 1, 0, 1))
    head += struct.pack("<5I", 3, 2, 0, 0, offsets[root.class_name])
    head += CONTENTS[version].ljust(15, b"\0") + b"\xff" + struct.pack("<I", 0)
    head += struct.pack("<hh", 21, 16) + b"\x14" + bytes(15) if version >= 11 else b"\xff" * 4
    position = len(head) + 3 * (0x40 if version >= 11 else 0x30)
    chunks = [("__classnames__", bytes(classnames), [b"", b"", b""]),
              ("__types__", raw, type_tables), ("__data__", bytes(data), data_tables)]
    body = bytearray()
    for name, chunk, tables in chunks:
        head += _section_header(name, position, (len(chunk), *map(len, tables)), version)
        body += chunk + b"".join(tables)
        position += len(chunk) + sum(map(len, tables))
    return bytes(head + body)
