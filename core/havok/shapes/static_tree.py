"""hkcdStaticTree codecs: the bounding volume trees of compressed meshes.

Nodes are stored in preorder: a node's left child follows it, its right child comes after the
left subtree. Each node holds its box quantised against its parent's (decoded) box: per axis one
byte, high nibble h and low nibble l, min = parent min + h^2/226 * parent extent, max = parent
max - l^2/226 * parent extent. The root is quantised against the tree's domain.

Codec3Axis4 (a section's primitives; xyz + 1 byte): odd byte = inner node whose right child is
``byte & 0xFE`` nodes further on; even byte = leaf of primitive ``byte / 2``.
Codec3Axis5 (the sections; xyz + 2 bytes): high bit of the first = inner node, the other 15 bits
v: right child 2v nodes further on; else a leaf of section v.
Codec3Axis6 (a static compound's instances; xyz + u8 high data + u16 low data): the same rule
over 23 bits, v = (high & 0x7F) << 16 | low. The corpus's only such tree is a single leaf, so
the inner-node rule is Codec3Axis5's carried over.

``data_bytes`` names the codec: 1, 2 or 3 bytes after the box.
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
        low_out = (decoded[:, 0] > boxes[:, 0]) & (hi > 0)
        high_out = (decoded[:, 1] < boxes[:, 1]) & (lo > 0)
        # Nibble 0 is the whole parent: a box sticking out of it (rounding) gets no more.
        if not (low_out.any() or high_out.any()):
            return ((hi << 4) | lo).astype(np.uint8), decoded
        hi = np.where(low_out, hi - 1, hi)
        lo = np.where(high_out, lo - 1, lo)


def _data(values, inner, data_bytes):
    """The bytes after the box: a leaf's value, or an inner node's right-child offset / 2."""
    values = np.asarray(values, np.int64)
    if data_bytes == 1:
        return ((2 * values) | inner if inner else values << 1)[:, None]
    high = (values >> (8 * (data_bytes - 1))) | (0x80 if inner else 0)
    if data_bytes == 2:
        return np.stack([high, values & 0xFF], axis=1)
    return np.stack([high, values & 0xFF, (values >> 8) & 0xFF], axis=1)


def _value(node, data_bytes):
    """(inner, value, right-child offset) of one stored node."""
    if data_bytes == 1:
        return bool(node[3] & 1), int(node[3]) >> 1, int(node[3]) & 0xFE
    if data_bytes == 2:
        value = (int(node[3] & 0x7F) << 8) | int(node[4])
    else:
        value = (int(node[3] & 0x7F) << 16) | int(node[4]) | (int(node[5]) << 8)
    return bool(node[3] & 0x80), value, 2 * value


def build_trees(boxes, starts, domains, data_bytes):
    """Trees over groups of leaf boxes: the leaves of tree k are ``boxes[starts[k]:starts[k+1]]``
    (m, 2, 3), its root quantised in ``domains[k]``. Returns the nodes of all trees, tree after
    tree, (n, 3 + data_bytes) uint8, and the leaf order: the leaf of value v in tree k is box
    ``order[starts[k] + v]``. Nodes split at the median of the widest axis of the leaf
    centres, one tree level at a time for all trees at once."""
    boxes = np.asarray(boxes, np.float32)
    starts = np.asarray(starts, np.int64)
    sizes = np.append(starts[1:], len(boxes)) - starts
    if (sizes < 1).any() or sizes.max() > (128, 0x8000, 0x800000)[data_bytes - 1]:
        raise FormatError(f"a tree of {sizes.max()} leaves does not fit its codec")
    centres = boxes.mean(axis=1)
    nodes = np.zeros((int((2 * sizes - 1).sum()), 3 + data_bytes), np.uint8)
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
        nodes[seg_node[leaf], 3:] = _data(value, False, data_bytes)
        inner = ~leaf
        # sort each inner segment's leaves by their centre on the segment's widest axis
        spread = np.maximum.reduceat(centres[members], offsets) - np.minimum.reduceat(centres[members], offsets)
        key = centres[members, spread.argmax(axis=1)[label]]
        keep = inner[label]
        ranked = np.lexsort((key[keep], label[keep]))
        order[positions[keep]] = members[keep][ranked]

        start, length, node = seg_start[inner], seg_length[inner], seg_node[inner]
        half = length // 2
        nodes[node, 3:] = _data(half, True, data_bytes)
        seg_start = np.concatenate([start, start + half])
        seg_length = np.concatenate([half, length - half])
        seg_node = np.concatenate([node + 1, node + 2 * half])
        seg_parent = np.concatenate([decoded[inner], decoded[inner]])
    return nodes, order


def decode_tree(nodes, domain, data_bytes):
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
        inner, value, right = _value(nodes[node], data_bytes)
        if not inner:
            leaves[value] = box[0]
            continue
        if right < 2:
            raise FormatError(f"tree node {node} has its right child at offset {right}")
        stack.append((node + right, box))
        stack.append((node + 1, box))
    return leaves
