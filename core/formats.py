"""Which codec reads a file. A .bsm2 has no magic, so its extension decides; anything else is
read as a NIF, whose reader checks the header line."""

from pathlib import Path

BSM2_SUFFIX = ".bsm2"


def is_bsm2(path):
    return Path(path).suffix.lower() == BSM2_SUFFIX


def read_file(path):
    """A NifFile or a Bsm2File; both write themselves back with ``write(path)``."""
    if is_bsm2(path):
        from .bsm2 import Bsm2File

        return Bsm2File.read(path)
    from .nif import NifFile

    return NifFile.read(path)
