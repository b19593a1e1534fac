"""Precombined cells as Blender data: one mesh per record (the chosen LOD), one object per
placed instance sharing it (linked duplicates), the rest of the file through the general NIF
path. Knows core objects and bpy, never file bytes."""

from dataclasses import dataclass, field

import bpy
import numpy as np

from ...core.errors import FormatError
from ...core.nif.blocks.precombined import EXTERNAL, BSPackedCombinedGeomDataExtra, instance_matrices
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.nif.packed_vertices import PackedVertices
from ...core.precombined.csg import GeometryFiles
from ...core.precombined.names import find_geometry_file
from .instancing import NODE_GROUP, attach_instancer, points_mesh
from ..integers import to_int32
from ..mesh_build import build_mesh
from ..nif.importer import SceneBuilder
from . import INSTANCING
from .. import schema


def block_owners(nif):
    """{precombined block index: index of the shape whose extra data list holds it}."""
    owners = {}
    for index, shape in nif.blocks_of(BSTriShape):
        for ref in np.asarray(shape.extra_data).tolist():
            if 0 <= ref < len(nif.blocks) and isinstance(nif.blocks[ref], BSPackedCombinedGeomDataExtra):
                owners.setdefault(ref, index)
    return owners


class DecodedVertices(PackedVertices):
    """Packed vertices read from a .csg, decoded like any other vertex buffer."""

    def __init__(self, desc, vertex_data):
        self.vertex_desc = desc
        self.vertex_data = vertex_data


def record_names(blocks):
    """{(block index, record index): name}: the record's geometry hash and offset (or "record N"
    for inline blocks), made unique across the cell by the block and record numbers where two
    records share them. Unique names spare Blender its suffix search, which makes creating
    thousands of objects quadratic."""
    names, uses = {}, {}
    for block_index, block in blocks:
        for index in range(len(block.records)):
            if block.shared:
                entry = block.objects[index]
                base = f"{int(entry['filename_hash']):08X}:{int(entry['data_offset']):08X}"
            else:
                base = f"record {index}"
            names[(block_index, index)] = base
            uses[base] = uses.get(base, 0) + 1
    return {key: base if uses[base] == 1 else f"{base} ({key[0]}.{key[1]})" for key, base in names.items()}


def instance_values(instance):
    """The 18 floats of a placement in file order (grayscale, rotation rows, translation, scale,
    bound centre, bound radius)."""
    return np.frombuffer(instance.tobytes(), instance.dtype.fields["scale"][0]).astype(np.float64).tolist()


def keep_for_export(mesh, vertices, record, lod):
    """The record's vertex descriptors and the LOD shown. The geometry itself is read again from
    the cell and its .csg at export (io.precombined.exporter.StoredGeometry): kept on the mesh,
    Blender would copy it into every copy's evaluated mesh. The header's descriptor may differ
    from the stored vertices' (retail .csg records claim full precision over half-float bytes)."""
    mesh[schema.PRECOMBINED_VERTEX_DESC] = f"{vertices.vertex_desc:016X}"
    mesh[schema.PRECOMBINED_RECORD_DESC] = f"{record.vertex_desc:016X}"
    mesh[schema.PRECOMBINED_LOD] = lod


class GeometrySource:
    """Where external records find their geometry: an explicit .csg/.psg, or the one a game
    Data folder holds for the record's filename hash. Opened files are reused."""

    def __init__(self, geometry_path=None, data_folder=None, cache_folder=None):
        self.geometry_path = geometry_path
        self.data_folders = [data_folder] if data_folder else []
        self.cache_folder = cache_folder
        self.files = GeometryFiles()
        self.found = {}  # (filename hash, number of folders) -> geometry file path or None

    def also_look_in(self, data_folder):
        """Another Data folder (that of a cell imported from an archive), searched after the others."""
        if data_folder not in self.data_folders:
            self.data_folders.append(data_folder)

    def file_for(self, filename_hash):
        key = (filename_hash, len(self.data_folders))
        if key not in self.found:  # looked up once per hash (and per folder list)
            path = self.geometry_path
            for folder in self.data_folders if path is None else ():
                path = find_geometry_file(folder, filename_hash) or self._archived(folder, filename_hash)
                if path is not None:
                    break
            self.found[key] = path
        path = self.found[key]
        return self.files.open(path) if path is not None else None

    def _archived(self, folder, filename_hash):
        """A geometry file packed in one of the folder's archives, extracted once into the cache."""
        from ...core.archives.data import DataFiles, split_archive_path
        from ...core.precombined.names import bscrc32

        data = DataFiles([folder], self.cache_folder)
        try:
            for name in data.archive_paths("*.csg") + data.archive_paths("*.psg"):
                stem = split_archive_path(name).stem
                if stem.lower().endswith(" - geometry") and bscrc32(stem) == filename_hash:
                    return data.cached(name)
        finally:
            data.close()
        return None

    def close(self):
        self.files.close()


@dataclass
class PlacedCopies:
    """What a cell's build placed, handed to the passes after it (io.plugin.references names the
    copies, io.precombined.breakers marks those overridden): the objects standing for one copy
    each, with their stored placements (18 floats: grayscale, rotation rows, translation, scale,
    bound centre, bound radius); the geometry-nodes instancers with their points' placements
    ((n, 18) arrays); the geometry file name hashes of the records."""

    objects: list = field(default_factory=list)
    placements: list = field(default_factory=list)
    instancers: list = field(default_factory=list)
    geometry_hashes: set = field(default_factory=set)


class CellBuilder(SceneBuilder):
    def __init__(self, nif, collection, *, lod=0, geometry=None, instancing="OBJECTS", **options):
        if instancing not in INSTANCING:  # a caller's mistake: never quietly taken for objects
            raise ValueError(f"instancing {instancing!r} is not one of {', '.join(INSTANCING)}")
        super().__init__(nif, collection, **options)
        self.lod = lod
        self.instancing = instancing
        self.geometry = geometry or GeometrySource()
        self.placeholders = 0
        self.placeholder_records = 0
        self.lod_fallbacks = 0  # records shown at another LOD: the chosen one has no triangles
        self.missing_geometry = []
        self.copies = PlacedCopies()

    @property
    def keeps_source(self):
        """Cells are written back from their file (they can be large): only other files keep
        their bytes for the exporter."""
        return not self.nif.blocks_of(BSPackedCombinedGeomDataExtra)

    def build(self):
        super().build()
        owners = block_owners(self.nif)
        blocks = self.nif.blocks_of(BSPackedCombinedGeomDataExtra)
        names = record_names(blocks)
        self.placed = []  # (objects, their world matrices) of every record
        for index, block in blocks:
            for record_index, record in enumerate(block.records):
                self._build_record(block, index, record_index, record, owners.get(index), names[(index, record_index)])
        self._place_copies()
        return self.objects

    def _place_copies(self):
        """Every copy's matrix in one foreach_set, through a collection holding only the copies
        (setting them one by one costs a Matrix and an RNA call each)."""
        if not self.placed:
            return
        staging = bpy.data.collections.new("precombined staging")
        try:
            for objects, _ in self.placed:
                for obj in objects:
                    staging.objects.link(obj)
            matrices = np.concatenate([m for _, m in self.placed]).astype(np.float32)
            flat = matrices.transpose(0, 2, 1).ravel()  # Blender's matrices are column-major
            # The basis is what Blender keeps (a copy has no parent); the world matrix too, so
            # it reads right before the next scene update.
            staging.objects.foreach_set("matrix_basis", flat)
            staging.objects.foreach_set("matrix_world", flat)
        finally:
            bpy.data.collections.remove(staging)

    def _record_mesh(self, block, index, record, name):
        lod = record.nearest_lod(self.lod)
        if block.layout != EXTERNAL:
            vertices, triangles = record, record.lod_triangles(lod)
        else:
            entry = block.objects[index]
            geometry = self.geometry.file_for(int(entry["filename_hash"]))
            if geometry is None:
                return None
            try:
                desc, data, all_triangles = geometry.record_geometry(
                    int(entry["data_offset"]), record.vertex_desc, record.num_vertices, record.lod_counts
                )
            except FormatError as error:
                self.missing_geometry.append(f"{name}: {error}")
                return None
            vertices = DecodedVertices(desc, data)
            start = record.lod_offsets[lod] // 3
            triangles = all_triangles[start : start + record.lod_counts[lod]]
        mesh = build_mesh(
            name,
            vertices.positions,
            triangles,
            uvs=vertices.uvs,
            normals=vertices.normals,
            colors=vertices.colors,
            scale=self.scale,
        )
        self.rollback.add(mesh)
        keep_for_export(mesh, vertices, record, lod)
        if lod != self.lod:
            self.lod_fallbacks += 1
        if block.layout == EXTERNAL:  # the file edited records of the plugin are added to
            mesh[schema.PRECOMBINED_GEOMETRY_FILE] = str(geometry.path)
        return mesh

    def _build_record(self, block, block_index, index, record, owner, name):
        mesh = self._record_mesh(block, index, record, name)
        if mesh is not None and owner is not None:
            # Every record of a block shows its shape's material (one material per shader).
            self.materials.assign(owner, self.nif.blocks[owner], mesh)
        if mesh is None:
            self.placeholders += len(record.instances)
            self.placeholder_records += 1
        matrices = instance_matrices(record.instances)
        matrices[:, :3, 3] *= self.scale  # the mesh is scaled already: the copies' positions only
        if self.instancing == "GEOMETRY_NODES" and mesh is not None:
            self._build_instancer(name, block_index, index, record, mesh, matrices)
            self._keep_record_source(block, block_index, index, [mesh])
            return
        copies = []
        for number, instance in enumerate(record.instances):
            obj = bpy.data.objects.new(f"{name} #{number}", mesh)
            # A rotation near gimbal lock (a copy tipped 90 degrees) does not survive Euler angles
            # in single precision (1e-4 off): a quaternion keeps it to float rounding, so an
            # untouched copy still reads back as its stored placement.
            obj.rotation_mode = "QUATERNION"
            self.rollback.add(obj)
            self.collection.objects.link(obj)
            copies.append(obj)
            obj[schema.PRECOMBINED_CELL] = str(self.nif.path or "")
            obj[schema.PRECOMBINED_BLOCK] = block_index
            obj[schema.PRECOMBINED_OBJECT] = index
            obj[schema.PRECOMBINED_INSTANCE] = number
            obj[schema.PRECOMBINED_GRAYSCALE_SCALE] = float(instance["grayscale_scale"])
            obj[schema.PRECOMBINED_INSTANCE_RAW] = placement = instance_values(instance)
            self.copies.objects.append(obj)
            self.copies.placements.append(placement)
            if mesh is None:
                obj.empty_display_type = "SPHERE"
                obj.empty_display_size = float(instance["bound_radius"]) * self.scale / max(float(instance["scale"]), 1e-6)
        self.placed.append((copies, matrices))
        self._keep_record_source(block, block_index, index, [mesh] if mesh is not None else copies)

    def _keep_record_source(self, block, block_index, index, holders):
        """Which record of which block of which file the holders stand for, and what the
        exporter needs to write the record's objects entry back."""
        for holder in holders:
            holder[schema.PRECOMBINED_CELL] = str(self.nif.path or "")
            holder[schema.PRECOMBINED_BLOCK] = block_index
            holder[schema.PRECOMBINED_OBJECT] = index
        if block.shared:
            entry = block.objects[index]
            self.copies.geometry_hashes.add(int(entry["filename_hash"]))
            for holder in holders:
                holder[schema.PRECOMBINED_HASH] = f"{int(entry['filename_hash']):08X}"
                holder[schema.PRECOMBINED_OFFSET] = to_int32(entry["data_offset"])

    def _build_instancer(self, name, block_index, index, record, mesh, matrices):
        """One hidden source object holding the mesh, one point per copy, a modifier placing them."""
        source = bpy.data.objects.new(f"{name} source", mesh)
        self.rollback.add(source)
        self.collection.objects.link(source)
        source.hide_viewport = True  # the modifier still reads its geometry
        source.hide_render = True
        source[schema.PRECOMBINED_SOURCE] = index
        scales = np.asarray(record.instances["scale"], np.float64)
        rotations = matrices[:, :3, :3] / scales[:, None, None]
        points = points_mesh(f"{name} instances", matrices[:, :3, 3], rotations, scales)
        self.rollback.add(points)
        placements = np.array([instance_values(i) for i in record.instances])
        points[schema.PRECOMBINED_INSTANCES_RAW] = placements.ravel()
        obj = bpy.data.objects.new(f"{name} instances", points)
        self.rollback.add(obj)
        self.collection.objects.link(obj)
        obj[schema.PRECOMBINED_CELL] = str(self.nif.path or "")
        obj[schema.PRECOMBINED_BLOCK] = block_index
        obj[schema.PRECOMBINED_OBJECT] = index
        self.copies.instancers.append((obj, placements.reshape(-1, 18)))
        new_group = NODE_GROUP not in bpy.data.node_groups
        attach_instancer(obj, source)
        if new_group:
            self.rollback.add(bpy.data.node_groups[NODE_GROUP])

    def warnings(self):
        """One warning for every copy that has no geometry, with the first reason a file gave,
        and one for the records shown at another LOD than the one chosen."""
        out = super().warnings()
        if self.lod_fallbacks:
            out.append(
                f"{self.lod_fallbacks} records have no LOD {self.lod} triangles: shown at the nearest LOD that has "
                f"(their mesh's precombined_lod)"
            )
        if self.placeholders:
            reason = f" ({self.missing_geometry[0]})" if self.missing_geometry else " (no matching .csg found)"
            out.append(
                f"{self.placeholders} instances of {self.placeholder_records} records have no geometry{reason}: "
                f"imported as bound-sized placeholders"
            )
        return out
