"""Fallout 4 connect points as empties (see core.nif.blocks.connect_points).

A parent point (``P-Mag``, ``P-Scope``...) is an arrows empty named after it, hung under the
node its ``parent`` names and placed by its rotation, translation (game units) and scale; a
point whose parent names no node (``WorkshopConnectPoints``) hangs under the node holding the
block, and keeps that name in ``nif_connect_parent``. A child point (``C-Receiver``) is a
single-arrow empty at the origin of the node holding the block: the part's origin is what snaps
onto the parent point of that name; ``nif_connect_skinned`` keeps the block's skinned flag.

On export a point keeps its stored values while its empty is untouched; a moved or new one is
written from its empty (its parent's node name, its local rotation as a quaternion (w, x, y, z),
translation and uniform scale). New parent points go into the parent block of the root node (a
new one when it has none), new child names into its child block.
"""

from mathutils import Matrix, Quaternion

from ...core.errors import FormatError
from ...core.nif.blocks.connect_points import BSConnectPointChildren, BSConnectPointParents, ConnectPoint
from .extra_empties import attach, kept, main_root, name_for, new_empty, node_space, place, template_block
from .. import schema

WORKSHOP = "WorkshopConnectPoints"  # the parent name of points placed in the root's space


def point_matrix(point):
    rotation = Quaternion(point.rotation)  # (w, x, y, z)
    return Matrix.LocRotScale(point.translation, rotation, (point.scale,) * 3)


def build_parents(builder, owner, owner_index, block_index, block):
    nodes = {}
    for index, obj in builder.objects.items():
        nodes.setdefault(builder.nif.blocks[index].name, (index, obj))
    for item, point in enumerate(block.points):
        target_index, target = nodes.get(point.parent, (owner_index, owner))
        empty = new_empty(builder, point.name, "connect_point", block_index, item)
        empty[schema.NIF_CONNECT_PARENT] = point.parent
        place(builder, empty, target, target_index, point_matrix(point))


def build_children(builder, owner, owner_index, block_index, block):
    for item, name in enumerate(block.point_names):
        empty = new_empty(builder, name, "connect_child", block_index, item, "SINGLE_ARROW")
        empty[schema.NIF_CONNECT_SKINNED] = bool(block.skinned)
        place(builder, empty, owner, owner_index, Matrix.Identity(4))


BUILDERS = {BSConnectPointParents: build_parents, BSConnectPointChildren: build_children}


def _point(exporter, obj, stored):
    """The connect point an empty stands for."""
    owner_index, matrix = node_space(exporter, obj)
    if stored is not None and kept(obj, owner_index):
        return ConnectPoint(stored.parent, name_for(obj, stored.name), stored.rotation, stored.translation, stored.scale)
    blocks = exporter.nif.blocks
    parent = obj.get(schema.NIF_CONNECT_PARENT, WORKSHOP)
    names = {block.name for block in blocks if hasattr(block, "children")}
    if owner_index is not None and (parent in names or obj.get(schema.NIF_EXTRA_OWNER) != owner_index):
        parent = blocks[owner_index].name or WORKSHOP
    location, rotation, scale = matrix.decompose()
    if max(scale) - min(scale) > 1e-4 * max(abs(max(scale)), 1e-6):
        raise FormatError(f"connect point {obj.name!r} is scaled unevenly: a connect point takes one scale")
    return ConnectPoint(
        parent,
        name_for(obj, stored.name if stored is not None else None),
        tuple(rotation),  # (w, x, y, z)
        tuple(location),
        float(sum(scale) / 3),
    )


def write_parents(exporter, empties):
    groups = {}
    for obj in empties:
        groups.setdefault(template_block(exporter, obj, BSConnectPointParents), []).append(obj)
    new = groups.pop(None, [])
    for index, objs in groups.items():
        block = exporter.nif.blocks[index]
        block.points = [_point(exporter, obj, _stored(block.points, obj)) for obj in objs]
    index = _root_block(exporter, BSConnectPointParents, groups) if new else None
    if index is not None:
        block = exporter.nif.blocks[index]
        block.points = [*block.points, *(_point(exporter, obj, None) for obj in new)]


def write_children(exporter, empties):
    groups = {}
    for obj in empties:
        groups.setdefault(template_block(exporter, obj, BSConnectPointChildren), []).append(obj)
    new = groups.pop(None, [])
    for index, objs in groups.items():
        block = exporter.nif.blocks[index]
        block.point_names = [name_for(obj, _stored(block.point_names, obj)) for obj in objs]
        skinned = [bool(obj.get(schema.NIF_CONNECT_SKINNED, False)) for obj in objs]
        if any(skinned) != bool(block.skinned):
            block.skinned = int(any(skinned))
    index = _root_block(exporter, BSConnectPointChildren, groups) if new else None
    if index is not None:
        block = exporter.nif.blocks[index]
        block.point_names = [*block.point_names, *(name_for(obj) for obj in new)]
        block.skinned = int(bool(block.skinned) or any(obj.get(schema.NIF_CONNECT_SKINNED, False) for obj in new))


def _stored(items, obj):
    item = obj.get(schema.NIF_EXTRA_ITEM)
    return items[item] if isinstance(item, int) and 0 <= item < len(items) else None


def _root_block(exporter, cls, groups):
    """The block of class ``cls`` on the root node (among ``groups``' or the root's own), or a
    new one there; None (with a warning) in a file of another game than Fallout 4."""
    if exporter.game != "FO4":
        exporter.warn("connect points are written only in Fallout 4 files: new ones left out")
        return None
    root = main_root(exporter)
    if root is None:
        raise FormatError("connect points need a root node to hang from")
    for index in [*groups, *exporter.nif.blocks[root].extra_data]:
        if isinstance(exporter.nif.blocks[int(index)], cls):
            return int(index)
    exporter.require_writable("new connect points")
    name = "CPA" if cls is BSConnectPointParents else "CPT"
    return attach(exporter, root, cls(name=name))


WRITERS = {"connect_point": write_parents, "connect_child": write_children}
