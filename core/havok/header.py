"""Packfile file header and section headers (Havok binary packfile, versions 8 and 11).

File header (0x40 bytes): magic, user tag, file version (8 = hk_2010, 11 = hk_2014), layout
rules (pointer size, little-endian flag, two packing flags), section count, where the contents
object is (section index + offset) and its class name (section index + offset), the contents
version text (15 bytes NUL-padded + 0xFF), flags. Version 11 then has i16 max predicate and
i16 predicate array size followed by that many bytes (0 in NIF blobs, 16 in .hkx files), which
moves the section headers; version 8 has four 0xFF bytes.

Section header: 19-byte NUL-padded tag + 0xFF, absolute start, then the local, global and virtual fixup
table offsets and the exports, imports and end offsets, relative to the start; version 11 adds
16 bytes of 0xFF.
"""

from ..errors import FormatError
from ..stream import decode_text, encode_text

MAGIC = bytes.fromhex("57E0E05710C0C010")
HK_2010, HK_2014 = 8, 11  # file versions: Skyrim (SE, and LE's 32-bit files), Fallout 4
VERSIONS = {HK_2010: "hk_2010", HK_2014: "hk_2014"}
TAG_SIZE = 20


def _text_field(s, value, size, what):
    """Text NUL-padded to ``size - 1`` bytes, then one 0xFF byte."""
    if s.reading:
        raw = s.raw(size=size)
        end = raw.find(b"\0")
        if not 0 <= end < size - 1:
            raise FormatError(f"{what} has no terminating NUL", offset=s.base + s.pos - size)
        return decode_text(raw[:end])
    raw = encode_text(value)
    if len(raw) >= size - 1:
        raise FormatError(f"{what} {value!r} is longer than {size - 2} bytes")
    s.raw(raw.ljust(size - 1, b"\0") + b"\xff")
    return value


class FileHeader:
    user_tag = 0
    file_version = 11
    pointer_size = 8
    little_endian = 1
    reuse_padding = 0
    empty_base = 1
    num_sections = 3
    contents_section = 2
    contents_offset = 0
    contents_class_section = 0
    contents_class_offset = 0
    contents_version = "hk_2014.1.0-r1"
    flags = 0
    max_predicate = 21
    predicates = b""

    def sync(self, s):
        magic = s.raw(MAGIC, 8)
        if magic != MAGIC:
            raise FormatError("not a binary Havok packfile (bad magic)", offset=0)
        self.user_tag = s.u32(self.user_tag)
        self.file_version = s.u32(self.file_version)
        if self.file_version not in VERSIONS:
            raise FormatError(
                f"Havok packfile version {self.file_version} is not supported (8 = hk_2010 and 11 = hk_2014 are)",
                offset=0x0C,
            )
        self.pointer_size = s.u8(self.pointer_size)
        self.little_endian = s.u8(self.little_endian)
        self.reuse_padding = s.u8(self.reuse_padding)
        self.empty_base = s.u8(self.empty_base)
        if self.pointer_size not in (4, 8):
            raise FormatError(f"pointer size {self.pointer_size} is not 4 or 8", offset=0x10)
        if self.little_endian != 1:
            raise FormatError("big-endian Havok packfiles are not supported", offset=0x11)
        self.num_sections = s.u32(self.num_sections)
        self.contents_section = s.u32(self.contents_section)
        self.contents_offset = s.u32(self.contents_offset)
        self.contents_class_section = s.u32(self.contents_class_section)
        self.contents_class_offset = s.u32(self.contents_class_offset)
        self.contents_version = _text_field(s, self.contents_version, 16, "contents version")
        self.flags = s.u32(self.flags)
        if self.file_version >= 11:
            self.max_predicate = s.i16(self.max_predicate)
            size = s.count(len(self.predicates), kind="i16", what="predicate array")
            if size < 0:
                raise FormatError(f"negative predicate array size {size}", offset=0x3E)
            self.predicates = s.raw(self.predicates, size)
        else:
            s.raw(b"\xff" * 4, 4)

    @property
    def section_header_size(self):
        return 0x40 if self.file_version >= 11 else 0x30


class SectionHeader:
    def __init__(self, name=""):
        self.name = name
        self.start = 0
        # local, global and virtual fixup tables, exports, imports, end: relative to start
        self.local = self.global_ = self.virtual = self.exports = self.imports = self.end = 0

    def sync(self, s, file_version):
        self.name = _text_field(s, self.name, TAG_SIZE, "section tag")
        self.start = s.u32(self.start)
        self.local = s.u32(self.local)
        self.global_ = s.u32(self.global_)
        self.virtual = s.u32(self.virtual)
        self.exports = s.u32(self.exports)
        self.imports = s.u32(self.imports)
        self.end = s.u32(self.end)
        if file_version >= 11:
            s.raw(b"\xff" * 16, 16)

    def set_sizes(self, start, data, local, global_, virtual):
        """Offsets from the sizes of the object data and the three tables."""
        self.start = start
        self.local = data
        self.global_ = data + local
        self.virtual = self.global_ + global_
        self.exports = self.imports = self.end = self.virtual + virtual
