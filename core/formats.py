"""Which codec reads a file. A .bsm2, a Starfield .mesh or .mat has no magic, so its extension
decides; a .tri is told by its magic (FaceGen or BodySlide), and so is a Starfield morph file
(``MDAT``, named ``morph.dat``); anything else is read as a NIF, whose reader checks the header
line."""

from pathlib import Path

from .errors import FormatError

BSM2_SUFFIX = ".bsm2"
MESH_SUFFIX = ".mesh"
MAT_SUFFIX = ".mat"
MORPH_MAGIC = b"MDAT"
# Files users hand to the NIF commands by mistake, told apart by their first four bytes.
OTHER_FORMATS = {
    b"BTDX": "a BA2 archive: `cli.py ls` lists it, ARCHIVE.ba2:inner/path names a file in it",
    b"BSA\0": "a BSA archive: `cli.py ls` lists it, ARCHIVE.bsa:inner/path names a file in it",
    b"TES4": "a plugin: give it to a precombined cell's info or import with --plugin",
    b"bcsg": "a precombined geometry file: give it to a cell's import with --csg",
    b"bpsg": "a precombined geometry file: give it to a cell's import with --csg",
    b"BGSM": "a material file (BGSM), read through the NIFs that name it",
    b"BGEM": "a material file (BGEM), read through the NIFs that name it",
    b"DDS ": "a texture (DDS), read through the NIFs that name it",
    b"FRTR": "a FaceGen morph file (.tri): `cli.py info` reads it by its .tri name",
    b"PIRT": "a BodySlide morph file (.tri): `cli.py info` reads it by its .tri name",
}


def is_bsm2(path):
    return Path(path).suffix.lower() == BSM2_SUFFIX


def read_file(path):
    """A NifFile, Bsm2File, FaceGenTri, BodySlideTri, Starfield MeshData, MatFile or MorphFile;
    each writes itself back with ``to_bytes()`` and ``write(path)``. A file may be named inside an
    archive (``ARCHIVE.ba2:meshes/x.nif``)."""
    if is_bsm2(path):
        from .bsm2 import Bsm2File

        return Bsm2File.read(path)
    from .archives.data import read_path, split_archive_path
    from .tri import is_tri, tri_from_bytes

    if is_tri(path):
        return tri_from_bytes(read_path(path), path=str(path))
    from .nif import NifFile

    if split_archive_path(path) is not None:  # ARCHIVE.ba2:meshes/x.nif
        data = bytearray(read_path(path))
        return _reader(path, data[:4]).from_bytes(data, str(path))
    head = first_bytes(path)
    reader = _reader(path, head)
    try:
        return reader.read(path)
    except FormatError as error:
        raise (not_a_nif(error, head, path) if reader is NifFile else error) from error


def _reader(path, head):
    """The class reading a file of this name and these first bytes."""
    suffix = Path(str(path)).suffix.lower()
    if suffix == MESH_SUFFIX:
        from .starfield.mesh import MeshData

        return MeshData
    if suffix == MAT_SUFFIX:
        from .materials.mat import MatFile

        return MatFile
    if bytes(head[:4]) == MORPH_MAGIC:
        from .starfield.morphs import MorphFile

        return MorphFile
    from .nif import NifFile

    return NifFile


def not_a_nif(error, head, path):
    """The error to give for a file the NIF reader refused: what the file is instead, when its
    first bytes tell, else the reader's own error."""
    other = OTHER_FORMATS.get(bytes(head[:4]))
    return error if other is None else FormatError(f"not a NIF: this is {other}", path=path)


def first_bytes(path, count=4):
    try:
        with open(path, "rb") as handle:
            return handle.read(count)
    except OSError:
        return b""


def read_plugin_or_material(path):
    """A PluginFile (TES4) or a BGSM/BGEM MaterialFile, as the file's first bytes tell, else None:
    the kinds ``read_file`` leaves to the NIF commands' error, read by ``info`` and ``roundtrip``."""
    head = bytes(first_bytes(path))
    if head == b"TES4":
        from .plugin.file import PluginFile

        return PluginFile.read(path)
    if head in (b"BGSM", b"BGEM"):
        from .materials.bgsm import MaterialFile

        return MaterialFile.read(path)
    return None
