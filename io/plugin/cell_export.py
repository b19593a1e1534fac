"""A whole cell's edits in Blender (io.plugin.cell_import made it) as a plugin, written by the
precombined patch's writer (core.plugin.patch.CellPatch, its cells with or without XCRI):

- a reference moved, turned or scaled: an override of its REFR whose DATA (and XSCL) are the
  object's placement; what did not change keeps its stored value, so nothing else differs;
- a reference whose object is gone: undeleted and disabled as xEdit's "Undelete and Disable
  References" does (CellPatch.disable);
- a copy of a reference's object (Shift+D, Alt+D: the one not carrying the imported name) or an
  object added with Add > Game Reference: a new REFR (of a new STAT when its model is no base's);
- nothing for references left alone.

An existing output is updated, not rewritten: its records (other cells' too) stay unless this
export changes them, an override moved back to its master's placement is dropped, new records
are numbered past its own. A reference the patch itself added (imported with it active) is
edited in place.

The patch's masters are the masters of the plugin whose CELL wins, then that plugin: every
plugin touching the cell holds that CELL (a reference's override comes with its cell's), so
the records overridden are found in it or, earlier, in plugins whose masters it shares."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core.errors import FormatError
from ...core.plugin.cell_contents import CellContents
from ...core.plugin.file import PluginFile
from ...core.plugin.load_order import LoadOrder
from ...core.plugin.patch import CellPatch
from ...core.plugin.records import Plugin
from ...core.plugin.references import reference_angles, rotation_matrix
from ..collection_objects import objects_in
from .. import schema

POSITION_TOLERANCE = 1e-3  # game units: float32 of a position of some thousands
MATRIX_TOLERANCE = 1e-5


@dataclass
class CellEdits:
    """What the user did to a cell's import: ``moved`` [(object, key, position, angles, scale)],
    ``deleted`` [key], ``duplicated`` [(object, source key, placement)], ``added`` [(object,
    base key text or None, model or None, placement)], ``untouched`` (a count), ``messages``."""

    moved: list = field(default_factory=list)
    deleted: list = field(default_factory=list)
    duplicated: list = field(default_factory=list)
    added: list = field(default_factory=list)
    untouched: int = 0
    messages: list = field(default_factory=list)

    @property
    def count(self):
        return len(self.moved) + len(self.deleted) + len(self.duplicated) + len(self.added)


def placement(obj, messages):
    """(position, rotation matrix, scale) of an object's world matrix, in game units."""
    matrix = np.array(obj.matrix_world, np.float64)
    scales = np.linalg.norm(matrix[:3, :3], axis=0)
    scale = float(scales.mean())
    if np.ptp(scales) > 1e-4 * scale:
        messages.append(f"{obj.name}: scaled unevenly ({', '.join(f'{s:g}' for s in scales)}): a reference scales "
                        f"evenly, written with {scale:g}")
    return matrix[:3, 3].copy(), matrix[:3, :3] / max(scale, 1e-12), scale


def stored(obj):
    values = list(obj[schema.CELL_PLACEMENT])
    return np.array(values[:3], np.float64), tuple(values[3:6]), float(values[6])


def changed_placement(obj, messages):
    """(position, angles, scale) to write when the object left its stored placement, else None.
    Angles and scale that did not change stay as stored (no new rounding in the override)."""
    position, rotation, scale = placement(obj, messages)
    old_position, old_angles, old_scale = stored(obj)
    turned = np.abs(rotation - rotation_matrix(old_angles)).max() > MATRIX_TOLERANCE
    scaled = abs(scale - old_scale) > MATRIX_TOLERANCE * max(old_scale, 1.0)
    moved = np.abs(position - old_position).max() > POSITION_TOLERANCE * max(1.0, np.abs(old_position).max() / 1000)
    if not (turned or scaled or moved):
        return None
    return (tuple(position) if moved else tuple(old_position), reference_angles(rotation) if turned else old_angles,
            scale if scaled else old_scale)


def cell_edits(collection):
    """The CellEdits of a cell's collection."""
    edits = CellEdits()
    by_reference, added = {}, []
    for obj in objects_in(collection):
        if schema.CELL_PART in obj or schema.PRECOMBINED_CELL in obj or schema.CELL_FLAGS not in obj \
                and schema.CELL_BASE not in obj and schema.BASE_MODEL not in obj:
            continue  # a SCOL's part, the precombined import's copies, a model's own objects
        if schema.CELL_REFERENCE in obj:
            by_reference.setdefault(obj[schema.CELL_REFERENCE], []).append(obj)
        elif schema.CELL_FLAGS not in obj:
            added.append(obj)
    for key, objects in by_reference.items():
        objects.sort(key=lambda o: (o.name != o.get(schema.CELL_NAME), o.name))
        original, copies = objects[0], objects[1:]
        found = changed_placement(original, edits.messages)
        if found is None:
            edits.untouched += 1
        else:
            edits.moved.append((original, key, *found))
        for copy in copies:
            position, rotation, scale = placement(copy, edits.messages)
            edits.duplicated.append((copy, key, (tuple(position), reference_angles(rotation), scale)))
    imported = [line for line in str(collection.get(schema.CELL_REFERENCES, "")).splitlines() if line]
    edits.deleted = [key for key in imported if key not in by_reference]
    for obj in sorted(added, key=lambda o: o.name):
        position, rotation, scale = placement(obj, edits.messages)
        edits.added.append((obj, obj.get(schema.CELL_BASE), obj.get(schema.BASE_MODEL),
                            (tuple(position), reference_angles(rotation), scale)))
    return edits


def local_form_id(plugin, load_order, key):
    """A key as ``plugin`` (and the patch) stores FormIDs, or None when its origin is none of
    ``plugin``'s masters nor itself."""
    names = [name.lower() for name in [*plugin.masters, plugin.name]]
    origin = load_order.origin_name(key).lower()
    return names.index(origin) << 24 | key & 0xFFFFFF if origin in names else None


def model_bounds(obj):
    """The bound (OBND) of a new STAT: its object's local bounding box, game units."""
    corners = np.array([tuple(corner) for corner in obj.bound_box], np.float64)
    return tuple(corners.min(axis=0)), tuple(corners.max(axis=0))


def export_cell(collection, output, light=False):
    """Write the edits of ``collection`` (a cell's import) to the plugin ``output``: (written,
    messages). Nothing is written when nothing changed (written False, and a message saying so)."""
    schema.check_version(collection)
    if schema.CELL_KEY not in collection:
        raise FormatError(f"{collection.name!r} is no cell's import (File > Import > Cell (Plugin) makes one)")
    edits = cell_edits(collection)
    messages = list(edits.messages)
    if not edits.count:
        return False, messages + [f"{collection.name}: no reference moved, deleted, duplicated or added "
                                  f"({edits.untouched} left alone): no plugin written"]
    data_folder = collection[schema.CELL_DATA_FOLDER]
    # an output in the Data folder is the patch being updated (read below), no plugin of the load order it patches
    inside = Path(output).resolve().parent == Path(data_folder).resolve()
    load_order = LoadOrder(data_folder, collection[schema.CELL_PLUGINS_TXT] or None,
                           without=(Path(output).name,) if inside else ())
    contents = CellContents(load_order, collection[schema.CELL_KEY])
    winner = contents.cell_entry
    later = [e for e in reversed(load_order.entries[:load_order.entries.index(winner)])]
    plugins = [Plugin(winner.path)] + [Plugin(entry.path) for entry in later]
    # an existing output is updated (its records kept unless this export changes them), never rewritten
    existing = PluginFile.read(output) if Path(output).is_file() else None
    try:
        patch = CellPatch(plugins[0], contents.cell.form_id, plugins[1:], existing, light=light, precombined=False)
        messages += _apply(patch, plugins[0], load_order, contents, edits, Path(output).name)
        written = patch.finish()
        game_version(written, plugins[0])
    finally:
        for plugin in plugins:
            plugin.close()
    written.write(output)
    counts = (f"{len(edits.moved)} moved, {len(edits.deleted)} disabled, {len(edits.duplicated)} duplicated, "
              f"{len(edits.added)} added; {edits.untouched} left alone")
    kept = "; its other records kept" if existing is not None else ""
    messages.append(f"{Path(output).name}: {len(patch.done)} records ({counts}){kept}, masters "
                    f"{', '.join(written.masters)}")
    return True, messages


def _apply(patch, cell_plugin, load_order, contents, edits, output_name):
    messages, combined, statics = [], [], {}
    key_of = load_order.key_of_text

    def local(key, what):
        if load_order.origin_name(key).lower() == output_name.lower():  # the patch's own (imported with it active)
            return patch.own << 24 | key & 0xFFFFFF
        found = local_form_id(cell_plugin, load_order, key)
        if found is None:
            messages.append(f"{what}: {load_order.origin_name(key)} is not a master of {cell_plugin.name}: not written")
        return found

    for obj, key, position, angles, scale in edits.moved:
        form_id = local(key_of(key), obj.name)
        if form_id is not None and not patch.move(form_id, position, angles, scale):
            messages.append(f"{obj.name}: REFR {key} is in no plugin whose masters the patch has: not overridden")
        elif form_id is not None and obj.get(schema.CELL_COMBINED):
            combined.append(obj.name)
    for key in edits.deleted:
        form_id = local(key_of(key), key)
        if form_id is not None and not patch.disable(form_id):
            messages.append(f"REFR {key} deleted: in no plugin whose masters the patch has: not disabled")
        elif form_id is not None and key_of(key) in contents.combined:
            combined.append(key)
    for obj, key, (position, angles, scale) in edits.duplicated:
        form_id = local(key_of(key), obj.name)
        if form_id is not None and patch.add(form_id, None, position, angles, scale) is None:
            messages.append(f"{obj.name}: its source REFR {key} is in no plugin the patch reads: no REFR written")
    for obj, base, model, (position, angles, scale) in edits.added:
        if base:
            form_id = local(key_of(base), obj.name)
        elif model:
            if model.lower() not in statics:
                statics[model.lower()] = patch.new_static(_editor_id(obj), model, model_bounds(obj))
                messages.append(f"{obj.name}: no base has the model {model}: a new STAT "
                                f"{statics[model.lower()]:08X} places it")
            form_id = statics[model.lower()]
        else:
            continue
        if form_id is not None:
            patch.place_base(form_id, position, angles, scale)
    if combined:
        messages.append(f"the precombines are broken: {len(combined)} changed references are combined in the cell's "
                        f"precombined meshes (first: {combined[0]}), which still show them as they were: run Build "
                        f"Precombines for the cell")
    return messages


def game_version(written, cell_plugin):
    """The patch's HEDR version and header form version as the cell's plugin has them (Skyrim SE
    1.7 and 44, Fallout 4 1.0 and 131)."""
    source, hedr = cell_plugin.header.field("HEDR"), written.header.field("HEDR")
    if source is not None and len(source) >= 4 and hedr is not None:
        written.header.set_field("HEDR", source[:4] + hedr[4:])
    written.header.form_version = cell_plugin.header.form_version


def _editor_id(obj):
    stem = "".join(c for c in Path(str(obj.get(schema.BASE_MODEL, "model")).replace("\\", "/")).stem if c.isalnum())
    return f"{stem or 'Model'}Static"
