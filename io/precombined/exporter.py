"""Blender objects sharing meshes back into precombined blocks: each mesh a record, each object
one of its placed instances, each block the records its import made of it. Data an untouched
import kept (packed vertices, every LOD, raw placements, the records' objects entries) is
reused as stored, so such a cell writes back byte for byte; anything edited is encoded anew
(a record's encoding: records.py; where external cells' geometry goes: geometry_target.py).
Knows bpy and core objects, never file bytes."""

from pathlib import Path

import bpy
import numpy as np

from ...core.archives.data import read_path
from ...core.errors import FormatError
from ...core.nif import NifFile
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.precombined import BAKED, EXTERNAL, INLINE, BSPackedCombinedGeomDataExtra, instance_dtype
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.nif.header import Header
from ...core.plugin.references import cell_instances
from ...core.precombined.cell_files import cell_file_ids, data_folder
from ...core.precombined.plan import ExportPlan
from .cell_outputs import plan_outputs
from .geometry_target import GeometryTarget, IndexTarget, default_plugin, geometry_files, to_external
from .instancing import instancer_matrices, instancer_source
from .records import DEFAULT_DESC, LITTLE, RecordSource, StoredGeometry, placeholder_record, placement, record_from_mesh
from ..havok import collision_export
from ..collection_objects import objects_in
from ..integers import to_uint32
from ..nif.exporter import NifExporter
from ..nif.source import import_scale
from .. import schema

VANILLA_GEOMETRY_HASH = 0xDDF19A67  # "fallout4 - geometry"
CELL, GEOMETRY = "precombined cell", "geometry of edited records (.csg)"
SHARED_TYPE, BAKED_TYPE = "BSPackedCombinedSharedGeomDataExtra", "BSPackedCombinedGeomDataExtra"


def copies_of(obj):
    """(mesh, [(name, world matrix, raw placement, grayscale), ...], sort key) of an object: one
    copy for an ordinary object or a placeholder (mesh None), every point of a geometry-nodes
    instancer."""
    source = instancer_source(obj)
    if source is not None:
        stored = obj.data.get(schema.PRECOMBINED_INSTANCES_RAW)
        raws = np.reshape(np.array(stored, np.float64), (-1, 18)) if stored is not None else []
        matrices = instancer_matrices(obj)
        copies = [
            (f"{obj.name} #{k}", m, raws[k] if k < len(raws) else None, float(raws[k][0]) if k < len(raws) else 1.0)
            for k, m in enumerate(matrices)
        ]
        return source.data, copies, (obj.get(schema.PRECOMBINED_OBJECT, 1 << 30), 0)
    grayscale = float(obj.get(schema.PRECOMBINED_GRAYSCALE_SCALE, 1.0))
    copy = (obj.name, obj.matrix_world, obj.get(schema.PRECOMBINED_INSTANCE_RAW), grayscale)
    mesh = obj.data if obj.type == "MESH" else None
    return mesh, [copy], (obj.get(schema.PRECOMBINED_OBJECT, 1 << 30), obj.get(schema.PRECOMBINED_INSTANCE, 1 << 30))


IGNORED_TYPES = ("CAMERA", "LIGHT", "LIGHT_PROBE", "SPEAKER", "EMPTY")


def is_record_object(obj):
    """Came from a cell (an instance, instancer or placeholder) or marked precombined by the user."""
    return schema.PRECOMBINED_OBJECT in obj or bool(obj.get(schema.PRECOMBINED))


def split_objects(objects):
    """(the objects that make records, the other objects a cell cannot hold). Objects the
    general import made of a cell file (its nodes, shapes, collision) are written from the file
    and the hidden sources of geometry-nodes instancers from their instancers: neither is refused."""
    cells = set(cells_of(objects))
    records, refused = [], []
    for obj in objects:
        if is_record_object(obj):
            records.append(obj)
        elif schema.PRECOMBINED_SOURCE in obj or any(c.get(schema.NIF_PATH) in cells for c in obj.users_collection):
            continue
        elif obj.type not in IGNORED_TYPES:
            refused.append(obj)
    return records, refused


def refuse(refused):
    names = ", ".join(repr(obj.name) for obj in refused[:10]) + (f" and {len(refused) - 10} more" if len(refused) > 10 else "")
    raise FormatError(
        f"{names} {'is' if len(refused) == 1 else 'are'} not part of a precombined cell: export "
        f"{'it' if len(refused) == 1 else 'them'} as a NIF, or mark {'it' if len(refused) == 1 else 'them'} "
        f"precombined (Object properties > Precombined); cli.py export: --object NAME writes one collection, "
        f"--each every collection as its own NIF"
    )


def is_placeholder(obj):
    """An empty standing for a copy whose geometry was not imported."""
    return obj.type == "EMPTY" and schema.PRECOMBINED_OBJECT in obj and schema.PRECOMBINED_BLOCK in obj


def cell_groups(objects):
    """{block index or None (new): {RecordSource: [(key, name, copies)]}}."""
    blocks = {}
    for obj in objects:
        if not (obj.type == "MESH" and obj.data is not None or is_placeholder(obj)):
            continue
        mesh, copies, key = copies_of(obj)
        if mesh is None:
            block = obj[schema.PRECOMBINED_BLOCK]
            source = RecordSource(block=block, index=obj[schema.PRECOMBINED_OBJECT])
        else:
            block, source = mesh.get(schema.PRECOMBINED_BLOCK), RecordSource(mesh)
        blocks.setdefault(block, {}).setdefault(source, []).append((key, obj.name, copies))
    if not blocks:
        raise FormatError("no mesh objects to export: select the instances of a precombined cell")
    return blocks


def block_records(groups, scale, template_block=None, default_desc=DEFAULT_DESC, stored=None):
    """The ExportedRecords of one block: imported records in their order, then new ones by name
    (``stored``: the StoredGeometry of the template the block comes from)."""
    exported = []
    for source, entries in sorted(groups.items(), key=lambda item: item[0].order()):
        if source.placeholder:
            if template_block is None or not source.index < len(template_block.records):
                continue  # a placeholder of a file that is gone: nothing to write its record from
            made = placeholder_record(source, template_block)
        else:
            kept = stored.of(source.mesh, template_block) if stored is not None else None
            made = record_from_mesh(source, scale, default_desc, kept)
        copies = [copy for _, _, group in sorted(entries, key=lambda e: (e[0], e[1])) for copy in group]
        made.record.instances = np.array([placement(*copy, scale, made) for copy in copies], instance_dtype(LITTLE))
        exported.append(made)
    return exported


def record_counts(records):
    """A block's vertex and triangle totals as the Creation Kit writes them: every placed copy
    counts (checked on the corpus cells)."""
    vertices = sum((r.vertex_count or r.num_vertices) * len(r.instances) for r in records)
    triangles = sum(sum(r.lod_counts) * len(r.instances) for r in records)
    return vertices, triangles


def signature(records):
    return [((r.vertex_count or r.num_vertices), tuple(r.lod_counts), len(r.instances)) for r in records]


def objects_entries(exported):
    """The shared block's (filename hash, data offset) per ExportedRecord."""
    entries, offset = [], 0
    for made in exported:
        if made.entry is not None:  # a placeholder's, or where an edited record was written
            entries.append(made.entry)
            continue
        known = made.source.mesh.get(schema.PRECOMBINED_HASH)
        stored_offset = made.source.mesh.get(schema.PRECOMBINED_OFFSET, offset)
        entries.append((int(known, 16) if known else VANILLA_GEOMETRY_HASH, to_uint32(stored_offset)))
        offset += made.record.geometry_size()
    return np.array(entries, [("filename_hash", "<u4"), ("data_offset", "<u4")])


def build_block(exported, layout, template_block=None, geometry=None):
    records = [made.record for made in exported]
    block = BSPackedCombinedGeomDataExtra(BAKED_TYPE if layout == BAKED else SHARED_TYPE, records=records, layout=layout)
    placeholders = sum(made.source.placeholder for made in exported)
    if layout == EXTERNAL:
        to_external(exported, geometry)
    elif placeholders:
        raise FormatError(
            f"{placeholders} records were imported without geometry (no .csg): "
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
        block.objects = objects_entries(exported)
    return block


def shape_for_material(template, mesh):
    """The block of the cell's shape whose shader the mesh's material came from, or None."""
    for material in mesh.materials if mesh is not None else ():
        shader = dict(material.get(schema.NIF_BLOCKS, {})).get("shader") if material is not None else None
        if shader is None or material.get(schema.NIF_FILE) != str(template.path or ""):
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
        groups = {source: entries for group in blocks.values() for source, entries in group.items()}
        exported = block_records(groups, scale)
        if not exported:
            raise FormatError("no mesh objects to export: the cell's placeholders need the file they came from")
        chosen = layout or INLINE
        if chosen == EXTERNAL:
            raise FormatError("a new cell cannot keep its geometry in a .csg file: export with the inline layout")
        block = build_block(exported, chosen)
        root = NiNode("BSFadeNode", name="precombined", extra_data=[1])
        return NifFile(Header(user_version=12, bs_version=130), [root, block], roots=[0])
    indices = [index for index, _ in template.blocks_of(BSPackedCombinedGeomDataExtra)]
    for source, entries in blocks.pop(None, {}).items():  # new objects join the shape of their material
        target = shape_for_material(template, source.mesh)
        blocks.setdefault(target if target is not None else indices[0], {})[source] = entries
    stored = StoredGeometry(template)
    try:
        for index in indices:
            old = template.blocks[index]
            first = old.records[0].vertex_desc if len(old.records) else DEFAULT_DESC
            exported = block_records(blocks.get(index, {}), scale, old, first, stored)
            block = build_block(exported, layout or old.layout, old, geometry)
            template.blocks[index] = block
            shape = owner_of(template, index)
            if shape is not None and changed(exported, old):
                update_host(shape, block, old)
    finally:
        stored.close()
    return template


def changed(exported, old):
    """Whether a block's records differ from the file's: geometry, counts or placements."""
    records = [made.record for made in exported]
    if signature(records) != signature(old.records) or not all(made.kept for made in exported):
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
    return sorted({str(o[schema.PRECOMBINED_CELL]) for o in objects if o.get(schema.PRECOMBINED_CELL)})


def cell_scale(records):
    """The scale the records' cell was imported at, from its collection (found by the cell's path:
    looking up each copy's collections takes minutes for large cells); for new records, their
    collections'."""
    cells = set(cells_of(records))
    if not cells:
        return import_scale(records)
    found = [c for c in bpy.data.collections if c.get(schema.NIF_PATH) in cells and schema.NIF_SCALE in c]
    return float(found[0][schema.NIF_SCALE]) if found else 1.0


def template_of(objects):
    """The imported file the objects came from (loose, or ``ARCHIVE.ba2:inner/path``). A cell the
    objects name that cannot be read is an error: written without it, its records would become a
    new inline cell."""
    cells = cells_of(objects)
    if len(cells) > 1:
        names = ", ".join(Path(cell).name for cell in cells)
        raise FormatError(f"the objects come from {len(cells)} cells ({names}): export one cell at a time")
    for collection in bpy.data.collections:
        if collection.get(schema.NIF_PATH) in cells:
            schema.check_version(collection)
    for path in cells:
        try:
            return NifFile.from_bytes(bytearray(read_path(path)), path=path)
        except (OSError, FormatError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise FormatError(f"the cell these objects came from, {path}, cannot be read ({reason}): export "
                              f"writes them back into it") from None
    for path in [c.get(schema.NIF_PATH) for c in {c for o in objects for c in o.users_collection}]:
        if path and Path(path).is_file():
            try:
                nif = NifFile.read(path)
            except FormatError:
                continue
            if any(isinstance(b, BSPackedCombinedGeomDataExtra) for b in nif.blocks):
                return nif
    return None


def write_cell_collision(template, objects):
    """Collision a cell keeps on its nodes (e.g. CLONE nodes' static compounds): bodies edited in
    Blender are encoded again into the cell's physics systems, untouched ones stay as stored.
    The owners are the cell's node objects the import made (``nif_block``)."""
    owners = {}
    for obj in objects:
        index = obj.get(schema.NIF_BLOCK)
        if index is not None and schema.PRECOMBINED_OBJECT not in obj and 0 <= index < len(template.blocks):
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
    return [o for c in bpy.data.collections if c.get(schema.NIF_PATH) == path for o in objects_in(c)]


def export_cell(path, objects, *, layout=None, scale=None, plugin=None, index=None, patch=None, plugins=(),
                dry_run=False, folders=()):
    """Write the objects as a cell with what follows it (``plan_cell``); unless ``dry_run``,
    every file or none. Returns the ExportPlan."""
    plan = plan_cell(path, objects, layout=layout, scale=scale, plugin=plugin, index=index, patch=patch,
                     plugins=plugins, folders=folders)
    if not dry_run:
        plan.write()
    return plan


def plan_cell(path, objects, *, layout=None, scale=None, plugin=None, index=None, patch=None, plugins=(), folders=()):
    """What exporting the objects as a cell writes: the cell; the geometry of its edited external
    records in ``<plugin> - Geometry.csg`` (default: the records' plugin, or the patch's own)
    in the Data folder of the cell (its own folder outside ``meshes``); the ``<plugin>.cdx``
    beside it (``index``: a .cdx to start from, else the one beside the .csg the import read);
    with ``patch`` (cell_outputs.PatchOptions) the patch plugin of the copies' edits, whose
    references come from ``plugins`` (the cell's plugin, then its masters; default: found in the
    cell's Data folder); the cell's physics when copies moved or went. Objects that are not part
    of a cell are refused. ``scale``: Blender units per game unit, by default the import's.
    ``folders``: the user's Data folders (the preferences' Fallout 4 one, or ``--data``), where
    the .csg and .cdx to start from, the cell's plugin and its previs file are looked up too."""
    records, refused = split_objects(objects)
    if scale is None:
        scale = cell_scale(records)
    if refused:
        refuse(refused)
    files = geometry_files(records)
    target = plugin or (Path(patch.path).stem if patch is not None else default_plugin(files, path))
    folder = data_folder(path)
    geometry = GeometryTarget(folder, target, files, folders)
    template = template_of(records)
    copies_before = [(*key, instance.copy()) for *key, instance in cell_instances(template)] if template else []
    nif = build_cell(records, layout=layout, scale=scale, template=template, geometry=geometry)  # edits the template
    if template is not None:
        write_cell_collision(nif, cell_collection_objects(template))
    plan = ExportPlan()
    plan.nif = nif
    plan.add(path, nif.to_bytes(), CELL)
    csg = geometry.to_bytes()
    if csg is not None:
        plan.add(geometry.path, csg, GEOMETRY)
    if template is not None:
        external = any(b.layout == EXTERNAL for _, b in nif.blocks_of(BSPackedCombinedGeomDataExtra))
        named = cell_file_ids(path) is not None  # the game finds a cell's meshes by their names only
        target_index = IndexTarget(folder, target, files, index, folders) if external and named else None
        plan_outputs(plan, path, nif, template, copies_before, records, scale, index=target_index, patch=patch,
                     plugins=plugins, folders=folders)
    elif patch is not None:
        raise FormatError("a patch follows edits of an imported cell: these objects make a new one")
    return plan
