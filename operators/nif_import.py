"""File > Import > NIF, its drag-and-drop handler, and the import loop shared with cli.py."""

from pathlib import Path, PurePosixPath

import bpy
import numpy as np
from bpy_extras.io_utils import ImportHelper

from ..core.archives.data import read_path, split_archive_path, stored_path
from ..core.errors import FormatError
from ..core.formats import not_a_nif
from ..core.nif import NifFile
from ..core.nif.xbox import to_pc
from ..io.collection_objects import objects_in
from ..io.nif.importer import SceneBuilder
from ..io.nif.source import keep_scale, keep_source


def import_files(context, paths, import_one):
    """Import each file with ``import_one(context, path, progress)`` -> (collection, warnings),
    where ``progress(fraction)`` says how far into the file it is. Returns (collections,
    messages): a file that fails leaves nothing behind and does not stop the others; its error
    joins the messages."""
    collections, messages = [], []
    window_manager = context.window_manager
    window_manager.progress_begin(0, max(len(paths), 1))
    try:
        for number, path in enumerate(paths):
            try:
                with np.errstate(all="ignore"):  # odd values are reported as errors, not numpy warnings
                    collection, warnings = import_one(
                        context, path, lambda fraction, done=number: window_manager.progress_update(done + fraction)
                    )
                collections.append(collection)
                messages.extend(f"{path}: {warning}" for warning in warnings)
            except FormatError as error:  # errors found while building know no file: name it
                messages.append(str(error.located(path=path)))
            except OSError as error:
                messages.append(f"{path}: {error.strerror or error}")
            except Exception as error:  # a bug of ours: the file's data is already removed; say so in one line
                messages.append(f"{path}: internal error ({type(error).__name__}: {error}); please report it")
            window_manager.progress_update(number + 1)
    finally:
        window_manager.progress_end()
    return collections, messages


def import_nif(context, path, progress=None, *, builder=SceneBuilder, **options):
    """One file into a new collection linked to the scene, or nothing at all if it fails."""
    from ..ui import preferences  # here: ui's menus import this module

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
    collection = bpy.data.collections.new(PurePosixPath(inside[1].replace("\\", "/")).stem if inside else Path(path).stem)
    folders = preferences.data_folders(context, nif.header.game)
    if inside:  # the archive's own Data folder has the file's textures and materials
        folders = [*folders, str(Path(inside[0]).parent)]
    options.setdefault("data_folders", folders)
    options.setdefault("cache_folder", preferences.cache_folder(context))
    scene_builder = builder(nif, collection, progress=progress, **options)
    try:
        scene_builder.build()
    except BaseException:
        scene_builder.remove_created()
        bpy.data.collections.remove(collection)
        raise
    context.scene.collection.children.link(collection)
    collection["nif_path"] = str(path)
    collection["nif_game"] = nif.header.game
    if scene_builder.keeps_source:
        keep_source(collection, data)
    # What the import left out is kept as stored on export, not taken for deleted.
    collection["nif_built_collision"] = scene_builder.import_collision
    collection["nif_built_skin"] = scene_builder.skins is not None
    keep_scale(collection, scene_builder.scale)
    return collection, scene_builder.warnings()


def report_import(operator, collections, messages, kind):
    for message in messages:  # an error only when nothing imported: the other files did
        operator.report({"WARNING"} if collections else {"ERROR"}, message)
    if collections:
        cells = sum(
            1 for c in collections if isinstance(c, bpy.types.Collection) and any("precombined_object" in o for o in objects_in(c))
        )
        detail = f" ({cells} precombined cell(s))" if cells else ""
        operator.report({"INFO"}, f"Imported {len(collections)} {kind} file(s){detail}")
    return {"FINISHED"} if collections else {"CANCELLED"}


class MultiFileImport(ImportHelper):
    """File browser properties shared by the importers: several files may be picked."""

    files: bpy.props.CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: bpy.props.StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def paths(self):
        if self.files and self.directory:
            return [str(Path(self.directory) / f.name) for f in self.files if f.name]
        return [self.filepath]


class NifImport(MultiFileImport):
    """What every NIF importer offers: .nif files and a scale."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    filename_ext = ".nif"
    filter_glob: bpy.props.StringProperty(default="*.nif", options={"HIDDEN"})
    scale: bpy.props.FloatProperty(
        name="Scale", description="Blender units per game unit", default=1.0, min=1e-6, soft_max=1.0
    )
    use_collision: bpy.props.BoolProperty(
        name="Collision", description="Build Havok collision bodies under the objects owning them", default=True
    )
    use_skin: bpy.props.BoolProperty(
        name="Skin", description="Skeleton bones as an armature, skin weights as vertex groups", default=True
    )

    def import_options(self):
        return {"scale": self.scale, "collision": self.use_collision, "skin": self.use_skin}

    # The games whose Data folders (from the preferences) the import looks in, shown in its options.
    data_folder_games = ("FO4", "FO3", "SSE", "SKYRIM", "FO76")

    def draw(self, context):
        """The options as Blender draws them by default, then the Data folders."""
        from ..ui import preferences  # here: ui's menus import this module

        layout = self.layout
        layout.use_property_split = True
        for prop in self.properties.bl_rna.properties:
            if prop.identifier != "rna_type" and not prop.is_hidden:
                layout.prop(self, prop.identifier)
        preferences.draw_import_folders(layout, context, self.data_folder_games)


class IMPORT_SCENE_OT_nif(bpy.types.Operator, NifImport):
    """Import Bethesda NIF files (Fallout 3, New Vegas, Fallout 4, Skyrim SE)"""

    bl_idname = "import_scene.precombined_nif"
    bl_label = "Import NIF"
    # .kf: standalone animations, their sequences going to the scene's objects named like their nodes
    filter_glob: bpy.props.StringProperty(default="*.nif;*.kf", options={"HIDDEN"})

    def execute(self, context):
        from .precombined_import import import_cells  # here: that module builds on this one

        # Precombined cells dropped or picked here import with the cell importer's defaults.
        collections, messages = import_cells(context, self.paths(), **self.import_options())
        return report_import(self, collections, messages, "NIF")


class IO_FH_nif(bpy.types.FileHandler):
    bl_idname = "IO_FH_precombined_nif"
    bl_label = "Bethesda NIF"
    bl_import_operator = IMPORT_SCENE_OT_nif.bl_idname
    bl_file_extensions = ".nif;.kf"

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"


CLASSES = (IMPORT_SCENE_OT_nif, IO_FH_nif)
