"""hkcdStaticTree codecs: the bounding volume trees of compressed meshes.

Nodes are stored in preorder: a node's left child follows it, its right child comes after the
left subtree. Each node holds its box quantised against its parent's (decoded) box: per axis one
byte, high nibble h and low nibble l, min = parent min + h^2/226 * parent extent, max = parent
max - l^2/226 * parent extent. The root is quantised against the tree's domain.

Codec3Axis4 (a section's primitives; xyz + 1 byte): odd byte = inner node whose right child is
``byte & 0xFE`` nodes further on; even byte = leaf of primitive ``byte / 2``.
Codec3Axis5 (the sections; xyz + 2 bytes): high bit of the first = inner node, the other 15 bits
v: right child 2v nodes further on; else a leaf of section v.
"""

import numpy as np

from ...errors import FormatError
from .base import spans

STEP = np.float32(1.0 / 226.0)


def _decode_boxes(parents, codes):
    """Boxes (k, 2, 3) from parent boxes and per-axis codes, in float32 as the game computes."""
    low, high = parents[:, 0], parents[:, 1]
    extent = high - low
    hi = (codes >> 4).astype(np.float32)
    lo = (codes & 15).astype(np.float32)
    return np.stack([hi * hi * STEP * extent + low, -(lo * lo) * STEP * extent + high], axis=1)


def _encode_boxes(parents, boxes):
    """The largest nibbles whose decoded boxes still contain ``boxes``: (codes, decoded)."""
    low, high = parents[:, 0], parents[:, 1]
    extent = (high - low).astype(np.float64)
    flat = extent <= 0
    safe = np.where(flat, 1.0, extent)
    hi = np.floor(np.sqrt(np.clip((boxes[:, 0] - low) / safe * 226.0, 0, 225))).astype(np.int64)
    lo = np.floor(np.sqrt(np.clip((high - boxes[:, 1]) / safe * 226.0, 0, 225))).astype(np.int64)
    hi[flat] = 0
    lo[flat] = 0
    while True:  # float32 rounding may overshoot by one step
        decoded = _decode_boxes(parents, (hi << 4) | lo)
        low_out = decoded[:, 0] > boxes[:, 0]
        high_out = decoded[:, 1] < boxes[:, 1]
        if not (low_out.any() or high_out.any()):
            return ((hi << 4) | lo).astype(np.uint8), decoded
        hi = np.where(low_out, hi - 1, hi)
        lo = np.where(high_out, lo - 1, lo)


def build_trees(boxes, starts, domains, wide):
    """Trees over groups of leaf boxes: the leaves of tree k are ``boxes[starts[k]:starts[k+1]]``
    (m, 2, 3), its root quantised in ``domains[k]``. Returns the nodes of all trees, tree after
    tree, (n, 4) or, ``wide``, (n, 5) uint8, and the leaf order: the leaf of value v in tree k
    is box ``order[starts[k] + v]``. Nodes split at the median of the widest axis of the leaf
    centres, one tree level at a time for all trees at once."""
    boxes = np.asarray(boxes, np.float32)
    starts = np.asarray(starts, np.int64)
    sizes = np.append(starts[1:], len(boxes)) - starts
    if (sizes < 1).any() or sizes.max() > (0x8000 if wide else 128):
        raise FormatError(f"a tree of {sizes.max()} leaves does not fit its codec")
    centres = boxes.mean(axis=1)
    nodes = np.zeros((int((2 * sizes - 1).sum()), 5 if wide else 4), np.uint8)
    order = np.arange(len(boxes))
    tree_start = np.repeat(starts, sizes)
    # the segments of this level: leaf range in ``order``, node index, decoded parent box
    seg_start, seg_length = starts, sizes
    seg_node = np.cumsum(2 * sizes - 1) - (2 * sizes - 1)
    seg_parent = np.asarray(domains, np.float32).reshape(-1, 2, 3)
    while len(seg_start):
        positions, label = spans(seg_start, seg_length)
        offsets = np.cumsum(seg_length) - seg_length
        members = order[positions]
        low = np.minimum.reduceat(boxes[members, 0], offsets)
        box = np.stack([low, np.maximum.reduceat(boxes[members, 1], offsets)], axis=1)
        nodes[seg_node, :3], decoded = _encode_boxes(seg_parent, box)

        leaf = seg_length == 1
        value = seg_start[leaf] - tree_start[seg_start[leaf]]
        nodes[seg_node[leaf], 3:] = np.stack([value >> 8, value & 0xFF], axis=1) if wide else (value << 1)[:, None]
        inner = ~leaf
        # sort each inner segment's leaves by their centre on the segment's widest axis
        spread = np.maximum.reduceat(centres[members], offsets) - np.minimum.reduceat(centres[members], offsets)
        key = centres[members, spread.argmax(axis=1)[label]]
        keep = inner[label]
        ranked = np.lexsort((key[keep], label[keep]))
        order[positions[keep]] = members[keep][ranked]

        start, length, node = seg_start[inner], seg_length[inner], seg_node[inner]
        half = length // 2
        nodes[node, 3:] = np.stack([0x80 | half >> 8, half & 0xFF], axis=1) if wide else ((2 * half) | 1)[:, None]
        seg_start = np.concatenate([start, start + half])
        seg_length = np.concatenate([half, length - half])
        seg_node = np.concatenate([node + 1, node + 2 * half])
        seg_parent = np.concatenate([decoded[inner], decoded[inner]])
    return nodes, order


def decode_tree(nodes, domain, wide):
    """{leaf value: decoded box} of a stored tree, checking every child index."""
    nodes = np.asarray(nodes, np.uint8)
    leaves = {}
    stack = [(0, np.asarray(domain, np.float32).reshape(1, 2, 3))] if len(nodes) else []
    visited = 0
    while stack:
        node, parent = stack.pop()
        visited += 1
        if node >= len(nodes) or visited > len(nodes):
            raise FormatError(f"tree node {node} is out of range or the tree loops")
        box = _decode_boxes(parent, nodes[node, :3].astype(np.int64).reshape(1, 3))
        if wide:
            inner = bool(nodes[node, 3] & 0x80)
            value = (int(nodes[node, 3] & 0x7F) << 8) | int(nodes[node, 4])
            right = 2 * value
        else:
            inner = bool(nodes[node, 3] & 1)
            value = int(nodes[node, 3]) >> 1
            right = int(nodes[node, 3]) & 0xFE
        if not inner:
            leaves[value] = box[0]
            continue
        if right < 2:
            raise FormatError(f"tree node {node} has its right child at offset {right}")
        stack.append((node + right, box))
        stack.append((node + 1, box))
    return leaves
