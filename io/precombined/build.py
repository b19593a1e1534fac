"""Build Precombines for a cell in Blender: the cell an imported copy comes from (its ``_OC``
file, under a Data folder's ``meshes\\precombined[\\<master>]``) rebuilt from the references of
its load order (core.precombined.build.cell), all files written or none. A whole cell's import
(io.plugin.cell_import) has its edits written first into the patch by the cell exporter, then
its precombines built into that same patch on them: one plugin holds the moved references and
the XCRI and PCMB made for where they now stand."""

from pathlib import Path

from ...core.errors import FormatError
from ...core.plugin.load_order import GAME_MASTERS, GAMES
from ...core.precombined.build.cell import BUILT_SUFFIX, Build
from ...core.precombined.cell_files import FOLDER, cell_file_ids, data_folder
from .. import schema


def cell_of(obj):
    """(Data folder, the cell as ``Plugin.esm:XXXXXX``) of an imported copy, or None."""
    path = obj.get(schema.PRECOMBINED_CELL) if obj is not None else None
    ids = cell_file_ids(path) if path else None
    if ids is None:
        return None
    parent = Path(str(path)).parent
    master = parent.name if parent.name.lower() != FOLDER else GAME_MASTERS[0]
    return data_folder(path), f"{master}:{ids[0] & 0xFFFFFF:06X}"


def build_cell(obj, layout="shared", into=None, dry_run=False):
    """(report lines, written) of rebuilding the cell of ``obj``; FormatError when it cannot be."""
    found = cell_of(obj)
    if found is None:
        raise FormatError("the active object is not a copy of an imported precombined cell (_OC file)")
    folder, cell = found
    return _run(Build(folder, cell, into=into or None, layout=layout), cell, dry_run)


def build_cell_import(collection, layout="shared", into=None, dry_run=False):
    """(report lines, written) of Build Precombines for a cell's import: its edits exported into
    the patch (``into``, default '<plugin defining the cell> - Precombined.esp', in the Data
    folder), the cell built on them into it. When the build fails the patch is put back as it
    was. A dry run writes nothing and builds from the plugins as they are."""
    from ..plugin.cell_export import export_cell

    folder, cell = Path(collection[schema.CELL_DATA_FOLDER]), collection[schema.CELL_KEY]
    plugins_txt = collection[schema.CELL_PLUGINS_TXT] or None
    into = into or f"{Path(cell.rpartition(':')[0]).stem}{BUILT_SUFFIX}"
    if into.lower() in {cell.rpartition(":")[0].lower(), *(m.lower() for game in GAMES.values() for m in game)}:
        raise FormatError(f"{into}: the build writes a patch plugin, never the cell's plugin or the game's masters")
    patch = folder / into
    if dry_run:
        return _run(Build(folder, cell, into=into, layout=layout, plugins_txt=plugins_txt), cell, True)
    before = patch.read_bytes() if patch.is_file() else None
    _, lines = export_cell(collection, patch)
    try:
        build_lines, written = _run(Build(folder, cell, into=into, layout=layout, plugins_txt=plugins_txt), cell, False)
    except BaseException:
        if before is None:
            patch.unlink(missing_ok=True)
        else:
            patch.write_bytes(before)
        raise
    lines = [line for line in lines if "run Build Precombines" not in line]  # it is running
    return lines + build_lines, written


def _run(build, cell, dry_run):
    report = build.report()
    lines = [*report["messages"], *(f"left out {item['reference']}: {'; '.join(item['why'])}" for item in report["left_out"])]
    if not build.files:
        return lines + [f"CELL {cell}: no reference to combine: nothing written"], False
    if not dry_run:
        build.write()
    verb = "would write" if dry_run else "wrote"
    return lines + [f"CELL {cell}: {report['references']} references in {len(report['groups'])} meshes; {verb} "
                    f"{len(build.files)} files"], not dry_run
