"""Extra data blocks of corpus files read from their bytes with struct (connect points, a block's
bytes), and files made with one extra data block replaced by given bytes: what the connect
point and marker tests check the product against."""

import struct

import numpy as np

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.block import RawBlock

FO4 = "pynifly/tests/tests/FO4"
SHOTGUN = f"{FO4}/Shotgun/CombatShotgun.nif"
CHAIR = f"{FO4}/FederalistChairOffice01.nif"
SKELETON = f"{FO4}/skeleton.nif"


def sized(data, at):
    """A u32-length string at ``at``: (text, end)."""
    (length,) = struct.unpack_from("<I", data, at)
    return data[at + 4 : at + 4 + length].decode(), at + 4 + length


def points_in_bytes(data, first_parent):
    """Every connect point of the Parents block whose first point hangs from ``first_parent``,
    read from the file bytes: {name: (parent, (w, x, y, z), translation, scale)}."""
    # the last occurrence: the first is the node name in the header's string table
    at = data.rindex(struct.pack("<I", len(first_parent)) + first_parent.encode())
    (count,) = struct.unpack_from("<I", data, at - 4)
    found = {}
    for _ in range(count):
        parent, at = sized(data, at)
        name, at = sized(data, at)
        values = struct.unpack_from("<8f", data, at)
        at += 32
        found[name] = (parent, values[:4], values[4:7], values[7])
    return found


def quaternion_matrix(w, x, y, z):
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def block_bytes(data, nif, index):
    """The bytes of block ``index``: blocks end where the footer (roots) begins."""
    sizes = [int(size) for size in nif.header.block_sizes]
    start = len(data) - 4 - 4 * len(nif.roots) - sum(sizes)
    start += sum(sizes[:index])
    return data[start : start + sizes[index]]


def with_extra_block(corpus, type_name, payload, game_file=CHAIR):
    """A corpus file whose first extra data block is replaced by a block of ``type_name`` with
    ``payload`` after its name."""
    nif = NifFile.read(corpus / game_file)
    nif.header.block_types.append(type_name) if type_name not in nif.header.block_types else None
    root = nif.blocks[nif.roots[0]]
    index = int(np.asarray(root.extra_data)[0])
    old = nif.to_bytes()
    raw = block_bytes(old, nif, index)
    nif.blocks[index] = RawBlock(type_name, raw[:4] + payload)
    return NifFile.from_bytes(nif.to_bytes()), index
