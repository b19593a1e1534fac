"""The geometry of a Starfield NIF's BSGeometry LODs: their .mesh data, inline or found as the
game finds it (``Data\\geometries\\<name>.mesh``: loose first, then the archives), or beside the
NIF (``<NIF's folder>\\<name>.mesh``, as nifly writes them), with errors naming the NIF, the
shape, the LOD and the mesh.

Beside a loose NIF is looked in first (what the user has at hand wins), whatever the case; then
the Data folders: the NIF's own (the folder holding the ``geometries`` folder nearest
above it, else the folder above its ``meshes`` folder; for ``ARCHIVE.ba2:meshes/x.nif`` the
archive's folder), then those given (the preferences' Starfield Data folder)."""

from pathlib import Path

from ..archives.data import DataFiles, split_archive_path
from ..errors import FormatError
from ..nif.blocks.bs_geometry import BSGeometry
from ..nif.materials import TextureFinder
from ..nif.blocks.skin import BSSkinBoneData, BSSkinInstance, SkinAttach
from .mesh import MeshData, mesh_path


def nif_data_folder(nif_path):
    """The Data folder a NIF's meshes are looked up in first, or None."""
    if nif_path is None:
        return None
    inside = split_archive_path(nif_path)
    if inside is not None:
        return inside.data_folder
    folders = Path(nif_path).resolve().parents
    for folder in folders:
        try:
            if any(entry.name.lower() == "geometries" and entry.is_dir() for entry in folder.iterdir()):
                return folder
        except OSError:
            continue
    return next((folder.parent for folder in folders if folder.name.lower() == "meshes"), None)


def beside_parts(relative):
    """The parts of a mesh's Data-relative path (``mesh_path``) below ``geometries``: where it
    lies relative to a NIF it is beside."""
    parts = [part for part in str(relative).replace("/", "\\").split("\\") if part]
    return parts[1:] if parts and parts[0].lower() == "geometries" else parts


def nif_folder(nif_path):
    """The folder of a loose NIF (the .mesh files beside it), else None (none, or archived)."""
    if nif_path is None or split_archive_path(nif_path) is not None:
        return None
    return Path(nif_path).resolve().parent


class MeshSource:
    """Finds and reads the .mesh files a NIF names: beside it, then in its Data folder, then in
    ``data_folders`` (loose, then archived)."""

    def __init__(self, nif_path=None, data_folders=(), cache_folder=None):
        own = nif_data_folder(nif_path)
        folders = ([own] if own is not None else []) + [Path(folder) for folder in data_folders if folder]
        self.files = DataFiles(folders, cache_folder)
        self.folder = nif_folder(nif_path)
        self.beside = TextureFinder([self.folder])
        self.found_beside = set()  # where the meshes found beside the NIF are

    def read(self, name):
        """(MeshData, where it was found) of the mesh ``name`` (as a BSGeometry stores it)."""
        relative = mesh_path(name)
        found = self.beside.find_parts([part.lower() for part in beside_parts(relative)])
        if found is not None:
            self.found_beside.add(str(found))
            found = found.read_bytes(), str(found)
        else:
            found = self.files.read(relative, "geometries")
        if found is None:
            beside = "" if self.folder is None else f" nor beside the NIF in {self.folder}"
            if not self.files.folders:
                raise FormatError(f"{relative} cannot be looked for in a Data folder: none is known (the NIF is not in "
                                  f"one){beside}")
            searched = ", ".join(str(folder) for folder in self.files.folders)
            raise FormatError(f"{relative} is in none of the Data folders {searched} (loose or archived){beside}")
        data, where = found
        return MeshData.from_bytes(data, where), where


def skin_bone_count(nif, shape):
    """The bones of a BSGeometry's skin (SkinAttach names, else BSSkin::BoneData entries), or None."""
    skin = nif.block_at(shape.skin_instance, BSSkinInstance)
    if skin is None:
        return None
    names = [nif.block_at(ref, SkinAttach) for ref in shape.extra_data]
    names = [block for block in names if block is not None]
    if names:
        return len(names[0].bones)
    data = nif.block_at(skin.data, BSSkinBoneData)
    return None if data is None else len(data.bones)


def lod_mesh(nif, index, number, source=None):
    """The MeshData of LOD slot ``number`` of the BSGeometry block ``index``; FormatError naming
    the NIF, the block, the LOD and the mesh when it cannot be had."""
    shape = nif.block_at(index, BSGeometry)
    slot = shape.meshes[number] if shape is not None else None
    if slot is None:
        raise FormatError(f"LOD {number} holds no mesh", path=nif.path, block=index, block_type="BSGeometry")
    what = f"LOD {number} ({'inline mesh' if slot.data is not None else 'mesh ' + slot.name})"
    try:
        if slot.data is not None:
            mesh = slot.data
        else:
            mesh, _ = (source or MeshSource()).read(slot.name)
        bones = skin_bone_count(nif, shape)
        if bones is not None:
            mesh.check_bones(bones)
    except FormatError as error:
        raise FormatError(f"{what}: {error}", path=nif.path, block=index, block_type="BSGeometry") from None
    return mesh


def lod_meshes(nif, source=None):
    """(block index, LOD number, MeshData or the FormatError saying why not) of every used LOD
    slot of every BSGeometry: a caller warns about the failed ones and goes on."""
    found = []
    for index, shape in nif.blocks_of(BSGeometry):
        for number, _ in shape.lods:
            try:
                found.append((index, number, lod_mesh(nif, index, number, source)))
            except FormatError as error:
                found.append((index, number, error))
    return found
