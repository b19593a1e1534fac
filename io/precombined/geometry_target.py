"""Where an external cell's records keep their geometry: the .csg files the import read them
from, the plugin they name, the ``<Plugin> - Geometry.csg`` edited and new records are written
to, and the ``<Plugin>.cdx`` indexing what the plugin's cells need, beside it. Knows bpy objects
and core objects, never file bytes."""

from pathlib import Path

from ...core.archives.data import path_in_folder
from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.plugin.load_order import GAME_MASTERS
from ...core.precombined import cdx
from ...core.plugin import Plugin
from ...core.plugin.references import find_cell_plugin, geometry_hashes
from ...core.precombined.cell_files import data_folder, mesh_file_name, read_sibling
from ...core.precombined.csg import GeometryFile, GeometryWriter, record_bytes
from ...core.precombined.names import KNOWN_PLUGINS, bscrc32, geometry_hash
from ...core.precombined.previs import defining_file, find_previs
from .instancing import instancer_source
from .. import schema

GEOMETRY_SUFFIX = " - geometry"


class GeometryTarget:
    """Where edited and new records of external cells go, as the Creation Kit puts them:
    ``<Plugin> - Geometry.csg`` beside the exported cell, records hashed by
    ``<plugin> - geometry``. It starts from the file already there, else from the .csg the
    import read when its name is the same, else from the one of that name in the user's Data
    ``folders`` (the preferences' or ``--data``), so the records that stay keep their offsets."""

    def __init__(self, folder, plugin, known_files=(), folders=()):
        self.path = Path(folder) / f"{plugin} - Geometry.csg"
        self.hash = geometry_hash(plugin)
        self.known_files = known_files
        self.folders = folders
        self.writer = None

    def _start(self):
        candidates = [self.path] + [Path(p) for p in self.known_files if bscrc32(Path(p).stem) == self.hash]
        candidates += [path_in_folder(Path(f), self.path.name) for f in self.folders]
        for candidate in candidates:
            if candidate.is_file():
                with GeometryFile(candidate) as source:
                    return GeometryWriter(source)
        return GeometryWriter()

    def place(self, record):
        """Store the record's geometry; its objects entry (hash, data offset)."""
        if self.writer is None:
            self.writer = self._start()
        data = record_bytes(record.vertex_data, record.triangles)
        offset = self.writer.add(record.vertex_desc, record.vertex_count, 3 * len(record.triangles), data)
        return self.hash, offset

    def to_bytes(self):
        """The .csg to write, or None when no record was placed."""
        return self.writer.to_bytes() if self.writer is not None else None


class IndexTarget:
    """``<Plugin>.cdx`` beside ``<Plugin> - Geometry.csg``, the rows of a written cell made anew
    (core.precombined.cdx.rebuild_cell). It starts from the file already there, else from the
    .cdx beside the .csg the import read when it names the same plugin (or ``given``), else the
    one of the user's Data ``folders`` (the preferences' or ``--data``), else, for another plugin
    (a patch taking a cell over), from that file's rows of the cell alone, else from nothing,
    except for the game's own plugins: a loose index of one cell would hide the game's own. The
    cell's plugin and previs file are looked up in ``folders`` too."""

    def __init__(self, folder, plugin, known_files=(), given=None, folders=()):
        self.path = Path(folder) / f"{plugin}.cdx"
        self.plugin = plugin
        self.folders = list(folders)
        self.sources = [Path(given)] if given else []
        self.sources += [Path(f).with_name(Path(f).stem[: -len(GEOMETRY_SUFFIX)] + ".cdx") for f in known_files
                         if Path(f).stem.lower().endswith(GEOMETRY_SUFFIX)]
        self.sources += [path_in_folder(Path(f), self.path.name) for f in self.folders]

    def _start(self, key_of):
        """The CdxFile to start from, or None."""
        if self.path.is_file():
            return cdx.CdxFile.read(self.path)
        for source in self.sources:
            if source.is_file():
                found = cdx.CdxFile.read(source)
                if source.stem.lower() == self.plugin.lower():
                    return found
                key = key_of(found)
                return cdx.CdxFile(found.rows[found.cell_mask(key)] if key is not None else None)
        return None

    def update(self, cell_id, mesh_id, nif, places):
        """(bytes of the .cdx with the cell's rows made anew, messages); bytes None when it is
        not written. ``nif`` is the written mesh, ``places`` paths whose folders hold the cell's
        other meshes, searched in turn."""
        found = self._start(lambda f: f.key_of_mesh(cell_id, mesh_id))
        messages = []
        if found is None:
            if self.plugin.lower() in {p.lower() for p in KNOWN_PLUGINS + tuple(Path(m).stem for m in GAME_MASTERS)}:
                return None, [f"{self.path.name} not written: the game's own index was not found to start from "
                              f"(a loose one holding this cell alone would hide it); export with a patch"]
            found = cdx.CdxFile()
            messages.append(f"{self.path.name}: no index of the cell was found to start from (none beside the .csg the "
                            f"import read): it lists this mesh's resources alone")
        key = found.key_of_mesh(cell_id, mesh_id) or (cell_id & 0xFFFFFF, 0)
        meshes = {mesh: None for mesh in found.meshes_of(key)}
        for mesh in meshes:
            if mesh != mesh_id:
                data, where = read_sibling(places, mesh_file_name(cell_id, mesh))
                meshes[mesh] = NifFile.from_bytes(bytearray(data), path=where) if data is not None else None
        meshes[mesh_id] = nif
        visibility = None
        if not found.has_previs(key):
            visibility = self._visibility(key, cell_id, nif, places)
            if visibility is None:
                messages.append(f"{self.path.name}: no previs file of cell {cell_id & 0xFFFFFF:08X} "
                                f"(vis\\<master>\\{cell_id & 0xFFFFFF:08X}.uvd) was found: its row says it has none")
        rebuilt = cdx.rebuild_cell(found, key, cell_id & 0xFFFFFF, meshes, visibility)
        if rebuilt.missing:
            names = ", ".join(mesh_file_name(cell_id, m) for m in rebuilt.missing[:3])
            more = f" and {len(rebuilt.missing) - 3} more" if len(rebuilt.missing) > 3 else ""
            messages.append(f"{self.path.name}: {len(rebuilt.missing)} meshes of the cell are not at hand ({names}{more}): "
                            f"their rows are kept, {rebuilt.kept} rows the written mesh may no longer need with them")
        found.replace_cell(key, rebuilt.rows)
        return found.to_bytes(), messages

    def _visibility(self, key, cell_id, nif, places):
        """The 0x87 row of a cell whose index has no previs row yet, when its previs file is in
        the Data folders of the written file, of ``places`` and the user's, loose or archived;
        else None. The master is the file defining the cell, as the cell's plugin (found there)
        says."""
        folders = list(dict.fromkeys([*(data_folder(p) for p in [self.path, *places] if p), *map(Path, self.folders)]))
        hashes = geometry_hashes(nif)
        found = [find_cell_plugin(p, hashes) for p in places if p] + [find_cell_plugin(None, hashes, f) for f in self.folders]
        plugin_path = next(filter(None, found), None)
        master = None
        if plugin_path is not None:
            with Plugin(plugin_path) as plugin:
                master = defining_file(plugin, cell_id)
        found = find_previs(folders, cell_id, master)
        return cdx.visibility_row(key, cell_id, found[0]) if found is not None else None


def to_external(exported, geometry):
    """Records (io.precombined.records.ExportedRecord) written as headers only: untouched ones
    keep their geometry where the import found it, edited and new ones get theirs written to
    ``geometry``."""
    for made in exported:
        made.record.inline = False
        mesh = made.source.mesh
        if made.source.placeholder:
            continue
        if made.kept:
            made.record.vertex_desc = int(mesh.get(schema.PRECOMBINED_RECORD_DESC, mesh[schema.PRECOMBINED_VERTEX_DESC]), 16)
        elif geometry is None:
            raise FormatError(f"the geometry of {mesh.name!r} was edited: its cell keeps geometry in a .csg file, which needs a plugin name")
        else:
            made.entry = geometry.place(made.record)


def geometry_files(objects):
    """The .csg files the objects' records were read from."""
    meshes = {o.data for o in objects if o.type == "MESH" and o.data is not None}
    meshes |= {source.data for o in objects if (source := instancer_source(o)) is not None}
    return sorted({str(m[schema.PRECOMBINED_GEOMETRY_FILE]) for m in meshes if m.get(schema.PRECOMBINED_GEOMETRY_FILE)})


def default_plugin(files, path):
    """The plugin whose geometry file the records came from, else the exported file's stem."""
    for name in files:
        stem = Path(name).stem
        if stem.lower().endswith(" - geometry"):
            return stem[: -len(" - geometry")]
    return Path(path).stem
