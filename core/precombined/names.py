"""BSCRC32 filename hashes and how a precombined record's hash names its geometry file."""

import zlib
from pathlib import Path

# Plugins whose geometry files ship with the game and its DLCs.
KNOWN_PLUGINS = ("Fallout4", "DLCCoast", "DLCNukaWorld", "DLCRobot", "DLCworkshop01", "DLCworkshop02", "DLCworkshop03")


def raw_crc32(data):
    """Bethesda's CRC-32 of bytes: reflected, initial value 0, no final XOR."""
    return zlib.crc32(data, 0xFFFFFFFF) ^ 0xFFFFFFFF


def bscrc32(text):
    """raw_crc32 of the lowercased path with '/' as '\\'."""
    return raw_crc32(text.lower().replace("/", "\\").encode("cp1252"))


def geometry_hash(plugin_stem):
    """The hash a record stores for ``<plugin stem> - Geometry.csg``."""
    return bscrc32(f"{plugin_stem} - geometry")


def find_geometry_file(data_folder, filename_hash):
    """The .csg (or .psg) in a game Data folder whose name hashes to ``filename_hash``, or None."""
    folder = Path(data_folder)
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        stem, suffix = path.stem, path.suffix.lower()
        if suffix in (".csg", ".psg") and stem.lower().endswith(" - geometry") and bscrc32(stem) == filename_hash:
            return path
    return None
