"""A whole cell (core.plugin.cell_contents.CellContents) as Blender objects: one object a
reference, placed by its DATA and XSCL.

A model is read once (the project's NIF import, io.nif.importer.SceneBuilder, from the Data
folder, loose or in its archives) into a collection of the cell's "Models" collection (excluded
from the view layer); every reference of it is an empty instancing that collection, so its
meshes are shared (Shift+D and Alt+D alike add an instance, never a copy of the geometry). A
SCOL is an empty whose children instance its parts (or, as one object, its own model); a LIGH a
Blender point light (colour, radius); a marker (meshes/markers/...), or a base drawn without a
model, an empty; a base whose model is not at hand (or will not read), an actor, or a base the
load order lacks, a wire box of its bound (OBND), one mesh per base. Precombined references are
shown either by the cell's _OC files (the precombined import: io.file_import.CellImport) or by
their own models, never both.

Collections under the cell's: References, Initially disabled, Deleted (hidden), and under
Enable parents one per parent holding the references it enables."""

import re
from pathlib import Path

import bpy
import numpy as np

from ...core.archives.data import DataFiles
from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.nif.materials import read_record
from ...core.plugin.cell_contents import ACTORS, CellContents
from ...core.plugin.load_order import LoadOrder
from ...core.plugin.references import reference_placement
from ..datablocks import rolled_back
from ..integers import to_int32
from ..nif.importer import SceneBuilder
from ..nif.material_import import MaterialImport
from .. import schema

PRECOMBINED = ("COPIES", "MODELS")  # combined references shown by the _OC files, or by their own models
SCOL = ("PARTS", "OBJECT")
DEFAULT_BOUNDS = ((-8, -8, -8), (8, 8, 8))  # a base the load order lacks: a 16-unit box
BOX_FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
BLENDER_SUFFIX = re.compile(r"\.\d{3}$")  # "References.001": a second cell's
PRECOMBINED_FOLDER = "meshes/precombined"
OC_NAME = re.compile(r"^[0-9A-Fa-f]{2}([0-9A-Fa-f]{6})_[0-9A-Fa-f]{8}_OC\.nif$", re.IGNORECASE)


def key_text(load_order, key):
    """A key as the .blend keeps it: ``Origin.esm:XXXXXX`` (stable whatever the load order)."""
    return f"{load_order.origin_name(key)}:{key & 0xFFFFFF:06X}"


class SharedMaterials(MaterialImport):
    """The NIF import's materials, one for every model whose shader blocks hold the same
    values (a cell's models share their materials: building a node tree is most of a model's
    import), looked up in the cell's Data folder."""

    def __init__(self, builder, files, shared):
        super().__init__(builder, files)
        self.shared = shared

    def _build(self, found, shape_block):
        key = repr(read_record(self.nif, found))
        if key not in self.shared:
            self.shared[key] = super()._build(found, shape_block)
        return self.shared[key]


class CellScene:
    """Builds ``contents`` into ``collection``; ``files`` (DataFiles) finds the models. Every
    datablock made goes to ``rollback``."""

    def __init__(self, contents, collection, files, rollback, *, precombined="COPIES", scol="PARTS"):
        if precombined not in PRECOMBINED or scol not in SCOL:  # a caller's mistake
            raise ValueError(f"precombined {precombined!r} / scol {scol!r}: one of {PRECOMBINED} / {SCOL}")
        self.contents, self.collection, self.files, self.rollback = contents, collection, files, rollback
        self.precombined, self.scol = precombined, scol
        self.models = {}  # lower-case model path -> collection, or None when it is not at hand
        self.materials = {}  # shader record -> material, shared by the models (SharedMaterials)
        self.boxes = {}  # base key -> placeholder mesh
        self.lights = {}  # (base key, radius) -> light data
        self.groups = {}
        self.placed = []  # (object, 4x4 matrix: world, or local to its parent)
        self.missing_models = {}  # model -> references
        self.unreadable = []  # lines
        self.missing_bases = 0
        self.actors = 0
        self.built = []  # reference objects

    # -- collections ----------------------------------------------------------------------
    def _collection(self, name, parent=None):
        key = (name, parent)
        if key not in self.groups:
            made = self.rollback.add(bpy.data.collections.new(name))
            (parent or self.collection).children.link(made)
            self.groups[key] = made
        return self.groups[key]

    def _target(self, reference):
        if reference.deleted:
            return self._collection("Deleted")
        if reference.parent is not None:
            parents = self._collection("Enable parents")
            parent = self.contents.form_id(reference.parent[0])
            opposite = " (opposite)" if reference.parent[1] & 1 else ""
            return self._collection(f"Enabled by {parent}{opposite}", parents)
        if reference.disabled:
            return self._collection("Initially disabled")
        return self._collection("References")

    # -- datablocks -----------------------------------------------------------------------
    def _model(self, path):
        """The collection of a model's import, or None (counted) when it is not at hand or will not read."""
        key = path.replace("\\", "/").lower()
        if key in self.models:
            return self.models[key]
        found = None
        try:
            read = self.files.read(path, "meshes")
        except (FormatError, OSError) as error:
            read, self.models[key] = None, None
            self.unreadable.append(f"model {path}: {error}")
            return None
        if read is not None:
            data, name = read
            made = self.rollback.savepoint()
            try:
                nif = NifFile.from_bytes(bytearray(data), path=name)
                found = self.rollback.add(bpy.data.collections.new(path.replace("\\", "/").rsplit("/", 1)[-1]))
                builder = SceneBuilder(nif, found, collision=False, data_folders=self.files.folders,
                                       rollback=self.rollback, cache_folder=self.files.cache_folder)
                builder.materials = SharedMaterials(builder, self.files, self.materials)
                builder.build()
                self._collection("Models").children.link(found)
                found[schema.BASE_MODEL] = path
            except FormatError as error:
                self.rollback.undo(made)  # what the model made so far, not the cell
                self.unreadable.append(f"model {name} will not read ({error.message}): its references are placeholders")
                found = None
        self.models[key] = found
        return found

    def _box(self, base):
        key = base.key if base is not None else None
        if key not in self.boxes:
            low, high = base.bounds if base is not None and base.bounds else DEFAULT_BOUNDS
            corners = [(x, y, z) for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])]
            mesh = self.rollback.add(bpy.data.meshes.new(f"{base.editor_id if base else 'missing'} bounds"))
            mesh.from_pydata(corners, [], BOX_FACES)
            self.boxes[key] = mesh
        return self.boxes[key]

    def _light(self, base, reference):
        radius = reference.radius if reference.radius is not None else base.light[0]
        key = (base.key, radius)
        if key not in self.lights:
            light = self.rollback.add(bpy.data.lights.new(base.editor_id or "light", "POINT"))
            light.color = base.light[1]
            light.use_custom_distance = True
            light.cutoff_distance = radius  # the game's light reaches no further
            light.shadow_soft_size = 1.0
            light.energy = max(radius, 1.0) ** 2  # lit to its radius: a point light falls off with the square
            self.lights[key] = light
        return self.lights[key]

    def _instance(self, name, collection, target):
        obj = self.rollback.add(bpy.data.objects.new(name, None))
        target.objects.link(obj)  # before it instances: linking an instancer into a scene's collection is slower
        obj.instance_type = "COLLECTION"
        obj.instance_collection = collection
        obj.empty_display_size = 8.0
        return obj

    # -- references -----------------------------------------------------------------------
    def build(self):
        for reference in self.contents.references:
            if reference.combined and self.precombined == "COPIES":
                continue  # shown by the precombined import
            self._reference(reference)
        self._place()
        return self.built

    def _reference(self, reference):
        contents = self.contents
        base = contents.base_of(reference)
        name = f"{base.editor_id if base is not None and base.editor_id else reference.type} {contents.form_id(reference.key)}"
        target = self._target(reference)
        obj = self._object(name, base, reference, target)
        obj.rotation_mode = "QUATERNION"  # Euler angles lose float32 precision near the poles
        self.placed.append((obj, reference.matrix()))
        load_order = contents.load_order
        obj[schema.CELL_REFERENCE] = key_text(load_order, reference.key)
        obj[schema.REFERENCE_FORM_ID] = contents.form_id(reference.key)
        obj[schema.REFERENCE_PLUGIN] = reference.entry.name
        obj[schema.CELL_BASE] = key_text(load_order, reference.base)
        obj[schema.BASE_FORM_ID] = contents.form_id(reference.base)
        if base is not None:
            obj[schema.CELL_BASE_TYPE] = base.type
            if base.editor_id:
                obj[schema.BASE_EDITOR_ID] = base.editor_id
            if base.model:
                obj[schema.BASE_MODEL] = base.model
        obj[schema.CELL_FLAGS] = to_int32(reference.flags)
        obj[schema.CELL_PLACEMENT] = [*reference.position, *reference.angles, reference.scale]
        obj[schema.CELL_COMBINED] = reference.combined
        obj[schema.CELL_NAME] = obj.name
        self.built.append(obj)

    def _object(self, name, base, reference, target):
        if base is None:
            self.missing_bases += 1
            return self._placeholder(name, None, target)
        if base.light is not None:
            obj = self.rollback.add(bpy.data.objects.new(name, self._light(base, reference)))
            target.objects.link(obj)
            return obj
        if base.type in ACTORS:
            self.actors += 1
            return self._placeholder(name, base, target)
        if base.parts and (self.scol == "PARTS" or not base.model):
            return self._parts(name, base, target)
        if base.marker or not base.model:
            obj = self.rollback.add(bpy.data.objects.new(name, None))
            obj.empty_display_type = "ARROWS"
            obj.empty_display_size = 16.0
            target.objects.link(obj)
            return obj
        collection = self._model(base.model)
        if collection is None:
            self.missing_models[base.model] = self.missing_models.get(base.model, 0) + 1
            return self._placeholder(name, base, target)
        return self._instance(name, collection, target)

    def _placeholder(self, name, base, target):
        obj = self.rollback.add(bpy.data.objects.new(name, self._box(base)))
        obj.display_type = "WIRE"
        target.objects.link(obj)
        return obj

    def _parts(self, name, base, target):
        """An empty for the SCOL reference, a child per placed part (its STAT's model)."""
        obj = self.rollback.add(bpy.data.objects.new(name, None))
        obj.empty_display_size = 16.0
        target.objects.link(obj)
        for number, (key, placements) in enumerate(base.parts):
            part = self.contents.bases.get(key)
            for index, placement in enumerate(placements):
                label = f"{name} part {number}.{index}"
                collection = self._model(part.model) if part is not None and part.model else None
                if collection is None:
                    self.missing_models[part.model if part else label] = 1 + self.missing_models.get(
                        part.model if part else label, 0)
                    child = self._placeholder(label, part, target)
                else:
                    child = self._instance(label, collection, target)
                child.parent = obj
                child.rotation_mode = "QUATERNION"
                child[schema.CELL_PART] = number
                self.placed.append((child, reference_placement(placement["position"], placement["angles"],
                                                            float(placement["scale"]))))
        return obj

    def _place(self):
        """Every matrix in one foreach_set a kind, through a collection holding only those
        objects: a reference's basis and world matrix (it reads right before the next scene
        update), a SCOL part's basis under its SCOL's empty (which has no parent inverse)."""
        for parented, fields in ((False, ("matrix_basis", "matrix_world")), (True, ("matrix_basis",))):
            placed = [(obj, matrix) for obj, matrix in self.placed if (obj.parent is not None) == parented]
            if not placed:
                continue
            staging = bpy.data.collections.new("cell staging")
            try:
                for obj, _ in placed:
                    staging.objects.link(obj)
                flat = np.array([m for _, m in placed], np.float32).transpose(0, 2, 1).ravel()
                for name in fields:
                    staging.objects.foreach_set(name, flat)
            finally:
                bpy.data.collections.remove(staging)

    def warnings(self):
        out = list(self.unreadable)
        if self.missing_models:
            count = sum(self.missing_models.values())
            first = next(iter(self.missing_models))
            out.append(f"{count} references of {len(self.missing_models)} models not in the Data folder or its "
                       f"archives (first: {first}): imported as bound-sized placeholders")
        if self.missing_bases:
            out.append(f"{self.missing_bases} references place a base no plugin of the load order holds: imported as "
                       f"{DEFAULT_BOUNDS[1][0] * 2}-unit placeholder boxes")
        if self.actors:
            out.append(f"{self.actors} actors (NPC_, LVLN) shown as placeholders of their bounds")
        return out


def precombined_files(files, cell_key):
    """The cell's _OC files in its Data folders (loose) and their archives, named after its FormID."""
    object_id = f"{cell_key & 0xFFFFFF:06X}"
    found = {}
    for folder in files.folders:
        located = [folder]
        for part in PRECOMBINED_FOLDER.split("/"):
            located = _subfolders(located, part)
        for path in (p for found_folder in located for p in sorted(found_folder.iterdir())):
            match = OC_NAME.match(path.name)
            if match and match.group(1).upper() == object_id:
                found.setdefault(path.name.lower(), str(path))
    for name in files.archive_paths("meshes/precombined/*_oc.nif"):
        inner = name.replace("\\", "/").rsplit("/", 1)[-1]
        match = OC_NAME.match(inner)
        if match and match.group(1).upper() == object_id:
            found.setdefault(inner.lower(), name)
    return [found[key] for key in sorted(found)]


def _subfolders(folders, name):
    """The subfolders ``name`` of ``folders`` whatever their case (a Data folder may hold both
    Meshes and meshes)."""
    found = []
    for folder in folders:
        try:
            found += [entry for entry in sorted(folder.iterdir()) if entry.name.lower() == name and entry.is_dir()]
        except OSError:
            continue
    return found


@rolled_back
def import_cell(context, data_folder, cell, plugins_txt=None, *, rollback, precombined="COPIES", scol="PARTS",
                cache_folder=None):
    """The cell ``cell`` (FormID or EditorID) of the load order of ``data_folder`` (and
    ``plugins_txt``) into a new collection linked to the scene: (collection, warnings). Nothing
    is left behind when it fails."""
    load_order = LoadOrder(data_folder, plugins_txt)
    contents = CellContents(load_order, cell)
    warnings = list(contents.problems)
    name = contents.cell.text("EDID") or contents.form_id(contents.key)
    collection = rollback.add(bpy.data.collections.new(name))
    files = DataFiles([str(data_folder)], cache_folder)
    try:
        scene = CellScene(contents, collection, files, rollback, precombined=precombined, scol=scol)
        scene.build()
        context.scene.collection.children.link(collection)
        warnings += scene.warnings() + files.problems
        if precombined == "COPIES" and contents.combined:
            warnings += _precombined(context, collection, files, contents, rollback, data_folder, cache_folder)
    finally:
        files.close()
    for child in collection.children:
        if child.name.startswith("Models"):
            _layer(context.view_layer.layer_collection, child).exclude = True
        elif child.name.startswith("Deleted"):
            _layer(context.view_layer.layer_collection, child).hide_viewport = True
    schema.stamp(collection)
    collection[schema.CELL_DATA_FOLDER] = str(data_folder)
    collection[schema.CELL_PLUGINS_TXT] = str(plugins_txt or "")
    collection[schema.CELL_KEY] = key_text(load_order, contents.key)
    collection[schema.CELL_REFERENCES] = "\n".join(obj[schema.CELL_REFERENCE] for obj in scene.built)
    collection[schema.CELL_PRECOMBINED] = precombined
    return collection, warnings


def _precombined(context, collection, files, contents, rollback, data_folder, cache_folder):
    """The cell's _OC files by the precombined import, under the cell's collection."""
    from ..file_import import CellImport, UserFolders

    paths = precombined_files(files, contents.key)
    if not paths:
        return [f"{len(contents.combined)} references are combined in precombined meshes, but no "
                f"meshes/precombined/XX{contents.key & 0xFFFFFF:06X}_*_OC.nif is in the Data folder: not shown"]
    warnings = []
    holder = rollback.add(bpy.data.collections.new("Precombined"))
    collection.children.link(holder)
    folders = UserFolders(data={"FO4": str(data_folder)}, cache=cache_folder)
    with CellImport(plugins=[str(contents.cell_entry.path)], find_plugin=False, folders=folders) as import_one:
        for path in paths:
            built, messages = import_one(context, path, rollback=rollback)
            context.scene.collection.children.unlink(built)
            holder.children.link(built)
            warnings += [f"{path}: {message}" for message in messages]
    if contents.unknown_combined:
        warnings.append(f"{len(contents.unknown_combined)} combined references are in plugins not loaded (first: "
                        f"{contents.form_id(contents.unknown_combined[0])}): only their precombined copies show them")
    return warnings


def _layer(layer, collection):
    if layer.collection == collection:
        return layer
    for child in layer.children:
        found = _layer(child, collection)
        if found is not None:
            return found
    return None


def cell_of(context):
    """The cell import holding the active object, else the only one of the file; None."""
    cells = [c for c in bpy.data.collections if schema.CELL_KEY in c]
    active = context.active_object
    if active is not None:
        holding = [c for c in cells if active.name in c.all_objects]
        if holding:
            return holding[0]
    return cells[0] if len(cells) == 1 else None


@rolled_back
def add_game_reference(context, collection, editor_id="", model="", *, rollback):
    """A new object in the cell's References collection at the 3D cursor, for a base of the load
    order found by ``editor_id`` (else the first whose model is ``model``); only ``model`` when
    no base has it (its export writes a new STAT). Returns (object, message)."""
    from ...core.plugin.cell_contents import Base, find_base

    load_order = LoadOrder(collection[schema.CELL_DATA_FOLDER], collection[schema.CELL_PLUGINS_TXT] or None)
    found = find_base(load_order, editor_id or None, None if editor_id else model or None)
    if found is None and (editor_id or not model):
        raise FormatError(f"no base of the load order has the EditorID {editor_id!r}" if editor_id else
                          "give a base's EditorID or a model")
    base = Base(found[0], None, found[1], load_order) if found is not None else None
    path = base.model if base is not None else model
    files = DataFiles([collection[schema.CELL_DATA_FOLDER]])
    try:
        scene = CellScene(None, collection, files, rollback)
        scene.groups = {(BLENDER_SUFFIX.sub("", child.name), None): child for child in collection.children}
        held = scene.groups.get(("Models", None))
        scene.models = {str(c[schema.BASE_MODEL]).replace("\\", "/").lower(): c
                        for c in (held.children if held is not None else ()) if schema.BASE_MODEL in c}
        target = scene._collection("References")
        name = f"{base.editor_id or base.type} new" if base is not None else Path(path.replace("\\", "/")).stem
        models = scene._model(path) if path else None
        obj = scene._instance(name, models, target) if models is not None else scene._placeholder(name, base, target)
        for datablock in scene.rollback.created:
            if isinstance(datablock, bpy.types.Collection) and datablock.name.startswith("Models"):
                _layer(context.view_layer.layer_collection, datablock).exclude = True
    finally:
        files.close()
    obj.rotation_mode = "QUATERNION"
    obj.location = context.scene.cursor.location
    if base is not None:
        obj[schema.CELL_BASE] = key_text(load_order, base.key)
        obj[schema.BASE_FORM_ID] = load_order.form_id(base.key)
        obj[schema.CELL_BASE_TYPE] = base.type
        if base.editor_id:
            obj[schema.BASE_EDITOR_ID] = base.editor_id
    if path:
        obj[schema.BASE_MODEL] = path
    what = f"{base.type} {base.editor_id}" if base is not None else f"{path}, which no base has (its export adds a STAT)"
    return obj, f"added {obj.name}: {what}" + ("" if models is not None else ": its model is not at hand, a placeholder")
