"""Building a MOPP program for triangles: a binary tree of median splits, bytes the walker
(walker.py) and the games run.

The tree is built a level at a time with numpy: every range of the triangle order that holds
more than one triangle is sorted along the longest axis of its centres and halved, so a node is
a range and its children are the two halves. The code is then written from the root: three cuts
bound the whole shape; a node splits on the axis that parts its halves best (left when the value
is at most the left half's top, right when at least the right half's bottom); a small node first
rescales (zooms its box to fill the 8-bit range again), so deep nodes test as finely as the
root; a node whose leaf IDs lie close together moves the leaf base to the lowest, when that
makes its terminals shorter; a leaf cuts the axes the tests above have not bound as tightly to
its triangle's box and names its leaf ID. A split whose left code is over 255 bytes uses 16-bit
jumps; over 64 KiB, the node's halves are chained with the rest (each split jumps over one of
them only).
"""

import numpy as np

from ...errors import FormatError
from .space import LEVEL_BITS, Mopp, quantise, space_of

RESCALE_BELOW = 256  # nodes of fewer triangles may rescale: their code stays far below 64 KiB
MAX_RESCALE = 4  # bits one rescale instruction adds


def build(vertices, triangles, leaf_ids, radius=0.0):
    """A Mopp over ``triangles`` (m, 3) indexing ``vertices`` (n, 3), naming ``leaf_ids`` (m,)
    uint32; each triangle's box is grown by ``radius`` (the shape's convex radius)."""
    vertices = np.asarray(vertices, np.float64).reshape(-1, 3)
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    leaf_ids = np.asarray(leaf_ids, np.int64).reshape(-1)
    if not len(triangles):
        raise FormatError("a MOPP needs at least one triangle")
    if len(leaf_ids) != len(triangles):
        raise FormatError(f"{len(leaf_ids)} leaf IDs for {len(triangles)} triangles")
    if triangles.min() < 0 or triangles.max() >= len(vertices):
        raise FormatError(f"a triangle names a vertex past the {len(vertices)} vertices")
    if leaf_ids.min() < 0 or leaf_ids.max() > 0xFFFFFFFF:
        raise FormatError("MOPP leaf IDs are 32-bit unsigned integers")
    corners = vertices[triangles]
    low, high = corners.min(axis=1) - radius, corners.max(axis=1) + radius
    origin, scale = space_of(low.min(axis=0), high.max(axis=0))
    q_low, q_high = quantise(low, origin, scale), quantise(high, origin, scale)
    order = _split_order((low + high) / 2)
    writer = _Writer(q_low[order].tolist(), q_high[order].tolist(), leaf_ids[order].tolist())
    return Mopp(bytes(writer.program()), origin, scale)


def _split_order(centres):
    """The triangle order of the median-split tree (a node's halves are consecutive)."""
    m = len(centres)
    order = np.arange(m)
    starts = np.array([0])
    while True:
        ends = np.append(starts[1:], m)
        wide = ends - starts > 1
        if not wide.any():
            return order
        placed = centres[order]
        span = np.maximum.reduceat(placed, starts) - np.minimum.reduceat(placed, starts)
        axis = np.argmax(span, axis=1)
        segment = np.repeat(np.arange(len(starts)), ends - starts)
        key = placed[np.arange(m), axis[segment]]
        order = order[np.lexsort((key, segment))]
        mids = starts[wide] + (ends[wide] - starts[wide]) // 2
        starts = np.union1d(starts, mids)


class _Writer:
    def __init__(self, low, high, ids):
        self.low, self.high, self.ids = low, high, ids
        self.boxes, self.spans, self.cache = {}, {}, {}
        self._box(0, len(ids))

    def _box(self, start, end):
        """Fill in the boxes and leaf ID spans of the node and those below it."""
        if end - start == 1:
            box, span = (*self.low[start], *self.high[start]), (self.ids[start], self.ids[start])
        else:
            mid = start + (end - start) // 2
            (a, a_span), (b, b_span) = self._box(start, mid), self._box(mid, end)
            box = (*map(min, a[:3], b[:3]), *map(max, a[3:], b[3:]))
            span = (min(a_span[0], b_span[0]), max(a_span[1], b_span[1]))
        self.boxes[start, end], self.spans[start, end] = box, span
        return box, span

    def program(self):
        frame = (0, 0, 0, 0)
        low, high = _levels(self.boxes[0, len(self.ids)], frame)
        cuts = bytearray()
        for axis in range(3):
            cuts += bytes((0x26 + axis, low[axis], high[axis]))
        return cuts + self._node(0, len(self.ids), frame, (*low, *high), 0)

    def _node(self, start, end, frame, known, base):
        """``known``: the 8-bit values (low x, y, z, high x, y, z) a query reaching this node
        is known to lie within, from the tests above it; ``base``: the leaf base there."""
        if end - start == 1:
            return self._leaf(start, frame, known, base)
        key = (start, end, frame, known, base)
        if key not in self.cache:
            out = bytearray()
            if end - start < RESCALE_BELOW:
                frame, known, out = _rescale(self.boxes[start, end], frame, known)
            base, moved = _rebase(self.spans[start, end], end - start, base)
            mid = start + (end - start) // 2
            out += moved + self._split([(start, mid), (mid, end)], frame, known, base)
            if end - start < RESCALE_BELOW:
                return out
            self.cache[key] = out  # a big node may be written again when its parent is chained
        return self.cache[key]

    def _leaf(self, index, frame, known, base):
        low, high = _levels(self.boxes[index, index + 1], frame)
        out = bytearray()
        for axis in range(3):
            if low[axis] > known[axis] or high[axis] < known[axis + 3]:  # else the tests above did it
                out += bytes((0x26 + axis, low[axis], high[axis]))
        leaf = self.ids[index] - base
        size = _operand_size(leaf)
        if not size:
            return out + bytes((0x30 + leaf,))
        return out + bytes((0x4F + size,)) + leaf.to_bytes(size, "big")

    def _split(self, ranges, frame, known, base):
        """Code choosing among ``ranges`` (two or more consecutive nodes): a split between the
        first and the rest, whose code follows."""
        left_box = self.boxes[ranges[0]]
        right_box = self.boxes[ranges[1]] if len(ranges) == 2 else self._union(ranges[1:])
        gaps = [_gap(left_box, right_box, i) for i in range(3)]
        axis = gaps.index(max(gaps))
        down = LEVEL_BITS - frame[3]
        top = (left_box[axis + 3] - frame[axis]) >> down
        bottom = (right_box[axis] - frame[axis]) >> down
        left_known = tuple(min(v, top) if i == axis + 3 else v for i, v in enumerate(known))
        right_known = tuple(max(v, bottom) if i == axis else v for i, v in enumerate(known))
        left_code = self._node(*ranges[0], frame, left_known, base)
        if len(left_code) > 0xFFFF:
            start, end = ranges[0]
            mid = start + (end - start) // 2
            return self._split([(start, mid), (mid, end), *ranges[1:]], frame, known, base)
        if len(ranges) == 2:
            right_code = self._node(*ranges[1], frame, right_known, base)
        else:
            right_code = self._split(ranges[1:], frame, right_known, base)
        if len(left_code) <= 0xFF:
            return bytes((0x10 + axis, top, bottom, len(left_code))) + left_code + right_code
        return bytes((0x23 + axis, top, bottom, 0, 0)) + len(left_code).to_bytes(2, "big") + left_code + right_code

    def _union(self, ranges):
        boxes = [self.boxes[r] for r in ranges]
        return (*(min(b[i] for b in boxes) for i in range(3)), *(max(b[i] for b in boxes) for i in range(3, 6)))


def _operand_size(value):
    """Bytes a terminal's operand takes (0: the value fits in the opcode, 30-4F)."""
    return 0 if value < 32 else 1 if value < 1 << 8 else 2 if value < 1 << 16 else 3 if value < 1 << 24 else 4


def _rebase(span, count, base):
    """(base, code): the leaf base moved to the lowest of a node's leaf IDs when the bytes its
    ``count`` terminals save pay for the instruction (09/0A add to the base, 0B sets it)."""
    low, high = span
    saved = count * (_operand_size(high - base) - _operand_size(high - low))
    step = low - base
    if step < 1 << 16:
        size = 1 if step < 1 << 8 else 2
        code = bytes((0x08 + size,)) + step.to_bytes(size, "big")
    else:
        code = b"\x0b" + low.to_bytes(4, "big")
    if saved <= len(code):
        return base, b""
    return low, code


def _gap(left, right, axis):
    """How well a split on ``axis`` parts two boxes: their gap (negative: overlap) over the
    extent both span; an axis both are flat on parts nothing."""
    extent = max(left[axis + 3], right[axis + 3]) - min(left[axis], right[axis])
    return (right[axis] - left[axis + 3]) / extent if extent else float("-inf")


def _levels(box, frame):
    """The 8-bit values (low, high) of a 24-bit box in a frame (base x, y, z, shift)."""
    down = LEVEL_BITS - frame[3]
    low = [(box[i] - frame[i]) >> down for i in range(3)]
    high = [(box[i + 3] - frame[i]) >> down for i in range(3)]
    if min(low) < 0 or max(high) > 255:
        raise FormatError("a MOPP node leaves its frame")  # the builder's own invariant
    return low, high


def _rescale(box, frame, known):
    """(frame, known, code): the frame zoomed onto ``box`` when it spans little of the current
    one, and the known values in it."""
    low, high = _levels(box, frame)
    extent = max(h - l for l, h in zip(low, high)) + 1
    bits = 0
    while bits < MAX_RESCALE and frame[3] + bits < LEVEL_BITS and extent << (bits + 1) <= 255:
        bits += 1
    if not bits:
        return frame, known, bytearray()
    down = LEVEL_BITS - frame[3]
    base = tuple(frame[i] + (low[i] << down) for i in range(3))
    # a value v of the old frame covers [(v - low) << bits, ((v - low + 1) << bits) - 1] in the new
    known = (*((known[i] - low[i]) << bits for i in range(3)), *(((known[i + 3] - low[i] + 1) << bits) - 1 for i in range(3)))
    return (*base, frame[3] + bits), known, bytearray((bits, *low))
