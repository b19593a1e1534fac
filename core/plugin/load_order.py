"""A load order as the game builds it (Fallout 4, Skyrim SE and LE), and FormIDs as the game
numbers them.

The game's own masters load first, listed in plugins.txt or not (libloadorder's hardcoded and
implicitly active plugins: Fallout4.esm then its DLCs; Skyrim.esm, Update.esm, then SE's
Dawnguard, HearthFires and Dragonborn); then the active plugins (``*Name.esp`` lines) of ``plugins.txt``, else every other plugin of the Data
folder by name. ESM-flagged plugins (the header flag 0x1, or an .esm/.esl name) load before the
others whatever their line. A light plugin (header flag 0x200, or an .esl name; fopdoc's
Fallout 4 record header and xEdit's TES4 flags) takes no slot of its own: its records live in
the 0xFE space, ``FE`` + 12-bit light index + 12-bit object id; the others take slots 00..FD.

The game is told by the plugins' TES4 header: its HEDR version (Fallout 4 0.95 and 1.0, Skyrim
SE 1.7 and 1.71, Skyrim LE 0.94 with a form version from 40 to 43; xEdit's and the CKs' values),
the Data folder's own game master's first, else the first plugin's that says; Fallout 4 when
none does.

A record is keyed by the plugin that defines it (its origin, the master its FormID's top byte
indexes, or the plugin itself) and its object id, so FormIDs stored in different plugins
compare even when a master is missing from the Data folder.
"""

import os
import struct
from pathlib import Path

from ..errors import FormatError
from ..stream import decode_text

GAMES = {  # each game's own masters, in the order it loads them
    "FO4": ("Fallout4.esm", "DLCRobot.esm", "DLCworkshop01.esm", "DLCCoast.esm", "DLCworkshop02.esm",
            "DLCworkshop03.esm", "DLCNukaWorld.esm", "DLCUltraHighResolution.esm"),
    "SSE": ("Skyrim.esm", "Update.esm", "Dawnguard.esm", "HearthFires.esm", "Dragonborn.esm"),
    "TES5": ("Skyrim.esm", "Update.esm"),
}
GAME_MASTERS = GAMES["FO4"]  # precombines are Fallout 4's alone
HEDR_VERSIONS = {0.95: "FO4", 1.0: "FO4", 1.7: "SSE", 1.71: "SSE", 0.94: "TES5"}
SKYRIM_LE_FORM_VERSIONS = range(40, 44)  # Fallout 3 and New Vegas share HEDR 0.94 with lower ones
SUFFIXES = (".esm", ".esl", ".esp")
MASTER_FLAG = 0x1
LIGHT_FLAG = 0x200
FULL_SLOTS = 0xFE  # 00..FD; FE is the light plugins' space, FF the game's runtime records
LIGHT_SLOTS = 0x1000
HEADER = struct.Struct("<4sIII")


class Entry:
    """A plugin of the load order: ``name``, ``path``, header ``flags``, ``masters`` (names as
    stored), ``code`` (its number as an origin), ``slot`` (its FormID top byte, or its light
    index for a light plugin)."""

    def __init__(self, name, path, flags, masters):
        self.name = name
        self.path = path
        self.flags = flags
        self.masters = masters
        suffix = name.lower()[-4:]
        self.light = bool(flags & LIGHT_FLAG) or suffix == ".esl"
        self.master = bool(flags & MASTER_FLAG) or suffix in (".esm", ".esl")
        self.code = None
        self.slot = None

    def load_order_id(self, object_id):
        if self.light:
            return 0xFE000000 | self.slot << 12 | object_id & 0xFFF
        return self.slot << 24 | object_id & 0xFFFFFF

    @property
    def kind(self):
        return "light" if self.light else "master" if self.master else "plugin"


def read_header(path):
    """(flags, [master names], game or None) of a plugin, reading its TES4 record only."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(24)
            if len(head) < 24:
                raise FormatError(f"{len(head)} bytes: not even a record header", path=str(path))
            kind, size, flags, _ = HEADER.unpack_from(head)
            form_version = struct.unpack_from("<H", head, 20)[0]
            if kind != b"TES4":
                raise FormatError(f"not a plugin (first record {kind!r}, not TES4)", path=str(path))
            body = handle.read(size)
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(path)) from None
    if len(body) != size:
        raise FormatError(f"its header record of {size} bytes runs past the end of the file", path=str(path))
    masters, game, at = [], None, 0
    while at + 6 <= len(body):
        field, length = struct.unpack_from("<4sH", body, at)
        if field == b"MAST":
            masters.append(decode_text(body[at + 6:at + 6 + length].split(b"\0", 1)[0]))
        elif field == b"HEDR" and length >= 4 and at + 10 <= len(body):
            game = HEDR_VERSIONS.get(round(struct.unpack_from("<f", body, at + 6)[0], 2))
            if game == "TES5" and form_version not in SKYRIM_LE_FORM_VERSIONS:
                game = None
        at += 6 + length
    return flags, masters, game


def game_of(data_folder, files, names):
    """The game of a Data folder whose plugin files are ``files`` (lower-case name -> name):
    the one its own game master's header says, else the first of ``names`` whose header says."""
    own = [files[game[0].lower()] for game in GAMES.values() if game[0].lower() in files]
    for name in dict.fromkeys(own + [files[n.lower()] for n in names if n.lower() in files]):
        try:
            game = read_header(Path(data_folder) / name)[2]
        except FormatError:
            continue  # named among the load order's problems when it is read there
        if game is not None:
            return game
    return "FO4"


def read_plugins_txt(path):
    """The active plugins (``*Name.esp``) of a plugins.txt, in its order."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", "replace")
    lines = (line.strip() for line in text.splitlines())
    return [line[1:].strip() for line in lines if line.startswith("*") and len(line) > 1]


class LoadOrder:
    """The plugins of ``data_folder`` the game loads, in order (``entries``), ``game`` (GAMES'
    key) and its ``masters``, and ``problems``: one line per plugin named but missing,
    unreadable or lacking a master (each skipped). ``last``: plugins of the Data folder loaded
    after all the others, listed or not (a patch being built on); ``without``: plugins left out
    (a patch about to be rewritten)."""

    def __init__(self, data_folder, plugins_txt=None, last=(), without=()):
        self.data_folder = Path(data_folder)
        self.problems = []
        try:
            files = {name.lower(): name for name in os.listdir(self.data_folder) if name.lower().endswith(SUFFIXES)}
        except OSError as error:
            raise FormatError(f"cannot be listed: {error.strerror}", path=str(data_folder)) from None
        listed = read_plugins_txt(plugins_txt) if plugins_txt else None
        self.game = game_of(self.data_folder, files, sorted(files.values(), key=str.lower) if listed is None else listed)
        self.masters = GAMES[self.game]
        official = {name.lower() for name in self.masters}
        wanted = [files[name.lower()] for name in self.masters if name.lower() in files]
        if self.masters[0].lower() not in files:
            self.problems.append(f"{self.data_folder}: holds no {self.masters[0]}: the cells and references it "
                                 f"defines are unknown")
        if listed is not None:
            for name in listed:
                if name.lower() in official:
                    continue  # the game loads its own masters first whatever the list says
                if name.lower() not in files:
                    self.problems.append(f"{plugins_txt}: names {name}, which is not in {self.data_folder}: skipped")
                    continue
                wanted.append(files[name.lower()])
        else:
            wanted += sorted((name for key, name in files.items() if key not in official), key=str.lower)
        last = [files[name.lower()] for name in last if name.lower() in files and name.lower() not in official]
        moved = {name.lower() for name in [*last, *without]}
        wanted = [name for name in wanted if name.lower() not in moved] + last
        self.entries = []
        self._codes = {}  # lower-case plugin name -> origin code
        self.names = []  # origin code -> plugin name as first seen
        seen = set()
        read = []
        for name in wanted:
            if name.lower() in seen:
                continue
            seen.add(name.lower())
            try:
                flags, masters, _ = read_header(self.data_folder / name)
            except FormatError as error:
                self.problems.append(f"{error}: skipped")
                continue
            read.append(Entry(name, self.data_folder / name, flags, masters))
        # The game loads ESM-flagged plugins before the others, in their own order.
        read = [e for e in read if e.master] + [e for e in read if not e.master]
        full = light = 0
        for entry in read:
            missing = [m for m in entry.masters if m.lower() not in {e.name.lower() for e in self.entries}
                       and not (m.lower() == self.masters[0].lower() and self.masters[0].lower() not in files)]
            if missing:
                self.problems.append(f"{entry.path}: needs {', '.join(missing)}, not loaded before it: skipped")
                continue
            if entry.light:
                if light >= LIGHT_SLOTS:
                    self.problems.append(f"{entry.path}: more than {LIGHT_SLOTS} light plugins: skipped")
                    continue
                entry.slot, light = light, light + 1
            else:
                if full >= FULL_SLOTS:
                    self.problems.append(f"{entry.path}: more than {FULL_SLOTS} full plugins: skipped")
                    continue
                entry.slot, full = full, full + 1
            entry.code = self.code(entry.name)
            self.entries.append(entry)
        self.by_code = {entry.code: entry for entry in self.entries}
        self._origins = {}  # origin code -> origins()

    def code(self, name):
        """The origin number of a plugin name (also of masters that are not loaded)."""
        key = name.lower()
        if key not in self._codes:
            self._codes[key] = len(self.names)
            self.names.append(name)
        return self._codes[key]

    def origins(self, entry):
        """(codes, masks): per FormID top byte (0..255) stored in ``entry``, the origin code and
        the object-id mask (12 bits for a light origin, else 24)."""
        if entry.code in self._origins:
            return self._origins[entry.code]
        own = entry.code
        codes = [self.code(m) for m in entry.masters]
        codes += [own] * (256 - len(codes))
        masks = [0xFFF if code in self.by_code and self.by_code[code].light else 0xFFFFFF for code in codes]
        self._origins[entry.code] = codes, masks
        return codes, masks

    def key(self, entry, stored_form_id):
        """The origin key (code << 24 | object id) of a FormID as ``entry`` stores it."""
        codes, masks = self.origins(entry)
        index = stored_form_id >> 24
        return codes[index] << 24 | stored_form_id & masks[index]

    def form_id(self, key):
        """The load-order FormID of a key as text (``%08X``), or ``Plugin.esp:%06X`` when its
        origin is not loaded."""
        code, object_id = key >> 24, key & 0xFFFFFF
        entry = self.by_code.get(code)
        if entry is None:
            return f"{self.names[code]}:{object_id:06X}"
        return f"{entry.load_order_id(object_id):08X}"

    def key_of(self, load_order_id):
        """The key of a load-order FormID (``FExxxyyy`` for light plugins), or None."""
        if load_order_id >> 24 == 0xFE:
            slot, object_id = load_order_id >> 12 & 0xFFF, load_order_id & 0xFFF
            entry = next((e for e in self.entries if e.light and e.slot == slot), None)
        else:
            slot, object_id = load_order_id >> 24, load_order_id & 0xFFFFFF
            entry = next((e for e in self.entries if not e.light and e.slot == slot), None)
        return None if entry is None else entry.code << 24 | object_id

    def key_of_text(self, text):
        """The key of a FormID as a user gives it: its load-order FormID in hexadecimal, or
        ``Plugin.esm:XXXXXX`` (a plugin's own object id, as ``form_id`` names a record whose
        plugin is not loaded)."""
        name, colon, number = str(text).strip().rpartition(":")
        try:
            value = int(number, 16)
        except ValueError:
            value = -1
        if colon and (not name.lower().endswith(SUFFIXES) or not 0 <= value <= 0xFFFFFF):
            raise FormatError(f"{text!r} is not a FormID: Plugin.esm:XXXXXX takes a plugin's name and up to six "
                              f"hexadecimal digits")
        if not 0 <= value <= 0xFFFFFFFF:
            raise FormatError(f"{text!r} is not a FormID: hexadecimal (00001E58), or Plugin.esm:XXXXXX")
        if colon:
            return self.code(name) << 24 | value
        key = self.key_of(value)
        if key is None:
            raise FormatError(f"no plugin of the load order has the slot of FormID {value:08X}", path=str(self.data_folder))
        return key

    def missing(self, kind, key):
        """The error for a record no plugin holds; when the game's master is not in the Data
        folder, how to name its records instead (the slot it would take is another plugin's)."""
        message = f"no plugin of the load order holds {kind} {self.form_id(key)}"
        master = self.masters[0]
        if master.lower() not in {entry.name.lower() for entry in self.entries} and key >> 24 in self.by_code:
            message += f" ({master} is not in the Data folder: a record it defines is named {master}:{key & 0xFFFFFF:06X})"
        return FormatError(message, path=str(self.data_folder))

    def origin_name(self, key):
        return self.names[key >> 24]
