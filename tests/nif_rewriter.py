"""A NIF taken apart into header fields and block bytes with struct, edited, and put back
together: builds the situations the corpus lacks (a Fallout 76 file, a billboard node, a shape
without vertex data, collision on a skeleton bone) from corpus files, apart from the product's
reader and writer. Little-endian 20.2.0.7 files only (FORMAT-NOTES section 1)."""

import struct

STATIC = "nifly/tests/input/TestNifFile_Static_FO4.nif"  # the nifly FO4 golden
FO76_MATERIAL = "Materials\\Test\\FO76Test.bgsm"


class RawNif:
    def __init__(self, data):
        self.data = bytes(data)
        at = self.data.index(b"\n") + 1
        self.line = self.data[:at]
        self.version, self.endian, self.user_version, count, self.bs_version = struct.unpack_from("<IBIII", self.data, at)
        at += 17
        self.export_info = []  # (kind, value): the export strings and FO76's u32, in order
        kinds = ["short", "int" if self.bs_version > 130 else "short", "short"] + (["short"] if self.bs_version >= 103 else [])
        for kind in kinds:
            if kind == "int":
                self.export_info.append((kind, struct.unpack_from("<I", self.data, at)[0]))
                at += 4
            else:
                size = self.data[at]
                self.export_info.append((kind, self.data[at + 1 : at + 1 + size]))
                at += 1 + size
        (type_count,) = struct.unpack_from("<H", self.data, at)
        at += 2
        self.types = []
        for _ in range(type_count):
            (size,) = struct.unpack_from("<I", self.data, at)
            self.types.append(self.data[at + 4 : at + 4 + size].decode())
            at += 4 + size
        self.type_indices = list(struct.unpack_from(f"<{count}H", self.data, at))
        at += 2 * count
        sizes = struct.unpack_from(f"<{count}I", self.data, at)
        at += 4 * count
        string_count, self.max_string_length = struct.unpack_from("<II", self.data, at)
        at += 8
        self.strings = []
        for _ in range(string_count):
            (size,) = struct.unpack_from("<I", self.data, at)
            self.strings.append(self.data[at + 4 : at + 4 + size].decode("latin-1"))
            at += 4 + size
        (group_count,) = struct.unpack_from("<I", self.data, at)
        self.groups = self.data[at : at + 4 + 4 * group_count]
        at += 4 + 4 * group_count
        self.blocks = []
        for size in sizes:
            self.blocks.append(bytearray(self.data[at : at + size]))
            at += size
        self.footer = self.data[at:]

    @classmethod
    def read(cls, path):
        return cls(path.read_bytes())

    def type_of(self, index):
        return self.types[self.type_indices[index] & 0x7FFF]

    def set_type(self, index, type_name):
        if type_name not in self.types:
            self.types.append(type_name)
        self.type_indices[index] = self.types.index(type_name)

    def add_block(self, type_name, data):
        self.blocks.append(bytearray(data))
        self.type_indices.append(0)
        self.set_type(len(self.blocks) - 1, type_name)
        return len(self.blocks) - 1

    def string_index(self, text):
        if text not in self.strings:
            self.strings.append(text)
            self.max_string_length = max(self.max_string_length, len(text))
        return self.strings.index(text)

    def block_types(self):
        return [self.type_of(index) for index in range(len(self.blocks))]

    def indices_of(self, type_name):
        return [i for i in range(len(self.blocks)) if self.type_of(i) == type_name]

    def to_bytes(self):
        out = bytearray(self.line)
        out += struct.pack("<IBIII", self.version, self.endian, self.user_version, len(self.blocks), self.bs_version)
        for kind, value in self.export_info:
            out += struct.pack("<I", value) if kind == "int" else bytes([len(value)]) + value
        out += struct.pack("<H", len(self.types))
        for name in self.types:
            out += struct.pack("<I", len(name)) + name.encode()
        out += struct.pack(f"<{len(self.blocks)}H", *self.type_indices)
        out += struct.pack(f"<{len(self.blocks)}I", *(len(b) for b in self.blocks))
        out += struct.pack("<II", len(self.strings), self.max_string_length)
        for text in self.strings:
            out += struct.pack("<I", len(text)) + text.encode("latin-1")
        out += self.groups
        for block in self.blocks:
            out += block
        return bytes(out + self.footer)

    # -- NiAVObject fields (bs <= 34: a property list before the collision object) ---------------
    def av_offsets(self, index):
        """Offsets in a node's or shape's bytes: {"name", "transform", "collision", "end"}
        (``end``: where NiAVObject's fields stop)."""
        block = self.blocks[index]
        at = 4 if self.type_of(index) == "BSLightingShaderProperty" and 83 <= self.bs_version <= 139 else 0
        offsets = {"name": at}
        (extra,) = struct.unpack_from("<I", block, at + 4)
        at += 8 + 4 * extra + 4  # name, extra data list, controller
        at += 4 if self.bs_version > 26 else 2  # flags
        offsets["transform"] = at
        at += 52
        if self.bs_version <= 34:
            (properties,) = struct.unpack_from("<I", block, at)
            at += 4 + 4 * properties
        offsets["collision"] = at
        offsets["end"] = at + 4
        return offsets

    def flags(self, index):
        """NiAVObject's flags (u32 after bs 26)."""
        return struct.unpack_from("<I", self.blocks[index], self.av_offsets(index)["transform"] - 4)[0]

    def node_name(self, index):
        (name,) = struct.unpack_from("<i", self.blocks[index], self.av_offsets(index)["name"])
        return self.strings[name] if 0 <= name < len(self.strings) else None

    def node_children(self, index):
        at = self.av_offsets(index)["end"]
        (count,) = struct.unpack_from("<I", self.blocks[index], at)
        return list(struct.unpack_from(f"<{count}i", self.blocks[index], at + 4))

    def set_children(self, index, children):
        block, at = self.blocks[index], self.av_offsets(index)["end"]
        (count,) = struct.unpack_from("<I", block, at)
        block[at : at + 4 + 4 * count] = struct.pack(f"<I{len(children)}i", len(children), *children)

    def set_transform(self, index, translation, rotation, scale):
        """``rotation``: the 3x3 matrix R as rows (what the file stores)."""
        values = [*translation, *(value for row in rotation for value in row), scale]
        struct.pack_into("<13f", self.blocks[index], self.av_offsets(index)["transform"], *values)

    def roots(self):
        (count,) = struct.unpack_from("<I", self.footer)
        return list(struct.unpack_from(f"<{count}i", self.footer, 4))

    def set_collision(self, index, collision):
        struct.pack_into("<i", self.blocks[index], self.av_offsets(index)["collision"], collision)


def fo76_file(corpus, tmp_path):
    """The nifly FO4 golden as Fallout 76 writes it: bs 155 (a u32 in place of the process
    script), BSTriShape with bound min/max, shaders named after their material file and holding
    nothing else."""
    nif = RawNif.read(corpus / STATIC)
    nif.bs_version = 155
    nif.export_info[1] = ("int", 0)
    for index in nif.indices_of("BSTriShape"):
        block = nif.blocks[index]
        at = nif.av_offsets(index)["end"] + 16  # bound centre and radius
        block[at:at] = struct.pack("<6f", -1.0, -2.0, -3.0, 1.0, 2.0, 3.0)
    for index in nif.indices_of("BSLightingShaderProperty"):
        nif.blocks[index] = bytearray(struct.pack("<iIi", nif.string_index(FO76_MATERIAL), 0, -1))
    path = tmp_path / "Static_FO76.nif"
    path.write_bytes(nif.to_bytes())
    return path
