"""File > Import > Precombined NIF: cells as linked duplicates."""

from pathlib import Path

import bpy

from ..core.archives.data import split_archive_path
from ..io.plugin.references import name_instances
from ..io.precombined.breakers import load_order_report, mark_breakers
from ..io.precombined.importer import CellBuilder, GeometrySource
from .nif_import import NifImport, import_files, import_nif, report_import


def import_cells(context, paths, *, lod=0, geometry_path=None, instancing="OBJECTS", plugins=(), find_plugin=True,
                 load_order=None, **options):
    """Import each file with the cell builder (files without a precombined block import like
    any NIF); ``options`` go to the general builder (scale, collision, skin). Placed copies are
    named after their references, read from ``plugins`` (the cell's plugin, then masters) or
    from the plugin found in the cell's Data folder when ``find_plugin``; then, in the load
    order of ``load_order`` (Data folder, plugins.txt or None; default: the preferences'
    Fallout 4 Data folder and plugins.txt), the cell gets its precombine state and the copies
    overridden after its precombines were built are marked."""
    from ..ui import preferences  # here: ui's menus import this module

    settings = preferences.get(context)
    source = GeometrySource(geometry_path or None, settings.fo4_data if settings and settings.fo4_data else None,
                            preferences.cache_folder(context))
    if load_order is None and settings is not None and settings.fo4_data:
        load_order = (bpy.path.abspath(settings.fo4_data), bpy.path.abspath(settings.plugins_txt) or None)
    state = []  # the load order's report, read once at the first cell

    def mark(collection):
        if load_order is None or "nif_path" not in collection:
            return []
        first = not state
        if first:
            state.extend(load_order_report(*load_order))
        return mark_breakers(collection, state[0]) + (state[1] if first else [])  # the load order's problems once

    try:
        return import_files(
            context,
            paths,
            lambda context, path, progress: with_references(
                import_nif_looking_beside(
                    context, path, progress, builder=CellBuilder, lod=lod, geometry=source, instancing=instancing, **options
                ),
                plugins,
                find_plugin,
                mark,
            ),
        )
    finally:
        source.close()


def import_nif_looking_beside(context, path, progress, *, geometry, **options):
    """import_nif, a cell taken from an archive finding its geometry in the archive's Data folder too."""
    inside = split_archive_path(path)
    if inside is not None:
        geometry.also_look_in(str(Path(inside[0]).parent))
    return import_nif(context, path, progress, geometry=geometry, **options)


def with_references(imported, plugins, find_plugin, mark):
    collection, warnings = imported
    warnings = warnings + name_instances(collection, plugins, find_plugin)
    return collection, warnings + mark(collection)


class IMPORT_SCENE_OT_precombined(bpy.types.Operator, NifImport):
    """Import Fallout 4 precombined cells (*_OC.nif): every placed copy as a linked duplicate"""

    bl_idname = "import_scene.precombined_cell"
    bl_label = "Import Precombined NIF"
    data_folder_games = ("FO4",)  # cells are Fallout 4's; their .csg is found in its Data folder

    lod: bpy.props.EnumProperty(
        name="LOD",
        description="Which of the records' three triangulations to build",
        items=(("0", "LOD 0", "The first triangulation"), ("1", "LOD 1", ""), ("2", "LOD 2", "")),
        default="0",
    )
    instancing: bpy.props.EnumProperty(
        name="Instancing",
        description="How placed copies are built",
        items=(
            ("OBJECTS", "Objects", "One object per placed copy, all sharing the record's mesh (linked duplicates)"),
            ("GEOMETRY_NODES", "Geometry Nodes", "Per record one point cloud whose modifier instances the mesh: "
             "light for very large cells"),
        ),
        default="OBJECTS",
    )
    geometry_path: bpy.props.StringProperty(
        name="Geometry File",
        description="The .csg (or .psg) holding vanilla cells' geometry; empty: find it in the Fallout 4 Data "
        "folder set in the preferences",
        subtype="FILE_PATH",
    )

    plugin_path: bpy.props.StringProperty(
        name="Plugin",
        description="The cell's plugin (.esm/.esp/.esl), to name every copy after the reference placing it; empty: "
        "the plugin in the cell's Data folder whose geometry the cell uses",
        subtype="FILE_PATH",
    )
    find_plugin: bpy.props.BoolProperty(
        name="Name References",
        description="Look the cell's plugin up in its Data folder when none is given",
        default=True,
    )

    def execute(self, context):
        collections, messages = import_cells(
            context,
            self.paths(),
            lod=int(self.lod),
            **self.import_options(),
            geometry_path=self.geometry_path,
            instancing=self.instancing,
            plugins=[self.plugin_path] if self.plugin_path else [],
            find_plugin=self.find_plugin,
        )
        return report_import(self, collections, messages, "NIF")


CLASSES = (IMPORT_SCENE_OT_precombined,)
