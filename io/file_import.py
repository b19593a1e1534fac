"""The import loop the operators and the command line share: files one by one into the scene,
a file that fails leaving nothing behind (one io.datablocks.Rollback a file, around all its
passes); a NIF (precombined cells as cells, their copies named
after their references) and a .bsm2 as one file's import. The user's folders come in as a
``UserFolders`` (the operators read theirs from the preferences; the command line has none)."""

from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ..core.archives.data import data_folder_of, read_path, split_archive_path, stored_path
from ..core.bsm2 import Bsm2File
from ..core.errors import FormatError, failure_text
from ..core.formats import not_a_nif
from ..core.nif import NifFile
from ..core.nif.xbox import to_pc
from .bsm2 import importer as bsm2_import
from .datablocks import Rollback, rolled_back
from .nif.importer import SceneBuilder
from .nif.source import keep_scale, keep_source
from .plugin.references import name_instances
from .precombined.breakers import load_order_report, mark_breakers
from .precombined.importer import CellBuilder, GeometrySource
from . import schema
from .tri.importer import load_companions


@dataclass(frozen=True)
class UserFolders:
    """Where the user's files are: each game's Data folder ({game: folder}), the cache for
    files taken from archives (None: a temporary one), and the load order cells are checked
    against ((Data folder, plugins.txt or None), or None)."""

    data: dict = field(default_factory=dict)
    cache: str | None = None
    load_order: tuple | None = None

    def data_folders(self, game):
        """The Data folders where a file of ``game`` finds its textures (empty when unset)."""
        folder = self.data.get(game)
        return [folder] if folder else []


NO_FOLDERS = UserFolders()


def each_file(context, paths, import_one):
    """Import each file with ``import_one(context, path, progress, rollback=rollback)`` ->
    (collection, warnings), where ``progress(fraction)`` says how far into the file it is and
    ``rollback`` takes every datablock made; yields (collection or None, messages) per file. A
    file that fails leaves nothing behind and does not stop the others: its one message is its
    error."""
    window_manager = context.window_manager
    window_manager.progress_begin(0, max(len(paths), 1))
    parked = []
    try:
        for number, path in enumerate(paths):
            try:
                # odd values are reported as errors, not numpy warnings
                with Rollback() as rollback, np.errstate(all="ignore"):
                    collection, warnings = import_one(
                        context, path, lambda fraction, done=number: window_manager.progress_update(done + fraction),
                        rollback=rollback,
                    )
                result = collection, [f"{path}: {warning}" for warning in warnings]
            except Exception as error:  # bad input, or a bug of ours: the rollback removed what the file made
                result = None, [failure_text(path, error)]
            window_manager.progress_update(number + 1)
            yield result
            if number + 1 < len(paths):
                park(context, result[0], parked)
    finally:
        for layer, states in parked:
            layer.exclude = False
            for obj, hidden, selected in states:  # the view layer forgot them while the collection was out
                obj.hide_set(hidden)
                obj.select_set(selected)
        window_manager.progress_end()


def park(context, collection, parked):
    """Keep a file's collection out of the view layer while the next files import (added to
    ``parked``, put back by the caller): Blender's view layer updates (edit mode for bones, a
    skin's pose) rebuild the scene's dependencies, a cost growing with every object in it, so
    many files in one import would grow faster than the files. Its objects' hidden and selected
    states are kept with it (the view layer forgets them); a collection holding the active
    object (a skeleton for the next files' animations) stays."""
    import bpy

    if not isinstance(collection, bpy.types.Collection) or schema.NIF_PATH not in collection:
        return
    layer = context.view_layer.layer_collection.children.get(collection.name)
    active = context.view_layer.objects.active
    if layer is None or layer.exclude or (active is not None and active.name in collection.all_objects):
        return
    parked.append((layer, [(obj, obj.hide_get(), obj.select_get()) for obj in collection.all_objects]))
    layer.exclude = True


def import_files(context, paths, import_one):
    """``each_file`` gathered: (collections, messages), the failed files' errors among the messages."""
    collections, messages = [], []
    for collection, file_messages in each_file(context, paths, import_one):
        if collection is not None:
            collections.append(collection)
        messages += file_messages
    return collections, messages


@rolled_back
def import_nif(context, path, progress=None, *, rollback, builder=SceneBuilder, folders=NO_FOLDERS, morphs=True,
               **options):
    """One file into a new collection linked to the scene, or nothing at all if it fails:
    (collection, warnings). ``morphs``: the .tri files the games read with the NIF go onto its
    meshes as shape keys."""
    scene_builder = build_nif(context, path, progress, rollback, builder, folders, options)
    return scene_builder.collection, scene_builder.warnings() + (nif_morphs(context, scene_builder) if morphs else [])


def build_nif(context, path, progress, rollback, builder, folders, options):
    """The builder (``builder``'s instance) that made ``path`` into a new collection linked to
    the scene, every datablock made added to ``rollback``."""
    path = stored_path(path)
    data = bytearray(read_path(path))  # a loose file, or ARCHIVE.ba2:inner/path
    try:
        nif = NifFile.from_bytes(data, path=path)
    except FormatError as error:
        raise not_a_nif(error, data, path) from None
    if nif.header.big_endian:  # Xbox 360: built (and kept) as the PC file it converts to
        to_pc(nif)
        data = bytearray(nif.to_bytes())
        nif = NifFile.from_bytes(data, path=path)
    inside = split_archive_path(path)
    collection = rollback.add(bpy.data.collections.new(inside.stem if inside else Path(path).stem))
    data_folders = folders.data_folders(nif.header.game)
    if inside:  # the archive's own Data folder has the file's textures and materials
        data_folders = [*data_folders, str(inside.data_folder)]
    options.setdefault("data_folders", data_folders)
    options.setdefault("cache_folder", folders.cache)
    scene_builder = builder(nif, collection, progress=progress, rollback=rollback, **options)
    scene_builder.build()
    context.scene.collection.children.link(collection)
    for obj in scene_builder.hidden:
        obj.hide_set(True)
    schema.stamp(collection)
    collection[schema.NIF_PATH] = str(path)
    collection[schema.NIF_GAME] = nif.header.game
    if scene_builder.keeps_source:
        keep_source(collection, data)
    # What the import left out is kept as stored on export, not taken for deleted.
    collection[schema.NIF_BUILT_COLLISION] = scene_builder.import_collision
    collection[schema.NIF_BUILT_SKIN] = scene_builder.skins is not None
    keep_scale(collection, scene_builder.scale)
    return scene_builder


def nif_morphs(context, built):
    """The .tri files the games read with the NIF ``built`` (its builder) made, onto its meshes:
    warnings (a .tri that does not fit is one; the NIF's import stands)."""
    return load_companions(context, built.nif, built.collection[schema.NIF_PATH], built.objects.values(), built.rollback)


@rolled_back
def import_bsm2(context, path, progress=None, *, rollback):
    """One file as a mesh and an armature in the active collection, or nothing at all if it fails;
    returns (armature object, warnings). For ``import_files``."""
    if context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    path = Path(path)
    bsm = Bsm2File.read(path)
    if progress is not None:
        progress(0.5)  # read; building the mesh and actions is the other half
    _, armature, warnings = bsm2_import.build(context, bsm, path.stem, rollback=rollback)
    return armature, warnings


class CellImport:
    """``import_one`` for NIFs with the cell builder (files without a precombined block import
    like any NIF, ``morphs`` as import_nif's); ``options`` go to the general builder (scale,
    collision, skin). Placed copies are named after their references, read from ``plugins`` (the
    cell's plugin, then masters) or from the plugin found in the cell's Data folder when
    ``find_plugin``; then, in the load order of ``load_order`` (Data folder, plugins.txt or None;
    default: the ``folders``' one), the cell gets its precombine state and the copies overridden
    after its precombines were built are marked. These passes after the build are handed what it
    made (its PlacedCopies, then the copies named), and what they make goes to the file's
    rollback too. A context manager: the geometry files it opens close at its end."""

    def __init__(self, *, lod=0, geometry_path=None, instancing="OBJECTS", plugins=(), find_plugin=True,
                 load_order=None, folders=NO_FOLDERS, morphs=True, **options):
        self.geometry = GeometrySource(geometry_path or None, folders.data.get("FO4") or None, folders.cache)
        self.load_order = folders.load_order if load_order is None else load_order
        self.plugins, self.find_plugin = plugins, find_plugin
        self.folders, self.morphs = folders, morphs
        self.options = dict(options, lod=lod, instancing=instancing)
        self.state = []  # the load order's report, read once at the first cell

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.geometry.close()

    @rolled_back
    def __call__(self, context, path, progress=None, *, rollback):
        data = data_folder_of(path)
        if data is not None:  # a cell finds its geometry in its own Data folder too (an archive's), beside its plugin
            self.geometry.also_look_in(str(data))
        built = build_nif(context, path, progress, rollback, CellBuilder, self.folders,
                          dict(self.options, geometry=self.geometry))
        warnings = built.warnings() + (nif_morphs(context, built) if self.morphs else [])
        named = name_instances(built.collection, built.copies, self.plugins, self.find_plugin)
        return built.collection, warnings + named.warnings + self.mark(built.collection, named, rollback)

    def mark(self, collection, named, rollback):
        if self.load_order is None:
            return []
        first = not self.state
        if first:
            self.state.extend(load_order_report(*self.load_order))
        # the load order's problems once, with the first file
        return mark_breakers(collection, self.state[0], named, rollback) + (self.state[1] if first else [])


def import_cells(context, paths, **options):
    """Each file with a ``CellImport(**options)``: (collections, messages) as ``import_files``."""
    with CellImport(**options) as import_one:
        return import_files(context, paths, import_one)
