"""A precombined cell's files: ``<cell>_<id>_OC.nif`` (the cell's FormID with top byte 00, the
combined mesh's id), ``<cell>_Physics.nif`` beside them, found loose or in an archive whatever
the case of their names; and the Data folder a file under ``meshes\\`` belongs to."""

import re
from pathlib import Path, PurePosixPath

from ..archives.data import opened_archive, path_in_folder, read_path, split_archive_path
from ..errors import FormatError

FOLDER = "precombined"  # meshes\precombined\[<master>\]: where the game looks for a cell's files
OC_NAME = re.compile(r"^([0-9a-f]{8})_([0-9a-f]{8})_oc\.nif$", re.IGNORECASE)


def cell_file_ids(path):
    """(cell FormID, combined mesh id) of an ``_OC.nif`` file name, or None."""
    match = OC_NAME.match(PurePosixPath(str(path).replace("\\", "/")).name)
    return (int(match.group(1), 16), int(match.group(2), 16)) if match else None


def mesh_file_name(cell_id, mesh_id):
    return f"{cell_id & 0xFFFFFF:08X}_{mesh_id:08X}_OC.nif"


def physics_file_name(cell_id):
    return f"{cell_id & 0xFFFFFF:08X}_Physics.nif"


def sibling(path, name):
    """The file ``name`` in the folder of ``path`` (loose, or in the same archive folder), as
    stored whatever its case; None when there is none."""
    inside = split_archive_path(path)
    if inside is None:
        found = path_in_folder(Path(path).parent, name)
        return str(found) if found.is_file() else None
    folder = PurePosixPath(inside.inner.replace("\\", "/")).parent
    try:
        entry = opened_archive(inside.archive).find(str(folder / name))
    except FormatError:
        return None
    return f"{inside.archive}:{entry.path}" if entry is not None else None


def read_sibling(places, name):
    """(the bytes, where) of the first file ``name`` beside one of ``places``, else (None, None)."""
    for place in places:
        found = sibling(place, name)
        if found is not None:
            return read_path(found), found
    return None, None


def data_folder(path):
    """The Data folder of a file under a ``meshes`` folder (any case), else its own folder."""
    path = Path(path)
    return next((parent.parent for parent in path.parents if parent.name.lower() == "meshes"), path.parent)
