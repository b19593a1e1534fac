"""The three fixup tables at the end of a packfile section.

Each table lies between two offsets of its section header. Entries are u32 fields; a table is
padded with 0xFF bytes to a 16-byte boundary, so an all-0xFF "terminator" appears only when
padding happens to be needed: tables are bounded by the header offsets, not by terminators.
"""

import numpy as np

from ..errors import FormatError

LOCAL = np.dtype([("src", "<u4"), ("dst", "<u4")])
GLOBAL = np.dtype([("src", "<u4"), ("section", "<u4"), ("dst", "<u4")])
VIRTUAL = np.dtype([("object", "<u4"), ("section", "<u4"), ("name", "<u4")])

PADDING = 0xFFFFFFFF


def read_table(data, start, end, dtype, what):
    """The entries between ``start`` and ``end`` (absolute offsets already bounds-checked),
    without the 0xFF padding entries."""
    count = (end - start) // dtype.itemsize
    table = np.frombuffer(data, dtype, count, start)
    tail = bytes(data[start + count * dtype.itemsize : end])
    if tail.strip(b"\xff"):
        raise FormatError(f"{what} fixup table ends in {len(tail)} stray bytes", offset=end - len(tail))
    return table[table[table.dtype.names[0]] != PADDING]


def write_table(rows, dtype):
    """A table from a list of tuples, padded with 0xFF to a 16-byte boundary."""
    raw = np.array(rows, dtype).tobytes() if rows else b""
    return raw + b"\xff" * (-len(raw) % 16)
