"""The Creation Kit's plan for one cell of a load order, told before it runs: for each reference
of the cell (every plugin's, its last override winning), whether the CK combines it, the rule
that keeps it out, or what a verdict needs that the Data folder lacks (a master, a model); for
a combined interior reference, the group it lands in (``groups``). Beside each, what the cell's
XCRI lists for it: the combined mesh of the CK's last build, if any.
"""

import struct

from ...errors import FormatError
from ...plugin.load_order import LoadOrder
from ...plugin.records import Plugin
from ...plugin.references import combined_references
from ...stream import decode_text
from . import references as rules
from .groups import BASE_NON_OCCLUDER, interior_group, placed_bound
from .meshes import CRASHES as MESH_CRASHES
from .meshes import NOT_COMBINED, UNREADABLE
from .models import Models

PLACED = frozenset(("REFR", "ACHR", "PGRE", "PHZD", "PMIS", "PARW", "PBAR", "PBEA", "PCON", "PFLA"))
PARTIAL_FORM = 0x4000
INTERIOR = 0x1  # CELL DATA flags


class LoadedRecords:
    """Every plugin of a load order opened, and the winning record of a key (LoadOrder.key)."""

    def __init__(self, load_order):
        self.order = load_order
        self.problems = []
        self.plugins = []
        for entry in load_order.entries:
            try:
                self.plugins.append((entry, Plugin(entry.path)))
            except FormatError as error:
                self.problems.append(f"{error}: skipped")
        # Per plugin: origin code -> the FormID top byte it stores records of that origin with.
        self._indices = {}
        for entry, _ in self.plugins:
            indices = {}
            for index, name in enumerate(entry.masters):
                indices.setdefault(load_order.code(name), index)
            indices[entry.code] = len(entry.masters)
            self._indices[entry.code] = indices

    def stored(self, entry, key):
        """The FormID ``entry`` stores the record of ``key`` with, or None when it cannot name it."""
        index = self._indices[entry.code].get(key >> 24)
        return None if index is None else index << 24 | key & 0xFFFFFF

    def winning(self, key):
        """(entry, plugin, stored FormID) of the last plugin holding the record, or None."""
        for entry, plugin in reversed(self.plugins):
            form_id = self.stored(entry, key)
            if form_id is not None and form_id in plugin.records:
                return entry, plugin, form_id
        return None

    def record(self, key):
        """(entry, Record) of the winning record, or None."""
        found = self.winning(key)
        if found is None:
            return None
        entry, plugin, form_id = found
        return entry, plugin.record(form_id)

    def missing_origin(self, key):
        """The name of the plugin defining ``key`` when it is not loaded, else None."""
        return None if key >> 24 in self.order.by_code else self.order.names[key >> 24]

    def close(self):
        for _, plugin in self.plugins:
            plugin.close()


class CellPlan:
    """The plan of the cell whose key (LoadOrder.key) is ``cell_key``; ``models`` finds and
    judges the models (Models)."""

    def __init__(self, records, cell_key, models):
        self.records, self.models, self.order = records, models, records.order
        self.key = cell_key
        versions = [(entry, plugin.record(form_id)) for entry, plugin in records.plugins
                    for form_id in [records.stored(entry, cell_key)]
                    if form_id is not None and plugin.records.get(form_id, ("",))[0] == "CELL"]
        if not versions:
            raise self.order.missing("CELL", cell_key)
        self.cell_versions = versions
        data = versions[0][1].field("DATA") or b"\0"
        self.interior = bool(data[0] & INTERIOR)
        self.xcri, self.xcri_plugin = self._xcri()
        self.references = self._references()
        linked = set()
        for entry, record, _ in self.references.values():
            linked.update(self.order.key(entry, target) for target in rules.linked_targets(record))
        self.linked_from = linked
        self.scrappable = self._scrappable()

    def _scrappable(self):
        """Keys of the bases a winning constructible object (COBJ) creates, directly or as an
        item of the form list it creates: the workshop can scrap them."""
        recipes = dict.fromkeys(self.order.key(entry, form_id) for entry, plugin in self.records.plugins
                                for form_id, (kind, *_) in plugin.records.items() if kind == "COBJ")
        found = set()
        for key in recipes:
            entry, recipe = self.records.record(key)
            created = rules.created_object(recipe)
            if recipe.flags & rules.DELETED or created is None:
                continue
            target = self.order.key(entry, created)
            form_list = self.records.record(target)
            if form_list is not None and form_list[1].type == "FLST":
                found.update(self.order.key(form_list[0], item) for item in rules.form_list_items(form_list[1]))
            else:
                found.add(target)
        return found

    def _xcri(self):
        """({reference key: mesh id}, plugin) of the last whole CELL override holding XCRI."""
        for entry, record in reversed(self.cell_versions):
            xcri = record.field("XCRI")
            if record.flags & PARTIAL_FORM or not xcri:
                continue
            try:
                _, stored, meshes = combined_references(xcri)
            except ValueError:
                return {}, entry.name
            return {self.order.key(entry, f): mesh for f, mesh in zip(stored, meshes)}, entry.name
        return {}, None

    def _references(self):
        """{key: (entry, winning Record, the plugin moving it out of the cell or None)} of every
        placed reference some plugin puts in the cell."""
        keys = []
        for entry, plugin in self.records.plugins:
            cell_id = self.records.stored(entry, self.key)
            keys += [self.order.key(entry, form_id) for form_id, cell in plugin.cell_of.items()
                     if cell == cell_id and plugin.records[form_id][0] in PLACED]
        found = {}
        for key in dict.fromkeys(keys):
            entry, plugin, form_id = self.records.winning(key)
            moved = plugin.cell_of.get(form_id) != self.records.stored(entry, self.key)
            found[key] = (entry, plugin.record(form_id), entry.name if moved else None)
        return found

    # -- verdicts ------------------------------------------------------------------------------
    def judged(self):
        """(key, verdict item) of each reference some plugin puts in the cell."""
        return [(key, self._verdict(key, *value)) for key, value in self.references.items()]

    def verdicts(self):
        out = [item for _, item in self.judged()]
        for key in self.xcri:
            if key not in self.references:  # listed, but no plugin loaded holds the reference
                missing = self.records.missing_origin(key)
                item = self._item(key, None, None)
                if missing:
                    item.update(verdict=rules.NEEDS, needs=[missing])
                else:
                    item.update(verdict=rules.EXCLUDED, reasons=["listed in XCRI, but no plugin places it in the cell"])
                out.append(item)
        return out

    def _item(self, key, entry, record):
        return {"reference": self.order.form_id(key), "type": record.type if record else None,
                "plugin": entry.name if entry else None, "base": None, "base_type": None, "editor_id": None,
                "model": None, "verdict": None, "reasons": [], "needs": [], "notes": [], "group": None, "bound": None,
                "xcri_group": f"{self.xcri[key]:08X}" if key in self.xcri else None}

    def _verdict(self, key, entry, record, moved_by):
        item = self._item(key, entry, record)
        reasons, needs = item["reasons"], item["needs"]
        reasons += rules.reference_reasons(record)
        if moved_by:
            reasons.append(f"moved to another cell by {moved_by}")
        if key in self.linked_from:
            reasons.append("another reference links to it (XLKR)")
        for keyword in rules.linked_keywords(record):
            self._link(entry, keyword, reasons, needs)
        base = self._base(entry, record, item)
        if base is not None:
            reasons += rules.base_reasons(base[1])
            item["notes"] += rules.reference_notes(record, base[1])
        if reasons:
            item["verdict"] = rules.EXCLUDED
        elif needs:
            item["verdict"] = rules.NEEDS
        else:
            self._model_verdict(item, record, *base)
        return item

    def _link(self, entry, stored_keyword, reasons, needs):
        if stored_keyword == 0:
            reasons.append(rules.link_reason("", "none"))
            return
        keyword = self.order.key(entry, stored_keyword)
        found = self.records.record(keyword)
        if found is None:
            missing = self.records.missing_origin(keyword)
            if missing:
                needs.append(f"{missing} (is keyword {self.order.form_id(keyword)} of a linked reference MultirefLOD?)")
                return
            reasons.append(rules.link_reason("", self.order.form_id(keyword)))
            return
        reason = rules.link_reason(found[1].text("EDID") or "", self.order.form_id(keyword))
        if reason:
            reasons.append(reason)

    def _base(self, entry, record, item):
        """(entry, Record) of a reference's base, filling the item's base fields; None when unknown."""
        name = record.field("NAME")
        if name is None or len(name) < 4:
            item["reasons"].append("no base (NAME)")
            return None
        key = self.order.key(entry, struct.unpack_from("<I", name)[0])
        item["base"] = self.order.form_id(key)
        found = self.records.record(key)
        if found is None:
            missing = self.records.missing_origin(key)
            if missing:
                item["needs"].append(missing)
            else:
                item["reasons"].append(f"its base {item['base']} is in no plugin")
            return None
        base = found[1]
        item.update(base_type=base.type, editor_id=base.text("EDID"), model=base.text("MODL"))
        if key in self.scrappable:
            item["reasons"].append(rules.SCRAPPABLE)
        elif self.records.missing_origin(key):  # the plugin defining the base may hold its recipes
            item["needs"].append(f"{self.records.missing_origin(key)} (does a recipe of it make the base scrappable?)")
        return found

    def _model_verdict(self, item, record, base_entry, base):
        """Combined, or kept out by a model (the base's, or each component's of a SCOL)."""
        models = [(base.text("MODL"), base)] if base.type == "STAT" else self._components(item, base_entry, base)
        for model, owner in models:
            if not model:
                item["reasons"].append(f"{owner.type} {owner.text('EDID') or '(no EditorID)'} has no model (MODL)")
                continue
            check = self.models.check(model)
            if check.verdict is None:
                item["needs"].append(f"meshes\\{model}")
            elif check.verdict.verdict == UNREADABLE:
                item["reasons"].append(f"its model {model} cannot be read ({check.verdict.error})")
            elif check.verdict.verdict in (MESH_CRASHES, NOT_COMBINED):
                target = item["reasons"]
                target += [f"its model {model}: {finding.text()}" for finding in check.verdict.findings]
                if check.verdict.verdict == MESH_CRASHES:
                    item["verdict"] = rules.CRASHES
        if item["verdict"] == rules.CRASHES:
            return
        if item["reasons"]:
            item["verdict"] = rules.EXCLUDED
        elif item["needs"]:
            item["verdict"] = rules.NEEDS
        else:
            item["verdict"] = rules.COMBINED
            self._group(item, record, base)

    def _components(self, item, entry, scol):
        """(model, STAT Record) of each component of a SCOL; what is missing goes to the item."""
        found = []
        for stored in rules.scol_components(scol):
            key = self.order.key(entry, stored)
            component = self.records.record(key)
            if component is None:
                missing = self.records.missing_origin(key)
                (item["needs"] if missing else item["reasons"]).append(
                    missing or f"its SCOL's component {self.order.form_id(key)} is in no plugin")
            elif component[1].type != "STAT":
                item["reasons"].append(f"its SCOL's component {self.order.form_id(key)} is a {component[1].type}, not a STAT")
            else:
                found.append((component[1].text("MODL"), component[1]))
        return found

    def _group(self, item, record, base):
        """The bound (centre and radius) of a combined reference and its group (``%08X``), left
        None where not known: a model without shapes; outside, the group."""
        data = record.field("DATA")
        model = base.text("MODL")
        check = self.models.check(model) if model else None
        if data is None or len(data) < 24 or check is None or not check.bounds:
            return
        scale = record.field("XSCL")
        values = struct.unpack_from("<6f", data)
        center, radius = placed_bound(check.bounds, values[:3], values[3:], struct.unpack("<f", scale)[0] if scale else 1.0)
        item["bound"] = [*map(float, center), float(radius)]
        if self.interior:
            item["group"] = f"{interior_group(center, bool(base.flags & BASE_NON_OCCLUDER)):08X}"

    def as_dict(self):
        references = self.verdicts()
        counts = {}
        for item in references:
            counts[item["verdict"]] = counts.get(item["verdict"], 0) + 1
        winner = self.cell_versions[-1]
        return {
            "cell": self.order.form_id(self.key),
            "editor_id": decode_text((winner[1].field("EDID") or b"").split(b"\0", 1)[0]) or None,
            "interior": self.interior,
            "plugin": winner[0].name,
            "xcri_plugin": self.xcri_plugin,
            "references": references,
            "counts": counts,
        }


def cell_plan(data_folder, cell, plugins_txt=None):
    """The plan of one cell (its load-order FormID, or ``Plugin.esm:XXXXXX``) as a dict, with the
    load order's and the Data folder's problems."""
    order = LoadOrder(data_folder, plugins_txt)
    key = order.key_of_text(cell)
    records = LoadedRecords(order)
    models = Models([order.data_folder])
    try:
        plan = CellPlan(records, key, models).as_dict()
    finally:
        records.close()
        models.close()
    plan["problems"] = order.problems + records.problems + models.problems
    return plan
