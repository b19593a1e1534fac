"""A Fallout 3 / New Vegas standalone animation (.kf) written with struct from the layouts of
nif.xml (20.2.0.7, user version 11, bs 34), apart from the product's writer: the corpus holds
no .kf. One NiControllerSequence root; per animated node a NiTransformInterpolator and its
NiTransformData; a NiTextKeyExtraData."""

import struct


class KfWriter:
    def __init__(self):
        self.strings = []
        self.blocks = []  # (type name, bytes)

    def string(self, text):
        if text is None:
            return struct.pack("<i", -1)
        if text not in self.strings:
            self.strings.append(text)
        return struct.pack("<i", self.strings.index(text))

    def add(self, type_name, data):
        self.blocks.append((type_name, bytes(data)))
        return len(self.blocks)  # its index in the file, after the sequence

    @staticmethod
    def key_group(kind, keys):
        """keys: [(time, values tuple, extra floats tuple)] of one KeyGroup."""
        out = struct.pack("<I", len(keys))
        if keys:
            out += struct.pack("<I", kind)
        for time, values, extra in keys:
            out += struct.pack(f"<f{len(values)}f{len(extra)}f", time, *values, *extra)
        return out

    def transform_data(self, rotation=None, xyz=None, translation=(1, []), scale=(1, [])):
        """rotation: (kind, quaternion keys) or xyz: three (kind, float keys) groups."""
        if xyz is not None:
            data = struct.pack("<II", 1, 4) + b"".join(self.key_group(kind, keys) for kind, keys in xyz)
        else:
            kind, keys = rotation or (1, [])
            data = struct.pack("<I", len(keys)) + (struct.pack("<I", kind) if keys else b"")
            for time, values, extra in keys:
                data += struct.pack(f"<f4f{len(extra)}f", time, *values, *extra)
        data += self.key_group(*translation) + self.key_group(*scale)
        return self.add("NiTransformData", data)

    def interpolator(self, data_index):
        flt_max = 3.4028234663852886e38
        return self.add("NiTransformInterpolator", struct.pack("<3f4ffi", *(-flt_max,) * 3, *(-flt_max,) * 4, -flt_max, data_index))

    def text_keys(self, keys):
        data = self.string(None) + struct.pack("<I", len(keys))
        for time, text in keys:
            data += struct.pack("<f", time) + self.string(text)
        return self.add("NiTextKeyExtraData", data)

    def sequence(self, name, controlled, text_keys, start, stop, cycle_type=2, frequency=1.0):
        """controlled: [(node name, interpolator index)]; written first (the root)."""
        data = self.string(name) + struct.pack("<II", len(controlled), 1)
        for node, interpolator in controlled:
            data += struct.pack("<iiB", interpolator, -1, 0)
            data += self.string(node) + self.string(None) + self.string("NiTransformController") + self.string(None) + self.string(None)
        data += struct.pack("<fiIfffi", 1.0, text_keys, cycle_type, frequency, start, stop, -1)
        data += self.string(None)  # accumulation root name
        data += struct.pack("<H", 0)  # anim note arrays (bs > 28)
        return data

    def to_bytes(self, sequence_bytes):
        """The file with the sequence as block 0 (its references were made counting it: blocks
        added before are numbered from 1)."""
        blocks = [("NiControllerSequence", sequence_bytes)] + self.blocks
        types = list(dict.fromkeys(name for name, _ in blocks))
        out = b"Gamebryo File Format, Version 20.2.0.7\n"
        out += struct.pack("<IBIII", 0x14020007, 1, 11, len(blocks), 34)
        for text in (b"kf_writer", b"", b""):  # author, process script, export script
            out += bytes([len(text) + 1]) + text + b"\0"
        out += struct.pack("<H", len(types))
        for name in types:
            out += struct.pack("<I", len(name)) + name.encode()
        out += struct.pack(f"<{len(blocks)}H", *(types.index(name) for name, _ in blocks))
        out += struct.pack(f"<{len(blocks)}I", *(len(data) for _, data in blocks))
        out += struct.pack("<II", len(self.strings), max((len(s) for s in self.strings), default=0))
        for text in self.strings:
            out += struct.pack("<I", len(text)) + text.encode()
        out += struct.pack("<I", 0)  # groups
        for _, data in blocks:
            out += data
        return out + struct.pack("<Ii", 1, 0)

    def bspline(self, start, stop, count, channels):
        """A NiBSplineCompTransformInterpolator (and its NiBSplineData, NiBSplineBasisData):
        ``channels`` {"translation" / "rotation" / "scale": (shorts (count * width), offset,
        half range)}; channels left out get the 0xFFFF handle."""
        flt_max = 3.4028234663852886e38
        shorts, handles, ranges = [], [], []
        for name in ("translation", "rotation", "scale"):
            if name in channels:
                values, offset, half_range = channels[name]
                handles.append(len(shorts))
                shorts += list(values)
                ranges += [offset, half_range]
            else:
                handles.append(0xFFFF)
                ranges += [flt_max, flt_max]
        data = self.add("NiBSplineData", struct.pack("<II", 0, len(shorts)) + struct.pack(f"<{len(shorts)}h", *shorts))
        basis = self.add("NiBSplineBasisData", struct.pack("<I", count))
        pose = struct.pack("<3f4ff", *(-flt_max,) * 8)
        fields = struct.pack("<ffii", start, stop, data, basis) + pose + struct.pack("<3I6f", *handles, *ranges)
        return self.add("NiBSplineCompTransformInterpolator", fields)


# A walk over the New Vegas skeleton (the corpus file below): its Bip01 Pelvis and Spine keys.
SKELETON = "pynifly/io_scene_nifly/skeletons/FONV/skeleton.nif"
PELVIS_ROTATIONS = [(0.0, (1.0, 0.0, 0.0, 0.0), (0.2, 0.1, -0.3)), (0.5, (0.7071068, 0.0, 0.7071068, 0.0), (0.0, 0.0, 0.0)),
                    (1.0, (0.0, 0.0, 0.0, 1.0), (-0.5, 0.0, 0.25)),
                    (1.5, (-0.7071068, 0.0, 0.0, -0.7071068), (0.0, 0.0, 0.0))]  # fmt: skip  (the last on the far side)
PELVIS_TRANSLATIONS = [(0.0, (0.0, 1.0, 2.0), (0.0, 0.0, 0.0)), (0.4, (3.0, -1.0, 2.5), (0.5, 0.2, -0.1)), (1.0, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0))]
SPINE_X = [(0.0, (0.1,), (0.0, 0.3)), (0.3, (0.4,), (0.2, -0.1)), (1.0, (-0.2,), (0.0, 0.0))]
SPINE_Z = [(0.0, (0.0,), ()), (0.6, (1.2,), ())]
SPINE_SCALE = [(0.0, (1.0,), ()), (0.5, (1.5,), ())]


def build_kf():
    """Pelvis: TBC quaternion and translation keys; Spine: quadratic X and linear Z Euler keys,
    constant scale keys; text keys at the start and end."""
    kf = KfWriter()
    pelvis = kf.interpolator(kf.transform_data(rotation=(3, PELVIS_ROTATIONS), translation=(3, PELVIS_TRANSLATIONS)))
    spine = kf.interpolator(kf.transform_data(xyz=[(2, SPINE_X), (1, []), (1, SPINE_Z)], scale=(5, SPINE_SCALE)))
    text = kf.text_keys([(0.0, "start"), (1.0, "end")])
    sequence = kf.sequence("Walk", [("Bip01 Pelvis", pelvis), ("Bip01 Spine", spine)], text, 0.0, 1.0, cycle_type=0)
    return kf.to_bytes(sequence)
