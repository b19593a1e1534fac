"""Node transforms and children read straight from a NIF's bytes with struct, apart from the
product's block decoders: what placement tests compare Blender with. The codec's header gives
only the block types, sizes and strings (their decoding is tested on its own); each block's
fields are unpacked here from its offset (little-endian PC files, 20.2.0.7, FO3 to FO76)."""

import struct

import numpy as np

from precombined_nif.core.nif import NifFile

# blocks laid out as NiAVObject (+ NiNode children): every type nif.xml derives from NiNode that a
# 20.2.0.7 Bethesda file may hold, and the shape types of the corpus
NODE_TYPES = {
    "NiNode", "BSFadeNode", "BSLeafAnimNode", "RootCollisionNode", "BSValueNode", "BSOrderedNode",
    "BSMultiBoundNode", "BSRangeNode", "BSBlastNode", "BSDamageStage", "BSDebrisNode", "BSTreeNode",
    "NiBillboardNode", "NiSwitchNode", "NiLODNode", "BSMasterParticleSystem", "NiBSAnimationNode",
    "NiBSParticleNode", "NiSortAdjustNode", "NiBone", "CsNiNode", "NiRoomGroup", "NiRoom",
    "BSDistantObjectInstancedNode",
}
SHAPE_TYPES = {
    "BSTriShape", "BSSubIndexTriShape", "BSMeshLODTriShape", "BSDynamicTriShape", "NiTriShape", "NiTriStrips",
    "BSLODTriShape", "BSSegmentedTriShape",
}


class RawNode:
    def __init__(self, name, local, children, collision):
        self.name = name
        self.local = local
        self.children = children
        self.collision = collision


def read_nodes(path):
    """{block index: RawNode} of a file's nodes and shapes, and the file's roots."""
    data = path.read_bytes()
    nif = NifFile.from_bytes(data)
    header = nif.header
    sizes = [int(size) for size in header.block_sizes]
    start = len(data) - len(nif.trailing) - 4 * (1 + len(nif.roots)) - sum(sizes)
    strings = header.strings.strings
    bs = header.bs_version
    nodes = {}
    offset = start
    for index, size in enumerate(sizes):
        type_name = header.block_types[int(header.block_type_indices[index]) & 0x7FFF]
        if type_name in NODE_TYPES or type_name in SHAPE_TYPES:
            nodes[index] = _node(data, offset, bs, strings, type_name in NODE_TYPES)
        offset += size
    return nodes, list(nif.roots)


def _node(data, at, bs, strings, has_children):
    def take(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values

    (name_index,) = take("i")
    name = strings[name_index] if 0 <= name_index < len(strings) else None
    (extra,) = take("I")
    take(f"{extra}i")
    take("i")  # controller
    take("I" if bs > 26 else "H")  # flags
    translation = take("3f")
    rotation = np.array(take("9f"), np.float64).reshape(3, 3)
    (scale,) = take("f")
    if bs <= 34:
        (count,) = take("I")
        take(f"{count}i")
    (collision,) = take("i")
    local = np.eye(4)
    local[:3, :3] = rotation * scale
    local[:3, 3] = translation
    children = []
    if has_children:
        (count,) = take("I")
        children = list(take(f"{count}i"))
    return RawNode(name, local, children, collision)


def world_matrices(nodes, roots):
    """{block index: 4x4 world matrix}, walking from the roots (first parent wins)."""
    worlds = {}
    stack = [(root, np.eye(4)) for root in roots]
    while stack:
        index, parent = stack.pop()
        if index in worlds or index not in nodes:
            continue
        worlds[index] = parent @ nodes[index].local
        stack.extend((child, worlds[index]) for child in nodes[index].children)
    return worlds
