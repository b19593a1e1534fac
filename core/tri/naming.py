"""Which .tri files belong to a NIF, by the games' naming.

FaceGen morphs of a head part sit beside its NIF under the NIF's name, as the head part records
(HDPT) of Skyrim and Fallout 4 name them: ``MaleHead.tri`` holds the expressions the game plays,
``MaleHeadChargen.tri`` the character-creation sliders, ``MaleHeadRaces.tri`` (Skyrim) the race
morphs (PyNifly writes ``MaleHead_chargen.tri``). Fallout 3 / New Vegas heads have the one
``headhuman.tri``. A BodySlide .tri is named by the NIF itself: a ``BODYTRI`` string extra data
on the root holding its path under the Data folder's ``Meshes``.
"""

import os
from pathlib import Path, PureWindowsPath

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
    stem = nif_path.stem.lower()
    try:
        names = {name.lower(): name for name in os.listdir(nif_path.parent)}
    except OSError:
        return []
    found = []
    for role in FACEGEN_ROLES:
        for ending in ENDINGS[role]:
            name = names.get(f"{stem}{ending}.tri")
            if name is not None:
                found.append((role, nif_path.parent / name))
                break
    return found


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
