"""Which combined mesh (``<cell>_<group>_OC.nif``) the Creation Kit puts a reference into.

Inside, the CK keys a reference by the centre of its bound (bacup crc.rs ``spatial_group_key``,
traced in the CK): each coordinate floored, the integer taken as an unsigned 32-bit value and
masked to a multiple of 512 (0xFFFFFE00: negative cells wrap), the three turned back into
floats; the group is Bethesda's CRC-32 of those 12 bytes shifted right by two. A base flagged
non-occluder (record flag 0x10) keys into its own class, bit 31 (bacup precombine.rs). Checked
here on the corpus cell: every copy's bound centre in its 11 combined meshes keys to its file's
group. Outside, the CK keys by the subdivisions of the cell the bound overlaps, which bacup
recovered from the CK's output rather than traced: not reproduced here.

A reference's bound is its model's shapes' bounding spheres, each moved up its nodes to the
model's root (whose own transform the placement replaces), placed by the reference and merged
one after the other into the smallest sphere holding both (bacup nif.rs ``placed_bound``,
scene.rs ``merged_bound``).
"""

import math
import struct

import numpy as np

from ...nif.blocks.nodes import NiNode
from ...nif.blocks.tri_shape import BSTriShape
from ...nif.scene_graph import parents
from ...plugin.references import rotation_matrix
from ...transforms import transform_matrix
from ..names import raw_crc32

CELL_MASK = 0xFFFFFE00  # 512-unit cells
NON_OCCLUDER_CLASS = 0x80000000
BASE_NON_OCCLUDER = 0x10  # the STAT/SCOL record header flag


def interior_group(center, non_occluder=False):
    """The CK's group key of a reference whose bound centre is ``center`` in an interior cell."""
    quantized = [float(math.floor(value) & 0xFFFFFFFF & CELL_MASK) for value in center]
    key = raw_crc32(struct.pack("<3f", *quantized)) >> 2
    return key | (NON_OCCLUDER_CLASS if non_occluder else 0)


def shape_bounds(nif):
    """[(centre, radius)] of a model's shapes in the space of its root's parent: each shape's
    bounding sphere through its own transform and its parents' below the root, in the order a
    walk of the nodes' children from the root meets them."""
    root = nif.roots[0] if nif.roots and 0 <= nif.roots[0] < len(nif.blocks) else None
    if root is None:
        return []
    parent_of = parents(nif)
    found, stack, seen = [], [root], set()
    while stack:
        index = stack.pop()
        if index in seen or not 0 <= index < len(nif.blocks):
            continue
        seen.add(index)
        block = nif.blocks[index]
        if isinstance(block, BSTriShape):
            matrix, scale, at = np.eye(4), 1.0, index
            while at is not None and at != root:
                node = nif.blocks[at]
                matrix = transform_matrix(node.rotation, node.translation, node.scale) @ matrix
                scale *= abs(node.scale)
                at = parent_of.get(at)
            center = (matrix @ np.append(np.asarray(block.bound_center, np.float64), 1.0))[:3]
            found.append((center, block.bound_radius * scale))
        elif isinstance(block, NiNode):
            stack.extend(reversed([int(child) for child in block.children]))
    return found


def merged_bound(bounds):
    """The sphere holding all ``bounds``, merged one after the other; None when there is none."""
    if not bounds:
        return None
    center, radius = np.asarray(bounds[0][0], np.float64), float(bounds[0][1])
    for other, other_radius in bounds[1:]:
        other = np.asarray(other, np.float64)
        distance = float(np.linalg.norm(other - center))
        if radius >= distance + other_radius:
            continue
        if other_radius >= distance + radius:
            center, radius = other, float(other_radius)
            continue
        merged = (distance + radius + other_radius) / 2
        center = center + (merged - radius) / distance * (other - center)
        radius = merged
    return center, radius


def placed_bound(bounds, position, angles, scale):
    """The merged bound of a model's shape ``bounds`` placed at a reference's DATA position and
    rotation (radians) and its scale; None for a model without shapes."""
    matrix = rotation_matrix(angles) * scale
    placed = [(matrix @ np.asarray(center) + np.asarray(position, np.float64), radius * abs(scale))
              for center, radius in bounds]
    return merged_bound(placed)
