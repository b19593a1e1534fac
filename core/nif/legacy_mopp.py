"""MOPP trees in Fallout 3 / New Vegas and Skyrim shape blocks (bhkMoppBvTreeShape): the shape
keys its code may name, checking stored code, and building code over the shape it wraps.

The keys of the shapes a MOPP tree holds:
- a packed triangle mesh (hkPackedNiTriStripsData): the triangle's index, which may carry the
  index of the sub shape holding the triangle (the one holding its first vertex) in its top
  byte: a New Vegas static collection (vault74's kynSCOLTemp04) names its second sub shape's
  triangles 0x01000015 on; a single sub shape's keys are plain indices either way;
- Skyrim's compressed mesh: as its data says (bhkCompressedMeshShapeData.mesh);
- a list of shapes (bhkListShape, bhkConvexListShape): the child's index in the list.
Code over a list is built over its children's bounding boxes (their convex radius included).

Stored code is checked by walking it: code that cannot be walked, names a key the shape lacks
or names none is damaged (the importer warns, the exporter builds it anew); code using an
instruction the walker does not know is only unfamiliar, and is kept as stored."""

import numpy as np

from ..errors import FormatError
from ..havok import mopp
from .block import block_at
from .blocks.compressed_mesh import bhkCompressedMeshShape, bhkCompressedMeshShapeData
from .blocks.legacy_havok import (
    bhkBoxShape,
    bhkCapsuleShape,
    bhkConvexListShape,
    bhkConvexVerticesShape,
    bhkListShape,
    bhkMoppBvTreeShape,
    bhkPackedNiTriStripsShape,
    bhkSphereShape,
    bhkTransformShape,
    hkPackedNiTriStripsData,
)

SUB_SHAPE_SHIFT = 24  # a packed mesh key's top byte: the sub shape holding the triangle
LISTS = (bhkListShape, bhkConvexListShape)
CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)])


def packed_keys(data):
    """The keys of a packed mesh's triangles, each tagged with the sub shape holding it."""
    triangles = np.asarray(data.triangles, np.int64).reshape(-1, 4)
    counts = np.asarray(data.sub_shapes["num_vertices"], np.int64) if len(data.sub_shapes) else np.zeros(0, np.int64)
    sub_shape = np.searchsorted(np.cumsum(counts), triangles[:, 0], side="right")
    return (np.minimum(sub_shape, 0xFF) << SUB_SHAPE_SHIFT | np.arange(len(triangles))).astype(np.uint32)


def shape_keys(blocks, index):
    """The keys stored code over the shape at ``index`` may name, or None when the shape holds
    none this module knows (or its data cannot be decoded)."""
    shape = block_at(blocks, index, bhkPackedNiTriStripsShape, bhkCompressedMeshShape, *LISTS)
    if isinstance(shape, LISTS):
        return np.arange(len(shape.sub_shapes), dtype=np.uint32)
    if isinstance(shape, bhkPackedNiTriStripsShape):
        data = block_at(blocks, shape.data, hkPackedNiTriStripsData)
        if data is None:
            return None
        return np.union1d(np.arange(len(data.triangles), dtype=np.uint32), packed_keys(data))
    data = block_at(blocks, shape.data, bhkCompressedMeshShapeData) if shape is not None else None
    if data is None:
        return None
    try:
        return data.mesh()[3]
    except FormatError:
        return None


def damaged_mopps(blocks, index, seen=None):
    """[(block index, why)] of the MOPP trees in the shape tree at ``index`` whose stored code
    cannot be walked, names a key the shape lacks or names none."""
    seen = set() if seen is None else seen
    block = blocks[index] if 0 <= index < len(blocks) and index not in seen else None
    seen.add(index)
    if isinstance(block, LISTS):
        return [found for child in np.asarray(block.sub_shapes).tolist() for found in damaged_mopps(blocks, child, seen)]
    if isinstance(block, bhkTransformShape):
        return damaged_mopps(blocks, block.shape, seen)
    if not isinstance(block, bhkMoppBvTreeShape):
        return []
    below = damaged_mopps(blocks, block.shape, seen)
    keys = shape_keys(blocks, block.shape)
    if keys is None:
        return below  # damaged data: the import's shape check says so
    try:
        named = mopp.check_leaves(block.code, keys)
    except mopp.UnknownInstruction:
        return below
    except FormatError as error:
        return [(index, error.message), *below]
    return below if len(named) else [(index, "the MOPP code names no shape key"), *below]


def build_over(blocks, index):
    """A Mopp (core.havok.mopp) over the shape at ``index``: a packed or compressed triangle
    mesh (each triangle's box grown by the shape's radius) or a list (each child's box)."""
    shape = blocks[index]
    if isinstance(shape, LISTS):
        if not len(shape.sub_shapes):
            raise FormatError("a MOPP tree needs a list holding shapes")
        boxes = np.array([shape_box(blocks, child) for child in np.asarray(shape.sub_shapes).tolist()])
        # one "triangle" per child spanning its box: its low corner and its high corner twice
        corners = boxes[:, [0, 1, 1]].reshape(-1, 3)
        return mopp.build(corners, np.arange(len(corners)).reshape(-1, 3), np.arange(len(boxes)))
    if isinstance(shape, bhkPackedNiTriStripsShape):
        data = blocks[shape.data]
        vertices = np.asarray(data.vertices, np.float64) * np.asarray(shape.scale[:3], np.float64)
        return mopp.build(vertices, np.asarray(data.triangles)[:, :3], packed_keys(data), shape.radius)
    vertices, triangles, _, keys = blocks[shape.data].mesh()
    return mopp.build(vertices, triangles, keys, radius=shape.radius)


def shape_box(blocks, index, within=()):
    """The (low, high) corners (2, 3) of the box holding the shape at ``index`` in its own
    space (Havok units), its convex radius included."""
    if index in within or not 0 <= index < len(blocks):
        raise FormatError(f"shape block {index} is missing or contains itself")
    block = blocks[index]
    radius = getattr(block, "radius", 0.0)
    if isinstance(block, bhkSphereShape):
        points = np.zeros((1, 3))
    elif isinstance(block, bhkBoxShape):
        half = np.asarray(block.dimensions, np.float64)
        points = np.stack([-half, half])
    elif isinstance(block, bhkCapsuleShape):
        points = np.array([block.first, block.second], np.float64)
    elif isinstance(block, bhkConvexVerticesShape):
        points = np.asarray(block.vertices, np.float64).reshape(-1, 4)[:, :3]
    elif isinstance(block, (bhkTransformShape, bhkMoppBvTreeShape)):
        low, high = shape_box(blocks, block.shape, (*within, index))
        if isinstance(block, bhkMoppBvTreeShape):
            return np.stack([low, high])
        matrix = block.matrix
        points = (low + CORNERS * (high - low)) @ matrix[:3, :3].T + matrix[:3, 3]
        radius = 0.0  # the child's box holds its radius
    elif isinstance(block, LISTS):
        boxes = np.array([shape_box(blocks, child, (*within, index)) for child in np.asarray(block.sub_shapes).tolist()])
        if not len(boxes):
            raise FormatError(f"the list of block {index} holds no shapes")
        points = boxes.reshape(-1, 3)
        radius = 0.0
    elif isinstance(block, bhkPackedNiTriStripsShape):
        data = block_at(blocks, block.data, hkPackedNiTriStripsData)
        points = np.asarray(getattr(data, "vertices", ()), np.float64).reshape(-1, 3) * np.asarray(block.scale[:3], np.float64)
    elif isinstance(block, bhkCompressedMeshShape):
        points = blocks[block.data].mesh()[0]
    else:
        raise FormatError(f"block {index} ({block.type_name}) has no bounding box here")
    if not len(points) or not np.isfinite(points).all():
        raise FormatError(f"shape block {index} has no finite points")
    return np.stack([points.min(axis=0) - radius, points.max(axis=0) + radius])
