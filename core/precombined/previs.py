"""A cell's previs file, ``vis\\<master>\\<cell %08X>.uvd`` of the file defining the cell, looked
up as the game does: loose in a Data folder (whatever the case), else in its archives (texture
archives hold none: their large tables stay unread). The Creation Kit's .cdx gives a cell with
one its 0x87 row (core.precombined.cdx.visibility_row)."""

import os
from pathlib import Path, PurePosixPath

from ..archives.data import ARCHIVE_SUFFIXES, opened_archive
from ..errors import FormatError


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


def find_previs(folders, cell_id, master=None):
    """(master, where) of the cell's previs file in the Data ``folders``: the one of ``master``
    when the defining file is known, else the only master holding one; None when there is none
    (or, master unknown, several). ``where`` is a path, or ``ARCHIVE:inner path``."""
    name = f"{cell_id & 0xFFFFFF:08x}.uvd"
    found = {}  # lower-case master: (master as spelled, where), loose files first
    for folder in map(Path, folders):
        for vis in _entries(folder, "vis"):
            for spelled in _listing(vis):
                for file in _entries(vis / spelled, name):
                    found.setdefault(spelled.lower(), (spelled, str(file)))
    for archive in _archives(folders):
        for inner in archive.names(f"vis/*/{name}"):
            spelled = PurePosixPath(inner.replace("\\", "/")).parent.name
            found.setdefault(spelled.lower(), (spelled, f"{archive.path}:{inner}"))
    if master is not None:
        hit = found.get(master.lower())
        return (master, hit[1]) if hit is not None else None
    return next(iter(found.values())) if len(found) == 1 else None


def _archives(folders):
    for folder in folders:
        for name in _listing(Path(folder)):
            if name.lower().endswith(ARCHIVE_SUFFIXES) and " - textures" not in name.lower():
                try:
                    yield opened_archive(Path(folder) / name)
                except FormatError:
                    continue  # an archive that cannot be read holds no previs file the game finds either


def _entries(folder, name):
    """The entries of ``folder`` called ``name``, whatever the case."""
    return [folder / n for n in _listing(folder) if n.lower() == name]


def _listing(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []
