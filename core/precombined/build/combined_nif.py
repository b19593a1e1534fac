"""A group's combined mesh, ``<cell>_<group>_OC.nif``, in the Creation Kit's structure (CSG-NOTES,
the corpus cell's files): a BSFadeNode named after the file (flags 0x400E) holding one NiNode
(flags 14); under it per material one BSTriShape (flags 526, no name, no geometry of its own:
data size 0, its counts its records' times their instances (the corpus: 147 vertices and 100
triangles placed 7 times, 1029 and 700), a BSMeshLODTriShape whose LOD sizes add up so when a
record has LOD1 or LOD2 triangles, its vertex descriptor the full-precision form of its
records', its translation and radius the centre of its placed vertices' box and the farthest
of them (checked on the corpus cell's shapes)) whose extra data is one
BSPackedCombinedSharedGeomDataExtra "PCD" (per record its geometry file's hash and data offset,
then the records and their instances), then the shape's shader, texture set and alpha property,
copied from the model. A material whose placed vertices pass the 65535 a BSTriShape counts
gets another shape. ``inline`` keeps each record's geometry in the block instead (hash and
offset 0), as nifly-based tools write it."""

import copy

import numpy as np

from ...nif import vertex_format as vf
from ...nif.blocks.nodes import NiNode
from ...nif.blocks.precombined import EXTERNAL, INLINE, BSPackedCombinedGeomDataExtra, PackedGeomRecord
from ...nif.blocks.tri_shape import BSMeshLODTriShape, BSTriShape
from ...nif.file import NifFile
from ...nif.header import Header
from .clones import bsx_flags as clones_bsx_flags, havok_blocks
from .placements import instance_rows

FADE_FLAGS, NODE_FLAGS, SHAPE_FLAGS = 0x400E, 14, 526
# The corpus cell's two files holding a BSMeshLODTriShape set 0x1000 on it, on the NiNode and on
# the root; its nine without one (one of them with cloned collision) set it on none.
LOD_FLAG = 0x1000
MAX_SHAPE_VERTICES = 0xFFFF
INSTANCE = np.dtype([("grayscale_scale", "<f4"), ("rotation", "<f4", (3, 3)), ("translation", "<f4", 3),
                     ("scale", "<f4"), ("bound_center", "<f4", 3), ("bound_radius", "<f4")])
OBJECT = np.dtype([("filename_hash", "<u4"), ("data_offset", "<u4")])


class GroupRecord:
    """A record of a group: its ShapeRecord, the ``matrices`` placing its model (4x4 each, in
    reference order; the shape's own transform is applied to them all at once), its ``instances``
    made of them (placements.instance_rows) and, in the shared layout, its data ``offset`` in the
    geometry file."""

    def __init__(self, shape):
        self.shape, self.matrices, self.offset, self._instances = shape, [], 0, None

    @property
    def instances(self):
        if self._instances is None:
            grayscale = float(getattr(self.shape.shader, "grayscale_to_palette_scale", 1.0))
            matrices = np.array(self.matrices) @ self.shape.matrix
            self._instances = instance_rows(matrices, self.shape.bound, grayscale, INSTANCE)
        return self._instances

    @instances.setter
    def instances(self, rows):
        self._instances = rows


def block_desc(desc):
    """A combined shape's descriptor: its records' with full-precision positions."""
    return vf.build_desc(vf.flags_of(desc) | vf.FULL_PRECISION, True)


def lod_offsets(counts):
    """Where each LOD's indices start: a LOD0-only record's are all 0; a record with LOD1 or LOD2
    triangles has every start, an empty LOD's too (the corpus cell's 79 and 7 records)."""
    if not any(counts[1:]):
        return (0, 0, 0)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) * 3
    return tuple(int(start) for start in starts)


def packed_record(group_record, inline):
    shape = group_record.shape
    record = PackedGeomRecord(inline)
    record.vertex_desc, record.num_vertices = shape.vertex_desc, shape.vertex_count
    record.lod_counts, record.lod_offsets = shape.lod_counts, lod_offsets(shape.lod_counts)
    record.instances = group_record.instances
    if inline:
        dtype = vf.vertex_dtype(shape.vertex_desc, False)
        size = dtype.itemsize * shape.vertex_count
        record.vertex_data = np.frombuffer(shape.data[:size], dtype).copy()
        record.triangles = np.frombuffer(shape.data[size:], np.dtype(("<u2", (3,)))).copy()
    return record


def placed_positions(record):
    """The record's distinct vertex positions where its instances put them (what a bound needs)."""
    rows = record.instances  # float32, as the CK computes
    linear = rows["rotation"] * rows["scale"][:, None, None]
    placed = record.shape.distinct_positions[None] @ np.swapaxes(linear, 1, 2) + rows["translation"][:, None, :]
    return placed.reshape(-1, 3)


def bounding_sphere(points):
    """The centre of the points' box and the distance to the farthest (float32)."""
    center = (points.min(axis=0) + points.max(axis=0)) / np.float32(2)
    return center, float(np.sqrt(np.square(points - center).sum(axis=1).max()))


def placed_vertices(record):
    return record.shape.vertex_count * len(record.instances)


def split_by_vertices(records):
    """Runs of records whose placed vertices a BSTriShape can count (a record placed more often
    than one shape can count is split between shapes, its instances shared out)."""
    pieces = []
    for record in records:
        per_shape = max(1, MAX_SHAPE_VERTICES // max(record.shape.vertex_count, 1))
        for start in range(0, len(record.instances), per_shape):
            piece = GroupRecord(record.shape)
            piece.instances, piece.offset = record.instances[start:start + per_shape], record.offset
            pieces.append(piece)
    runs, run, total = [], [], 0
    for piece in pieces:
        if run and total + placed_vertices(piece) > MAX_SHAPE_VERTICES:
            runs.append(run)
            run, total = [], 0
        run.append(piece)
        total += placed_vertices(piece)
    return runs + [run] if run else runs


def combined_nif(name, materials, filename_hash, inline=False, clones=()):
    """The NifFile of a group: ``materials`` is [[GroupRecord]] per material, in order;
    ``clones`` the clones.Clone of its references whose collision the CK clones."""
    root = NiNode("BSFadeNode", name=name, flags=FADE_FLAGS)
    blocks = [root, clones_bsx_flags()] if clones else [root]
    node = NiNode(name="", flags=NODE_FLAGS)
    root.children = [len(blocks)]
    if clones:  # the CK's BSXFlags is block 1, the root's extra data (its three files with clones)
        root.extra_data = np.array([1], np.int32)
    blocks.append(node)
    for records in materials:
        for run in split_by_vertices(records):
            first = run[0].shape
            center, radius = bounding_sphere(np.concatenate([placed_positions(record) for record in run]))
            desc = block_desc(first.vertex_desc)
            packed = [packed_record(record, inline) for record in run]
            at = len(blocks)
            lods = np.sum([np.array(r.lod_counts) * len(r.instances) for r in packed], axis=0)
            extra = BSPackedCombinedGeomDataExtra(
                "BSPackedCombinedSharedGeomDataExtra", name="PCD", vertex_desc=desc,
                num_vertices=sum(r.num_vertices * len(r.instances) for r in packed), num_triangles=int(lods.sum()),
                records=packed, layout=INLINE if inline else EXTERNAL)
            extra.objects = np.array([(0 if inline else filename_hash, 0 if inline else r.offset) for r in run], OBJECT)
            kind = BSMeshLODTriShape if lods[1:].any() else BSTriShape
            shape = kind(name="", flags=SHAPE_FLAGS, translation=tuple(map(float, center)), bound_radius=float(radius),
                         vertex_desc=desc, num_vertices=extra.num_vertices, num_triangles=extra.num_triangles,
                         extra_data=[at + 1], shader_property=at + 2)
            if kind is BSMeshLODTriShape:
                shape.lod_sizes = tuple(int(n) for n in lods)
                for holder in (shape, root, node):
                    holder.flags |= LOD_FLAG
            shader = copy.copy(first.shader)
            shader.extra_data, shader.controller = [], -1
            local = [shape, extra, shader]
            if first.textures is not None:
                shader.texture_set = at + len(local)
                local.append(copy.copy(first.textures))
            if first.alpha is not None:
                shape.alpha_property = at + len(local)
                local.append(copy.copy(first.alpha))
            node.children = [*node.children, at]
            blocks += local
    if clones:
        root.children = [*root.children, len(blocks)]
        blocks += havok_blocks(clones, len(blocks))
    # The CK's header: empty export strings, and a max file path of one byte 0x01.
    return NifFile(Header(user_version=12, bs_version=130, max_filepath="\x01"), blocks, roots=[0])
