"""One cell's precombines built from its references (issue 40): the references the Creation Kit
would combine (ck_rules.plan, on the load order's winning records) grouped as it groups them,
each base model's shapes turned into records (shapes) placed once per reference (placements),
one ``_OC`` file per group (combined_nif), the geometry into ``<Patch> - Geometry.csg`` (the
shared layout, records already stored there reused) or into the ``_OC`` files (inline), the
cell's ``.cdx`` rows, ``<cell>_Physics.nif`` (build.physics) and the CELL
override with XCRI and PCMB in a patch plugin (plugin.patch.CellPatch) whose masters are the
cell's plugin's and the cell's plugin. All files are written, or none (files.write_all).

Groups: inside, the bound-centre key (ck_rules.groups); outside the CK keys by the subdivisions
of the cell a bound overlaps, recovered by bacup from the CK's output rather than traced, so
exterior cells are refused. Stale previs (build.previs has the sources): the cell's previs file
was computed for the old combined shapes and culls wrongly with new ones, while a cell without
VISI is drawn without occlusion culling, slower but right: the CELL override drops VISI, RVIS
and XPRI and the ``.cdx`` gets the no-previs row (0x88). Every record of the patch is dated with
the new PCMB, today's date, so the game keeps the precombines (core.precombined.status).
"""

import datetime
import struct
from pathlib import Path

import numpy as np

from ...errors import FormatError
from ...files import write_all
from ...plugin.file import PluginFile
from ...plugin.load_order import GAME_MASTERS, LoadOrder
from ...plugin.patch import CellPatch
from ...plugin.records import Plugin
from ..cdx import CdxFile, no_visibility_row, rebuild_cell
from ..cell_files import FOLDER, mesh_file_name, physics_file_name
from ..ck_rules import references as rules
from ..ck_rules.groups import BASE_NON_OCCLUDER, interior_group, merged_bound
from ..ck_rules.models import model_key
from ..ck_rules.plan import CellPlan, LoadedRecords
from ..csg import GeometryFile, GeometryWriter
from ..names import geometry_hash
from .combined_nif import GroupRecord, combined_nif
from .physics import cell_physics
from .clones import Clone, cloned_objects
from .physics import cloned_systems
from .placements import placement, reference_parts, scol_parts
from .previs import PREVIS_FIELDS
from .shapes import model_records
from .sources import ModelSource

BUILT_SUFFIX = " - Precombined.esp"  # the default patch: "<the plugin defining the cell> - Precombined.esp"
LAYOUTS = ("shared", "inline")


def today_stamp(day=None):
    """A date as PCMB codes it: day in bits 0-4, month in 5-8, year - 2000 in 9-15."""
    day = day or datetime.datetime.now(datetime.timezone.utc).date()
    return (day.year - 2000) << 9 | day.month << 5 | day.day


class Build:
    """A cell's build, made in memory: ``files`` [(path, bytes)] and the report's lines."""

    def __init__(self, data_folder, cell, into=None, layout="shared", plugins_txt=None, models=None, stamp=None):
        if layout not in LAYOUTS:
            raise FormatError(f"layout {layout!r}: choose shared or inline")
        # the patch named is built on: its references' overrides (a cell's edits) win
        self.order = LoadOrder(data_folder, plugins_txt, last=(into,) if into else ())
        self.folder = self.order.data_folder
        try:
            self.key = self.order.key_of_text(cell)
        except FormatError as error:  # a plugin the load order could not read is why, if any
            raise FormatError("; ".join([error.message, *self.order.problems]), path=str(self.folder)) from None
        self.layout, self.stamp = layout, stamp or today_stamp()
        self.files, self.left_out, self.messages = [], [], []
        self.groups, self.pairs, self.physics_parts, self.clones = {}, [], [], {}
        records = LoadedRecords(self.order)
        if records.problems:  # the winning records are not known: nothing is built on a guess
            records.close()
            raise FormatError(f"cannot build: {'; '.join(records.problems)}", path=str(self.folder))
        self.models = models or ModelSource([self.folder])
        try:
            self.plan = CellPlan(records, self.key, self.models)
            self._build(records, into)
        finally:
            records.close()
            if models is None:
                self.models.close()
        self.messages = self.order.problems + records.problems + self.models.problems + self.messages

    # -- which references, where -----------------------------------------------------------
    def _build(self, records, into):
        plan, order = self.plan, self.order
        self.cell_name = order.form_id(self.key)
        if not plan.interior:
            raise FormatError(f"CELL {self.cell_name} is an exterior cell: the CK's exterior groups (by the parts of "
                              f"the cell a bound overlaps) are not known for certain, so it is not built")
        self.into = into or f"{Path(self.order.names[self.key >> 24]).stem}{BUILT_SUFFIX}"
        if self.into.lower() in (name.lower() for name in GAME_MASTERS):
            raise FormatError(f"--into {self.into}: the game's masters are never rewritten: name a patch plugin or "
                              f"the mod's own plugin")
        # The cell's plugin: the last one holding the CELL, but for the patch being rebuilt; a
        # mod's own plugin placing references in the cell, when --into names it, is the target itself.
        own = self.into.lower() if into else None
        cell_entry = next((entry for entry, _ in plan.cell_versions if entry.name.lower() == own
                           and any(held.name.lower() == own for held, _, _ in plan.references.values())), None)
        cell_entry = cell_entry or next((entry for entry, _ in reversed(plan.cell_versions)
                                         if entry.name.lower() != self.into.lower()), None)
        if cell_entry is None:
            raise FormatError(f"CELL {self.cell_name} is in no plugin but {self.into}: give the patch another name")
        self.cell_plugin = Plugin(cell_entry.path)
        try:
            self._plan_references(records, cell_entry)
            if not self.pairs:
                return
            self._write_files(cell_entry, into)
        finally:
            self.cell_plugin.close()

    def _plan_references(self, records, cell_entry):
        names = [name.lower() for name in [*cell_entry.masters, cell_entry.name]]
        self.patch_names = [*cell_entry.masters, cell_entry.name]
        shapes_of = {}
        # The CK takes the references from the highest load-order FormID down: its files list
        # materials and instances in that order (the corpus cell's 11 files).
        for key, item in sorted(self.plan.judged(), key=lambda pair: -pair[0]):
            if item["verdict"] != rules.COMBINED:
                models = [reason for reason in item["reasons"] if reason.startswith("its model ")]
                if item["verdict"] in (rules.CRASHES, rules.NEEDS) or models:
                    self.left_out.append((item["reference"], item["verdict"], models or item["reasons"] + item["needs"]))
                continue
            origin = self.order.names[key >> 24].lower()
            if origin not in names:
                self.left_out.append((item["reference"], "not built", [f"defined by {self.order.names[key >> 24]}, "
                                                                       f"not a master of {cell_entry.name}"]))
                continue
            entry, record, _ = self.plan.references[key]
            base_entry, base = records.record(self.order.key(entry, struct.unpack_from("<I", record.field("NAME"))[0]))
            base_key = self.order.key(entry, struct.unpack_from("<I", record.field("NAME"))[0])
            parts = reference_parts(record)
            placed = placement(*parts)
            rows, clone = [], None  # (record key, ShapeRecord, the placement of its model: the shape's own applied later)
            for model, matrix in self._parts(records, base_entry, base):
                name = model_key(model)
                if name not in shapes_of:
                    shapes_of[name] = model_records(self.models.nif(model))
                full = placed @ matrix
                rows += [((base_key, name, index), shape, full) for index, shape in enumerate(shapes_of[name])]
                self.physics_parts.append((key, self.models.nif(model), full))
                clone = clone or self._clone(item["reference"], base, self.models.nif(model), parts)
            group = int(item["group"], 16) if item["group"] else self._scol_group(rows, base)
            if clone is not None:
                self.clones.setdefault(group, []).append(clone)
            for shape_key, shape, matrix in rows:
                self._instance(group, shape_key, shape, matrix)
            self.pairs.append((names.index(origin) << 24 | key & 0xFFFFFF, group))

    def _clone(self, reference, base, model, parts):
        """The Clone of a reference's cloned collision (clones.py), or None; what the CK's
        files do not show is named in the messages, not written."""
        try:
            systems = cloned_systems(model)
        except FormatError:
            return None  # cell_physics names it
        if not systems:
            return None
        objects, why = cloned_objects(model, systems)
        if base.type != "STAT":
            why = "a SCOL component's cloned collision (the CK's files show a STAT's only)"
        if why:
            self.messages.append(f"{reference}: cloned collision not written: {why}")
            return None
        return Clone(f"CLONE {base.text('EDID') or ''}", *parts, model, objects)

    def _parts(self, records, base_entry, base):
        """[(model, 4x4 in the reference)] of a combined reference's base: a STAT's model, or a
        SCOL's components at their placements."""
        if base.type == "STAT":
            return [(base.text("MODL"), np.eye(4))]
        return [(records.record(self.order.key(base_entry, component))[1].text("MODL"), matrix)
                for component, matrix in scol_parts(base)]

    @staticmethod
    def _scol_group(rows, base):
        """The group of a reference whose base's own model gives no bound (a SCOL without one):
        its components' shapes' bounds, placed, merged in order."""
        bounds = []
        for _, shape, placed in rows:
            matrix = placed @ shape.matrix
            bounds.append((matrix[:3, :3] @ shape.bound[0] + matrix[:3, 3],
                           shape.bound[1] * np.cbrt(abs(np.linalg.det(matrix[:3, :3])))))
        return interior_group(merged_bound(bounds)[0], bool(base.flags & BASE_NON_OCCLUDER))

    def _instance(self, group, key, shape, matrix):
        materials = self.groups.setdefault(group, {})
        records = materials.setdefault(shape.material, {})
        if key not in records:
            records[key] = GroupRecord(shape)
        records[key].matrices.append(matrix)

    # -- the files ---------------------------------------------------------------------------
    def _write_files(self, cell_entry, into):
        plugin_name = self.into
        self.plugin_path = self.folder / plugin_name
        stem = Path(plugin_name).stem
        cell_id = self.cell_plugin_id()
        folder = "" if self.order.names[self.key >> 24].lower() == GAME_MASTERS[0].lower() else f"{self.order.names[self.key >> 24]}\\"
        shared = self.layout == "shared"
        csg_path = self.folder / f"{stem} - Geometry.csg"
        writer = None
        if shared:
            source = GeometryFile(csg_path) if csg_path.is_file() else None
            try:
                writer = GeometryWriter(source)
            finally:
                if source is not None:
                    source.close()
        filename_hash = geometry_hash(stem)
        meshes = {}
        for group in sorted(self.groups):
            # Materials as the references bring them; in one, the records of the higher base
            # FormID first, a model's shapes in their order (the corpus cell's files).
            materials = [[records[key] for key in sorted(records, key=lambda k: (-k[0], k[1:]))]
                         for records in self.groups[group].values()]
            if shared:
                for records in materials:
                    for record in records:
                        shape = record.shape
                        record.offset = writer.add(shape.vertex_desc, shape.vertex_count, 3 * sum(shape.lod_counts),
                                                   shape.data)
            name = mesh_file_name(cell_id, group)
            nif = combined_nif(name[:-4], materials, filename_hash, inline=not shared,
                               clones=self.clones.get(group, ()))
            meshes[group] = nif
            self.files.append((self.folder / "meshes" / FOLDER / folder / name, nif.to_bytes()))
        if shared:
            self.files.append((csg_path, writer.to_bytes()))
        self._cdx(stem, cell_id, meshes)
        self._physics(cell_id, folder)
        self._plugin(cell_id)

    def cell_plugin_id(self):
        """The CELL's FormID as the cell's plugin (and the patch) stores it."""
        names = [name.lower() for name in self.patch_names]
        return names.index(self.order.names[self.key >> 24].lower()) << 24 | self.key & 0xFFFFFF

    def _cdx(self, stem, cell_id, meshes):
        path = self.folder / f"{stem}.cdx"
        cdx = CdxFile.read(path) if path.is_file() else CdxFile(path=path)
        key = (cell_id, 0)
        rows = rebuild_cell(CdxFile(), key, cell_id, meshes, no_visibility_row(key)).rows
        cdx.replace_cell(key, rows)
        self.files.append((path, cdx.to_bytes()))

    def _physics(self, cell_id, folder):
        data, _ = cell_physics(self.physics_parts, cell_id & 0xFFFFFF, self.messages)
        if data is None:
            self.messages.append("no <cell>_Physics.nif written: no combined reference has collision to merge")
            return
        self.files.append((self.folder / "meshes" / FOLDER / folder / physics_file_name(cell_id), data))

    def _plugin(self, cell_id):
        existing = PluginFile.read(self.plugin_path) if self.plugin_path.is_file() else None
        patch = CellPatch(self.cell_plugin, cell_id, existing=existing, precombined=False)
        patch.rebuilt(sorted(self.groups), self.pairs, self.stamp, dropped=PREVIS_FIELDS)
        self.files.append((self.plugin_path, patch.finish().to_bytes()))

    # -- the report --------------------------------------------------------------------------
    def write(self):
        for path, _ in self.files:
            path.parent.mkdir(parents=True, exist_ok=True)
        write_all(self.files)

    def report(self):
        return {"cell": self.cell_name, "references": len(self.pairs), "groups": [f"{g:08X}" for g in sorted(self.groups)],
                "files": [(str(path), len(data)) for path, data in self.files],
                "left_out": [{"reference": r, "verdict": v, "why": w} for r, v, w in sorted(self.left_out)],
                "messages": self.messages}

