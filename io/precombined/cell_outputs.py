"""What a precombined cell export writes besides the cell and its .csg, planned before anything
is written (core.precombined.plan): the plugin's ``.cdx`` with the cell's rows made anew, the
patch plugin carrying the copies' edits to their references, and ``<cell>_Physics.nif`` with
the collision of moved and deleted copies following them where it can. Knows bpy objects and
core objects, never file bytes."""

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...core.archives.data import DataFiles, path_in_folder
from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.plugin import Plugin
from ...core.plugin.file import PluginFile
from ...core.plugin.patch import CellPatch
from ...core.plugin.references import cell_form_id, find_cell_plugin, geometry_hashes
from ...core.precombined import physics
from ...core.precombined.cell_edits import Copy, classify, placement_matrix
from ...core.precombined.cell_files import cell_file_ids, physics_file_name, read_sibling
from ...core.precombined.cell_patch import copy_references, patch_edits, refuse_missing_plugin
from ...core.precombined.status import stamp_date
from .. import schema
from .instancing import instancer_matrices, instancer_source

INDEX, PATCH, PHYSICS = "resource index (.cdx)", "patch plugin", "merged physics"


class PatchOptions(NamedTuple):
    """``path`` of the patch plugin; ``light``: ESL-flagged; ``update``: the path may hold a
    patch already, whose records are kept and updated (without it an existing file is refused)."""

    path: str
    light: bool = False
    update: bool = False


def scene_copies(objects, template, scale):
    """cell_edits.Copy of every placed copy among ``objects`` (game units): an object, or each
    point of a geometry-nodes instancer, keyed by the file's copy it came from."""
    cell = str(template.path or "")
    copies = []
    for obj in objects:
        if obj.get(schema.PRECOMBINED_CELL, cell) != cell:
            continue
        source = instancer_source(obj)
        if source is not None:
            raws = obj.data.get(schema.PRECOMBINED_INSTANCES_RAW)
            stored = len(raws) // 18 if raws is not None else 0
            matrices = instancer_matrices(obj)
            if len(matrices) < stored:
                raise FormatError(f"{obj.name!r} places {len(matrices)} of the {stored} copies it was imported with: a "
                                  f"patch cannot tell which were deleted (import with one object per copy to delete some)")
            for number, matrix in enumerate(matrices):
                key = (obj[schema.PRECOMBINED_BLOCK], obj[schema.PRECOMBINED_OBJECT], number) if number < stored else None
                copies.append(Copy(key, f"{obj.name} #{number}", game_matrix(matrix, scale)))
        elif obj.type == "MESH" or obj.type == "EMPTY" and schema.PRECOMBINED_INSTANCE in obj:
            known = all(name in obj for name in (schema.PRECOMBINED_BLOCK, schema.PRECOMBINED_OBJECT, schema.PRECOMBINED_INSTANCE))
            key = (obj[schema.PRECOMBINED_BLOCK], obj[schema.PRECOMBINED_OBJECT], obj[schema.PRECOMBINED_INSTANCE]) if known else None
            copies.append(Copy(key, obj.name, game_matrix(obj.matrix_world, scale)))
    return copies


def game_matrix(matrix, scale):
    matrix = np.array(matrix, np.float64)
    matrix[:3, 3] /= scale
    return matrix


class CellPlugins:
    """The cell's plugin and the masters of it found beside it (records.Plugin each), opened on
    first need: given (the cell plugin first), else found by the records' geometry hash in the
    cell's Data folder, then in the user's Data ``folders`` (the preferences' or ``--data``)."""

    def __init__(self, template, given=(), folders=()):
        self.template, self.given, self.opened = template, list(given), None
        self.folders = list(folders)
        self.others = []  # other plugins opened for lookups (an existing patch)

    def open(self, required):
        if self.opened is None:
            paths = [Path(p) for p in self.given]
            if not paths:
                hashes = geometry_hashes(self.template)
                found = next(filter(None, [find_cell_plugin(self.template.path, hashes),
                                           *(find_cell_plugin(None, hashes, f) for f in self.folders)]), None)
                if found is None:
                    if required:
                        refuse_missing_plugin(self.template.path, geometry_hashes(self.template))
                    self.opened = []
                    return self.opened
                paths = [found] + [p for p in (path_in_folder(found.parent, m) for m in Plugin(found).masters) if p.is_file()]
            self.opened = [Plugin(path) for path in paths]
        return self.opened

    def lookup(self, patch):
        """The plugins REFRs are looked up in: an existing patch first (its REFRs win)."""
        if patch is not None and Path(patch.path).is_file():
            self.others.append(Plugin(patch.path))
        return [*self.others, *self.opened]

    def close(self):
        for plugin in [*(self.opened or ()), *self.others]:
            plugin.close()


def plan_outputs(plan, path, nif, template, copies_before, objects, scale, *, index=None, patch=None, plugins=(),
                 folders=()):
    """Add the cell's .cdx (``index``: an IndexTarget), patch (``patch``: PatchOptions) and
    physics to ``plan``; the cell's plugin is looked up in the user's Data ``folders`` too. ``copies_before``: the file's copies as imported (references.cell_instances
    of the file read before the export changed it)."""
    ids = cell_file_ids(path) or cell_file_ids(template.path)
    if ids is None:
        if patch is not None:
            raise FormatError(f"{Path(path).name} is not named <cell>_<id>_OC.nif: a patch needs the cell it belongs to")
        return
    cell_id, mesh_id = ids
    if index is not None:
        data, messages = index.update(cell_id, mesh_id, nif, [path, str(template.path or "")])
        plan.messages += messages
        if data is not None:
            plan.add(index.path, data, INDEX)
    instances = {(b, r, n): instance for b, r, n, instance in copies_before}
    edits = classify(instances, scene_copies(objects, template, scale))
    physics_file = physics_source(template, cell_id) if edits else None
    if patch is None and physics_file is None:
        return
    opened = CellPlugins(template, plugins, folders)
    try:
        found = opened.open(required=patch is not None)
        references, stored_cell = {}, None
        if found:
            references, stored_cell = copy_references(copies_before, cell_form_id(template.path), opened.lookup(patch))
        if patch is not None:
            plan_patch(plan, patch, found, stored_cell, edits, references, mesh_id)
        if physics_file is not None:
            plan_physics(plan, path, physics_file, instances, edits, references, found)
    finally:
        opened.close()


def plan_patch(plan, options, plugins, cell_id, edits, references, mesh_id):
    target = Path(options.path)
    if target.exists() and not options.update:
        raise FormatError("exists: a patch is never overwritten unless asked to update it (cli.py export: "
                          "--update-patch; File > Export: Update Patch)", path=str(target))
    if target.suffix.lower() not in (".esp", ".esl", ".esm"):
        raise FormatError("a patch plugin is named .esp (or .esl, .esm)", path=str(target))
    existing = PluginFile.read(target) if target.is_file() else None
    patch = CellPatch(plugins[0], cell_id, plugins[1:], existing, options.light or target.suffix.lower() == ".esl")
    plan.messages += patch_edits(patch, edits, references, mesh_id)
    file = patch.finish()
    plan.add(target, file.to_bytes(), PATCH)
    date = stamp_date(patch.stamp) or "undated"
    plan.records.append(f"CELL {patch.cell_id:08X} override: XCRI {len(patch.meshes)} meshes, {len(patch.pairs)} "
                        f"references; records dated {date} (its PCMB); masters {', '.join(file.masters)}")
    for what, record in patch.done:
        x, y, z, *_ = np.frombuffer(record.field("DATA"), "<f4").tolist()
        base = int.from_bytes(record.field("NAME"), "little")
        plan.records.append(f"{what} REFR {record.form_id:08X} of base {base:08X} at ({x:.2f}, {y:.2f}, {z:.2f})")


def physics_source(template, cell_id):
    """(bytes, where) of the cell's ``_Physics.nif`` beside the file it was imported from, or None."""
    data, where = read_sibling([str(template.path or "")], physics_file_name(cell_id))
    return (data, where) if data is not None else None


def plan_physics(plan, path, source, instances, edits, references, plugins):
    data, where = source
    nif = NifFile.from_bytes(bytearray(data), path=where)
    folder = Path(plugins[0].path).parent if plugins else None
    models = DataFiles([folder]) if folder is not None else None
    try:
        jobs = [physics.PhysicsEdit(copy.name, placement_matrix(instances[key]), copy.matrix(),
                                    model_triangles(references.get(key), models, instances[key]))
                for key, copy in edits.moved]
        jobs += [physics.PhysicsEdit(f"copy {key[2]} of record {key[1]} (block {key[0]}), deleted",
                                     placement_matrix(instances[key]), None,
                                     model_triangles(references.get(key), models, instances[key]))
                 for key in edits.deleted]
        jobs += [physics.PhysicsEdit(copy.name, None, copy.matrix(),
                                     model_triangles(references.get(key), models, instances[key]) if key is not None
                                     else "it was not duplicated from an imported copy")
                 for key, copy in edits.new]
        try:
            edited, messages = physics.edit_physics(nif, jobs)
        except FormatError as error:
            edited, messages = None, [f"{job.name}: collision left where it was: {where} {error.message}" for job in jobs]
    finally:
        if models is not None:
            models.close()
    plan.messages += messages
    if edited is not None:
        plan.add(Path(path).parent / Path(where.replace("\\", "/")).name, edited.to_bytes(), PHYSICS)


def model_triangles(reference, models, instance):
    """The collision triangles of a copy's base model, or why they are not known."""
    if reference is None:
        return "its REFR is in no plugin given"
    if reference.model is None:
        return f"the base {reference.base_id:08X} of REFR {reference.form_id:08X} is in a master not given"
    if np.abs(reference.matrix() - placement_matrix(instance)[:3, :3]).max() > 1e-3:
        return f"REFR {reference.form_id:08X} places several copies (a static collection): its parts are not told apart"
    found = models.read(reference.model, "meshes") if models is not None else None
    if found is None:
        return f"its model {reference.model} is not in the Data folder"
    try:
        return physics.source_triangles(NifFile.from_bytes(bytearray(found[0]), path=found[1]))
    except FormatError as error:
        return f"its model {found[1]} cannot be read ({error.message})"
