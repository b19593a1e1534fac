"""Every reference of one cell as a load order leaves it, with the base records they place.

The plugins are walked in load order (load_order.LoadOrder); a record another plugin holds
later wins (its override). The cell is found by its FormID or EditorID among the CELL records of
the CELL and WRLD top groups; its references are the REFR and ACHR records of its children group
(type 6, labelled by the CELL) in every plugin, the last plugin's copy of each winning. A
reference whose winning override sits in another cell's group has moved there, as the game
places it: it leaves this cell, and one a later plugin moves into this cell's group joins it.
Fields (xEdit's wbDefinitionsFO4.pas / wbDefinitionsTES5.pas, the same for both games): NAME the base,
DATA position and rotation in radians (x, y, z), XSCL the scale, XESP the enable parent (u32
FormID, u8 flags: 1 "set enable state to opposite of parent"), XRDS a light's radius; header
flags 0x20 deleted, 0x800 initially disabled. The game turns a reference by z first, then y,
then x, each angle clockwise (UESP's record notes; references.rotation_matrix, checked there on
the corpus's precombined copies).

Bases: EDID, OBND (six i16: the bound's corners), MODL (an ARMO's MOD2); a LIGH's DATA (i32 time, u32 radius,
u8 r, g, b, unused); a SCOL's parts, ONAM (the part's STAT) followed by DATA, placements of 28
bytes each (position, rotation in radians, scale: xEdit's wbStaticPartPlacements)."""

import mmap
import struct

import numpy as np

from ..errors import FormatError
from .records import HEADER_SIZE, Record
from .references import combined_references, rotation_matrix

REFERENCE_TYPES = (b"REFR", b"ACHR")
DRAWN = ("STAT", "SCOL", "MSTT", "FURN", "CONT", "DOOR", "ACTI", "LIGH", "MISC", "FLOR", "TREE", "BOOK", "WEAP",
         "ARMO", "ALCH", "KEYM", "AMMO", "TERM", "NOTE", "IDLM", "MOVS", "TACT", "BNDS", "INGR", "SLGM", "APPA",
         "GRAS")
ACTORS = ("NPC_", "LVLN")  # drawn by their race's skeleton: placeholders here
DELETED, PERSISTENT, INITIALLY_DISABLED = 0x20, 0x400, 0x800
OPPOSITE_OF_PARENT = 1
SKIPPED_TOP = (b"CELL", b"WRLD", b"DIAL", b"NAVI", b"QUST")  # no bases in them
PLACEMENT = np.dtype([("position", "<f4", 3), ("angles", "<f4", 3), ("scale", "<f4")])
MARKER_FOLDER = "markers/"


class CellReference:
    """One reference of the cell as its winning plugin has it. ``key`` (origin key), ``form_id``
    (as ``entry`` stores it), ``entry`` (the plugin), ``type`` (REFR, ACHR), header ``flags``,
    ``position``, ``angles`` (radians), ``scale``, ``base`` (key), ``parent`` ((key, flags) of
    its enable parent or None), ``radius`` (XRDS or None), ``combined`` (listed in the cell's
    XCRI), ``record`` (the records.Record)."""

    __slots__ = ("key", "form_id", "entry", "type", "flags", "position", "angles", "scale", "base", "parent",
                 "radius", "combined", "record")

    @property
    def deleted(self):
        return bool(self.flags & DELETED)

    @property
    def disabled(self):
        return bool(self.flags & INITIALLY_DISABLED)

    def matrix(self):
        """The 4x4 game-unit world matrix: translation, then rotation times scale."""
        out = np.eye(4)
        out[:3, :3] = rotation_matrix(self.angles) * self.scale
        out[:3, 3] = self.position
        return out


class Base:
    """A base record: ``key``, ``entry`` (its winning plugin), ``form_id`` (as stored there),
    ``type``, ``editor_id``, ``model`` (MODL or None), ``bounds`` ((min, max) corners, game
    units, or None), ``light`` ((radius, (r, g, b) 0..1) of a LIGH), ``parts`` ([(part base
    key, PLACEMENT array)] of a SCOL)."""

    def __init__(self, key, entry, record, load_order):
        self.key, self.entry, self.form_id, self.type = key, entry, record.form_id, record.type
        self.editor_id = record.text("EDID")
        # an ARMO's world model is MOD2 (its MODL-less record; the worn models are its ARMAs')
        self.model = (record.text("MODL") or record.text("MOD2") or None) if not record.flags & DELETED else None
        bound = record.field("OBND")
        self.bounds = None
        if bound is not None and len(bound) == 12:
            corners = struct.unpack("<6h", bound)
            self.bounds = (corners[:3], corners[3:])
        self.light = None
        data = record.field("DATA")
        if self.type == "LIGH" and data is not None and len(data) >= 12:
            radius, r, g, b = struct.unpack_from("<I3B", data, 4)
            self.light = (float(radius), (r / 255, g / 255, b / 255))
        self.parts = []
        if self.type == "SCOL":
            part = None
            for kind, value in record.fields:
                if kind == "ONAM" and len(value) == 4:
                    part = load_order.key(entry, struct.unpack("<I", value)[0])
                elif kind == "DATA" and part is not None and len(value) % PLACEMENT.itemsize == 0:
                    self.parts.append((part, np.frombuffer(value, PLACEMENT).copy()))
                    part = None

    @property
    def marker(self):
        """A marker: the editor's markers (meshes/markers/...), drawn only in the Creation Kit."""
        return bool(self.model) and self.model.replace("\\", "/").lower().lstrip("/").startswith(MARKER_FOLDER)


def part_matrices(parts):
    """4x4 matrices of a SCOL part's placements, in the SCOL's space."""
    out = np.zeros((len(parts), 4, 4))
    for index, part in enumerate(parts):
        out[index, :3, :3] = rotation_matrix(part["angles"]) * float(part["scale"])
        out[index, :3, 3] = part["position"]
        out[index, 3, 3] = 1.0
    return out


def _open(path):
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if handle.seek(0, 2) else b""
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(path)) from None


def _header(data, at, end):
    if at + HEADER_SIZE > end:
        raise FormatError(f"header at {at} runs past its group (ends at {end})")
    return struct.unpack_from("<4sIII", data, at)


class _PluginWalk:
    """One plugin's records for the cell: CELL records (key, Record), its references, and the
    keys of the overrides it places in other cells (``elsewhere``: references it moves out of
    the cells of their plugins, headers only)."""

    def __init__(self, load_order, entry, cell_key, editor_id):
        self.load_order, self.entry = load_order, entry
        self.cell_key, self.editor_id = cell_key, editor_id
        self.cells = []  # (key, Record, world key)
        self.references = []  # Records
        self.elsewhere = set()
        data = _open(entry.path)
        try:
            self.data = data
            if len(data) < HEADER_SIZE:
                raise FormatError(f"{len(data)} bytes: not even a record header")
            at = HEADER_SIZE + struct.unpack_from("<I", data, 4)[0]
            while at < len(data):
                kind, size, label, _ = _header(data, at, len(data))
                if kind != b"GRUP" or size < HEADER_SIZE or at + size > len(data):
                    raise FormatError(f"top group at {at} is damaged")
                if label.to_bytes(4, "little") in (b"CELL", b"WRLD"):
                    self._walk(at + HEADER_SIZE, at + size, None)
                at += size
        except FormatError as error:
            raise error.located(path=str(entry.path)) from None
        finally:
            self.data = None
            if isinstance(data, mmap.mmap):
                data.close()

    def _walk(self, at, end, world):
        data = self.data
        while at < end:
            kind, size, flags, form_id = _header(data, at, end)
            if kind == b"GRUP":
                if size < HEADER_SIZE or at + size > end:
                    raise FormatError(f"group at {at} of {size} bytes does not fit its parent (ends at {end})")
                group_type = struct.unpack_from("<i", data, at + 12)[0]
                if group_type == 1:
                    self._walk(at + HEADER_SIZE, at + size, self.load_order.key(self.entry, flags))
                elif group_type == 6 and self.cell_key is not None:
                    if self.load_order.key(self.entry, flags) == self.cell_key:
                        self._children(at + HEADER_SIZE, at + size)
                    elif self.entry.masters:  # a plugin without masters overrides nothing
                        self._children(at + HEADER_SIZE, at + size, here=False)
                elif group_type in (2, 3, 4, 5):
                    self._walk(at + HEADER_SIZE, at + size, world)
                at += size
                continue
            if at + HEADER_SIZE + size > end:
                raise FormatError(f"record {form_id:08X} at {at} runs past its group (ends at {end})")
            if kind == b"CELL":
                key = self.load_order.key(self.entry, form_id)
                if self.cell_key is None:
                    record = Record.decode(data, at, end)
                    if (record.text("EDID") or "").lower() == self.editor_id.lower():
                        self.cells.append((key, record, world))
                elif key == self.cell_key:
                    self.cells.append((key, Record.decode(data, at, end), world))
            at += HEADER_SIZE + size

    def _children(self, at, end, here=True):
        """The references of a cell's children group: this cell's (``here``) as Records, another
        cell's that override a master's as keys into ``elsewhere``."""
        data = self.data
        codes, masks = self.load_order.origins(self.entry)
        while at < end:
            kind, size, _, form_id = _header(data, at, end)
            if kind == b"GRUP":
                if size < HEADER_SIZE or at + size > end:
                    raise FormatError(f"group at {at} of {size} bytes does not fit its parent (ends at {end})")
                self._children(at + HEADER_SIZE, at + size, here)
                at += size
                continue
            if kind in REFERENCE_TYPES:
                if here:
                    self.references.append(Record.decode(data, at, end))
                elif codes[form_id >> 24] != self.entry.code:
                    self.elsewhere.add(codes[form_id >> 24] << 24 | form_id & masks[form_id >> 24])
            at += HEADER_SIZE + size


def _top_records(load_order, take):
    """Each plugin's records lying straight in a top group ``take(label)`` accepts (subgroups
    skipped by their size): yields (entry, key, data, offset, end of its group) in load order,
    ``data`` open while it is handled."""
    for entry in load_order.entries:
        codes, masks = load_order.origins(entry)
        data = _open(entry.path)
        try:
            at = HEADER_SIZE + struct.unpack_from("<I", data, 4)[0] if len(data) >= HEADER_SIZE else len(data)
            while at < len(data):
                kind, size, label, _ = _header(data, at, len(data))
                if kind != b"GRUP" or size < HEADER_SIZE or at + size > len(data):
                    raise FormatError(f"top group at {at} is damaged")
                inner, end = at + HEADER_SIZE, at + size
                while take(label.to_bytes(4, "little")) and inner < end:
                    kind, record_size, _, form_id = _header(data, inner, end)
                    if kind != b"GRUP":
                        yield entry, codes[form_id >> 24] << 24 | form_id & masks[form_id >> 24], data, inner, end
                    inner += HEADER_SIZE + record_size if kind != b"GRUP" else max(record_size, HEADER_SIZE)
                at += size
        except FormatError as error:
            raise error.located(path=str(entry.path)) from None
        finally:
            if isinstance(data, mmap.mmap):
                data.close()


def _base_records(load_order, wanted):
    """{base key: (entry, Record)} of the winning record of each key of ``wanted``, reading the
    top groups that may hold bases (their records' headers only, but for those wanted)."""
    return {key: (entry, Record.decode(data, at, end))
            for entry, key, data, at, end in _top_records(load_order, lambda label: label not in SKIPPED_TOP)
            if key in wanted}


def _reference(load_order, entry, record):
    """A CellReference of a REFR/ACHR Record, or a problem line."""
    out = CellReference()
    out.key, out.form_id, out.entry, out.type, out.flags = load_order.key(entry, record.form_id), record.form_id, \
        entry, record.type, record.flags
    out.record = record
    name, data = record.field("NAME"), record.field("DATA")
    if name is None or len(name) != 4 or data is None or len(data) != 24:
        if record.flags & DELETED:  # a deleted reference may keep no fields at all
            name, data = name if name and len(name) == 4 else bytes(4), data if data and len(data) == 24 else bytes(24)
        else:
            return f"{entry.name}: {record.type} {record.form_id:08X} has no NAME of 4 bytes and DATA of 24: skipped"
    values = struct.unpack("<6f", data)
    out.position, out.angles = np.array(values[:3], np.float64), tuple(float(v) for v in values[3:])
    scale = record.field("XSCL")
    out.scale = float(struct.unpack("<f", scale)[0]) if scale and len(scale) == 4 else 1.0
    out.base = load_order.key(entry, struct.unpack("<I", name)[0])
    parent = record.field("XESP")
    out.parent = (load_order.key(entry, struct.unpack_from("<I", parent)[0]), parent[4] if len(parent) > 4 else 0) \
        if parent is not None and len(parent) >= 4 else None
    radius = record.field("XRDS")
    out.radius = float(struct.unpack("<f", radius)[0]) if radius and len(radius) == 4 else None
    out.combined = False
    return out


class CellContents:
    """The cell ``cell_text`` (a FormID as load_order.key_of_text reads it, or an EditorID) of
    ``load_order``: ``cell`` (the winning CELL Record), ``cell_entry`` (its plugin), ``key``,
    ``world`` (its WRLD key, None inside), ``references`` [CellReference] in first-seen order,
    ``bases`` {key: Base}, ``combined`` (keys XCRI lists), ``problems`` (one line each; the rest
    stands). FormatError when no plugin holds the cell."""

    def __init__(self, load_order, cell_text):
        self.load_order = load_order
        self.problems = list(load_order.problems)
        key, editor_id = self._cell_key(cell_text)
        found, references = [], {}
        for entry in load_order.entries:
            try:
                walk = _PluginWalk(load_order, entry, key, editor_id)
            except FormatError as error:
                self.problems.append(f"{error}: its records of the cell are skipped")
                continue
            if key is None and walk.cells:
                key = walk.cells[0][0]  # the first plugin naming a cell so defines which it is
                walk = _PluginWalk(load_order, entry, key, editor_id)
            found += [(entry, record, world) for cell_key, record, world in walk.cells if cell_key == key]
            for moved in walk.elsewhere:  # its override stands in another cell: the reference left this one
                references.pop(moved, None)
            for record in walk.references:
                reference = _reference(load_order, entry, record)
                if isinstance(reference, str):
                    self.problems.append(reference)
                else:
                    references[reference.key] = reference  # a later plugin's override wins
        if not found and key is not None and editor_id is None and self._absent_master(key) is not None:
            self.__init__(load_order, self._absent_master(key))  # 00001E58 is the game master's when it is absent
            return
        if not found:
            raise FormatError(f"no plugin of the load order holds the cell {cell_text}"
                              + (f" ({', '.join(e.name for e in load_order.entries) or 'no plugin loaded'})"),
                              path=str(load_order.data_folder))
        self.cell_entry, self.cell, self.world = found[-1]
        self.key = key
        self.references = list(references.values())
        self.combined = set()
        xcri = self.cell.field("XCRI")
        if xcri is not None:
            try:
                _, listed, _ = combined_references(xcri)
            except ValueError as error:
                self.problems.append(f"{self.cell_entry.name}: CELL {self.cell.form_id:08X}: {error}: its precombined "
                                     f"references are not known")
            else:
                self.combined = {load_order.key(self.cell_entry, form_id) for form_id in listed}
        for reference in self.references:
            reference.combined = reference.key in self.combined
        # listed in XCRI, but in a plugin not loaded: only its precombined copy shows it
        self.unknown_combined = sorted(self.combined - {reference.key for reference in self.references})
        self.bases = self._bases()
        self.problems += self._cycles()

    def _absent_master(self, key):
        """The game master's name for a FormID whose top byte is 00 when that master is not in
        the Data folder and a plugin that is no master took its slot."""
        names = {entry.name.lower() for entry in self.load_order.entries}
        entry = self.load_order.by_code.get(key >> 24)
        master = self.load_order.masters[0]
        if master.lower() in names or entry is None or entry.slot != 0 or entry.light or entry.master:
            return None
        return f"{master}:{key & 0xFFFFFF:06X}"

    def _cell_key(self, text):
        text = str(text).strip()
        try:
            return self.load_order.key_of_text(text), None
        except FormatError:
            if ":" in text or not text:
                raise
            return None, text  # not a FormID: an EditorID

    def _bases(self):
        records = _base_records(self.load_order, {reference.base for reference in self.references})
        bases = {key: Base(key, entry, record, self.load_order) for key, (entry, record) in records.items()}
        parts = {part for base in bases.values() for part, _ in base.parts} - set(bases)
        if parts:  # a SCOL's parts are STATs no reference need place
            records = _base_records(self.load_order, parts)
            bases.update((key, Base(key, entry, record, self.load_order)) for key, (entry, record) in records.items())
        return bases

    def _cycles(self):
        """A line per enable-parent chain among the cell's references that comes back on itself."""
        parents = {r.key: r.parent[0] for r in self.references if r.parent is not None}
        problems, cleared = [], set()
        for start in list(parents):
            seen, at = [], start
            while at in parents and at not in cleared and at not in seen:
                seen.append(at)
                at = parents[at]
            if at in seen:
                loop = seen[seen.index(at):]
                problems.append("enable parents go round in a circle: " + " > ".join(
                    self.load_order.form_id(k) for k in loop + [at]) + ": each shown as enabled by none")
                for key in loop:
                    parents.pop(key, None)
                    next(r for r in self.references if r.key == key).parent = None
            cleared.update(seen)
        return problems

    def base_of(self, reference):
        return self.bases.get(reference.base)

    def form_id(self, key):
        return self.load_order.form_id(key)


def find_base(load_order, editor_id=None, model=None):
    """(key, Record) of the winning base of a drawn kind whose EditorID (else model) is the one
    given, case-insensitively; None when no plugin has one. Reads the drawn kinds' top groups."""
    wanted_id = editor_id.lower() if editor_id else None
    wanted_model = model.replace("/", "\\").lower().lstrip("\\") if model else None
    if wanted_model and wanted_model.startswith("meshes\\"):
        wanted_model = wanted_model[len("meshes\\"):]
    kinds = {kind.encode("ascii") for kind in DRAWN}
    found = None
    for _, key, data, at, end in _top_records(load_order, kinds.__contains__):
        record = Record.decode(data, at, end)
        if wanted_id is not None:
            if (record.text("EDID") or "").lower() == wanted_id:
                found = key, record
        elif wanted_model:
            stored = (record.text("MODL") or record.text("MOD2") or "").replace("/", "\\").lower().lstrip("\\")
            if stored == wanted_model:
                found = key, record
    return found
