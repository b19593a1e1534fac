"""Which codec reads a file. A .bsm2 has no magic, so its extension decides; anything else is
read as a NIF, whose reader checks the header line."""

from pathlib import Path

BSM2_SUFFIX = ".bsm2"


def is_bsm2(path):
    return Path(path).suffix.lower() == BSM2_SUFFIX


def read_file(path):
    """A NifFile or a Bsm2File; both write themselves back with ``write(path)``. A NIF may be
    named inside an archive (``ARCHIVE.ba2:meshes/x.nif``)."""
    if is_bsm2(path):
        from .bsm2 import Bsm2File

        return Bsm2File.read(path)
    from .archives.data import read_path, split_archive_path
    from .nif import NifFile

    if split_archive_path(path) is not None:  # ARCHIVE.ba2:meshes/x.nif
        return NifFile.from_bytes(bytearray(read_path(path)), path=str(path))
    return NifFile.read(path)
