"""An exterior cell's .cdx rows written again keep their world and grid key: the CK's own
AlootHomePlate.cdx turned here, with struct, into the rows of the same cell standing in a world
at a grid place (CELL = the WRLD, the grid in the kind's high bits over the kind without its
0x80 bit, as bacup reads retail Fallout4.cdx), beside an interior cell's rows and another
exterior cell's; the cell rebuilt from its 11 corpus meshes gives back exactly those rows, the
other cells' untouched. Grid (0, 0) has no grid bits at all: its rows are told from an interior
cell's by the missing 0x80 bit alone."""

import struct

import pytest
from support import CORPUS

from precombined_nif.core.nif import NifFile
from precombined_nif.core.precombined import cdx

CK = CORPUS / "ck-precombined"
CELL, WORLD = 0x1E58, 0x3C


def rows_of(data):
    count = struct.unpack_from("<I", data, 4)[0]
    return [struct.unpack_from("<4I", data, 8 + 16 * k) for k in range(count)]


def file_of(rows):
    rows = sorted(set(rows), key=lambda r: (r[1], r[0], r[3], r[2]))  # (CELL, kind, extra, value)
    return b"bcdx" + struct.pack("<I", len(rows)) + b"".join(struct.pack("<4I", *r) for r in rows)


def exterior(rows, world, x, y):
    grid = (x & 0xFFF) << 20 | (y & 0xFFF) << 8
    return [(grid | kind & 0x7F, world, value, extra) for kind, _, value, extra in rows]


@pytest.mark.parametrize("grid", [(-3, 5), (0, 0), (1, -6)])
def test_an_exterior_cell_rewritten_keeps_its_world_and_grid(corpus, grid):
    ck = rows_of((CK / "AlootHomePlate.cdx").read_bytes())
    ours = exterior(ck, WORLD, *grid)
    # Beside it: the same rows as an interior cell 0x2222 and as the exterior cell 0x3333 at (7, 7).
    interior = [(kind, 0x2222, value, 0x2222 if kind == 0x86 else extra) for kind, _, value, extra in ck]
    neighbour = [(kind, world, value, 0x3333 if kind & 0x7F == 0x06 else extra)
                 for kind, world, value, extra in exterior(ck, WORLD, 7, 7)]
    data = file_of(ours + interior + neighbour)
    index = cdx.CdxFile.from_bytes(data)
    key = index.key_of_mesh(CELL, 0x1200ADBE)
    assert key is not None and int(index.rows[index.cell_mask(key)]["cell"][0]) == WORLD
    assert index.cell_mask(key).sum() == len(ours)
    assert cdx.grid_of(key[1]) == grid
    meshes = {mesh: None for mesh in index.meshes_of(key)}
    assert len(meshes) == 38
    for path in sorted((CK / "Meshes/PreCombined").glob("*_OC.NIF")):
        meshes[int(path.name[9:17], 16)] = NifFile.read(path)
    rebuilt = cdx.rebuild_cell(index, key, CELL, meshes)
    assert {(int(r["kind"]), int(r["cell"])) for r in rebuilt.rows} <= {(k, WORLD) for k, *_ in ours}
    index.replace_cell(key, rebuilt.rows)
    assert index.to_bytes() == data
    # Every mesh at hand (the 27 others left out): the 11 meshes' rows and the previs row, in place.
    present = {m: n for m, n in meshes.items() if n is not None}
    alone = cdx.CdxFile.from_bytes(data)
    alone.replace_cell(key, cdx.rebuild_cell(alone, key, CELL, present).rows)
    written = rows_of(alone.to_bytes())
    mine = [r for r in written if r[1] == WORLD and r[0] & 0xFFFFFF00 == ((grid[0] & 0xFFF) << 20 | (grid[1] & 0xFFF) << 8)
            and not r[0] & 0x80]
    assert len(mine) == 176 and set(mine) <= set(ours)
    assert sorted(set(written) - set(mine)) == sorted(set(interior) | set(neighbour))
