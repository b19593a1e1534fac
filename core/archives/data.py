"""Files of a game's Data folders as the game finds them: a loose file wins, then the
archives in load order (the base game's first, the plugins' after them, so a later archive
overrides an earlier one). Paths compare whatever their case and slashes.

A file from an archive is named ``ARCHIVE.ba2:inner/path``; ``file()`` extracts it once into
a cache folder when something (Blender loading an image) needs it on disk."""

import os
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import FormatError
from ..files import write_replacing
from ..nif.materials import TextureFinder, texture_key
from . import open_archive
from .archive import archive_key

ARCHIVE_SUFFIXES = (".ba2", ".bsa")
PLUGIN_SUFFIXES = (".esm", ".esl", ".esp")
# The games' own plugins in the order the games load them: their archives ("<plugin> - *.ba2")
# come first. ("fallout" names New Vegas' base archives.)
OFFICIAL_PLUGINS = (
    "fallout4", "dlcrobot", "dlcworkshop01", "dlccoast", "dlcworkshop02", "dlcworkshop03", "dlcnukaworld",
    "dlcultrahighresolution", "fallout3", "anchorage", "thepitt", "brokensteel", "pointlookout", "zeta", "fallout",
    "falloutnv", "deadmoney", "honesthearts", "oldworldblues", "lonesomeroad", "gunrunnersarsenal", "skyrim", "update",
    "dawnguard", "hearthfires", "dragonborn", "seventysix", "starfield", "constellation", "oldmars",
    "blueprintships-starfield",
)


class ArchivePath(NamedTuple):
    """A file inside an archive, ``ARCHIVE.ba2:inner/path`` (also .bsa)."""

    archive: str
    inner: str

    @property
    def data_folder(self):
        """The Data folder the file belongs to: the folder holding its archive."""
        return Path(self.archive).parent

    @property
    def stem(self):
        """The inner file's name without its suffix (inner paths use either slash)."""
        return PurePosixPath(self.inner.replace("\\", "/")).stem


def split_archive_path(text):
    """The ArchivePath ``text`` names (``ARCHIVE.ba2:inner/path``, also .bsa), else None."""
    lowered = str(text).lower()
    for suffix in ARCHIVE_SUFFIXES:
        at = lowered.find(suffix + ":")
        if at > 0:
            return ArchivePath(str(text)[:at + len(suffix)], str(text)[at + len(suffix) + 1:])
    return None


def data_folder_of(path):
    """The Data folder a game file belongs to, as its path names it (a linked-in file belongs to
    the folder it is linked into): its archive's folder, or the folder holding the ``meshes``
    folder it lies in; None when neither."""
    inside = split_archive_path(path)
    if inside is not None:
        return Path(os.path.abspath(inside.data_folder))
    absolute = Path(os.path.abspath(path))
    return next((parent.parent for parent in absolute.parents if parent.name.lower() == "meshes"), None)


def load_order_key(archive_name, plugins=None):
    """Sort key of an archive in load order: the games' own first, in their order, then those of
    the folder's other plugins (``plugins``: {lower-case stem: suffix}) as the games sort plugin
    kinds (.esm, .esl, .esp; the user's own order lives outside the Data folder), then archives
    of no plugin; by name within each."""
    name = archive_name.lower()
    plugin = name.rsplit(".", 1)[0].split(" - ", 1)[0]
    if plugin in OFFICIAL_PLUGINS:
        return (0, OFFICIAL_PLUGINS.index(plugin), name)
    suffix = (plugins or {}).get(plugin)
    return (1, PLUGIN_SUFFIXES.index(suffix) if suffix in PLUGIN_SUFFIXES else len(PLUGIN_SUFFIXES), name)


def stored_path(text):
    """``ARCHIVE.ba2:inner/path`` with the inner path spelled as the archive stores it (lookups
    ignore case and slashes, names shown to the user should not); other paths unchanged."""
    inside = split_archive_path(text)
    if inside is None:
        return text
    entry = opened_archive(inside.archive).find(inside.inner)
    return text if entry is None else f"{inside.archive}:{entry.path}"


def read_path(text):
    """The bytes of a loose file or of ``ARCHIVE.ba2:inner/path``."""
    inside = split_archive_path(text)
    if inside is None:
        return Path(text).read_bytes()
    archive = opened_archive(inside.archive)  # a batch over an archive reads its tables once
    if inside.inner not in archive:
        raise FormatError(f"holds no file {inside.inner}", path=inside.archive)
    return archive.read(inside.inner)


def path_in_folder(folder, relative):
    """``folder`` / ``relative`` with each part spelled as an existing entry is, whatever the case
    (the games ignore case: a file written for them must not make a second ``Materials`` folder)."""
    current = Path(folder)
    for part in [p for p in str(relative).replace("\\", "/").split("/") if p and p != "."]:
        try:
            part = next((name for name in sorted(os.listdir(current)) if name.lower() == part.lower()), part)
        except OSError:
            pass
        current = current / part
    return current


_opened = {}  # (path, size, modification time) -> Archive: tables read once per session


def opened_archive(path):
    """The archive at ``path``, its tables read again only when the file changed."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise FormatError(f"cannot be opened: {error.strerror}", path=path) from None
    key = (os.path.abspath(path), status.st_size, status.st_mtime_ns)
    archive = _opened.get(key)
    if archive is None:
        archive = _opened[key] = open_archive(path)
    return archive


def cache_name(archive_path):
    """The cache folder of an archive: its name, and a hash of the folder holding it, so two Data
    folders' archives of the same name (two installs, a mod manager's copy) keep apart."""
    folder = str(Path(archive_path).resolve().parent)
    return f"{Path(archive_path).name} {zlib.crc32(folder.encode('utf-8', 'surrogateescape')):08X}"


def default_cache_folder():
    return Path(tempfile.gettempdir()) / "precombined_nif_cache"


class DataFiles:
    """Lookups in the ``folders`` (each a Data folder); archives are opened on first need."""

    def __init__(self, folders, cache_folder=None):
        self.loose = TextureFinder(folders)
        self.folders = self.loose.folders
        self.cache_folder = Path(cache_folder) if cache_folder else default_cache_folder()
        self._archives = None
        self.problems = []  # archives that could not be opened, once each

    @property
    def archives(self):
        """The readable archives, the one whose files win first."""
        if self._archives is None:
            found = []
            for folder in self.folders:
                try:
                    entries = os.listdir(folder)
                except OSError:
                    continue
                plugins = {n.lower().rsplit(".", 1)[0]: n.lower()[-4:] for n in entries if n.lower().endswith(PLUGIN_SUFFIXES)}
                names = sorted((n for n in entries if n.lower().endswith(ARCHIVE_SUFFIXES)),
                               key=lambda n, plugins=plugins: load_order_key(n, plugins))
                found += [folder / name for name in names]
            self._archives = []
            for path in found:
                try:
                    self._archives.append(opened_archive(path))
                except FormatError as error:
                    self.problems.append(str(error))
            self._archives.reverse()
        return self._archives

    def archive_paths(self, pattern):
        """``ARCHIVE:inner/path`` of every archived file matching a glob ``pattern`` (e.g.
        ``meshes/*.nif``), archives in load order; a file a later archive overrides is listed once."""
        seen, out = set(), []
        for archive in self.archives:  # the winning archive first
            for name in archive.names(pattern):
                key = archive_key(name)
                if key not in seen:
                    seen.add(key)
                    out.append((key, f"{archive.path}:{name}"))
        return [name for _, name in sorted(out)]

    def locate(self, path, root):
        """Where the file at ``path`` is: a loose Path, ``(archive, inner path)``, or None.
        ``root`` is the Data subfolder the stored path may leave out ("textures", "materials",
        "meshes")."""
        key = texture_key(path) if root == "textures" else archive_key(path)
        if not key:
            return None
        parts = key.split("/")
        candidates = [parts] if parts[0] == root else [[root, *parts], parts]
        loose = self.loose.find_parts(*candidates)
        if loose is not None:
            return loose
        for archive in self.archives:
            for candidate in candidates:
                entry = archive.find("/".join(candidate))
                if entry is not None:
                    return archive, entry.path
        return None

    @staticmethod
    def name(found):
        """How a found file is shown: its path, or ``ARCHIVE.ba2:inner/path``."""
        if isinstance(found, Path):
            return str(found)
        archive, inner = found
        return f"{archive.path}:{inner}"

    def read(self, path, root):
        """(bytes, name) of the file, or None when no folder or archive has it."""
        found = self.locate(path, root)
        if found is None:
            return None
        if isinstance(found, Path):
            return found.read_bytes(), str(found)
        archive, inner = found
        return archive.read(inner), self.name(found)

    def file(self, path, root):
        """A file on disk for the file at ``path``: the loose file, or the archive's copy in the
        cache folder (extracted the first time only). None when not found."""
        found = self.locate(path, root)
        if found is None or isinstance(found, Path):
            return found
        return self._cached(*found)

    def cached(self, name):
        """The cache folder's copy of ``ARCHIVE:inner/path`` (a name from ``archive_paths``)."""
        inside = split_archive_path(name)
        archive = next(a for a in self.archives if a.path == inside.archive)
        return self._cached(archive, inside.inner)

    def _cached(self, archive, inner):
        target = self.cache_folder / cache_name(archive.path) / Path(*inner.split("/"))
        entry = archive.find(inner)
        # A copy carries its archive's modification time: an archive replaced in place (a mod's
        # update, whose textures often keep their sizes) has its files extracted again.
        try:
            stamp = os.stat(archive.path).st_mtime_ns
        except OSError as error:
            raise archive.error(f"cannot be opened: {error.strerror}") from None
        try:
            cached = target.stat()
            fresh = cached.st_mtime_ns == stamp and (entry.size is None or cached.st_size == entry.size)
        except OSError:
            fresh = False
        if not fresh:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_replacing(target, archive.read(inner))
            os.utime(target, ns=(stamp, stamp))
        return target

    def close(self):
        for archive in self._archives or ():
            archive.close()
