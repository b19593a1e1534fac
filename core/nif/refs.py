"""Block references: finding and renumbering them by walking each typed block's own ``sync``,
so the one description of a block also says where its references are."""

import numpy as np

from ..errors import FormatError
from ..stream import WriteStream
from .block import RawBlock


class _RefWalk(WriteStream):
    """Writes a block to nowhere, passing every reference through ``visit`` on the way."""

    def __init__(self, header, visit):
        super().__init__(header, big_endian=header.big_endian)
        self.visit = visit

    def ref(self, value=-1):
        return self.i32(self.visit(int(value)))

    def ref_list(self, value):
        mapped = np.array([self.visit(int(v)) for v in np.asarray(value).tolist()], dtype="i4")
        self.count(len(mapped))
        self.array(mapped, "i4", len(mapped))
        return mapped


def block_refs(header, block):
    """Every reference the block holds, in field order (-1 entries included)."""
    found = []

    def visit(index):
        found.append(index)
        return index

    block.sync(_RefWalk(header, visit))
    return found


def renumber(header, block, mapping):
    """Replace each reference ``r`` of ``block`` by ``mapping(r)`` in place."""
    block.sync(_RefWalk(header, mapping))


def reachable(nif):
    """Blocks reachable from the roots through references (raw blocks' are unknown: they
    keep whatever they held)."""
    found, stack = set(), list(nif.roots)
    while stack:
        index = stack.pop()
        if not 0 <= index < len(nif.blocks) or index in found:
            continue
        found.add(index)
        block = nif.blocks[index]
        if not isinstance(block, RawBlock):
            stack.extend(block_refs(nif.header, block))
    return found


def remove_blocks(nif, doomed):
    """Drop the blocks at the indices in ``doomed`` and renumber every reference: a single
    reference to a dropped block becomes -1, a list entry pointing at one leaves the list.
    Returns {old index: new index}. Refused when blocks kept as raw bytes remain: their
    references are not known, so they cannot be renumbered."""
    doomed = set(doomed)
    if not doomed:
        return {index: index for index in range(len(nif.blocks))}
    raw = [i for i, b in enumerate(nif.blocks) if isinstance(b, RawBlock) and i not in doomed]
    if raw:
        raise FormatError(
            f"cannot drop blocks: {len(raw)} blocks kept undecoded (such as {nif.blocks[raw[0]].type_name}) "
            "may refer to them",
            block=raw[0],
        )
    kept = [index for index in range(len(nif.blocks)) if index not in doomed]
    mapping = {old: new for new, old in enumerate(kept)}

    def remap(ref):
        return mapping.get(ref, -1) if ref >= 0 else ref

    for index in kept:
        nif.blocks[index].sync(_DropWalk(nif.header, remap))
    nif.blocks = [nif.blocks[index] for index in kept]
    nif.roots = [mapping[root] for root in nif.roots if root in mapping]
    return mapping


class _DropWalk(_RefWalk):
    def ref_list(self, value):
        old = np.asarray(value).tolist()
        mapped = np.array([self.visit(int(v)) for v in old if v < 0 or self.visit(int(v)) >= 0], dtype="i4")
        self.count(len(mapped))
        self.array(mapped, "i4", len(mapped))
        return mapped
