"""hknpStaticCompoundShape: child shapes placed by instances, found through a static AABB tree
(hknpStaticCompoundShapeData). Fallout 4's Creation Kit writes it for the collision kept
inside precombined cells (corpus: 00001E58_A8F0581B_OC.NIF, a CLONE node's collision).

Shape (0xD0): the dynamic compound's layout (compound.py): composite header, hkArray of 0x80-byte
instances and the free list head (+0x70), the AABB of all instances (+0x80, its w components
are plain floats whose meaning is not known: kept as stored), 32 bytes (+0xA0), the tree data
pointer (+0xC0). Instance flags: 0x40 enabled, 0x02 translated, 0x04 rotated, 0x08 scaled,
0x20 with a scaled surface (the corpus's scaled instance has it).

Tree data (0x40): hkReferencedObject, hkArray of 6-byte Codec3Axis6 nodes (static_tree.py), the
domain (two vectors: the shape's AABB, w included). A leaf's value is its instance index.
"""

import numpy as np

from ...errors import FormatError
from ..objects import HavokObject, havok_class
from .base import summary_of
from .compound import CompoundShape, alias, instance_box, make_instance
from .static_tree import build_trees, decode_tree

NODE = np.dtype(("u1", (6,)))
DATA_BYTES = 3
SCALE_SURFACE = 0x20


@havok_class("hknpStaticCompoundShapeData")
class StaticCompoundShapeData(HavokObject):
    def __init__(self):
        self.reference = bytes(16)
        self.nodes = np.zeros(0, NODE)
        self.domain = np.zeros((2, 4), np.float32)

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.nodes = s.hk_array(self.nodes, NODE, what="tree nodes")
        self.domain = s.array(self.domain, np.dtype(("<f4", (4,))), 2)

    def leaves(self):
        """{instance index: its box in the tree (Havok units)}, every node checked."""
        return decode_tree(self.nodes, self.domain[:, :3], DATA_BYTES)


@havok_class("hknpStaticCompoundShape")
class StaticCompoundShape(CompoundShape):
    tree = alias("volume")

    def summary(self, within=()):
        return {
            "type": "static_compound",
            "tree_nodes": len(self.tree.nodes) if isinstance(self.tree, StaticCompoundShapeData) else None,
            "children": [summary_of(child, (*within, self)) for child in self.children],
        }

    @classmethod
    def build(cls, children):
        """A static compound of ``children``: (shape, 4x4 transform in game units) pairs."""
        shape = cls()
        shape.instances = [make_instance(child, matrix) for child, matrix in children]
        for instance, (_, matrix) in zip(shape.instances, children):
            if not np.allclose(np.asarray(instance.scale[:3]), 1.0):
                flags = int(instance.transform[0, 3].view(np.uint32)) | SCALE_SURFACE
                instance.transform[0, 3] = np.uint32(flags).view(np.float32)
        shape.rebuild()
        return shape

    def rebuild(self):
        """Recompute the AABB and the tree from the instances (after a child changed). The
        instances are put in the tree's leaf order, so a leaf's value is its instance index;
        the AABB's w values are kept."""
        count = len(self.instances)
        if not count:
            raise FormatError("a compound shape needs at least one child")
        boxes = np.array([instance_box(instance) for instance in self.instances], np.float32)
        self.aabb[0, :3] = boxes[:, 0].min(axis=0)
        self.aabb[1, :3] = boxes[:, 1].max(axis=0)
        nodes, order = build_trees(boxes, [0], self.aabb[None, :, :3], DATA_BYTES)
        self.instances = [self.instances[k] for k in order]
        self.shape_key_bits = count.bit_length()
        tree = self.tree if isinstance(self.tree, StaticCompoundShapeData) else StaticCompoundShapeData()
        tree.nodes = nodes
        tree.domain = self.aabb.copy()
        self.tree = tree
