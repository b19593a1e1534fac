"""Which precombined cells of a load order the game draws, and why the others are off.

Fields (xEdit's wbDefinitionsFO4.pas, CELL): VISI "PreVis Files Timestamp" and PCMB
"PreCombined Files Timestamp", 2 bytes each (``wbTimeStampToString``: day in bits 0-4, month in
5-8, year - 2000 in 9-15, so later dates compare greater); RVIS "In PreVis File Of" (the
cluster's centre cell); XPRI "PreVis Reference Index" (FormIDs); XCRI "Combined Reference
Index": u32 mesh count, u32 count of the u32s that follow the meshes, the meshes (the hex id of
``Precombined\\[<master>\\]<cell>_<id>_OC.nif``, the master folder only for cells defined
after Fallout4.esm: ``wbCombinedMeshIDToStr``), then (reference FormID, combined mesh) pairs
(``wbCELLCombinedRefsCounter``: the count is twice the pairs). CELL flags: 0x80 "No Pre Vis",
0x4000 "Partial Form". A record header's Version Control Info 1 holds the date it was last
edited in its low 16 bits, coded as PCMB is (``wbVCI1ToStrAfterFO4``); 0 is "None".

Rules, from PJMail's "Precombine Previs Deep Dive" (Nexus Fallout 4 mod 69978, section "How the
Game Determines Precombine/Previs State During Startup"), evaluated on the load order's end
state: the last CELL override not flagged Partial Form wins its PCMB and VISI (even blank);
XCRI and XPRI come from the last such override holding them. Precombines are off when:
- PCMB is blank (``empty PCMB``);
- the cell is exterior and the last override of its LAND has no date or one newer than PCMB;
- a combined reference's last override has no date or one newer than PCMB, and that override
  is in the plugin of the winning CELL override (or is an interior reference in an ESM-flagged
  plugin), the reference is defined by the cell's own master, it stays in this cell, and
  (exterior) it is temporary; other overrides are ignored by the game (the mesh shows the
  reference as it was built) and listed as such;
- the winning CELL override is not the cell's own master and carries no date or one newer than
  its PCMB (a copy made without rebuilding the precombines). This one is the issue's rule: the
  deep dive's startup steps do not list it;
- a combined mesh (``_OC.nif``) is neither loose nor in an archive, or (when asked) a mesh's
  geometry file (``<plugin> - Geometry.csg``, by its name's hash) is missing;
- the cell is defined by a light plugin (the deep dive: the game has no previsbines for them).
Previs is off with the precombines, disabled by a blank VISI or the No Pre Vis flag, stale when
VISI is older than PCMB, missing when ``vis\\[<master>\\]<id>.uvd`` (the interior cell's id or
the cluster centre's, RVIS) is neither loose nor archived.
"""

import os
import struct
from pathlib import Path

import numpy as np

from ..archives.data import ARCHIVE_SUFFIXES, opened_archive, path_in_folder
from ..errors import FormatError
from ..plugin.load_order import GAME_MASTERS, LoadOrder
from ..plugin.references import combined_references
from ..plugin.scan import PERSISTENT, PluginScan, reference_fields
from ..stream import decode_text

NO_PREVIS = 0x80
PARTIAL_FORM = 0x4000
INTERIOR = 0x1  # CELL DATA flags
CELL_SIZE = 4096.0  # game units per exterior cell


def stamp_date(stamp):
    """A 16-bit date stamp (PCMB, VISI, a Version Control Info's low half) as YYYY-MM-DD, or None."""
    if not stamp:
        return None
    return f"{2000 + (stamp >> 9 & 0x7F):04}-{stamp >> 5 & 0xF:02}-{stamp & 0x1F:02}"


def stamp_of(fields, name):
    value = fields.get(name)
    return int.from_bytes(value[:2], "little") if value and len(value) >= 2 else 0


def newer(vci, pcmb):
    """Whether a record's Version Control Info 1 is "None" or dated after the PCMB stamp."""
    date = vci & 0xFFFF
    return date == 0 or date > pcmb


def combined_index(xcri):
    """(mesh ids, reference FormIDs as stored) of an XCRI field, or None when its counts do not
    fit its size."""
    try:
        meshes, references, _ = combined_references(xcri)
    except ValueError:
        return None
    return meshes, references


class DataFolderFiles:
    """Which precombined meshes, previs files and geometry files a Data folder has: loose
    (which win) or in its archives."""

    def __init__(self, data_folder, problems):
        self.found = {}
        folder = Path(data_folder)
        # Only whether a file exists matters; the archive named is one that has it.
        for name in sorted(os.listdir(folder), key=str.lower):
            # Texture archives hold no meshes, previs or geometry: their large tables stay unread.
            if name.lower().endswith(ARCHIVE_SUFFIXES) and " - textures" not in name.lower():
                try:
                    archive = opened_archive(folder / name)
                except FormatError as error:
                    problems.append(f"{error}: its files are not counted")
                    continue
                for inner in archive.names():
                    key = inner.replace("\\", "/").lower()
                    if key.startswith(("meshes/precombined/", "vis/")) or key.endswith(" - geometry.csg"):
                        self.found[key] = f"{name}:{inner}"
            elif name.lower().endswith(" - geometry.csg"):
                self.found[name.lower()] = "loose"
        for relative in ("meshes/precombined", "vis"):
            top = path_in_folder(folder, relative)  # as the folder spells it, whatever the case
            for root, _, files in os.walk(top, followlinks=True):
                inside = os.path.relpath(root, folder).replace(os.sep, "/").lower()
                for name in files:
                    self.found[f"{inside}/{name.lower()}"] = "loose"

    def where(self, path):
        """"loose", ``ARCHIVE:inner path``, or None."""
        return self.found.get(path.replace("\\", "/").lower())


class Cell:
    """One cell across the load order: its CELL records in load order, the winning values."""

    def __init__(self, key):
        self.key = key
        self.records = []

    def winner(self):
        whole = [record for record in self.records if not record.flags & PARTIAL_FORM]
        return whole[-1] if whole else self.records[0]

    def last_with(self, name):
        return next((r for r in reversed(self.records) if not r.flags & PARTIAL_FORM and r.fields.get(name)), None)


class Report:
    """The precombine state of every cell of a load order having combined meshes (or of the one
    whose key is ``cell``, see LoadOrder.key). ``check_geometry``: open each cell's meshes to find
    their geometry files (slow on a whole game: every _OC.nif is read)."""

    def __init__(self, load_order, cell=None, check_geometry=False):
        self.load_order = load_order
        self.problems = list(load_order.problems)
        self.cells = {}
        self.references = {}  # key -> the last Override of it
        self.lands = {}  # cell key -> the last LAND override in it
        for entry in load_order.entries:
            try:
                scan = PluginScan(load_order, entry)
            except FormatError as error:
                self.problems.append(f"{error}: skipped")
                continue
            self.problems += scan.problems
            for record in scan.cells:
                self.cells.setdefault(record.key, Cell(record.key)).records.append(record)
            for found in scan.references:
                self.references[found.key] = found
            for found in scan.lands:
                self.lands[found.cell] = found
        self.overridden = set(self.references)
        self.files = DataFolderFiles(load_order.data_folder, self.problems)
        self.check_geometry = check_geometry
        keys = [cell] if cell is not None else sorted(self.cells)
        self.results = []
        for key in keys:
            cell = self.cells.get(key)
            if cell is None:
                raise load_order.missing("CELL", key)
            xcri_record = cell.last_with("XCRI")
            if xcri_record is not None:
                self.results.append(self._cell(cell, xcri_record))
            elif len(keys) == 1:
                self.problems.append(f"CELL {load_order.form_id(key)}: no plugin gives it combined meshes (XCRI)")

    # -- one cell ---------------------------------------------------------------------------
    def _cell(self, cell, xcri_record):
        order = self.load_order
        winner = cell.winner()
        origin = cell.key >> 24
        pcmb, visi = stamp_of(winner.fields, "PCMB"), stamp_of(winner.fields, "VISI")
        index = combined_index(xcri_record.fields["XCRI"])
        interior = bool(stamp_of(cell.records[0].fields, "DATA") & INTERIOR)
        folder = self._master_folder(origin)
        object_id = cell.key & 0xFFFFFF
        causes, overrides = [], []

        def cause(rule, entry, record, detail):
            causes.append({"rule": rule, "plugin": entry.name if entry else None, "record": record, "detail": detail})

        cell_id = order.form_id(cell.key)
        if not pcmb:
            cause("empty PCMB", winner.entry, f"CELL {cell_id}", "the winning CELL override has no PCMB date")
        if origin in order.by_code and order.by_code[origin].light:
            cause("light master", order.by_code[origin], f"CELL {cell_id}",
                  "the cell is defined by a light plugin, whose cells the game gives no precombines")
        if winner.entry.code != origin and pcmb and newer(winner.vci, pcmb):
            cause("cell override", winner.entry, f"CELL {cell_id}",
                  f"edited {stamp_date(winner.vci & 0xFFFF) or 'with no date'}, after its PCMB {stamp_date(pcmb)}")
        land = self.lands.get(cell.key)
        if not interior and land is not None and pcmb and newer(land.vci, pcmb):
            cause("LAND override", land.entry, f"LAND {order.form_id(land.key)}",
                  f"edited {stamp_date(land.vci & 0xFFFF) or 'with no date'}, after PCMB {stamp_date(pcmb)}")
        meshes, references = [], []
        if index is None:
            cause("bad XCRI", xcri_record.entry, f"CELL {cell_id}", "its counts do not fit its size")
        else:
            mesh_ids, stored = index
            for mesh in mesh_ids:
                path = f"meshes\\precombined\\{folder}{object_id:08X}_{mesh:08X}_OC.nif"
                where = self.files.where(path)
                meshes.append({"id": f"{mesh:08X}", "file": path, "found": where})
                if where is None:
                    cause("missing _OC file", None, path, "neither loose nor in an archive")
            codes, masks = order.origins(xcri_record.entry)  # LoadOrder.key, inlined: a game has ~500k
            references = [codes[f >> 24] << 24 | f & masks[f >> 24] for f in stored]
        built = self._built_by(cell, winner, xcri_record)
        for key in sorted(set(references) & self.overridden):  # set & set walks the smaller: most are not overridden
            found = self.references[key]
            why_not = self._ignored_because(cell, key, found, winner, interior)
            record = f"REFR {order.form_id(key)}"
            if why_not is None and pcmb and newer(found.vci, pcmb):
                detail = f"edited {stamp_date(found.vci & 0xFFFF) or 'with no date'}, after PCMB {stamp_date(pcmb)}"
                cause("reference override", found.entry, record, detail)
                overrides.append({"plugin": found.entry.name, "record": record, "effect": f"breaks: {detail}"})
            elif order.entries.index(found.entry) > order.entries.index(built):
                overrides.append({"plugin": found.entry.name, "record": record,
                                  "effect": f"ignored by the game: {why_not}" if why_not else
                                  f"dated {stamp_date(found.vci & 0xFFFF)}, not after PCMB"})
        if self.check_geometry:
            for problem in self._geometry(meshes):
                cause("missing geometry file", None, problem[0], problem[1])
        previs = self._previs(cell, winner, pcmb, visi, interior, folder, bool(causes))
        return {
            "cell": cell_id,
            "editor_id": decode_text(winner.fields.get("EDID", b"").split(b"\0", 1)[0]) or None,
            "defined_by": order.origin_name(cell.key),
            "plugin": winner.entry.name,
            "interior": interior,
            "precombined": stamp_date(pcmb),
            "previs": stamp_date(visi),
            "meshes": meshes,
            "references": len(references),
            "status": "broken" if causes else "intact",
            "causes": causes,
            "precombines_from": built.name,
            "reference_overrides": overrides,
            "previs_status": previs[0],
            "previs_causes": previs[1],
        }

    @staticmethod
    def _built_by(cell, winner, xcri_record):
        """The plugin whose CELL brought the winning PCMB and XCRI (later ones copied them)."""
        values = (winner.fields.get("PCMB"), xcri_record.fields.get("XCRI"))
        for record in cell.records:
            if (record.fields.get("PCMB"), record.fields.get("XCRI")) == values:
                return record.entry
        return winner.entry

    def _master_folder(self, origin):
        name = self.load_order.names[origin]
        return "" if name.lower() == GAME_MASTERS[0].lower() else f"{name}\\"

    def _ignored_because(self, cell, key, found, winner, interior):
        """Why the game ignores a reference override (None: it counts)."""
        if key >> 24 != cell.key >> 24:
            return "the reference is not defined by the cell's master"
        if found.entry is not winner.entry and not (interior and found.entry.master):
            return f"not in {winner.entry.name}, whose CELL override wins"
        if found.cell is not None and found.cell != cell.key:
            return "moved to another cell"
        if not interior:
            if found.flags & PERSISTENT:
                return "persistent"
            grid = cell.winner().fields.get("XCLC")
            if grid and len(grid) >= 8:
                try:
                    data = reference_fields(found.entry, found.offset).get("DATA")
                except FormatError as error:
                    self.problems.append(f"{error}: its position is unknown, taken as inside its cell")
                    return None
                if data and len(data) >= 8:
                    x, y = struct.unpack_from("<2f", data)
                    if (int(np.floor(x / CELL_SIZE)), int(np.floor(y / CELL_SIZE))) != struct.unpack_from("<2i", grid):
                        return "moved out of the cell"
        return None

    def _previs(self, cell, winner, pcmb, visi, interior, folder, broken):
        if broken:
            return "off", ["the cell's precombines are off"]
        if winner.flags & NO_PREVIS:
            return "disabled", [f"{winner.entry.name}: the CELL is flagged No Pre Vis"]
        if not visi:
            return "disabled", [f"{winner.entry.name}: the winning CELL override has no VISI date"]
        causes = []
        if visi < pcmb:
            causes.append(f"VISI {stamp_date(visi)} is older than PCMB {stamp_date(pcmb)}")
        centre = cell.key
        if not interior:
            record = cell.last_with("RVIS")
            centre = self.load_order.key(record.entry, struct.unpack_from("<I", record.fields["RVIS"])[0]) \
                if record is not None and len(record.fields["RVIS"]) >= 4 else None
        if centre is None:
            causes.append("no RVIS: the cell's previs cluster is unknown")
        else:
            path = f"vis\\{folder}{centre & 0xFFFFFF:08X}.uvd"
            if self.files.where(path) is None:
                causes.append(f"{path} is neither loose nor in an archive")
        status = "intact" if not causes else "stale" if causes[0].startswith("VISI") else "missing"
        return status, causes

    def _geometry(self, meshes):
        """(file, what is missing) for each found mesh whose geometry file is not there."""
        from ..formats import read_file
        from ..plugin.references import geometry_hashes
        from .names import bscrc32

        present = {bscrc32(Path(key).stem) for key in self.files.found if key.endswith(" - geometry.csg")}
        out = []
        for mesh in meshes:
            if mesh["found"] is None:
                continue
            if mesh["found"] == "loose":
                source = path_in_folder(self.load_order.data_folder, mesh["file"])
            else:
                archive, inner = mesh["found"].split(":", 1)
                source = f"{self.load_order.data_folder / archive}:{inner}"
            try:
                nif = read_file(source)
            except FormatError as error:
                out.append((mesh["file"], f"cannot be read ({error.message})"))
                continue
            for missing in sorted(geometry_hashes(nif) - present):
                out.append((mesh["file"], f"its geometry file (name hash {missing:08X}) is neither loose nor archived"))
        return out

    def as_dict(self):
        return {
            "data_folder": str(self.load_order.data_folder),
            "load_order": [{"slot": f"FE{e.slot:03X}" if e.light else f"{e.slot:02X}", "plugin": e.name, "kind": e.kind}
                           for e in self.load_order.entries],
            "problems": self.problems,
            "cells": self.results,
            "intact": sum(r["status"] == "intact" for r in self.results),
            "broken": sum(r["status"] == "broken" for r in self.results),
        }


def precombine_report(data_folder, plugins_txt=None, cell=None, check_geometry=None):
    """The report as a dict (``cli.py precombines``): every cell, or the one ``cell`` names (its
    load-order FormID, as a number or as text, or ``Plugin.esm:XXXXXX``: LoadOrder.key_of_text);
    geometry files are checked for one cell unless ``check_geometry`` says."""
    order = LoadOrder(data_folder, plugins_txt)
    key = None
    if cell is not None:
        key = order.key_of_text(f"{cell:08X}" if isinstance(cell, int) else cell)
    return Report(order, key, cell is not None if check_geometry is None else check_geometry).as_dict()


def render_report(report):
    lines = [f"load order: {len(report['load_order'])} plugins in {report['data_folder']}"]
    lines += [f"  problem: {problem}" for problem in report["problems"]]
    for cell in report["cells"]:
        name = f" {cell['editor_id']}" if cell["editor_id"] else ""
        lines.append(f"CELL {cell['cell']}{name} ({cell['defined_by']}; wins: {cell['plugin']}): {cell['status']}; "
                     f"precombined {cell['precombined'] or '-'}, previs {cell['previs'] or '-'} "
                     f"({cell['previs_status']}); {len(cell['meshes'])} meshes, {cell['references']} references")
        for mesh in cell["meshes"] if len(report["cells"]) == 1 else ():
            lines.append(f"  mesh {mesh['file']}: {mesh['found'] or 'MISSING'}")
        for item in cell["causes"]:
            by = f"{item['plugin']}, " if item["plugin"] else ""
            lines.append(f"  broken: {item['rule']}: {by}{item['record']}: {item['detail']}")
        for item in cell["reference_overrides"]:
            if not item["effect"].startswith("breaks"):  # those are among the causes
                lines.append(f"  overridden after {cell['precombines_from']}: {item['plugin']}, {item['record']}: "
                             f"{item['effect']}")
        for item in cell["previs_causes"]:
            lines.append(f"  previs: {item}")
    lines.append(f"{len(report['cells'])} cells with precombines: {report['intact']} intact, {report['broken']} broken")
    return "\n".join(lines)
