"""An imported cell's precombine state in a load order (core.precombined.status): the cell's
collection gets its status (``precombine_status``, ``precombine_causes``, ``precombine_previs``),
and each copy whose REFR is overridden after the precombines were built, or by an override
that breaks them, gets ``precombine_breaker`` (the overriding plugin) and
``precombine_override`` (what the game does with the override), and is linked into a child
collection "<cell> precombine breakers". Copies are those io.plugin.references named, with their
REFR's FormID as the plugin it read stores it (its NamedCopies)."""

from pathlib import Path

import bpy

from ...core.errors import FormatError
from ...core.plugin.load_order import GAME_MASTERS, SUFFIXES, LoadOrder
from ...core.plugin.references import cell_form_id
from ...core.precombined.status import Report
from .. import schema



def cell_origin(cell_path):
    """The plugin defining a cell file's cell: its folder (``precombined\\<Master.esm>\\``) when
    it has one, else Fallout4.esm."""
    parent = Path(str(cell_path).replace("\\", "/")).parent.name
    return parent if parent.lower().endswith(SUFFIXES) else GAME_MASTERS[0]


def load_order_report(data_folder, plugins_txt=None):
    """(Report of every cell of the load order, warnings); the Report is None when the Data
    folder cannot be read. Built once for all the cells of an import."""
    try:
        report = Report(LoadOrder(data_folder, plugins_txt or None))
    except FormatError as error:
        return None, [f"precombine state not read: {error}"]
    return report, list(report.problems)


def mark_breakers(collection, report, named, rollback):
    """Mark the copies of the cell imported into ``collection`` (see the module) from a
    load_order_report; ``named``: the io.plugin.references.NamedCopies reference naming found;
    the collection of breakers made goes to ``rollback``. Returns warnings."""
    cell_path = collection.get(schema.NIF_PATH, "")
    object_id = cell_form_id(cell_path)
    if object_id is None or report is None:
        return []
    order = report.load_order
    cell_id = order.form_id(order.code(cell_origin(cell_path)) << 24 | object_id & 0xFFFFFF)
    cell = next((result for result in report.results if result["cell"] == cell_id), None)
    if cell is None:
        return [f"{Path(cell_path).name}: no plugin of the load order gives CELL {cell_id} combined meshes"]
    collection[schema.PRECOMBINE_STATUS] = cell["status"]
    collection[schema.PRECOMBINE_CAUSES] = "\n".join(  # one string property: one cause a line
        f"{c['rule']}: {c['plugin'] + ', ' if c['plugin'] else ''}{c['record']}" for c in cell["causes"])
    collection[schema.PRECOMBINE_PREVIS] = cell["previs_status"]
    collection[schema.PRECOMBINE_PLUGIN] = cell["plugin"]
    overridden = {item["record"]: item for item in cell["reference_overrides"]}
    entry = next((e for e in order.entries if named.plugin and e.name.lower() == named.plugin.lower()), None)
    marked = []
    for obj, form_id in named.references if entry is not None else ():
        item = overridden.get(f"REFR {order.form_id(order.key(entry, form_id))}")
        if item is not None:
            obj[schema.PRECOMBINE_BREAKER] = item["plugin"]
            obj[schema.PRECOMBINE_OVERRIDE] = item["effect"]
            marked.append(obj)
    if marked:
        name = f"{collection.name} precombine breakers"
        breakers = rollback.add(bpy.data.collections.new(name))
        collection.children.link(breakers)
        for obj in marked:
            breakers.objects.link(obj)
    return []
