"""Where an external cell's records keep their geometry: the .csg files the import read them
from, the plugin they name, and the ``<Plugin> - Geometry.csg`` edited and new records are
written to. Knows bpy objects and core objects, never file bytes."""

from pathlib import Path

from ...core.errors import FormatError
from ...core.precombined.csg import GeometryFile, GeometryWriter, record_bytes
from ...core.precombined.names import bscrc32, geometry_hash
from .instancing import instancer_source
from .. import schema


class GeometryTarget:
    """Where edited and new records of external cells go, as the Creation Kit puts them:
    ``<Plugin> - Geometry.csg`` beside the exported cell, records hashed by
    ``<plugin> - geometry``. It starts from the file already there, else from the .csg the
    import read when its name is the same, so the records that stay keep their offsets."""

    def __init__(self, folder, plugin, known_files=()):
        self.path = Path(folder) / f"{plugin} - Geometry.csg"
        self.hash = geometry_hash(plugin)
        self.known_files = known_files
        self.writer = None

    def _start(self):
        candidates = [self.path] + [Path(p) for p in self.known_files if bscrc32(Path(p).stem) == self.hash]
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

    def write(self):
        if self.writer is not None:
            self.writer.write(self.path)
            return self.path
        return None


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
