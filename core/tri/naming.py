"""Which .tri files belong to a NIF, by the games' naming.

FaceGen morphs of a head part sit beside its NIF under the NIF's name, as the head part records
(HDPT) of Skyrim and Fallout 4 name them: ``MaleHead.tri`` holds the expressions the game plays,
``MaleHeadChargen.tri`` the character-creation sliders, ``MaleHeadRaces.tri`` (Skyrim) the race
morphs (PyNifly writes ``MaleHead_chargen.tri``). Fallout 3 / New Vegas heads have the one
``headhuman.tri``. A BodySlide .tri is named by the NIF itself: a ``BODYTRI`` string extra data
on the root holding its path under the Data folder's ``Meshes``.
"""

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from ..archives.data import DataFiles, split_archive_path

EXPRESSION = "EXPRESSION"
CHARGEN = "CHARGEN"
RACE = "RACE"
BODYSLIDE = "BODYSLIDE"
ROLES = (EXPRESSION, CHARGEN, RACE, BODYSLIDE)
FACEGEN_ROLES = (EXPRESSION, CHARGEN, RACE)
ROLE_NAMES = {
    EXPRESSION: "expression",
    CHARGEN: "character creation",
    RACE: "race",
    BODYSLIDE: "BodySlide",
}
# The endings after the head's name, lower-case, the first one being what the export writes.
ENDINGS = {
    CHARGEN: ("chargen", "_chargen"),
    RACE: ("races", "racemorph", "racemorphs", "_races"),
    EXPRESSION: ("",),
}
WRITTEN_ENDINGS = {EXPRESSION: "", CHARGEN: "Chargen", RACE: "Races"}
BODYTRI = "BODYTRI"  # the root's string extra data naming a BodySlide .tri
MESHES = "meshes"


def facegen_role(path):
    """What a FaceGen .tri beside a head holds, by its name's ending."""
    stem = Path(path).stem.lower()
    for role in (CHARGEN, RACE):
        if any(stem.endswith(ending) for ending in ENDINGS[role]):
            return role
    return EXPRESSION


def facegen_files(nif_path):
    """[(role, path)] of the FaceGen .tri files beside a NIF named after it (any letter case)."""
    nif_path = Path(nif_path)
    try:
        names = {name.lower(): name for name in os.listdir(nif_path.parent)}
    except OSError:
        return []
    return _facegen_named(nif_path.stem, lambda name: nif_path.parent / names[name] if name in names else None)


def _facegen_named(stem, find):
    """[(role, file)] of the FaceGen files named after a head of this ``stem``: ``find(lower-case
    file name)`` gives the file or None; the first ending found of each role is its file."""
    found = []
    for role in FACEGEN_ROLES:
        for ending in ENDINGS[role]:
            file = find(f"{stem.lower()}{ending}.tri")
            if file is not None:
                found.append((role, file))
                break
    return found


def companion_files(nif_path, bodytri_values):
    """[(role, file)] of the .tri files the games read with the NIF at ``nif_path``: the FaceGen
    files named after it, then the BodySlide file each of its BODYTRI values names (a file
    once). A loose NIF's are found on disk as ``facegen_files`` and ``bodyslide_file`` say
    (Paths); an archived NIF's (``ARCHIVE.ba2:inner/path``) in its archive's Data folder as the
    game finds them: a loose file first, then the archives in load order (each a Path or an
    ``ARCHIVE:inner/path`` name, which core.archives.data.read_path reads)."""
    inside = split_archive_path(nif_path)
    if inside is None:
        files = facegen_files(nif_path)
        bodyslide = [bodyslide_file(nif_path, value) for value in bodytri_values]
    else:
        data = DataFiles([inside.data_folder])
        folder = PurePosixPath(inside.inner.replace("\\", "/")).parent
        try:
            files = _facegen_named(inside.stem, lambda name: _in_data(data, (folder / name).as_posix()))
            bodyslide = [_archived_bodyslide_file(data, folder, value) for value in bodytri_values]
        finally:
            data.close()
    for found in bodyslide:
        if found is not None and found not in [f for _, f in files]:  # a BodySlide file may have the head's name
            files.append((BODYSLIDE, found))
    return files


def _archived_bodyslide_file(data, folder, value):
    """As ``bodyslide_file``: under Meshes, else beside the NIF (in ``folder``) by its file name."""
    parts = stored_parts(value)
    if not parts:
        return None
    return _in_data(data, "/".join(parts)) or _in_data(data, (folder / parts[-1]).as_posix())


def _in_data(data, path):
    """The file at ``path`` under the Data folder's Meshes as the game finds it, or None."""
    found = data.locate(path, MESHES)
    return None if found is None else data.name(found)


def facegen_path(nif_path, role):
    """Where an export writes a head's FaceGen .tri of ``role``."""
    nif_path = Path(nif_path)
    return nif_path.with_name(f"{nif_path.stem}{WRITTEN_ENDINGS[role]}.tri")


def meshes_folder(path):
    """The ``Meshes`` folder a file sits under, or None."""
    for parent in Path(path).resolve().parents:
        if parent.name.lower() == MESHES:
            return parent
    return None


def stored_parts(value):
    """The parts of a path as a NIF stores it (backslashes, maybe a drive, maybe ``meshes\\``)."""
    parts = [part for part in PureWindowsPath(value).parts if part not in ("\\", "/")]
    if parts and PureWindowsPath(value).drive:
        parts = parts[1:]
    return parts


def bodyslide_file(nif_path, value):
    """The BodySlide .tri a NIF's BODYTRI ``value`` names, or None: under the Meshes folder
    holding the NIF (what the game reads), else beside the NIF by its file name (where tools
    keep their work)."""
    parts = stored_parts(value)
    if not parts:
        return None
    candidates = []
    meshes = meshes_folder(nif_path)
    if meshes is not None:
        relative = parts[1:] if parts[0].lower() == MESHES else parts
        candidates.append(meshes.joinpath(*relative))
    candidates.append(Path(nif_path).parent / parts[-1])
    for candidate in candidates:
        found = _any_case(candidate)
        if found is not None:
            return found
    return None


def bodyslide_output(nif_path, value):
    """Where an export writes the BodySlide .tri a NIF's BODYTRI ``value`` names: under the Meshes
    folder the NIF goes to (where the game reads it), else beside the NIF by its file name."""
    parts = stored_parts(value)
    meshes = meshes_folder(nif_path)
    if meshes is not None and not PureWindowsPath(value).drive:
        return meshes.joinpath(*(parts[1:] if parts[0].lower() == MESHES else parts))
    return Path(nif_path).parent / parts[-1]


def _any_case(path):
    """``path`` itself, or a file of the same name in another letter case."""
    if path.is_file():
        return path
    try:
        names = {name.lower(): name for name in os.listdir(path.parent)}
    except OSError:
        return None
    name = names.get(path.name.lower())
    return None if name is None else path.parent / name


def bodytri_value(tri_path):
    """What a NIF's BODYTRI says for a .tri written at ``tri_path``: its path under Meshes when
    it is under one, else its file name."""
    tri_path = Path(tri_path)
    meshes = meshes_folder(tri_path)
    if meshes is None:
        return tri_path.name
    return str(PureWindowsPath(*tri_path.resolve().relative_to(meshes).parts))
