"""hknpDynamicCompoundShape: child shapes placed by instances, and its BVH (hknpDynamicCompoundShapeData).

Compound (0xD0): composite shape header (0x60), hkArray of instances (0x80 each) and the free
list head (+0x70), the AABB of all instances (+0x80; min.w int24w, max.w 0), 32 bytes starting
with the mutable flag (+0xA0), the BVH data pointer (+0xC0).

Instance (0x80): transform (rotation as three columns, translation), scale (+0x40), child
shape pointer (+0x50), 40 bytes (shape tag 0xFFFF, ...). The w components carry int24w values:
column 0 the flags (0x40 enabled, 0x02 translated, 0x04 rotated, 0x08 scaled), column 2 the
child shape's size in memory (its object size for convex shapes, 0x90 for a compressed mesh),
the translation the BVH leaf node of the instance. The compound's shape key bits are the bit
length of the instance count, whatever the children's.

BVH (hkcdDynamicTree with 32-byte nodes, 0x40 struct): hkReferencedObject, hkArray of nodes, u32
first free node, 4 bytes, u32 leaf count, u32 path, u32 root, 12 bytes. A node is an AABB; min.w
holds the parent index (int24w), max.w two u16 children; a leaf has child 0 = 0 and child 1 =
the instance index. Node 0 is the null node; the last node is left free, as in the game's files.
"""

import numpy as np

from ...errors import FormatError
from ..objects import HavokObject, havok_class
from .base import GAME_UNITS, CompositeShape, int24w, summary_of

NODE = np.dtype([("min", "<f4", 3), ("parent", "<f4"), ("max", "<f4", 3), ("children", "<u4")])
ENABLED, TRANSLATED, ROTATED, SCALED = 0x40, 0x02, 0x04, 0x08
IDENTITY = np.eye(3)


class ShapeInstance:
    size = 0x80

    def __init__(self):
        self.transform = np.zeros((4, 4), np.float32)  # columns: rotation x, y, z, translation
        self.scale = (1.0, 1.0, 1.0, 1.0)
        self.shape = None
        self.tail = b"\xff\xff\xff\xff" + bytes(36)

    def sync(self, s):
        self.transform = s.array(self.transform, np.dtype(("<f4", (4,))), 4)
        self.scale = s.vec4(self.scale)
        self.shape = s.pointer(self.shape)
        self.tail = s.raw(self.tail, 40)

    @property
    def matrix(self):
        """4x4 transform (game units) from child shape space to compound space."""
        matrix = np.eye(4)
        matrix[:3, :3] = self.transform[:3, :3].T.astype(np.float64) * np.asarray(self.scale[:3])
        matrix[:3, 3] = self.transform[3, :3].astype(np.float64) * GAME_UNITS
        return matrix


@havok_class("hknpDynamicCompoundShapeData")
class DynamicCompoundShapeData(HavokObject):
    def __init__(self):
        self.reference = bytes(16)
        self.nodes = np.zeros(0, NODE)
        self.first_free = 0
        self.free_padding = bytes(4)
        self.num_leaves = 0
        self.path = 0
        self.root = 0
        self.tail = bytes(12)

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.nodes = s.hk_array(self.nodes, NODE, what="BVH nodes")
        self.first_free = s.u32(self.first_free)
        self.free_padding = s.raw(self.free_padding, 4)
        self.num_leaves = s.u32(self.num_leaves)
        self.path = s.u32(self.path)
        self.root = s.u32(self.root)
        self.tail = s.raw(self.tail, 12)


def alias(name):
    """Another name for an attribute: each compound calls its bounding-volume data its own way."""
    return property(lambda self: getattr(self, name), lambda self, value: setattr(self, name, value))


class CompoundShape(CompositeShape):
    """hknpCompoundShape, the layout the dynamic and static compounds share: the instances and
    the free list head, the AABB of all instances, 32 bytes of mutation data, the pointer to the
    bounding-volume data (a BVH, or the static compound's tree)."""

    flags = 0x0004
    mutation_default = bytes(32)

    def __init__(self):
        super().__init__()
        self.instances = []
        self.first_free = -1
        self.free_padding = bytes(12)
        self.aabb = np.zeros((2, 4), np.float32)
        self.mutation = self.mutation_default
        self.volume = None
        self.volume_padding = bytes(8)

    def sync(self, s):
        self.sync_composite(s)
        self.instances = s.hk_array(self.instances, ShapeInstance, what="shape instances")
        self.first_free = s.i32(self.first_free)
        self.free_padding = s.raw(self.free_padding, 12)
        self.aabb = s.array(self.aabb, np.dtype(("<f4", (4,))), 2)
        self.mutation = s.raw(self.mutation, 32)
        self.volume = s.pointer(self.volume)
        self.volume_padding = s.raw(self.volume_padding, 8)

    @property
    def children(self):
        return [instance.shape for instance in self.instances]


@havok_class("hknpDynamicCompoundShape")
class DynamicCompoundShape(CompoundShape):
    mutation_default = b"\x01" + bytes(31)  # the mutable flag
    bvh = alias("volume")

    def summary(self, within=()):
        return {"type": "compound", "children": [summary_of(child, (*within, self)) for child in self.children]}

    @classmethod
    def build(cls, children):
        """A compound of ``children``: (shape, 4x4 transform in game units) pairs; the transform
        may scale. Instance flags, the AABB and the BVH are computed."""
        shape = cls()
        shape.instances = [make_instance(child, matrix) for child, matrix in children]
        shape.rebuild()
        return shape

    def rebuild(self):
        """Recompute everything derived from the instances: AABB, key bits, BVH."""
        count = len(self.instances)
        if not count:
            raise FormatError("a compound shape needs at least one child")
        boxes = np.array([instance_box(instance) for instance in self.instances])
        nodes, leaf_of = _build_tree(boxes)
        for instance, leaf in zip(self.instances, leaf_of):
            instance.transform[3, 3] = int24w(leaf)
        self.shape_key_bits = count.bit_length()
        self.aabb = np.zeros((2, 4), np.float32)
        self.aabb[0, :3] = boxes[:, 0].min(axis=0)
        self.aabb[1, :3] = boxes[:, 1].max(axis=0)
        self.aabb[0, 3] = int24w(count.bit_length() - 1)
        bvh = DynamicCompoundShapeData()
        bvh.nodes = nodes
        bvh.first_free = len(nodes) - 1
        bvh.num_leaves = count
        bvh.root = 1
        self.bvh = bvh


def make_instance(child, matrix):
    matrix = np.asarray(matrix, np.float64)
    linear = matrix[:3, :3]
    scale = np.linalg.norm(linear, axis=0)
    if (scale <= 0).any():
        raise FormatError("a compound child's transform collapses an axis")
    rotation = linear / scale
    if np.linalg.det(rotation) < 0:
        raise FormatError("a compound child's transform mirrors it")
    instance = ShapeInstance()
    flags = ENABLED
    translation = matrix[:3, 3] / GAME_UNITS
    flags |= TRANSLATED if np.abs(translation).max() > 0 else 0
    flags |= ROTATED if np.abs(rotation - IDENTITY).max() > 1e-6 else 0
    flags |= SCALED if np.abs(scale - 1).max() > 1e-6 else 0
    instance.transform[:3, :3] = rotation.T  # rows of the stored array are the columns
    instance.transform[3, :3] = translation
    instance.transform[0, 3] = int24w(flags)
    instance.transform[2, 3] = int24w(getattr(child, "MEMORY_SIZE", None) or len(child.encode()[0]))
    instance.scale = (*scale, 1.0)
    instance.shape = child
    return instance


def instance_box(instance):
    """The instance's child vertices placed in compound space, grown by the convex radius (Havok
    units)."""
    child = instance.shape
    mesh = getattr(child, "mesh", None)
    if mesh is None:
        raise FormatError(f"a compound child must be a shape with geometry, not {getattr(child, 'class_name', child)}")
    vertices, _ = mesh()
    if not len(vertices):
        vertices = np.zeros((1, 3))
    matrix = instance.matrix
    placed = (vertices @ matrix[:3, :3].T + matrix[:3, 3]) / GAME_UNITS
    grow = float(getattr(child, "convex_radius", 0.0)) * max(instance.scale[:3])
    return placed.min(axis=0) - grow, placed.max(axis=0) + grow


def _build_tree(boxes):
    """BVH nodes in preorder from node 1 (node 0 null, one free node at the end), splitting at
    the median of the widest axis of the box centres; and each instance's leaf node."""
    count = len(boxes)
    nodes = np.zeros(2 * count + 1, NODE)
    leaf_of = np.zeros(count, np.int64)
    centres = boxes.mean(axis=1)
    stack = [(np.arange(count), 0, 1)]  # instances, parent node, this node
    while stack:
        members, parent, node = stack.pop()
        nodes["min"][node] = boxes[members, 0].min(axis=0)
        nodes["max"][node] = boxes[members, 1].max(axis=0)
        nodes["parent"][node] = int24w(parent)
        if len(members) == 1:
            nodes["children"][node] = members[0] << 16
            leaf_of[members[0]] = node
            continue
        axis = np.ptp(centres[members], axis=0).argmax()
        members = members[np.argsort(centres[members, axis], kind="stable")]
        half = len(members) // 2
        left, right = node + 1, node + 2 * half  # the left subtree takes 2 * half - 1 nodes
        nodes["children"][node] = left | (right << 16)
        stack.append((members[half:], node, right))
        stack.append((members[:half], node, left))
    return nodes, leaf_of

