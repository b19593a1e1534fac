"""NIF header: version line, Bethesda stream header, block types, sizes and string table."""

from ..errors import FormatError
from ..stream import TableString
from . import versions

NIF_VERSION_20_2_0_7 = 0x14020007


def version_string(version):
    return ".".join(str((version >> shift) & 0xFF) for shift in (24, 16, 8, 0))


class StringTable:
    """The header's string table. Strings are appended as blocks reference new ones; the
    original order is kept, so an unchanged file writes back byte-identical."""

    def __init__(self, strings=()):
        self.strings = list(strings)
        self._lookup = {}
        for index, text in enumerate(self.strings):
            self._lookup.setdefault(text, index)

    def __len__(self):
        return len(self.strings)

    def __getitem__(self, index):
        return self.strings[index]

    def index(self, text):
        if isinstance(text, TableString) and text.index < len(self.strings) and self.strings[text.index] == text:
            return text.index
        index = self._lookup.get(text)
        if index is None:
            index = len(self.strings)
            self.strings.append(str(text))
            self._lookup[text] = index
        return index


class Header:
    """Everything before the first block. Also the context blocks read their versions and
    string table from."""

    header_line = b"Gamebryo File Format, Version 20.2.0.7\n"
    version = NIF_VERSION_20_2_0_7
    little_endian = 1
    user_version = 12
    bs_version = 130
    author = ""
    process_script = ""
    export_script = ""
    max_filepath = ""
    unknown_int = 0

    def __init__(self, **fields):
        self.block_types = []
        self.block_type_indices = []
        self.block_sizes = []
        self.strings = StringTable()
        self.max_string_length = 0
        self.groups = []
        self.num_blocks = 0
        for key, value in fields.items():
            if not hasattr(self, key):
                raise AttributeError(f"Header has no field {key!r}")
            setattr(self, key, value)

    # -- what blocks ask -----------------------------------------------------------------
    @property
    def big_endian(self):
        return not self.little_endian

    @property
    def game(self):
        return versions.game(self.bs_version, self.user_version)

    def string_index(self, text):
        return self.strings.index(text)

    # -- layout --------------------------------------------------------------------------
    def sync(self, s):
        if s.reading:
            line = bytes(s.data[:128]).split(b"\n", 1)
            if len(line) < 2 or not line[0].startswith((b"Gamebryo File Format", b"NetImmerse File Format")):
                raise FormatError("not a NIF file (no 'Gamebryo File Format' header line)", offset=0)
            # The line names the version; what follows it differs in other versions, so a file
            # of another version (NetImmerse 4.x, Gamebryo 10.x, 20.0...) is told it here.
            named = line[0].partition(b", Version ")[2].decode("ascii", "replace")
            if named and named != version_string(NIF_VERSION_20_2_0_7):
                raise FormatError(f"NIF version {named} is not supported (only 20.2.0.7)", offset=0)
            self.header_line = s.raw(size=len(line[0]) + 1)
        else:
            s.raw(self.header_line)
        self.version = s.u32(self.version)
        if self.version != NIF_VERSION_20_2_0_7:
            raise s.error(f"NIF version {version_string(self.version)} is not supported (only 20.2.0.7)", 0)
        self.little_endian = s.u8(self.little_endian)
        if self.little_endian not in (0, 1):
            raise s.error(f"endian byte is {self.little_endian}, not 0 or 1", s.pos - 1)
        self.user_version = s.u32(self.user_version)
        if self.user_version < 3:
            raise s.error(f"user version {self.user_version}: not a Bethesda NIF", s.pos - 4)
        self.num_blocks = s.u32(self.num_blocks)
        self.bs_version = s.u32(self.bs_version)
        self.author = s.short_string(self.author)
        if versions.after_fo4_release(self.bs_version):  # they store a u32 here instead
            self.unknown_int = s.u32(self.unknown_int)
        else:
            self.process_script = s.short_string(self.process_script)
        self.export_script = s.short_string(self.export_script)
        if versions.fo4_dev_or_later(self.bs_version):
            self.max_filepath = s.short_string(self.max_filepath)

        # Xbox 360 files switch to big-endian here (FORMAT-NOTES section 7).
        s.set_big_endian(self.big_endian)
        num_types = s.count(len(self.block_types), kind="u16", item_size=4, what="block types")
        self.block_types = s.repeat(self.block_types, num_types, s.sized_string)
        self.block_type_indices = s.array(self.block_type_indices, "u2", self.num_blocks)
        self.block_sizes = s.array(self.block_sizes, "u4", self.num_blocks)
        num_strings = s.count(len(self.strings), item_size=4, what="strings")
        self.max_string_length = s.u32(self.max_string_length)
        strings = s.repeat(self.strings.strings, num_strings, s.sized_string)
        if s.reading:
            self.strings = StringTable(strings)
        num_groups = s.count(len(self.groups), item_size=4, what="groups")
        self.groups = s.array(self.groups, "u4", num_groups)
