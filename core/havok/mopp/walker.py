"""Running a MOPP program: which leaf IDs (shape keys) a point or box may touch.

A program is a tree of byte instructions (niftools' "Havok MOPP Data format" page; the opcode
names and operand sizes are Havok's, as public MOPP walkers list them; multi-byte operands are
big-endian). Each path from the first byte ends at a terminal, which names leaves, or at a cut
the query fails:

    00            return (the path ends)
    01-04 x y z   rescale: subtract (x, y, z) from the 8-bit values, then shift 1-4 more bits in
    05-08 j       jump j (8, 16, 24, 32 bits) bytes past the instruction
    09 b / 0A bb  add b to the leaf base; 0B bbbb sets it
    0D p dddd     data offset (a value for the leaves below): the path goes on
    10-1C h l j   split on an axis or diagonal: left (next) when the value <= h, right (j past
                  the instruction) when it is >= l
    20-22 t j     split at t: left when the value <= t, right when >= t
    23-25 h l jj kk  split with 16-bit jumps to both sides
    26-28 l h     cut: go on when l <= value <= h
    29-2B l24 h24 cut on the 24-bit position itself (not rescaled: with the rescaled one the
                  game's farmhouse01 program loses 38 of its triangles)
    30-4F         terminal: base + (opcode - 0x30); 50 b / 51 bb / 52 bbb / 53 bbbb: base + operand
    54-57 n ids   n terminals: the count and each ID 1 to 4 bytes wide (base + each ID)
    60-6B v       set property 0-3 (the low two bits) to an 8, 16 or 32-bit value: the path goes on
    70 aaaa       jump to byte aaaa of the program: a program built in chunks (Skyrim SE's
                  console statics, wheels-of-lull) pads each chunk's end (0xCD bytes) and jumps
                  to the next chunk's first byte

0C (a 16-bit chunk jump, which Havok replaced by 70) and bytes no instruction uses are
unfamiliar: UnknownInstruction, which is not damage (a program holding one is kept as stored).
The bounds are inclusive: read with exclusive tops, the corpus programs miss ten times more of
their triangles' corners. A chunk jump may go backwards, and shared subtrees can make the number
of paths grow exponentially, so the work is bounded by a step budget (the walk listing every
leaf visits each state once). Anything else (a jump or operand past the end, a path running off
the end, too many steps) raises FormatError.
"""

import numpy as np

from ...errors import FormatError
from .space import LEVEL_BITS, LIMIT, quantise

# diagonal splits 13-1C: per-axis coefficients, divisor and constant of the tested value
DIAGONALS = {
    0x13: ((0, 1, 1), 2, 0),
    0x14: ((0, 1, -1), 2, 128),
    0x15: ((1, 0, 1), 2, 0),
    0x16: ((1, 0, -1), 2, 128),
    0x17: ((1, 1, 0), 2, 0),
    0x18: ((1, -1, 0), 2, 128),
    0x19: ((1, 1, 1), 3, 0),
    0x1A: ((1, 1, -1), 3, 85),
    0x1B: ((1, -1, 1), 3, 85),
    0x1C: ((1, -1, -1), 3, 170),
}
PROPERTY_SIZES = (1, 2, 4)  # 60-63, 64-67, 68-6B
STEPS_PER_BYTE = 64  # a walk may execute this many instructions per byte of code
MIN_STEPS = 1 << 16


class UnknownInstruction(FormatError):
    """A program uses an instruction this walker does not know: unfamiliar, not damaged."""


def leaves_at_point(code, origin, scale, point):
    """Sorted leaf IDs (uint32) a point may touch."""
    return leaves_in_box(code, origin, scale, point, point)


def leaves_in_box(code, origin, scale, box_min, box_max):
    """Sorted leaf IDs (uint32) of the paths an axis-aligned box may take through ``code``."""
    low, high = quantise(np.stack([np.asarray(box_min, np.float64), np.asarray(box_max, np.float64)]), origin, scale)
    return _walk(bytes(code), low.tolist(), high.tolist())


def program_leaves(code):
    """Every leaf ID ``code`` can name (the walk of an unbounded box, which passes every test,
    so an instruction reached again with the same leaf base and shift is not walked again)."""
    return _walk(bytes(code), [-LIMIT] * 3, [LIMIT] * 3, every=True)


def check_leaves(code, valid):
    """Raise FormatError when ``code`` names a leaf not in ``valid`` (an array of IDs)."""
    named = program_leaves(code)
    unknown = np.setdiff1d(named, np.asarray(valid, np.uint32))
    if len(unknown):
        raise FormatError(f"the MOPP code names {len(unknown)} leaves the shape does not have (first: {int(unknown[0])})")
    return named


def _operand(code, at, size):
    if at + size > len(code):
        raise FormatError(f"the MOPP code ends inside the instruction at byte {at - 1}")
    return int.from_bytes(code[at : at + size], "big")


def _span(code, at, size):
    """``size``, once the ``size`` operand bytes at ``at`` are known to lie within the code."""
    if at + size > len(code):
        raise FormatError(f"the MOPP code ends inside the instruction at byte {at - 1}")
    return size


def _target(code, at, jump):
    if at + jump >= len(code):
        raise FormatError(f"a MOPP jump at byte {at} goes past the end of the code ({len(code)} bytes)")
    return at + jump


def _walk(code, low, high, every=False):
    found, seen = set(), set()
    stack = [(0, 0, 0, 0, 0, 0)]  # pc, base of each axis (24-bit), shift, leaf base
    steps = max(MIN_STEPS, STEPS_PER_BYTE * len(code))
    if not code:
        return np.zeros(0, np.uint32)
    while stack:
        pc, bx, by, bz, shift, leaf = stack.pop()
        down = LEVEL_BITS - shift
        lo = ((low[0] - bx) >> down, (low[1] - by) >> down, (low[2] - bz) >> down)
        hi = ((high[0] - bx) >> down, (high[1] - by) >> down, (high[2] - bz) >> down)
        while True:
            steps -= 1
            if steps < 0:
                raise FormatError("the MOPP code takes too many steps to walk (shared branches multiply)")
            if pc >= len(code):
                raise FormatError(f"a MOPP path runs past the end of the code ({len(code)} bytes) without a terminal")
            if every:
                if (pc, leaf, shift) in seen:
                    break
                seen.add((pc, leaf, shift))
            op = code[pc]
            at = pc + 1
            if 0x30 <= op <= 0x4F:
                found.add(leaf + op - 0x30)
                break
            if 0x10 <= op <= 0x1C:
                h, l, j = _operand(code, at, 1), _operand(code, at + 1, 1), _operand(code, at + 2, 1)
                vlo, vhi = _value(op, lo, hi)
                if vhi >= l:
                    stack.append((_target(code, at + 3, j), bx, by, bz, shift, leaf))
                if vlo > h:
                    break
                pc = at + 3
            elif 0x26 <= op <= 0x2B:
                wide = op >= 0x29  # a 24-bit cut tests the position itself
                size = 3 if wide else 1
                l, h = _operand(code, at, size), _operand(code, at + size, size)
                axis = (op - 0x26) % 3
                if (high if wide else hi)[axis] < l or (low if wide else lo)[axis] > h:
                    break
                pc = at + 2 * size
            elif 0x50 <= op <= 0x53:
                size = op - 0x4F
                found.add(leaf + _operand(code, at, size))
                break
            elif 0x54 <= op <= 0x57:
                size = op - 0x53
                count = _operand(code, at, size)
                _span(code, at + size, size * count)
                found.update(leaf + _operand(code, at + size * k, size) for k in range(1, count + 1))
                break
            elif 0x60 <= op <= 0x6B:
                pc = at + _span(code, at, PROPERTY_SIZES[(op - 0x60) >> 2])
            elif op == 0x70:
                target = _operand(code, at, 4)
                if target >= len(code):
                    raise FormatError(f"a MOPP chunk jump at byte {pc} goes past the end of the code ({len(code)} bytes)")
                pc = target
            elif 0x20 <= op <= 0x22:
                t, j = _operand(code, at, 1), _operand(code, at + 1, 1)
                axis = op - 0x20
                if hi[axis] >= t:
                    stack.append((_target(code, at + 2, j), bx, by, bz, shift, leaf))
                if lo[axis] > t:
                    break
                pc = at + 2
            elif 0x23 <= op <= 0x25:
                h, l = _operand(code, at, 1), _operand(code, at + 1, 1)
                left, right = _operand(code, at + 2, 2), _operand(code, at + 4, 2)
                axis = op - 0x23
                if hi[axis] >= l:
                    stack.append((_target(code, at + 6, right), bx, by, bz, shift, leaf))
                if lo[axis] > h:
                    break
                pc = _target(code, at + 6, left)
            elif 0x01 <= op <= 0x04:
                dx, dy, dz = _operand(code, at, 1), _operand(code, at + 1, 1), _operand(code, at + 2, 1)
                bx, by, bz = bx + (dx << down), by + (dy << down), bz + (dz << down)
                shift += op
                if shift > LEVEL_BITS:
                    raise FormatError(f"the MOPP code rescales past 24 bits at byte {pc}")
                down = LEVEL_BITS - shift
                lo = ((low[0] - bx) >> down, (low[1] - by) >> down, (low[2] - bz) >> down)
                hi = ((high[0] - bx) >> down, (high[1] - by) >> down, (high[2] - bz) >> down)
                pc = at + 3
            elif 0x05 <= op <= 0x08:
                size = op - 0x04
                pc = _target(code, at + size, _operand(code, at, size))
            elif 0x09 <= op <= 0x0B:
                size = (1, 2, 4)[op - 0x09]
                value = _operand(code, at, size)
                leaf = value if op == 0x0B else leaf + value
                pc = at + size
            elif op == 0x0D:
                pc = at + _span(code, at, 5)
            elif op == 0x00:
                break
            else:
                raise UnknownInstruction(f"unknown MOPP instruction 0x{op:02X} at byte {pc}")
    return np.array(sorted(v & 0xFFFFFFFF for v in found), np.uint32)


def _value(op, lo, hi):
    """The range of a split's tested value over the box."""
    if op <= 0x12:
        axis = op - 0x10
        return lo[axis], hi[axis]
    weights, divisor, constant = DIAGONALS[op]
    low = sum(w * (lo[a] if w > 0 else hi[a]) for a, w in enumerate(weights) if w)
    high = sum(w * (hi[a] if w > 0 else lo[a]) for a, w in enumerate(weights) if w)
    return low // divisor + constant, high // divisor + constant
