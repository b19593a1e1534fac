"""A patch plugin carrying a precombined cell's edits to its references, so the game's records
agree with the combined meshes written for it.

- a moved, turned or scaled copy: an override of its REFR with the new DATA (position, rotation
  in radians, references.rotation_matrix's convention) and XSCL;
- a deleted copy: its REFR undeleted and disabled as xEdit's "Undelete and Disable References"
  does (Initially Disabled flag 0x800, Deleted flag 0x20 cleared, enable parent XESP the player
  0x14 with "set enable state to opposite of parent" (flag 1), XTEL removed, and a reference
  that is not persistent (0x400) sunk to z = -30000), and its pair dropped from XCRI;
- a copy duplicated from one whose REFR is known: a new REFR of the same base (NAME, XSCL,
  DATA), paired in XCRI with the combined mesh holding it;
- the CELL override: the cell plugin's CELL with its XCRI so edited;
- for a whole cell's edits (io.plugin.cell_export; ``precombined=False`` takes cells without
  XCRI too): a new REFR of a base (``place_base``) and a new STAT for a model (``new_static``).
Every record is dated (Version Control Info 1) with the CELL's PCMB date: not after it, so the
game keeps the precombines (core.precombined.status applies the same rules). The masters are
the cell's plugin's masters, then the cell's plugin: FormIDs of both read the same in the patch.
Records keep the group path (CELL > block > sub-block > cell children > temporary, or the WRLD's)
of the plugin they are copied from.
"""

import struct
from pathlib import Path

from ..errors import FormatError
from ..stream import encode_text
from .file import FIRST_OBJECT_ID, GROUP_HEADER, TOP, Group, PluginFile, new_header
from .records import DELETED, Record

PLAYER = 0x14
DISABLED_Z = -30000.0
INITIALLY_DISABLED = 0x800
PERSISTENT = 0x400
OPPOSITE_OF_PARENT = 1
LIGHT_OBJECT_IDS = 0x1000  # a light plugin's object ids are 12 bits
DATA = struct.Struct("<6f")


def xcri_bytes(meshes, pairs):
    """XCRI: u32 mesh count, u32 count of the values after the meshes (twice the pairs), the
    meshes, then (reference, mesh) pairs."""
    flat = [value for pair in pairs for value in pair]
    return struct.pack(f"<II{len(meshes)}I{len(flat)}I", len(meshes), len(flat), *meshes, *flat)


def read_xcri(xcri):
    from .references import combined_references

    try:
        meshes, references, owners = combined_references(xcri)
    except ValueError as error:
        raise FormatError(f"XCRI: {error}") from None
    return meshes, list(zip(references, owners))


def same_names(first, second):
    return [name.lower() for name in first] == [name.lower() for name in second]


def local_id(plugin, form_id):
    """A FormID as the patch (and the cell plugin) stores it, as ``plugin`` stores it."""
    return form_id if form_id >> 24 < len(plugin.masters) else plugin.local_index() << 24 | form_id & 0xFFFFFF


class Source:
    """Where a record of the patch comes from: the ``plugin`` (records.Plugin) and, for each of
    its FormID top bytes, that they read the same in the patch."""

    def __init__(self, plugin, patch_masters):
        self.plugin = plugin
        own = [*plugin.masters, plugin.name]
        self.compatible = same_names(own, patch_masters[:len(own)])

    def record(self, form_id):
        if not self.compatible:
            return None
        local = local_id(self.plugin, form_id)
        return self.plugin.record(local) if local in self.plugin.records else None


class CellPatch:
    """The patch of one cell: ``cell_plugin`` (records.Plugin) holds the CELL whose XCRI the
    combined meshes follow, ``masters`` any of its masters (Plugins) for references they define,
    ``existing`` a patch (PluginFile) written before for this cell, updated rather than replaced.
    FormIDs given and returned are as the cell plugin stores them. ``precombined``: the cell
    must list its combined references (XCRI); False lets a cell without precombines take
    overrides too (io.plugin.cell_export: a whole cell's edits), its XCRI then left as it is."""

    def __init__(self, cell_plugin, cell_id, masters=(), existing=None, light=False, precombined=True):
        self.names = [*cell_plugin.masters, cell_plugin.name]
        self.cell_plugin = cell_plugin
        self.sources = [Source(cell_plugin, self.names)] + [Source(plugin, self.names) for plugin in masters]
        # ``existing`` may be the cell plugin itself (a build into the mod's own plugin, named by the
        # user), or a patch with more masters after these (another cell's): FormIDs read the same
        itself = existing is not None and same_names(existing.masters, cell_plugin.masters) and \
            Path(existing.path or "").name.lower() == cell_plugin.name.lower()
        if existing is not None and not itself and not same_names(existing.masters[:len(self.names)], self.names):
            raise FormatError(f"its masters are {', '.join(existing.masters) or 'none'}, not {', '.join(self.names)} "
                              f"as a patch of {cell_plugin.name}'s cell needs", path=existing.path)
        self.file = existing or PluginFile(new_header(self.names, light=light))
        if light:
            self.file.header.flags |= 0x200
        self.light = bool(self.file.header.flags & 0x200)
        self.own = len(self.file.masters)  # the FormID top byte of the patch's own records
        # past HEDR's next object id and every own record's: a FormID is never given twice
        self.next_id = max([self.file.next_object_id(), FIRST_OBJECT_ID] + [
            (r.form_id & 0xFFFFFF) + 1 for r in self.file.records() if r.form_id >> 24 == self.own])
        cell = self.file.record(cell_id, "CELL")
        source = cell if cell is not None else cell_plugin.record(cell_id)
        if source is None or source.type != "CELL":
            raise FormatError(f"holds no CELL {cell_id:08X}", path=cell_plugin.path)
        if source.field("XCRI") is None and precombined:
            raise FormatError(f"CELL {cell_id:08X} has no XCRI: it has no precombined meshes", path=cell_plugin.path)
        pcmb = source.field("PCMB")
        self.stamp = int.from_bytes(pcmb[:2], "little") if pcmb and len(pcmb) >= 2 else 0
        self.cell = cell if cell is not None else self._place(source.copy(), cell_plugin, cell_id)
        self.cell.vci = self.stamp
        self.cell_id = cell_id
        xcri = self.cell.field("XCRI")
        self.meshes, self.pairs = read_xcri(xcri) if xcri is not None else (None, None)
        self.done = []  # (what, record) of each edit, for the report

    def rebuilt(self, meshes, pairs, stamp, dropped=()):
        """The CELL's precombines replaced by new ones: its XCRI ``meshes`` and (reference, mesh)
        ``pairs``, PCMB and every record of the patch dated ``stamp``, the fields ``dropped``
        removed (a build's stale previs: VISI, RVIS, XPRI)."""
        self.meshes, self.pairs, self.stamp = list(meshes), list(pairs), stamp
        for name in dropped:
            self.cell.remove_field(name)
        self.cell.set_field("PCMB", struct.pack("<H", stamp), before="XCLL")
        for record in [self.cell, *(record for _, record in self.done)]:
            record.vci = stamp

    # -- records --------------------------------------------------------------------------
    def _source(self, form_id):
        """(Record copy, the Plugin it comes from) of a record as the patch stands or as the
        first source holding it; (None, None) when no plugin given holds it."""
        found = self.file.record(form_id)
        if found is not None:
            return found, None
        for source in self.sources:
            record = source.record(form_id)
            if record is not None:
                return record, source.plugin
        return None, None

    def _place(self, record, plugin, path_of):
        """Put ``record`` into the patch at the group path the record ``path_of`` (as the patch
        stores FormIDs) has in ``plugin``, with the WRLD or CELL records its groups belong to;
        it replaces a record of its FormID and type there."""
        record.vci = self.stamp
        form_id = record.form_id
        level = self.file.groups
        for head in plugin.group_path(local_id(plugin, path_of)):
            wanted = Group.from_header(head)
            group = next((g for g in level if isinstance(g, Group) and g.same(wanted)), None)
            if group is None:
                at = len(level)
                if wanted.group_type in (1, 6):  # a WRLD's or a CELL's children follow that record
                    at = self._parent_at(level, wanted.label_id, plugin)
                level.insert(at, wanted)
                group = wanted
            level = group.children
        for index, child in enumerate(level):
            if not isinstance(child, Group) and (child.form_id, child.type) == (form_id, record.type):
                level[index] = record
                return record
        children = next((i for i, g in enumerate(level) if isinstance(g, Group) and g.group_type in (1, 6)
                         and g.label_id == form_id), len(level))
        level.insert(children, record)
        return record

    def _parent_at(self, level, form_id, plugin):
        """Where a group of the children of ``form_id`` goes in ``level``: after that record,
        copied from ``plugin`` first when the patch lacks it."""
        for index, child in enumerate(level):
            if not isinstance(child, Group) and child.form_id == form_id:
                return index + 1
        record = plugin.record(local_id(plugin, form_id))
        if record is None:
            raise FormatError(f"its group of the children of {form_id:08X} has no such record", path=plugin.path)
        record = record.copy()
        record.vci = self.stamp
        level.append(record)
        return len(level)

    def _override(self, form_id, what):
        record, plugin = self._source(form_id)
        if record is None:
            return None
        if plugin is not None:
            record = record.copy()
            record.form_id = form_id
            self._place(record, plugin, form_id)
        record.vci = self.stamp
        self.done.append((what, record))
        return record

    # -- edits ----------------------------------------------------------------------------
    def move(self, form_id, position, angles, scale):
        """Override the REFR ``form_id`` at a new placement; False when no plugin given has it."""
        record = self._override(form_id, "moved")
        if record is None:
            return False
        set_placement(record, position, angles, scale)
        self._drop_if_as_master(record)
        return True

    def _drop_if_as_master(self, record):
        """An override put back as the plugin it overrides has it is removed from the patch, as
        xEdit's "Remove Identical to Master records" does: such a record (an ITM) would only undo
        the edits of plugins loaded between them. The placement is compared to the float32
        rounding a Blender transform adds."""
        master = next((found for found in (s.record(record.form_id) for s in self.sources) if found is not None), None)
        if master is None or master.flags != record.flags or master.type != record.type:
            return
        ours, theirs = record.field("DATA"), master.field("DATA")
        if ours is None or theirs is None or len(ours) != DATA.size or len(theirs) != DATA.size:
            return
        near = all(abs(a - b) <= (1e-3 if i < 3 else 1e-5) * max(1.0, abs(b) / 1000 if i < 3 else 1.0)
                   for i, (a, b) in enumerate(zip(DATA.unpack(ours), DATA.unpack(theirs))))
        ours, theirs = (struct.unpack("<f", s[:4])[0] if s and len(s) >= 4 else 1.0
                        for s in (record.field("XSCL"), master.field("XSCL")))
        if not near or abs(ours - theirs) > 1e-5:
            return
        if [(k, v) for k, v in record.fields if k not in ("DATA", "XSCL")] != \
                [(k, v) for k, v in master.fields if k not in ("DATA", "XSCL")]:
            return
        self._remove(self.file.groups, record)
        self.done[-1] = ("as master: override dropped", record)

    def _remove(self, level, record):
        """Take ``record`` out of ``level`` or its groups, and the groups it leaves empty."""
        for index, child in enumerate(level):
            if child is record:
                del level[index]
                return True
            if isinstance(child, Group) and self._remove(child.children, record):
                if not child.children:
                    del level[index]
                return True
        return False

    def disable(self, form_id):
        """Undelete and disable the REFR ``form_id`` and drop its XCRI pair; False (the pair
        kept, so the game still hides it) when no plugin given has it."""
        record = self._override(form_id, "disabled")
        if record is None:
            return False
        record.flags = record.flags & ~DELETED | INITIALLY_DISABLED
        data = record.field("DATA")
        if not record.flags & PERSISTENT and data is not None and len(data) == DATA.size:
            values = list(DATA.unpack(data))
            values[2] = DISABLED_Z
            record.set_field("DATA", DATA.pack(*values))
        record.remove_field("XTEL")
        record.remove_field("XESP")
        record.set_field("XESP", struct.pack("<IB3x", PLAYER, OPPOSITE_OF_PARENT), before="DATA")
        if self.pairs is not None:
            self.pairs = [pair for pair in self.pairs if pair[0] != form_id]
        return True

    def add(self, source_id, mesh, position, angles, scale):
        """A new REFR of the base of ``source_id`` at a placement, paired with ``mesh`` (None:
        in no combined mesh, not listed in XCRI); its FormID, or None when no plugin given has
        the source."""
        source, plugin = self._source(source_id)
        if source is None:
            return None
        form_id = self._new_form_id()
        record = source.copy()
        record.fields = [(kind, data) for kind, data in record.fields if kind == "NAME"]
        record.flags &= PERSISTENT
        record.form_id = form_id
        set_placement(record, position, angles, scale)
        if plugin is None:  # its source is in the patch already: beside it
            self._insert_beside(source, record)
        else:
            self._place(record, plugin, source_id)
        record.vci = self.stamp
        if mesh is not None and self.pairs is not None:
            self.pairs.append((form_id, mesh))
        self.done.append(("new", record))
        return form_id

    def place_base(self, base_id, position, angles, scale):
        """A new REFR of the base ``base_id`` (as the patch stores FormIDs) in the cell's
        temporary children group; its FormID."""
        record = Record("REFR", self._new_form_id(), 0, [("NAME", struct.pack("<I", base_id))],
                        form_version=self.cell.form_version)  # the game's (Skyrim SE's 44, Fallout 4's 131)
        set_placement(record, position, angles, scale)
        record.vci = self.stamp
        cell = self.cell_plugin.group_path(local_id(self.cell_plugin, self.cell_id))
        label = struct.pack("<I", self.cell_id)
        path = [*cell, GROUP_HEADER.pack(b"GRUP", 0, label, 6, 0, 0, 0), GROUP_HEADER.pack(b"GRUP", 0, label, 9, 0, 0, 0)]
        level = self.file.groups
        for head in path:
            wanted = Group.from_header(head)
            group = next((g for g in level if isinstance(g, Group) and g.same(wanted)), None)
            if group is None:
                at = self._parent_at(level, wanted.label_id, self.cell_plugin) if wanted.group_type == 6 else len(level)
                level.insert(at, wanted)
                group = wanted
            level = group.children
        level.append(record)
        self.done.append(("new", record))
        return record.form_id

    def new_static(self, editor_id, model, bounds):
        """A new STAT (EDID, OBND ``bounds`` ((min x, y, z), (max x, y, z)), MODL) in the
        patch's STAT group, before its CELL group; its FormID."""
        fields = [("EDID", encode_text(editor_id) + b"\0"),
                  ("OBND", struct.pack("<6h", *(int(round(v)) for corner in bounds for v in corner))),
                  ("MODL", encode_text(model) + b"\0")]
        record = Record("STAT", self._new_form_id(), 0, fields, form_version=self.cell.form_version)
        record.vci = self.stamp
        group = next((g for g in self.file.groups if g.label == b"STAT" and g.group_type == TOP), None)
        if group is None:
            group = Group(b"STAT", TOP)
            cells = next((i for i, g in enumerate(self.file.groups) if g.label in (b"CELL", b"WRLD")), len(self.file.groups))
            self.file.groups.insert(cells, group)
        group.children.append(record)
        self.done.append(("new", record))
        return record.form_id

    def _insert_beside(self, source, record):
        for group in self.file.groups:
            for level in self._levels(group):
                if any(child is source for child in level):
                    level.insert(level.index(source) + 1, record)
                    return
        raise FormatError(f"REFR {source.form_id:08X} lies in no group of the patch")

    def _levels(self, group):
        yield group.children
        for child in group.children:
            if isinstance(child, Group):
                yield from self._levels(child)

    def _new_form_id(self):
        limit = LIGHT_OBJECT_IDS if self.light else 0x1000000
        if self.next_id >= limit:
            raise FormatError(f"the patch has no object id left below {limit:#x}" + (" (a light plugin)" if self.light else ""))
        form_id = self.own << 24 | self.next_id
        self.next_id += 1
        return form_id

    def finish(self):
        """The patch as a PluginFile, XCRI and the header brought up to date."""
        if self.meshes is not None:
            self.cell.set_field("XCRI", xcri_bytes(self.meshes, self.pairs))
        self.file.update_header(self.next_id)
        return self.file


def set_placement(record, position, angles, scale):
    record.set_field("DATA", DATA.pack(*position, *angles))
    if abs(scale - 1.0) > 1e-6 or record.field("XSCL") is not None:
        record.set_field("XSCL", struct.pack("<f", scale), before="DATA")
