"""One mesh encoded as a precombined record: its packed vertices (those the import read, kept
when the mesh still holds what they decode to, else encoded anew), its LODs' triangles, and the
72-byte placement of each copy. What a record is made from (RecordSource) and what the writer
knows of it beside the core record (ExportedRecord) are declared here. Knows bpy meshes and core
objects, never file bytes."""

from dataclasses import dataclass

import numpy as np

from ...core.errors import FormatError
from ...core.nif import vertex_format as vf
from ...core.nif.blocks.precombined import EXTERNAL, PackedGeomRecord, instance_dtype
from ...core.nif.packed_vertices import bounding_sphere
from ...core.precombined.csg import GeometryFiles
from ...core.stream import WriteStream
from ...core.transforms import similarity
from ..mesh_read import mesh_arrays
from .. import schema

DEFAULT_DESC = vf.build_desc(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, False)
LITTLE = WriteStream()


@dataclass(frozen=True)
class RecordSource:
    """What one record of an exported cell is made from: a mesh (a record's imported from the
    cell, or a new one), or for a placeholder (copies whose record was imported without its
    geometry) ``mesh`` None and the record it stands for: ``index`` in block ``block`` of the
    cell file."""

    mesh: object = None
    block: int = None
    index: int = None

    @property
    def placeholder(self):
        return self.mesh is None

    def order(self):
        """Where the record goes in its block: imported records in their order, then new ones by name."""
        if self.mesh is None:
            return (self.index, "")
        return (self.mesh.get(schema.PRECOMBINED_OBJECT, 1 << 30), self.mesh.name)


@dataclass
class ExportedRecord:
    """A record being written: the core record and its source, and what the writer knows of it
    beside them. ``kept``: its vertices and triangles are those the import read (copies that did
    not move then keep their stored placement bytes). ``entry``: the (filename hash, data offset)
    of its geometry in a .csg, when not where the import found it (a placeholder's, as stored;
    an edited record's, where it was written). ``sphere``: a placeholder's bound sphere in record
    space (centre, radius), for its copies that moved."""

    record: PackedGeomRecord
    source: RecordSource
    kept: bool = False
    entry: tuple = None
    sphere: tuple = None


class StoredGeometry:
    """What the import read for each record (packed vertices and every LOD's triangles), read
    again at export from the cell file and its .csg. It is not kept on the meshes: Blender copies
    a mesh's properties into the evaluated mesh of every object using it (270 KB a copy)."""

    def __init__(self, template):
        self.template = template
        self.files = GeometryFiles()

    def of(self, mesh, template_block):
        """(vertex desc, vertex array, triangles, the file's record) of an imported mesh, else None."""
        index = mesh.get(schema.PRECOMBINED_OBJECT)
        if self.template is None or template_block is None or index is None:
            return None
        if mesh.get(schema.PRECOMBINED_CELL) != str(self.template.path or ""):
            return None
        if not 0 <= index < len(template_block.records):
            return None
        record = template_block.records[index]
        if template_block.layout != EXTERNAL:
            return record.vertex_desc, record.vertex_data, record.triangles, record
        path = mesh.get(schema.PRECOMBINED_GEOMETRY_FILE)
        if not path:
            return None
        entry = template_block.objects[index]
        try:
            desc, data, triangles = self.files.open(path).record_geometry(
                int(entry["data_offset"]), record.vertex_desc, record.num_vertices, record.lod_counts
            )
        except (OSError, FormatError) as error:
            # Without it an untouched record cannot be told from an edited one.
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise FormatError(f"mesh {mesh.name!r} came from {path}, which cannot be read ({reason}): "
                              f"export needs it to write the record back") from None
        return desc, data, triangles, record

    def close(self):
        self.files.close()


def kept_vertices(stored, positions, uvs, normals, used):
    """The stored packed vertices when the mesh still holds what they decode to, else None."""
    if stored is None:
        return None, None
    desc, data = stored[0], stored[1]
    full = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    dtype = vf.vertex_dtype(desc, full)
    raw = np.frombuffer(data.tobytes(), np.uint8)
    if len(raw) != dtype.itemsize * len(positions):
        return None, None
    record = PackedGeomRecord(inline=True)
    record.vertex_desc, record.full_precision = desc, full
    record.vertex_data = np.frombuffer(bytearray(raw), dtype)
    stored_type = np.float32 if full else np.float16
    if not np.array_equal(record.positions, positions.astype(stored_type).astype(np.float32)):
        return None, None
    if uvs is not None and record.uvs is not None and not np.allclose(record.uvs[used], uvs[used], atol=1e-3):
        return None, None
    if record.normals is not None and used.any():
        stored_normals = record.normals[used]
        lengths = np.linalg.norm(stored_normals, axis=1, keepdims=True)
        comparable = lengths[:, 0] > 0.5  # quantised near-zero normals have no direction to keep
        stored_normals = stored_normals[comparable] / lengths[comparable]
        if len(stored_normals) and np.abs(stored_normals - normals[used][comparable]).max() > 0.05:
            return None, None
    return desc, record.vertex_data


def encode_vertices(record, desc, arrays):
    """Fill a new buffer of layout ``desc`` with every attribute it has and the mesh gives."""
    record.vertex_desc = desc
    record.full_precision = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    record.positions = arrays["positions"]
    flags = vf.flags_of(desc)
    if flags & vf.UV and arrays["uvs"] is not None:
        record.uvs = arrays["uvs"]
    if flags & vf.NORMAL:
        record.normals = arrays["normals"]
    if flags & vf.TANGENT and arrays["tangents"] is not None:
        record.tangents = arrays["tangents"]
        record.bitangents = arrays["bitangents"]
    if flags & vf.COLORS:
        record.colors = arrays["colors"] if arrays["colors"] is not None else np.ones((len(arrays["positions"]), 4))


def record_from_mesh(source, scale, default_desc=DEFAULT_DESC, stored=None):
    """The ExportedRecord of a RecordSource's mesh (``stored``: what StoredGeometry.of gives for it)."""
    mesh = source.mesh
    arrays = mesh_arrays(mesh, scale)
    positions, triangles, uvs, normals, used = (arrays[k] for k in ("positions", "triangles", "uvs", "normals", "used"))
    if len(positions) > 0xFFFF:
        raise FormatError(f"mesh {mesh.name!r} has {len(positions)} vertices: a record holds at most 65535")
    record = PackedGeomRecord(inline=True)
    desc, data = kept_vertices(stored, positions, uvs, normals, used)
    if data is not None:
        record.vertex_desc, record.vertex_data = desc, data
        record.full_precision = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    else:
        desc_text = mesh.get(schema.PRECOMBINED_VERTEX_DESC)
        encode_vertices(record, int(desc_text, 16) if desc_text else default_desc, arrays)
    counts = None
    if stored is not None:
        all_triangles, stored_record = np.asarray(stored[2]).reshape(-1, 3), stored[3]
        counts, offsets = stored_record.lod_counts, stored_record.lod_offsets
        lod = int(mesh.get(schema.PRECOMBINED_LOD, 0))
        start = int(offsets[lod]) // 3
        shown = all_triangles[start : start + int(counts[lod])]
        if len(shown) == len(triangles) and np.array_equal(np.sort(shown, axis=None), np.sort(triangles, axis=None)):
            record.triangles = all_triangles.astype(np.uint16)
            record.lod_counts = tuple(int(c) for c in counts)
            record.lod_offsets = tuple(int(o) for o in offsets)
            record.lod_levels = int(stored_record.lod_levels)
            return ExportedRecord(record, source, kept=data is not None)
    # New or edited faces go to every LOD that had triangles (all three for a new mesh); the
    # buffer holds LOD0, LOD1 and LOD2 in turn.
    had = [int(c) > 0 for c in counts] if counts is not None and any(int(c) for c in counts) else [True] * 3
    record.lod_counts = tuple(len(triangles) if present else 0 for present in had)
    record.lod_offsets = tuple(3 * sum(record.lod_counts[:lod]) for lod in range(3))
    record.triangles = np.concatenate([triangles] * sum(had)).astype(np.uint16)
    return ExportedRecord(record, source)


def placeholder_record(source, template_block):
    """The ExportedRecord of a placeholder: the header of the record it stands for, as the file has it."""
    template_record = template_block.records[source.index]
    record = PackedGeomRecord(inline=False)
    for name in ("num_vertices", "lod_levels", "lod_counts", "lod_offsets", "vertex_desc"):
        setattr(record, name, getattr(template_record, name))
    exported = ExportedRecord(record, source, kept=True, sphere=((0.0, 0.0, 0.0), 0.0))
    if template_block.shared:
        entry = template_block.objects[source.index]
        exported.entry = (int(entry["filename_hash"]), int(entry["data_offset"]))
    first = template_record.instances[0] if len(template_record.instances) else None
    if first is not None:  # the bound sphere in record space, for copies that moved
        rotation, scale = np.asarray(first["rotation"], np.float64), float(first["scale"]) or 1.0
        center = rotation.T @ (np.asarray(first["bound_center"], np.float64) - first["translation"]) / scale
        exported.sphere = (center, float(first["bound_radius"]) / scale)
    return exported


def placement(name, world, raw, grayscale, scale, exported):
    """The 72-byte placement of one copy of ``exported`` (an ExportedRecord): kept as stored
    (``raw``) when it has not moved. The record's mesh holds the scale (``scale`` Blender units
    per game unit), so only the position is scaled back."""
    matrix = np.array(world, np.float64)
    matrix[:3, 3] /= scale
    rotation, size = similarity(matrix[:3, :3], name, "a precombined instance")
    translation = matrix[:3, 3]
    out = np.zeros(1, instance_dtype(LITTLE))[0]
    if raw is not None and len(raw) == 18 and exported.kept:  # edited geometry: new bounds
        kept = np.array(raw, np.float32)
        if (
            np.allclose(kept[1:10].reshape(3, 3), rotation, atol=1e-5)
            and np.allclose(kept[10:13], translation, rtol=1e-6, atol=1e-3)
            and np.isclose(kept[13], size, rtol=1e-6)
        ):
            return np.frombuffer(kept.tobytes(), out.dtype)[0]
    center, radius = exported.sphere or bounding_sphere(exported.record.positions)
    out["grayscale_scale"] = grayscale
    out["rotation"] = rotation
    out["translation"] = translation
    out["scale"] = size
    out["bound_center"] = translation + rotation @ (size * np.array(center))
    out["bound_radius"] = size * radius
    return out
