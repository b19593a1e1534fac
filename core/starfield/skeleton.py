"""A Starfield skeleton's bones by name. Starfield's skinned NIFs hold no bone nodes: their skin
names its bones (SkinAttach) and stores each one's bind transform, and the game poses them at
the nodes of the race's skeleton NIF (``HUMAN_SKELETON`` for humans). NIF node transforms and
.mesh positions are both in metres: a vertex the skin moves lands at ``node @ bind @ position``
with the node placed in the skeleton root's space, which the shape's root stands for."""

import numpy as np

from ..errors import FormatError
from ..nif import NifFile, scene_graph
from ..nif.blocks.nodes import NiNode
from ..transforms import transform_matrix

HUMAN_SKELETON = "meshes\\actors\\human\\characterassets\\skeleton.nif"


class Skeleton:
    """``placements``: {node name: 4x4 placement in the skeleton root's space}; ``parents``:
    {node name: the name of the node above it, or None}; ``path``: where it was read."""

    def __init__(self, placements, parents, path=None):
        self.placements = placements
        self.parents = parents
        self.path = path

    @classmethod
    def from_nif(cls, nif):
        above = scene_graph.parents(nif)
        placements, parents = {}, {}
        for index, block in enumerate(nif.blocks):
            if not isinstance(block, NiNode) or not block.name or block.name in placements:
                continue
            matrix, node, seen = np.eye(4), index, set()
            while node in above and node not in seen:  # up to the root, whose own transform is the file's
                seen.add(node)
                matrix = transform_matrix(nif.blocks[node].rotation, nif.blocks[node].translation, nif.blocks[node].scale) @ matrix
                node = above[node]
            placements[block.name] = matrix
            parent = above.get(index)
            parents[block.name] = nif.blocks[parent].name if parent is not None and nif.blocks[parent].name else None
        return cls(placements, parents, nif.path)

    @classmethod
    def read(cls, path):
        return cls.from_nif(NifFile.read(path))

    @classmethod
    def from_bytes(cls, data, path=None):
        return cls.from_nif(NifFile.from_bytes(bytearray(data), path=path))

    def missing(self, bones):
        """The names of ``bones`` this skeleton has no node for."""
        return [name for name in bones if name not in self.placements]

    def bone_parent(self, name, bones):
        """The nearest node above ``name`` that is one of ``bones``, or None."""
        seen = set()
        parent = self.parents.get(name)
        while parent is not None and parent not in seen:
            if parent in bones:
                return parent
            seen.add(parent)
            parent = self.parents.get(parent)
        return None


def find_skeleton(data_files, path=HUMAN_SKELETON):
    """The Skeleton at the Data-relative ``path`` in ``data_files`` (a core.archives.data
    DataFiles: loose, then archived), or None when none holds it; a damaged one raises
    FormatError naming it."""
    found = data_files.read(path, "meshes")
    if found is None:
        return None
    data, where = found
    try:
        return Skeleton.from_bytes(data, where)
    except FormatError as error:
        raise error.located(path=where) from None
