"""Extra data shown as empties: connect points (connect_points), furniture markers, bounds and
the inventory marker (markers); Havok constraints (io.havok.constraints) share the export.

Each empty carries ``nif_extra_kind`` (what it shows), ``nif_extra`` (its extra data block) and
``nif_extra_item`` (its entry in the block, for blocks listing several), and ``nif_extra_basis``
(its local matrix as the import made it) and ``nif_extra_owner`` (the node block it hung under):
while both still hold, the export keeps the stored values, so an untouched import writes back
byte for byte. The empties are never written as nodes.

A block is rewritten only when at least one of its empties is exported; a block whose empties
are all left out of the export (or deleted) is kept as stored.
"""

import re

import bpy
import numpy as np
from mathutils import Matrix

from . import skin_export

KIND = "nif_extra_kind"
BLOCK = "nif_extra"
ITEM = "nif_extra_item"
BASIS = "nif_extra_basis"
OWNER = "nif_extra_owner"


def is_extra(obj):
    return KIND in obj


def plain(name):
    """An object name without the '.001' Blender adds to make names unique."""
    return re.sub(r"\.\d{3,}$", "", name)


def name_for(obj, stored=None):
    """The name an empty writes: ``stored`` while the object's name is still it (Blender may
    have added '.001', or cut a long name at 63 bytes), else the object's name without '.001'."""
    base = plain(obj.name)
    if stored is not None and (base == stored or len(obj.name.encode()) >= 59 and stored.startswith(base)):
        return stored
    return base


# -- import ---------------------------------------------------------------------------------
def new_empty(builder, name, kind, block_index, item, display="ARROWS", size=4.0):
    obj = builder.link(bpy.data.objects.new(name, None))
    obj[KIND] = kind
    obj[BLOCK] = block_index
    if item is not None:
        obj[ITEM] = item
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
    obj[OWNER] = owner_index
    obj[BASIS] = [value for row in obj.matrix_basis for value in row]


def build_extras(builder):
    """Empties for the extra data of every node the import made."""
    from . import connect_points, markers

    builders = {**connect_points.BUILDERS, **markers.BUILDERS}
    blocks = builder.nif.blocks
    shown = set()  # a block listed by several nodes is shown once, under the first
    for index, owner in list(builder.objects.items()):
        for ref in np.asarray(getattr(blocks[index], "extra_data", ())).tolist():
            if 0 <= ref < len(blocks) and type(blocks[ref]) in builders and ref not in shown:
                shown.add(ref)
                builders[type(blocks[ref])](builder, owner, index, ref, blocks[ref])


# -- export ---------------------------------------------------------------------------------
def kept(obj, owner_index):
    """Whether the empty still stands where the import put it, under the same node."""
    stored = obj.get(BASIS)
    if stored is None or len(stored) != 16 or obj.get(OWNER) != owner_index:
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
    index = obj.get(BLOCK)
    blocks = exporter.nif.blocks
    if not exporter.template or not isinstance(index, int) or not 0 <= index < len(blocks):
        return None
    return index if isinstance(blocks[index], cls) else None


def main_root(exporter):
    return exporter.nif.roots[0] if exporter.nif.roots else None


def write_extras(exporter, objects):
    """Write the extra data shown by ``objects`` (empties of ``is_extra``)."""
    from ..havok import constraints
    from . import connect_points, markers

    writers = {**connect_points.WRITERS, **markers.WRITERS, **constraints.WRITERS}
    by_kind = {}
    for obj in sorted(objects, key=lambda o: (o.get(ITEM, 1 << 30), o.name)):
        by_kind.setdefault(obj[KIND], []).append(obj)
    unknown = sorted(set(by_kind) - set(writers))
    if unknown:
        exporter.warn(f"empties of unknown extra data kinds are not written: {', '.join(unknown)}")
    for kind, writer in writers.items():
        if kind in by_kind:
            writer(exporter, by_kind[kind])
