"""The collision the Creation Kit clones into a combined mesh: per combined reference whose
model holds a physics system it does not merge into ``<cell>_Physics.nif`` (a body not static on
layer 1, physics.model_collision), that system's collision objects placed where the reference
places their nodes. Checked on the corpus cell's three such files (ck-precombined/
00001E58_0F5ED9F3, A8F0581B, AAE782E3): the root gets a BSXFlags of 2 as its extra data (block 1,
the geometry's NiNode then block 2), and after the geometry a NiNode "HavokRoot" (flags 14,
identity) is the root's second child; under it per collision object of the system, in the
model's block order, a NiNode (flags 14, no children) with the object after it, the system after
the first object. The node of the object on the model's root is named "CLONE <base EditorID>" and
stands at the REFR's DATA position, the CK's rotation (ck_rotation) and XSCL scale, to the bit
(the combined instances' own rotation and translation); another object's node keeps its name
(``Point001``, ``Point002``) and stands at the reference's placement times its place in the model
(the CK's float32 bits of that product unchecked: the corpus lacks those models). The objects'
flags (0x88, 0x80) and body ids, and the system's bytes, are the model's.

Not known from the CK's files, so not written and named instead: a system whose first object is
not on the model's root, a model with two cloned systems, and a SCOL component's collision.
Several cloned references in one file (none in the corpus) are written in the build's reference
order."""

import copy

import numpy as np

from ...nif.blocks.collision import bhkNPCollisionObject
from ...nif.blocks.extra_data import NiIntegerExtraData
from ...nif.blocks.nodes import NiNode
from ...nif.scene_graph import parents
from ...transforms import transform_parts
from .ck_rotation import ck_rotation
from .placements import placement
from .shapes import below_root

NODE_FLAGS = 14
BSX_FLAGS = 2
HAVOK_ROOT = "HavokRoot"


class Clone:
    """A reference's cloned collision: its node name, its REFR's DATA position and angles and
    XSCL scale, the model and [(collision object index, node index)] of the cloned system, the
    root's first."""

    def __init__(self, name, position, angles, scale, model, objects):
        self.name, self.model, self.objects = name, model, objects
        self.position, self.rotation, self.scale = position, ck_rotation(angles), scale
        self.placement = placement(position, angles, scale)


def cloned_objects(model, systems):
    """([(collision object index, node index)] of the one cloned system, why not written or None)
    of a model whose cloned systems' block indices are ``systems``."""
    if not systems:
        return [], None
    if len(systems) > 1:
        return [], f"{len(systems)} cloned systems (the CK's files show one per model)"
    objects = [(index, c.target) for index, c in model.blocks_of(bhkNPCollisionObject) if c.data == systems[0]]
    root = model.roots[0] if model.roots else None
    if any(not (0 <= target < len(model.blocks) and isinstance(model.blocks[target], NiNode)) for _, target in objects):
        return [], f"cloned collision block {systems[0]} on a block that is no node"
    if objects[0][1] != root:
        return [], f"cloned collision block {systems[0]} not first on the model's root (the CK's files show it there)"
    return objects, None


def placed_node(clone, number, target, matrix):
    """The node of a cloned object: on the root, the REFR's own parts (DATA position, ck_rotation,
    XSCL: the bits the CK's three files hold), elsewhere its placed matrix's."""
    if number == 0:
        rotation, translation, scale = tuple(map(float, clone.rotation.ravel())), tuple(clone.position), clone.scale
        return NiNode(name=clone.name, flags=NODE_FLAGS, translation=translation, rotation=rotation, scale=scale)
    rotation, translation, scale = transform_parts(matrix)
    return NiNode(name=clone.model.blocks[target].name, flags=NODE_FLAGS, translation=translation, rotation=rotation,
                  scale=scale)


def havok_blocks(clones, start):
    """The HavokRoot subtree's blocks, the first at index ``start``."""
    havok = NiNode(name=HAVOK_ROOT, flags=NODE_FLAGS)
    blocks = [havok]
    for clone in clones:
        model = clone.model
        parent_of, root = parents(model), model.roots[0]
        system_at = None
        for number, (index, target) in enumerate(clone.objects):
            matrix = clone.placement @ below_root(model, target, parent_of, root)
            node = placed_node(clone, number, target, matrix)
            at = start + len(blocks)
            collision = copy.copy(model.blocks[index])
            node.collision_object, collision.target = at + 1, at
            if system_at is None:
                system_at = at + 2
                blocks += [node, collision, copy.copy(model.blocks[collision.data])]
            else:
                blocks += [node, collision]
            collision.data = system_at
            havok.children = [*havok.children, at]
    return blocks


def bsx_flags():
    return NiIntegerExtraData("BSXFlags", name="BSX", integer_data=BSX_FLAGS)
