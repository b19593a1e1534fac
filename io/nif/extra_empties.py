"""What the empties showing extra data share (the modules showing each kind, connect_points,
markers and io.havok.constraints, build on it; extras.py sends each block to its module):

Each empty carries ``nif_extra_kind`` (what it shows), ``nif_extra`` (its extra data block) and
``nif_extra_item`` (its entry in the block, for blocks listing several), and ``nif_extra_basis``
(its local matrix as the import made it) and ``nif_extra_owner`` (the node block it hung under):
while both still hold, the export keeps the stored values, so an untouched import writes back
byte for byte. The empties are never written as nodes.

A block is rewritten only when at least one of its empties is exported; a block whose empties
are all left out of the export (or deleted) is kept as stored.
"""

import bpy
import numpy as np
from mathutils import Matrix

from ..names import unsuffixed
from . import skin_export
from .. import schema



def is_extra(obj):
    return schema.NIF_EXTRA_KIND in obj


def name_for(obj, stored=None):
    """The name an empty writes: ``stored`` while the object's name is still it (Blender may
    have added '.001', or cut a long name at 63 bytes), else the object's name without '.001'."""
    base = unsuffixed(obj.name)
    if stored is not None and (base == stored or len(obj.name.encode()) >= 59 and stored.startswith(base)):
        return stored
    return base


# -- import ---------------------------------------------------------------------------------
def new_empty(builder, name, kind, block_index, item, display="ARROWS", size=4.0):
    obj = builder.link(bpy.data.objects.new(name, None))
    obj[schema.NIF_EXTRA_KIND] = kind
    obj[schema.NIF_EXTRA] = block_index
    if item is not None:
        obj[schema.NIF_EXTRA_ITEM] = item
    obj.empty_display_type = display
    obj.empty_display_size = size
    obj.hide_render = True
    obj.rotation_mode = "QUATERNION"
    return obj


def place(builder, obj, owner, owner_index, matrix):
    """Hang ``obj`` under ``owner`` (an object, or (armature, bone name)) at ``matrix``, a local
    matrix in the owner node's space (game units), and remember both."""
    if isinstance(owner, tuple):
        builder.skins.place_under_bone(obj, owner, matrix)
    else:
        obj.parent = owner
        obj.matrix_basis = matrix
    obj[schema.NIF_EXTRA_OWNER] = owner_index
    obj[schema.NIF_EXTRA_BASIS] = [value for row in obj.matrix_basis for value in row]


# -- export ---------------------------------------------------------------------------------
def kept(obj, owner_index):
    """Whether the empty still stands where the import put it, under the same node."""
    stored = obj.get(schema.NIF_EXTRA_BASIS)
    if stored is None or len(stored) != 16 or obj.get(schema.NIF_EXTRA_OWNER) != owner_index:
        return False
    return np.allclose(np.array(obj.matrix_basis, np.float64).ravel(), np.array(stored, np.float64), atol=1e-6)


def node_space(exporter, obj):
    """(node block index the empty hangs under, its matrix in that node's space), as the
    exporter wrote its parent; (None, world matrix in game units) for an empty without one."""
    parent = obj.parent
    if parent is not None and obj.parent_type == "BONE" and parent.type == "ARMATURE":
        key = (parent.name, obj.parent_bone)
        if key in exporter.bone_nodes:
            bone_world = parent.matrix_world @ skin_export.bone_node_world(parent, obj.parent_bone)
            return exporter.bone_nodes[key], bone_world.inverted() @ obj.matrix_world
    if parent is not None and parent in exporter.block_of:
        return exporter.block_of[parent], parent.matrix_world.inverted() @ obj.matrix_world
    return None, Matrix.Scale(1.0 / exporter.scale, 4) @ obj.matrix_world


def attach(exporter, owner_index, block):
    """Append a new extra data block to a node's list; returns its index."""
    index = exporter.add(block)
    node = exporter.nif.blocks[owner_index]
    node.extra_data = np.array([*np.asarray(node.extra_data).tolist(), index], np.int32)
    return index


def template_block(exporter, obj, cls):
    """The template block of class ``cls`` the empty came from, or None."""
    index = obj.get(schema.NIF_EXTRA)
    blocks = exporter.nif.blocks
    if not exporter.template or not isinstance(index, int) or not 0 <= index < len(blocks):
        return None
    return index if isinstance(blocks[index], cls) else None


def main_root(exporter):
    return exporter.nif.roots[0] if exporter.nif.roots else None
