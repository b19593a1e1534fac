"""Read-only Bethesda archives: Fallout 4 BA2 (GNRL and DX10) and Fallout 3 / New Vegas /
Skyrim SE BSA. ``open_archive`` picks the reader from the file's magic."""

from .archive import Archive, archive_key, extract
from .ba2 import Ba2Archive
from .bsa import BsaArchive
from ..errors import FormatError

_READERS = {b"BTDX": Ba2Archive, b"BSA\0": BsaArchive}


def open_archive(path):
    """An Archive for ``path`` (its header and directory read, no file data)."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise FormatError(f"cannot be opened: {error.strerror}", path=path) from None
    reader = _READERS.get(magic)
    if reader is None:
        raise FormatError(f"not a BA2 or BSA archive (magic {magic!r})", path=path)
    return reader(path)


__all__ = ["Archive", "Ba2Archive", "BsaArchive", "archive_key", "extract", "open_archive"]
