"""Havok packfiles read with struct, apart from the product's container and decoders: the
objects of the data section (sections and fixup tables straight from the bytes) and a skeleton's
fields found by its pointers. A spline-compressed animation's keys are read by
tests/raw_hkx_spline.py."""

import struct

import numpy as np


def sections(data):
    """[(name, start, local, global, virtual, exports)] from the section headers."""
    version, = struct.unpack_from("<I", data, 12)
    count, = struct.unpack_from("<I", data, 20)
    at = 0x40 + (struct.unpack_from("<h", data, 0x3E)[0] if version >= 11 else 0)
    size = 0x40 if version >= 11 else 0x30
    out = []
    for index in range(count):
        name = data[at + size * index : at + size * index + 20].split(b"\0")[0].decode()
        out.append((name, *struct.unpack_from("<5I", data, at + size * index + 20)))
    return out


def _rows(data, start, end, fields):
    rows = [struct.unpack_from(f"<{fields}I", data, at) for at in range(start, end - 4 * fields + 1, 4 * fields)]
    return [row for row in rows if row[0] != 0xFFFFFFFF]


class RawObject:
    """One object of the data section: class name, bytes (to the next object), {src: dst} local
    pointers and {src: (target object index, offset in the section)} global ones."""

    def __init__(self, class_name, data, local, pointers):
        self.class_name, self.data, self.local, self.pointers = class_name, data, local, pointers


def data_objects(data):
    """The data section's objects in offset order, offsets relative to each object's start."""
    table = sections(data)
    names_start, names_size = table[0][1], table[0][2]
    names, at = {}, names_start
    while at + 5 < names_start + names_size and data[at : at + 4] != b"\xff\xff\xff\xff":
        end = data.index(b"\0", at + 5)
        names[at + 5 - names_start] = data[at + 5 : end].decode()
        at = end + 1
    _name, start, local, global_, virtual, exports = next(row for row in table if row[0] == "__data__")
    virtual_rows = sorted(_rows(data, start + virtual, start + exports, 3))
    starts = [row[0] for row in virtual_rows] + [local]
    owner = lambda offset: max(k for k, s in enumerate(starts[:-1]) if s <= offset)  # noqa: E731
    objects = []
    for k, (offset, _section, name) in enumerate(virtual_rows):
        objects.append(RawObject(names[name], data[start + offset : start + starts[k + 1]], {}, {}))
    for src, dst in _rows(data, start + local, start + global_, 2):
        k = owner(src)
        objects[k].local[src - starts[k]] = dst - starts[k]
    for src, _section, dst in _rows(data, start + global_, start + virtual, 3):
        k = owner(src)
        objects[k].pointers[src - starts[k]] = (owner(dst), dst)
    return objects


def skeleton_fields(obj, pointer=8):
    """(name, bone names, parents, (n, 12) reference pose floats) of an hkaSkeleton, its members
    found in order by their pointers (name, parents, bones, pose: the first four the object
    holds), whatever comes before them; counts are the u32 after each pointer."""
    name_at, parents_at, bones_at, pose_at = sorted(obj.local)[:4]
    text = lambda at: obj.data[at : obj.data.index(b"\0", at)].decode()  # noqa: E731
    count = lambda at: struct.unpack_from("<I", obj.data, at + pointer)[0]  # noqa: E731
    bone_size = 2 * pointer
    bones = count(bones_at)
    names = [text(obj.local[obj.local[bones_at] + bone_size * i]) for i in range(bones)]
    parents = struct.unpack_from(f"<{count(parents_at)}h", obj.data, obj.local[parents_at])
    pose = np.frombuffer(obj.data, "<f4", 12 * count(pose_at), obj.local[pose_at]).reshape(-1, 12)
    return text(obj.local[name_at]), names, list(parents), pose
