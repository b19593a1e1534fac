"""Havok packfiles read with struct, apart from the product's container and decoders: the
objects of the data section (sections and fixup tables straight from the bytes), a skeleton's
fields found by its pointers, and a spline-compressed animation decoded one key at a time with
its B-splines evaluated by the recursive Cox-de Boor definition."""

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


def _align(pos, n):
    return (pos + n - 1) // n * n


def _basis(i, p, u, knots):
    """N_{i,p}(u) by the recursive definition (0/0 = 0)."""
    if p == 0:
        return 1.0 if knots[i] <= u < knots[i + 1] else 0.0
    total = 0.0
    if knots[i + p] != knots[i]:
        total += (u - knots[i]) / (knots[i + p] - knots[i]) * _basis(i, p - 1, u, knots)
    if knots[i + p + 1] != knots[i + 1]:
        total += (knots[i + p + 1] - u) / (knots[i + p + 1] - knots[i + 1]) * _basis(i + 1, p - 1, u, knots)
    return total


def _spline_value(spline, u):
    degree, knots, points = spline
    n = len(points) - 1
    if u >= knots[n + 1]:
        return np.array(points[n], float)
    value = np.zeros(len(points[0]))
    for i in range(n + 1):
        if knots[i] <= u < knots[i + degree + 1]:
            value += _basis(i, degree, u, knots) * np.array(points[i])
    return value


def _quat40(raw):
    bits = int.from_bytes(raw, "little")
    scale = 1 / (2047 * 2 ** 0.5)
    three = [(((bits >> (12 * k)) & 0xFFF) - 2047) * scale for k in range(3)]
    index, negative = (bits >> 36) & 3, (bits >> 38) & 1
    big = max(0.0, 1 - sum(c * c for c in three)) ** 0.5 * (-1 if negative else 1)
    return three[:index] + [big] + three[index:]


def _read_vector(data, pos, flags, quant, identity):
    assert quant == 1, "the corpus and the writer use 16-bit positions and scales"
    if flags & 0x70:
        n, degree = struct.unpack_from("<HB", data, pos)
        knots = list(data[pos + 3 : pos + 3 + n + degree + 2])
        pos = _align(pos + 3 + n + degree + 2, 4)
        axes = []
        for axis in range(3):
            if flags >> (4 + axis) & 1:
                axes.append(("spline", *struct.unpack_from("<2f", data, pos)))
                pos += 8
            elif flags >> axis & 1:
                axes.append(("static", struct.unpack_from("<f", data, pos)[0]))
                pos += 4
            else:
                axes.append(("static", identity))
        points = []
        for _ in range(n + 1):
            point = []
            for axis in axes:
                if axis[0] == "spline":
                    point.append(axis[1] + (axis[2] - axis[1]) * struct.unpack_from("<H", data, pos)[0] / 65535)
                    pos += 2
                else:
                    point.append(axis[1])
            points.append(point)
        return _align(pos, 4), (degree, knots, points)
    value = []
    for axis in range(3):
        if flags >> axis & 1:
            value.append(struct.unpack_from("<f", data, pos)[0])
            pos += 4
        else:
            value.append(identity)
    return pos, value


def _quat48(raw):
    x, y, z = struct.unpack("<3H", raw)
    scale = 1 / (16383 * 2 ** 0.5)
    three = [((v & 0x7FFF) - 16383) * scale for v in (x, y, z)]
    index = (x >> 15) | ((y >> 15) << 1)
    big = max(0.0, 1 - sum(c * c for c in three)) ** 0.5 * (-1 if z >> 15 else 1)
    return three[:index] + [big] + three[index:]


# rotation quantisations: (bytes, alignment, reader)
QUATERNIONS = {1: (5, 1, _quat40), 2: (6, 2, _quat48), 5: (16, 4, lambda raw: list(struct.unpack("<4f", raw)))}


def _read_rotation(data, pos, flags, quant):
    size, alignment, read = QUATERNIONS[quant]
    if flags & 0xF0:
        n, degree = struct.unpack_from("<HB", data, pos)
        knots = list(data[pos + 3 : pos + 3 + n + degree + 2])
        pos = _align(pos + 3 + n + degree + 2, alignment)
        points = [read(data[pos + size * i : pos + size * i + size]) for i in range(n + 1)]
        return _align(pos + size * (n + 1), 4), (degree, knots, points)
    if flags & 0x0F:
        pos = _align(pos, alignment)
        return _align(pos + size, 4), read(data[pos : pos + size])
    return pos, [0.0, 0.0, 0.0, 1.0]


def independent_frames(obj_bytes, data_at, frames_wanted):
    """{frame: (translations, rotations, scales)} read from the object's bytes (as stored in the file)."""
    tracks, floats = struct.unpack_from("<ii", obj_bytes, 0x18)
    frame_count, blocks, per_block, mask_size = struct.unpack_from("<4i", obj_bytes, 0x38)
    offsets_at, = struct.unpack_from("<I", obj_bytes, 0x58 + 8)  # size
    data_size, = struct.unpack_from("<I", obj_bytes, 0x98 + 8)
    block_offsets_at = data_at["blocks"]
    data = obj_bytes[data_at["data"] : data_at["data"] + data_size]
    block_offsets = struct.unpack_from(f"<{blocks}I", obj_bytes, block_offsets_at)
    result = {}
    for frame in frames_wanted:
        block = min(frame // (per_block - 1), blocks - 1)
        u = frame - block * (per_block - 1)
        start = block_offsets[block]
        pos = _align(start + mask_size, 4)
        translations, rotations, scales = [], [], []
        for track in range(tracks):
            quant, position_flags, rotation_flags, scale_flags = data[start + 4 * track : start + 4 * track + 4]
            pos, position = _read_vector(data, pos, position_flags, quant & 3, 0.0)
            pos = _align(pos, 4)
            pos, rotation = _read_rotation(data, pos, rotation_flags, (quant >> 2) & 15)
            pos, scale = _read_vector(data, pos, scale_flags, quant >> 6, 1.0)
            translations.append(_spline_value(position, u) if isinstance(position, tuple) else position)
            scales.append(_spline_value(scale, u) if isinstance(scale, tuple) else scale)
            q = _spline_value(rotation, u) if isinstance(rotation, tuple) else np.array(rotation)
            rotations.append(q / np.linalg.norm(q))
        result[frame] = (np.array(translations), np.array(rotations), np.array(scales, float))
    return result
