"""Each placed copy of an imported precombined cell gets the reference that placed it
(core.plugin.references matches them): the REFR's FormID, its base's FormID, EditorID and
model path as properties, and "EditorID REFR-FormID" as its name (copies whose base is in a
master not given keep their record's name). Names are made unique here, not by Blender's
".001" suffixes, whose search makes renaming thousands of copies quadratic. Copies placed by geometry nodes are points: their REFR
FormIDs go to the points' ``reference_form_id`` attribute (0 when unmatched)."""

from dataclasses import dataclass, field

import numpy as np

from ...core.errors import FormatError
from ...core.plugin import CellReferences, Plugin, cell_form_id, match_instances
from ...core.plugin.references import find_cell_plugin
from .. import schema


@dataclass
class NamedCopies:
    """What reference naming found, for the passes after it (io.precombined.breakers): the plugin
    whose FormIDs the copies hold (None: no plugin was read), each named copy with its REFR's
    FormID as that plugin stores it, and the warnings."""

    warnings: list = field(default_factory=list)
    plugin: str | None = None
    references: list = field(default_factory=list)  # [(object, FormID)]


def name_instances(collection, copies, plugin_paths=(), find_plugin=True):
    """Name ``copies`` (the io.precombined.importer.PlacedCopies the build made) of the cell
    imported into ``collection``. ``plugin_paths``: the cell's plugin, then any of its masters;
    without them the plugin is looked for in the cell's Data folder when ``find_plugin``.
    Returns NamedCopies (a bad plugin is a warning, never an exception)."""
    objects, points = copies.objects, [obj for obj, _ in copies.instancers]
    cell_path = collection.get(schema.NIF_PATH, "")
    if not objects and not points:
        return NamedCopies()
    plugin_paths = list(plugin_paths)
    if not plugin_paths and find_plugin:
        found = find_cell_plugin(cell_path, copies.geometry_hashes)
        plugin_paths = [found] if found is not None else []
    if not plugin_paths:
        return NamedCopies()
    cell_id = cell_form_id(cell_path)
    if cell_id is None:  # the import names the file
        return NamedCopies(["the file name does not start with the cell's FormID: references not looked up"])
    plugins = []
    try:
        plugins = [Plugin(path) for path in plugin_paths]
        cell = CellReferences(plugins, cell_id)
    except FormatError as error:
        return NamedCopies([f"references not named: {error}"])
    finally:
        for plugin in plugins:
            plugin.close()
    collection[schema.REFERENCE_CELL_PLUGIN] = plugins[0].name  # reference_form_id is as this plugin stores it
    # The 18 stored floats: grayscale, rotation rows, translation, scale, bound centre, radius.
    rows = [np.reshape(placement, (1, 18)) for placement in copies.placements]
    rows += [placements for _, placements in copies.instancers]
    raw = np.concatenate(rows).astype(np.float64)
    matrices = raw[:, 1:10].reshape(-1, 3, 3) * raw[:, 13, None, None]
    matches = match_instances(cell.references, raw[:, 10:13], matrices)
    at = len(objects)
    for obj in points:
        count = len(obj.data.vertices)
        ids = np.array([r.form_id if r is not None else 0 for r in matches[at:at + count]], np.uint32)
        attributes = obj.data.attributes
        attribute = attributes.get(schema.REFERENCE_FORM_ID) or attributes.new(schema.REFERENCE_FORM_ID, "INT", "POINT")
        attribute.data.foreach_set("value", ids.view(np.int32))  # FormID bits in Blender's signed integers
        at += count
    names = [f"{r.editor_id} {r.form_id:08X}" if r is not None and r.editor_id else None for r in matches[: len(objects)]]
    uses = {}
    for name in names:
        uses[name] = uses.get(name, 0) + 1
    seen = {}
    named = NamedCopies(plugin=plugins[0].name)
    for obj, reference, name in zip(objects, matches, names):
        if reference is None:
            continue
        named.references.append((obj, reference.form_id))
        obj[schema.REFERENCE_FORM_ID] = f"{reference.form_id:08X}"
        obj[schema.REFERENCE_PLUGIN] = reference.plugin.name
        obj[schema.BASE_FORM_ID] = f"{reference.base_id:08X}"
        if reference.editor_id:  # known when the base record is in a plugin given
            obj[schema.BASE_EDITOR_ID] = reference.editor_id
            if uses[name] > 1:  # a reference whose base has several shapes places several copies
                seen[name] = seen.get(name, 0) + 1
                name = f"{name} #{seen[name]}"
            obj.name = name
        if reference.model:
            obj[schema.BASE_MODEL] = reference.model
    missing = sum(match is None for match in matches)
    if missing:
        given = {plugin.name.lower() for plugin in plugins}
        masters = ", ".join(m for m in plugins[0].masters if m.lower() not in given) or "none"
        named.warnings.append(f"{missing} of {len(matches)} instances match no reference of {plugins[0].name}: placed "
                              f"by its masters not given ({masters}), left unnamed")
    return named
