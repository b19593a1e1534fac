"""Build Precombines for a cell in Blender: the cell an imported copy comes from (its ``_OC``
file, under a Data folder's ``meshes\\precombined[\\<master>]``) rebuilt from the references of
its load order (core.precombined.build.cell), all files written or none."""

from pathlib import Path

from ...core.errors import FormatError
from ...core.plugin.load_order import GAME_MASTERS
from ...core.precombined.build.cell import Build
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
    build = Build(folder, cell, into=into or None, layout=layout)
    report = build.report()
    lines = [*report["messages"], *(f"left out {item['reference']}: {'; '.join(item['why'])}" for item in report["left_out"])]
    if not build.files:
        return lines + [f"CELL {cell}: no reference to combine: nothing written"], False
    if not dry_run:
        build.write()
    verb = "would write" if dry_run else "wrote"
    return lines + [f"CELL {cell}: {report['references']} references in {len(report['groups'])} meshes; {verb} "
                    f"{len(build.files)} files"], not dry_run
