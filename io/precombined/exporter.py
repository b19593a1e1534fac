"""Blender objects sharing meshes back into precombined blocks: each mesh a record, each object
one of its placed instances, each block the records its import made of it. Data an untouched
import kept (packed vertices, every LOD, raw placements, the records' objects entries) is
reused as stored, so such a cell writes back byte for byte; anything edited is encoded anew.
Knows bpy and core objects, never file bytes."""

from pathlib import Path

import bpy
import numpy as np

from ...core.archives.data import read_path
from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.nif import vertex_format as vf
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.precombined import BAKED, EXTERNAL, INLINE, BSPackedCombinedGeomDataExtra, PackedGeomRecord, instance_dtype
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.nif.header import Header
from ...core.nif.packed_vertices import bounding_sphere
from ...core.precombined.csg import GeometryFile, GeometryWriter, record_bytes
from ...core.precombined.names import bscrc32, geometry_hash
from ...core.stream import WriteStream
from ...core.transforms import similarity
from .instancing import instancer_matrices, instancer_source
from ..havok import collision_export
from ..collection_objects import objects_in
from ..integers import to_uint32
from ..mesh_read import mesh_arrays
from ..nif.exporter import NifExporter
from ..nif.source import SCALE_KEY, import_scale

DEFAULT_DESC = vf.build_desc(vf.VERTEX | vf.UV | vf.NORMAL | vf.TANGENT, False)
VANILLA_GEOMETRY_HASH = 0xDDF19A67  # "fallout4 - geometry"
LITTLE = WriteStream()
SHARED_TYPE, BAKED_TYPE = "BSPackedCombinedSharedGeomDataExtra", "BSPackedCombinedGeomDataExtra"


class StoredGeometry:
    """What the import read for each record (packed vertices and every LOD's triangles), read
    again at export from the cell file and its .csg. It is not kept on the meshes: Blender copies
    a mesh's properties into the evaluated mesh of every object using it (270 KB a copy)."""

    def __init__(self, template):
        self.template = template
        self.files = {}

    def of(self, mesh, template_block):
        """(vertex desc, vertex array, triangles, the file's record) of an imported mesh, else None."""
        index = mesh.get("precombined_object")
        if self.template is None or template_block is None or index is None or mesh.get("precombined_cell") != str(self.template.path or ""):
            return None
        if not 0 <= index < len(template_block.records):
            return None
        record = template_block.records[index]
        if template_block.layout != EXTERNAL:
            return record.vertex_desc, record.vertex_data, record.triangles, record
        path = mesh.get("precombined_geometry_file")
        if not path:
            return None
        entry = template_block.objects[index]
        try:
            if path not in self.files:
                self.files[path] = GeometryFile(path)
            desc, data, triangles = self.files[path].record_geometry(
                int(entry["data_offset"]), record.vertex_desc, record.num_vertices, record.lod_counts
            )
        except (OSError, FormatError) as error:
            # Without it an untouched record cannot be told from an edited one.
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise FormatError(f"mesh {mesh.name!r} came from {path}, which cannot be read ({reason}): "
                              f"export needs it to write the record back") from None
        return desc, data, triangles, record

    def close(self):
        for file in self.files.values():
            file.close()
        self.files.clear()


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


def record_from_mesh(mesh, scale, default_desc=DEFAULT_DESC, stored=None):
    """The record of a mesh; ``record.kept`` says its vertices and triangles are the imported
    ones (``stored``: what StoredGeometry.of gives for it)."""
    arrays = mesh_arrays(mesh, scale)
    positions, triangles, uvs, normals, used = (arrays[k] for k in ("positions", "triangles", "uvs", "normals", "used"))
    if len(positions) > 0xFFFF:
        raise FormatError(f"mesh {mesh.name!r} has {len(positions)} vertices: a record holds at most 65535")
    record = PackedGeomRecord(inline=True)
    record.kept = False
    desc, data = kept_vertices(stored, positions, uvs, normals, used)
    if data is not None:
        record.vertex_desc, record.vertex_data = desc, data
        record.full_precision = bool(vf.flags_of(desc) & vf.FULL_PRECISION)
    else:
        desc_text = mesh.get("precombined_vertex_desc")
        encode_vertices(record, int(desc_text, 16) if desc_text else default_desc, arrays)
    counts = None
    if stored is not None:
        all_triangles, source = np.asarray(stored[2]).reshape(-1, 3), stored[3]
        counts, offsets, lod = source.lod_counts, source.lod_offsets, int(mesh.get("precombined_lod", 0))
        start = int(offsets[lod]) // 3
        shown = all_triangles[start : start + int(counts[lod])]
        if len(shown) == len(triangles) and np.array_equal(np.sort(shown, axis=None), np.sort(triangles, axis=None)):
            record.triangles = all_triangles.astype(np.uint16)
            record.lod_counts = tuple(int(c) for c in counts)
            record.lod_offsets = tuple(int(o) for o in offsets)
            record.lod_levels = int(source.lod_levels)
            record.kept = data is not None
            return record
    # New or edited faces go to every LOD that had triangles (all three for a new mesh); the
    # buffer holds LOD0, LOD1 and LOD2 in turn.
    had = [int(c) > 0 for c in counts] if counts is not None and any(int(c) for c in counts) else [True] * 3
    record.lod_counts = tuple(len(triangles) if present else 0 for present in had)
    record.lod_offsets = tuple(3 * sum(record.lod_counts[:lod]) for lod in range(3))
    record.triangles = np.concatenate([triangles] * sum(had)).astype(np.uint16)
    return record


def placeholder_record(template_record):
    """A record whose geometry was not imported (no .csg): its header as the file has it."""
    record = PackedGeomRecord(inline=False)
    for name in ("num_vertices", "lod_levels", "lod_counts", "lod_offsets", "vertex_desc"):
        setattr(record, name, getattr(template_record, name))
    record.kept = True
    first = template_record.instances[0] if len(template_record.instances) else None
    if first is not None:  # the bound sphere in record space, for copies that moved
        rotation, scale = np.asarray(first["rotation"], np.float64), float(first["scale"]) or 1.0
        center = rotation.T @ (np.asarray(first["bound_center"], np.float64) - first["translation"]) / scale
        record.sphere = (center, float(first["bound_radius"]) / scale)
    else:
        record.sphere = ((0.0, 0.0, 0.0), 0.0)
    return record


def placement(name, world, raw, grayscale, scale, record):
    """The 72-byte placement of one copy: kept as stored (``raw``) when it has not moved. The
    record's mesh holds the scale (``scale`` Blender units per game unit), so only the position
    is scaled back."""
    matrix = np.array(world, np.float64)
    matrix[:3, 3] /= scale
    rotation, size = similarity(matrix[:3, :3], name, "a precombined instance")
    translation = matrix[:3, 3]
    out = np.zeros(1, instance_dtype(LITTLE))[0]
    if raw is not None and len(raw) == 18 and getattr(record, "kept", True):  # edited geometry: new bounds
        kept = np.array(raw, np.float32)
        if (
            np.allclose(kept[1:10].reshape(3, 3), rotation, atol=1e-5)
            and np.allclose(kept[10:13], translation, rtol=1e-6, atol=1e-3)
            and np.isclose(kept[13], size, rtol=1e-6)
        ):
            return np.frombuffer(kept.tobytes(), out.dtype)[0]
    center, radius = getattr(record, "sphere", None) or bounding_sphere(record.positions)
    out["grayscale_scale"] = grayscale
    out["rotation"] = rotation
    out["translation"] = translation
    out["scale"] = size
    out["bound_center"] = translation + rotation @ (size * np.array(center))
    out["bound_radius"] = size * radius
    return out


def copies_of(obj):
    """(mesh, [(name, world matrix, raw placement, grayscale), ...], sort key) of an object: one
    copy for an ordinary object or a placeholder (mesh None), every point of a geometry-nodes
    instancer."""
    source = instancer_source(obj)
    if source is not None:
        stored = obj.data.get("precombined_instances_raw")
        raws = np.reshape(np.array(stored, np.float64), (-1, 18)) if stored is not None else []
        matrices = instancer_matrices(obj)
        copies = [
            (f"{obj.name} #{k}", m, raws[k] if k < len(raws) else None, float(raws[k][0]) if k < len(raws) else 1.0)
            for k, m in enumerate(matrices)
        ]
        return source.data, copies, (obj.get("precombined_object", 1 << 30), 0)
    copy = (obj.name, obj.matrix_world, obj.get("precombined_instance_raw"), float(obj.get("precombined_grayscale_scale", 1.0)))
    mesh = obj.data if obj.type == "MESH" else None
    return mesh, [copy], (obj.get("precombined_object", 1 << 30), obj.get("precombined_instance", 1 << 30))


MARK = "precombined"  # set by the panel's operator: a new object to export as a record
IGNORED_TYPES = ("CAMERA", "LIGHT", "LIGHT_PROBE", "SPEAKER", "EMPTY")


def is_record_object(obj):
    """Came from a cell (an instance, instancer or placeholder) or marked precombined by the user."""
    return "precombined_object" in obj or bool(obj.get(MARK))


def split_objects(objects):
    """(the objects that make records, the other objects a cell cannot hold). Objects the
    general import made of a cell file (its nodes, shapes, collision) are written from the file
    and the hidden sources of geometry-nodes instancers from their instancers: neither is refused."""
    cells = set(cells_of(objects))
    records, refused = [], []
    for obj in objects:
        if is_record_object(obj):
            records.append(obj)
        elif "precombined_source" in obj or any(c.get("nif_path") in cells for c in obj.users_collection):
            continue
        elif obj.type not in IGNORED_TYPES:
            refused.append(obj)
    return records, refused


def refuse(refused):
    names = ", ".join(repr(obj.name) for obj in refused[:10]) + (f" and {len(refused) - 10} more" if len(refused) > 10 else "")
    raise FormatError(
        f"{names} {'is' if len(refused) == 1 else 'are'} not part of a precombined cell: export "
        f"{'it' if len(refused) == 1 else 'them'} as a NIF, or mark {'it' if len(refused) == 1 else 'them'} "
        f"precombined (Object properties > Precombined)"
    )


def is_placeholder(obj):
    """An empty standing for a copy whose geometry was not imported."""
    return obj.type == "EMPTY" and "precombined_object" in obj and "precombined_block" in obj


def cell_groups(objects):
    """{block index or None (new): {mesh or (block, record) for placeholders: [(key, name, copies)]}}."""
    blocks = {}
    for obj in objects:
        if not (obj.type == "MESH" and obj.data is not None or is_placeholder(obj)):
            continue
        mesh, copies, key = copies_of(obj)
        if mesh is None:
            block, holder = obj["precombined_block"], ("placeholder", obj["precombined_block"], obj["precombined_object"])
        else:
            block, holder = mesh.get("precombined_block"), mesh
        blocks.setdefault(block, {}).setdefault(holder, []).append((key, obj.name, copies))
    if not blocks:
        raise FormatError("no mesh objects to export: select the instances of a precombined cell")
    return blocks


def block_records(groups, scale, template_block=None, default_desc=DEFAULT_DESC, stored=None):
    """(records, holders) of one block: imported records in their order, then new ones by name
    (``stored``: the StoredGeometry of the template the block comes from)."""

    def order(item):
        holder = item[0]
        return (holder[2], "") if isinstance(holder, tuple) else (holder.get("precombined_object", 1 << 30), holder.name)

    records, holders = [], []
    for holder, entries in sorted(groups.items(), key=order):
        if isinstance(holder, tuple):
            if template_block is None or not holder[2] < len(template_block.records):
                continue  # a placeholder of a file that is gone: nothing to write its record from
            record = placeholder_record(template_block.records[holder[2]])
            if template_block.shared:
                entry = template_block.objects[holder[2]]
                record.entry = (int(entry["filename_hash"]), int(entry["data_offset"]))
        else:
            kept = stored.of(holder, template_block) if stored is not None else None
            record = record_from_mesh(holder, scale, default_desc, kept)
        copies = [copy for _, _, group in sorted(entries, key=lambda e: (e[0], e[1])) for copy in group]
        record.instances = np.array([placement(*copy, scale, record) for copy in copies], instance_dtype(LITTLE))
        records.append(record)
        holders.append(holder)
    return records, holders


def record_counts(records):
    """A block's vertex and triangle totals as the Creation Kit writes them: every placed copy
    counts (checked on the corpus cells)."""
    vertices = sum((r.vertex_count or r.num_vertices) * len(r.instances) for r in records)
    triangles = sum(sum(r.lod_counts) * len(r.instances) for r in records)
    return vertices, triangles


def signature(records):
    return [((r.vertex_count or r.num_vertices), tuple(r.lod_counts), len(r.instances)) for r in records]


def objects_entries(records, holders):
    """The shared block's (filename hash, data offset) per record."""
    entries, offset = [], 0
    for record, holder in zip(records, holders):
        if hasattr(record, "entry"):  # a placeholder's, or where an edited record was written
            entries.append(record.entry)
            continue
        known = holder.get("precombined_hash")
        entries.append((int(known, 16) if known else VANILLA_GEOMETRY_HASH, to_uint32(holder.get("precombined_offset", offset))))
        offset += record.geometry_size()
    return np.array(entries, [("filename_hash", "<u4"), ("data_offset", "<u4")])


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


def to_external(records, holders, geometry):
    """Records written as headers only: untouched ones keep their geometry where the import
    found it, edited and new ones get theirs written to ``geometry``."""
    for record, holder in zip(records, holders):
        record.inline = False
        if isinstance(holder, tuple):
            continue
        if record.kept:
            record.vertex_desc = int(holder.get("precombined_record_desc", holder["precombined_vertex_desc"]), 16)
        elif geometry is None:
            raise FormatError(f"the geometry of {holder.name!r} was edited: its cell keeps geometry in a .csg file, which needs a plugin name")
        else:
            record.entry = geometry.place(record)


def build_block(records, holders, layout, template_block=None, geometry=None):
    block = BSPackedCombinedGeomDataExtra(BAKED_TYPE if layout == BAKED else SHARED_TYPE, records=records, layout=layout)
    if layout == EXTERNAL:
        to_external(records, holders, geometry)
    elif any(isinstance(holder, tuple) for holder in holders):
        raise FormatError(
            f"{sum(isinstance(h, tuple) for h in holders)} records were imported without geometry (no .csg): "
            f"the {layout} layout needs every record's geometry"
        )
    if template_block is not None:
        block.name = template_block.name
        block.vertex_desc = template_block.vertex_desc
        block.unknown_flags_1, block.unknown_flags_2 = template_block.unknown_flags_1, template_block.unknown_flags_2
    else:
        block.vertex_desc = records[0].vertex_desc if records else DEFAULT_DESC
    if template_block is not None and signature(records) == signature(template_block.records):
        block.num_vertices, block.num_triangles = template_block.num_vertices, template_block.num_triangles
    else:
        block.num_vertices, block.num_triangles = record_counts(records)
    if layout != BAKED:
        block.objects = objects_entries(records, holders)
    return block


def shape_for_material(template, mesh):
    """The block of the cell's shape whose shader the mesh's material came from, or None."""
    for material in mesh.materials if mesh is not None else ():
        shader = dict(material.get("nif_blocks", {})).get("shader") if material is not None else None
        if shader is None or material.get("nif_file") != str(template.path or ""):
            continue
        for _, shape in template.blocks_of(BSTriShape):
            if shape.shader_property == shader:
                for ref in np.asarray(shape.extra_data).tolist():
                    if 0 <= ref < len(template.blocks) and isinstance(template.blocks[ref], BSPackedCombinedGeomDataExtra):
                        return ref
    return None


def owner_of(template, block_index):
    for _, shape in template.blocks_of(BSTriShape):
        if block_index in np.asarray(shape.extra_data).tolist():
            return shape
    return None


def build_cell(objects, *, layout=None, scale=1.0, template=None, geometry=None):
    """A NifFile holding the objects as a precombined cell. With ``template`` (the imported
    file) every block keeps its own records and layout (``layout`` None) and every other block
    is kept; without one the cell is a BSFadeNode root holding one block."""
    blocks = cell_groups(objects)
    if template is None:
        groups = {holder: entries for group in blocks.values() for holder, entries in group.items()}
        records, holders = block_records(groups, scale)
        if not records:
            raise FormatError("no mesh objects to export: the cell's placeholders need the file they came from")
        chosen = layout or INLINE
        if chosen == EXTERNAL:
            raise FormatError("a new cell cannot keep its geometry in a .csg file: export with the inline layout")
        block = build_block(records, holders, chosen)
        root = NiNode("BSFadeNode", name="precombined", extra_data=[1])
        return NifFile(Header(user_version=12, bs_version=130), [root, block], roots=[0])
    indices = [index for index, _ in template.blocks_of(BSPackedCombinedGeomDataExtra)]
    for holder, entries in blocks.pop(None, {}).items():  # new objects join the shape of their material
        target = shape_for_material(template, holder) if not isinstance(holder, tuple) else None
        blocks.setdefault(target if target is not None else indices[0], {})[holder] = entries
    stored = StoredGeometry(template)
    try:
        for index in indices:
            old = template.blocks[index]
            first = old.records[0].vertex_desc if len(old.records) else DEFAULT_DESC
            records, holders = block_records(blocks.get(index, {}), scale, old, first, stored)
            block = build_block(records, holders, layout or old.layout, old, geometry)
            template.blocks[index] = block
            shape = owner_of(template, index)
            if shape is not None and changed(records, old):
                update_host(shape, block, old)
    finally:
        stored.close()
    return template


def changed(records, old):
    """Whether a block's records differ from the file's: geometry, counts or placements."""
    if signature(records) != signature(old.records) or not all(getattr(r, "kept", True) for r in records):
        return True
    return any(r.instances.tobytes() != o.instances.tobytes() for r, o in zip(records, old.records))


def update_host(shape, block, old):
    """The host shape of a changed block, as the Creation Kit writes it (checked on the corpus
    cells): its counts are the block's totals, its translation the centre of the box around
    every placed vertex, its bound radius their farthest distance from it. Records imported
    without geometry count by their placements' bound spheres."""
    if (shape.num_vertices, shape.num_triangles) == (old.num_vertices, old.num_triangles):
        shape.num_vertices, shape.num_triangles = min(block.num_vertices, 0xFFFF), block.num_triangles  # a u16
    points = []
    for record in block.records:
        for instance in record.instances:
            if record.vertex_data is not None:
                points.append(record.positions @ (instance["rotation"] * instance["scale"]).T + instance["translation"])
            else:
                points.append(instance["bound_center"] + instance["bound_radius"] * np.vstack([np.eye(3), -np.eye(3)]))
    if not points:
        return
    points = np.concatenate(points).astype(np.float32)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    shape.translation = tuple(float(v) for v in centre)
    shape.bound_radius = float(np.linalg.norm(points - centre, axis=1).max())


def cells_of(objects):
    """The imported cell files the objects came from."""
    return sorted({str(o["precombined_cell"]) for o in objects if o.get("precombined_cell")})


def cell_scale(records):
    """The scale the records' cell was imported at, from its collection (found by the cell's path:
    looking up each copy's collections takes minutes for large cells); for new records, their
    collections'."""
    cells = set(cells_of(records))
    if not cells:
        return import_scale(records)
    found = [c for c in bpy.data.collections if c.get("nif_path") in cells and SCALE_KEY in c]
    return float(found[0][SCALE_KEY]) if found else 1.0


def template_of(objects):
    """The imported file the objects came from (loose, or ``ARCHIVE.ba2:inner/path``). A cell the
    objects name that cannot be read is an error: written without it, its records would become a
    new inline cell."""
    cells = cells_of(objects)
    if len(cells) > 1:
        names = ", ".join(Path(cell).name for cell in cells)
        raise FormatError(f"the objects come from {len(cells)} cells ({names}): export one cell at a time")
    for path in cells:
        try:
            return NifFile.from_bytes(bytearray(read_path(path)), path=path)
        except (OSError, FormatError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise FormatError(f"the cell these objects came from, {path}, cannot be read ({reason}): export "
                              f"writes them back into it") from None
    for path in [c.get("nif_path") for c in {c for o in objects for c in o.users_collection}]:
        if path and Path(path).is_file():
            try:
                nif = NifFile.read(path)
            except FormatError:
                continue
            if any(isinstance(b, BSPackedCombinedGeomDataExtra) for b in nif.blocks):
                return nif
    return None


def geometry_files(objects):
    """The .csg files the objects' records were read from."""
    meshes = {o.data for o in objects if o.type == "MESH" and o.data is not None}
    meshes |= {source.data for o in objects if (source := instancer_source(o)) is not None}
    return sorted({str(m["precombined_geometry_file"]) for m in meshes if m.get("precombined_geometry_file")})


def default_plugin(files, path):
    """The plugin whose geometry file the records came from, else the exported file's stem."""
    for name in files:
        stem = Path(name).stem
        if stem.lower().endswith(" - geometry"):
            return stem[: -len(" - geometry")]
    return Path(path).stem


def write_cell_collision(template, objects):
    """Collision a cell keeps on its nodes (e.g. CLONE nodes' static compounds): bodies edited in
    Blender are encoded again into the cell's physics systems, untouched ones stay as stored.
    The owners are the cell's node objects the import made (``nif_block``)."""
    owners = {}
    for obj in objects:
        index = obj.get("nif_block")
        if index is not None and "precombined_object" not in obj and 0 <= index < len(template.blocks):
            owners[int(index)] = obj
    if not any(collision_export.collision_children(owner) for owner in owners.values()):
        return
    exporter = NifExporter(game="FO4", nif=template)
    for index, owner in sorted(owners.items()):
        if getattr(template.blocks[index], "collision_object", -1) >= 0 or collision_export.collision_children(owner):
            collision_export.write_collision(exporter, owner, index)


def cell_collection_objects(template):
    """Every object of the collections the cell file was imported into."""
    path = str(template.path or "")
    return [o for c in bpy.data.collections if c.get("nif_path") == path for o in objects_in(c)]


def export_cell(path, objects, *, layout=None, scale=None, plugin=None):
    """Write the objects as a cell, and the geometry of its edited external records to
    ``<plugin> - Geometry.csg`` beside it. Objects that are not part of a cell are refused,
    nothing is written. ``scale``: Blender units per game unit, by default the import's.
    Returns (the NifFile, the geometry file written or None)."""
    records, refused = split_objects(objects)
    if scale is None:
        scale = cell_scale(records)
    if refused:
        refuse(refused)
    files = geometry_files(records)
    geometry = GeometryTarget(Path(path).parent, plugin or default_plugin(files, path), files)
    template = template_of(records)
    nif = build_cell(records, layout=layout, scale=scale, template=template, geometry=geometry)
    if template is not None:
        write_cell_collision(nif, cell_collection_objects(template))
    written = geometry.write()
    nif.write(path)
    return nif, written
