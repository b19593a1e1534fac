"""A cell's previs file, ``vis\\<master>\\<cell %08X>.uvd`` of the file defining the cell, looked
up as the game does: loose in a Data folder (whatever the case), else in its archives. The
Creation Kit's .cdx gives a cell with one its 0x87 row (core.precombined.cdx.visibility_row)."""

from pathlib import PurePosixPath

from ..archives.archive import archive_key
from ..archives.data import split_archive_path


def previs_path(master, cell_id):
    return f"vis/{master}/{cell_id & 0xFFFFFF:08X}.uvd"


def defining_file(plugin, cell_id):
    """The name of the file defining the cell ``cell_id`` (its low 24 bits) as ``plugin``
    (core.plugin.Plugin) stores the CELL: one of its masters, or itself; None when it holds no
    such CELL."""
    form_id = next((f for f, (kind, _) in plugin.records.items() if kind == "CELL" and f & 0xFFFFFF == cell_id & 0xFFFFFF),
                   None)
    if form_id is None:
        return None
    index = form_id >> 24
    return plugin.masters[index] if index < len(plugin.masters) else plugin.name


def previs_masters(files, cell_id):
    """The masters whose folder under ``vis`` holds the cell's previs file, in ``files``
    (core.archives.data.DataFiles): loose ones, then archived ones, whatever the case."""
    name = f"{cell_id & 0xFFFFFF:08x}.uvd"
    found = []
    for folder in files.folders:
        for vis in (folder / n for n in _listing(folder) if n.lower() == "vis"):
            found += [master for master in _listing(vis) if any(n.lower() == name for n in _listing(vis / master))]
    for entry in files.archive_paths(f"vis/*/{name}"):
        found.append(PurePosixPath(archive_key(split_archive_path(entry).inner)).parent.name)
    return list(dict.fromkeys(found))


def find_previs(files, cell_id, master=None):
    """(master, where) of the cell's previs file in ``files``: the one of ``master`` when the
    defining file is known, else the only master holding one; None when there is none (or,
    master unknown, several)."""
    if master is not None:
        where = files.locate(previs_path(master, cell_id), "vis")
        return (master, files.name(where)) if where is not None else None
    masters = previs_masters(files, cell_id)
    if len(masters) != 1:
        return None
    return find_previs(files, cell_id, masters[0])


def _listing(folder):
    try:
        return sorted(p.name for p in folder.iterdir())
    except OSError:
        return []
