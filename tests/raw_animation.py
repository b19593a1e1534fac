"""Animation sequences read straight from a NIF's bytes with struct, apart from the product's
block decoders: what animation tests compare Blender with. Blocks are cut out by
tests/nif_rewriter.RawNif (header, types, sizes, strings); each one's fields are unpacked here
(little-endian PC files, 20.2.0.7, bs version above 28: FO3 to FO4)."""

import struct

from nif_rewriter import RawNif


class Reader:
    def __init__(self, data, strings):
        self.data, self.at, self.strings = data, 0, strings

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def take_tuple(self, width):
        value = self.take(f"{width}f")
        return value if isinstance(value, tuple) else (value,)

    def string(self):
        index = self.take("i")
        return None if index < 0 else self.strings[index]


def key_group(r, width, quaternion=False):
    """(interpolation, [(time, value tuple, extra tuple)]) of a KeyGroup (or quaternion keys)."""
    n = r.take("I")
    if not n:
        return None, []
    kind = r.take("I")
    return kind, keys(r, n, kind, width, quaternion)


def keys(r, n, kind, width, quaternion=False):
    out = []
    for _ in range(n):
        time = r.take("f")
        value = r.take_tuple(width)
        extra = ()
        if kind == 2 and not quaternion:
            extra = (r.take_tuple(width), r.take_tuple(width))  # forward, backward
        elif kind == 3:
            extra = r.take("3f")
        out.append((time, value, extra))
    return out


class Sequence:
    def __init__(self, name, blocks, text_key_ref, cycle_type, frequency, start, stop):
        self.name, self.blocks, self.text_key_ref = name, blocks, text_key_ref
        self.cycle_type, self.frequency, self.start, self.stop = cycle_type, frequency, start, stop


def read_sequences(path_or_bytes):
    """(RawNif, [Sequence]) where each Sequence.blocks is [(node name, controller type,
    interpolator index)]."""
    raw = RawNif(path_or_bytes.read_bytes() if hasattr(path_or_bytes, "read_bytes") else path_or_bytes)
    sequences = []
    for index, data in enumerate(raw.blocks):
        if raw.type_of(index) != "NiControllerSequence":
            continue
        r = Reader(data, raw.strings)
        name = r.string()
        count = r.take("I")
        r.take("I")  # array grow by
        blocks = []
        for _ in range(count):
            interpolator, _controller, _priority = r.take("iiB")
            node, _prop, controller_type, _cid, _iid = (r.string() for _ in range(5))
            blocks.append((node, controller_type, interpolator))
        _weight, text_keys, cycle_type, frequency, start, stop = r.take("fiIfff")
        sequences.append(Sequence(name, blocks, text_keys, cycle_type, frequency, start, stop))
    return raw, sequences


def transform_data(raw, interpolator_index):
    """{"rotation": (type, keys) or "xyz": [(type, keys)] * 3, "translation": ..., "scale": ...,
    "pose": {"translation", "rotation", "scale"}} of a NiTransformInterpolator (no keys when it has
    no NiTransformData), or None when its data is something else."""
    r = Reader(raw.blocks[interpolator_index], raw.strings)
    values = r.take("3f4ff")
    pose = {"translation": values[:3], "rotation": values[3:7], "scale": values[7]}
    data = r.take("i")
    if data < 0:
        return {"pose": pose, "rotation": (None, []), "translation": (None, []), "scale": (None, [])}
    if raw.type_of(data) != "NiTransformData":
        return None
    r = Reader(raw.blocks[data], raw.strings)
    out = {"pose": pose}
    n = r.take("I")
    kind = r.take("I") if n else None
    if kind == 4:
        out["xyz"] = [key_group(r, 1) for _ in range(3)]
    else:
        out["rotation"] = (kind, keys(r, n, kind, 4, quaternion=True))
    out["translation"] = key_group(r, 3)
    out["scale"] = key_group(r, 1)
    return out


def text_keys(raw, index):
    """[(time, text)] of a NiTextKeyExtraData."""
    r = Reader(raw.blocks[index], raw.strings)
    r.string()
    return [(r.take("f"), r.string()) for _ in range(r.take("I"))]


def bool_data(raw, interpolator_index):
    """(interpolation, [(time, value)]) of a NiBoolInterpolator's NiBoolData, or (None, pose
    value) for one without keys."""
    r = Reader(raw.blocks[interpolator_index], raw.strings)
    pose = r.take("B")
    data = r.take("i")
    if data < 0 or raw.type_of(data) != "NiBoolData":
        return None, pose
    r = Reader(raw.blocks[data], raw.strings)
    n = r.take("I")
    kind = r.take("I") if n else None
    return kind, [r.take("fB") for _ in range(n)]


def float_data(raw, interpolator_index):
    """(interpolation, [(time, value, extra)]) of a NiFloatInterpolator's NiFloatData, or None."""
    r = Reader(raw.blocks[interpolator_index], raw.strings)
    r.take("f")  # pose value
    data = r.take("i")
    if data < 0 or raw.type_of(data) != "NiFloatData":
        return None
    return key_group(Reader(raw.blocks[data], raw.strings), 1)


def pos_data(raw, interpolator_index):
    """(interpolation, [(time, (r, g, b), extra)]) of a NiPoint3Interpolator's NiPosData, or None."""
    r = Reader(raw.blocks[interpolator_index], raw.strings)
    r.take("3f")  # pose value
    data = r.take("i")
    if data < 0 or raw.type_of(data) != "NiPosData":
        return None
    return key_group(Reader(raw.blocks[data], raw.strings), 3)
