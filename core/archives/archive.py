"""What every archive reader shares: the file opened on demand and read in bounds-checked
pieces (an archive of several GB is never read whole), and entries keyed by their path in
lower case with forward slashes, so lookups ignore case and slash direction."""

import fnmatch
import os
import zlib

from ..errors import FormatError

FIRST_READ = 1 << 20  # bytes of a large table read first, to check it before reading it whole


def archive_key(path):
    """The lookup key of an inner path: lower case, forward slashes, no leading slash."""
    return str(path).replace("\\", "/").strip("/").lower()


class Entry:
    """One file of an archive: its stored path and what the reader needs to extract it."""

    __slots__ = ("path", "size", "location")

    def __init__(self, path, size, location):
        self.path = path  # as stored, with forward slashes
        self.size = size  # extracted size in bytes, None when only extracting tells
        self.location = location  # reader-specific


class Archive:
    """Base of the readers: subclasses fill ``self.entries`` in ``_read_directory`` and
    implement ``_extract(entry)``."""

    kind = "archive"

    def __init__(self, path):
        self.path = os.fspath(path)
        try:
            self.file_size = os.path.getsize(self.path)
        except OSError as error:
            raise FormatError(f"cannot be opened: {error.strerror}", path=self.path) from None
        self.entries = {}  # archive_key -> Entry
        self._handle = None
        try:
            self._read_directory()
        finally:
            self.close()

    # -- reading pieces -----------------------------------------------------------------------
    def read_at(self, offset, size, what):
        """``size`` bytes at ``offset``, after checking they lie inside the file."""
        if offset < 0 or size < 0 or offset + size > self.file_size:
            raise self.error(f"{what} ({size} bytes at {offset}) runs past the end of the file ({self.file_size} bytes)")
        if self._handle is None:
            try:
                self._handle = open(self.path, "rb")
            except OSError as error:
                raise FormatError(f"cannot be opened: {error.strerror}", path=self.path) from None
        self._handle.seek(offset)
        data = self._handle.read(size)
        if len(data) != size:
            raise self.error(f"{what} could not be read whole at {offset}")
        return data

    def error(self, message):
        return FormatError(message, path=self.path)

    def inflate(self, packed, size, what):
        try:
            data = zlib.decompress(packed)
        except zlib.error as error:
            raise self.error(f"{what}: damaged zlib data ({error})") from None
        if len(data) != size:
            raise self.error(f"{what}: inflates to {len(data)} bytes, the archive says {size}")
        return data

    def close(self):
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- entries ------------------------------------------------------------------------------
    def add(self, entry):
        self.entries.setdefault(archive_key(entry.path), entry)

    def names(self, pattern=None):
        """Stored paths in archive order, those matching a glob ``pattern`` (any case, either slash) if given."""
        if pattern is None:
            return [entry.path for entry in self.entries.values()]
        pattern = archive_key(pattern)
        return [entry.path for key, entry in self.entries.items() if fnmatch.fnmatchcase(key, pattern)]

    def find(self, path):
        return self.entries.get(archive_key(path))

    def __contains__(self, path):
        return archive_key(path) in self.entries

    def read(self, path):
        """The bytes of the file at ``path`` (any case, either slash)."""
        entry = self.find(path)
        if entry is None:
            raise self.error(f"holds no file {path}")
        try:
            data = self._extract(entry)
        finally:
            self.close()  # no handle stays open between reads (the file can be replaced meanwhile)
        if entry.size is not None and len(data) != entry.size:
            raise self.error(f"{entry.path}: extracted {len(data)} bytes, the archive says {entry.size}")
        return data

    def _read_directory(self):
        raise NotImplementedError

    def _extract(self, entry):
        raise NotImplementedError


def extract(archive, pattern, folder):
    """Write the files of ``archive`` matching ``pattern`` under ``folder`` (their inner paths
    kept); returns the paths written. Inner paths that would leave ``folder`` are refused."""
    from pathlib import Path

    from ..files import write_replacing

    folder = Path(folder)
    written = []
    for name in archive.names(pattern):
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if ".." in parts or ":" in name:
            raise archive.error(f"inner path {name!r} would leave the output folder")
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_replacing(target, archive.read(name))
        written.append(target)
    return written
