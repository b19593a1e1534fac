"""Where a NIF's nodes are: each block's parent and its world matrix (the composition of the
local transforms from its root down)."""

import numpy as np

from .blocks.nodes import NiNode
from ..transforms import transform_matrix


def parents(nif):
    """{child index: parent index} through NiNode children (a block with two parents keeps the
    first, as the import shows it)."""
    found = {}
    for index, block in enumerate(nif.blocks):
        if isinstance(block, NiNode):
            for child in np.asarray(block.children).tolist():
                if 0 <= child < len(nif.blocks) and child != index:
                    found.setdefault(child, index)
    return found


def world_matrix(nif, index, parent_of=None):
    """The 4x4 world matrix of block ``index`` (file space, game units)."""
    parent_of = parents(nif) if parent_of is None else parent_of
    matrix = np.eye(4)
    seen = set()
    while index is not None and index not in seen:
        seen.add(index)
        block = nif.blocks[index]
        matrix = transform_matrix(block.rotation, block.translation, block.scale) @ matrix
        index = parent_of.get(index)
    return matrix
