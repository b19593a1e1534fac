"""Seconds of ``cli.py precombines DATA --json`` on a generated load order the size of Fallout 4
and its DLCs, against the floor of reading every plugin's bytes.

    python benchmarks/precombine_report.py [RECORDS ...]

For each size (default 3,000,000 records, about 400 MB, then 600,000) a Data folder is generated
once into the temporary folder and reused: Fallout4.esm (ESM-flagged, three quarters of the
records), six DLC masters, and an archive holding every cell's meshes and previs file. Each plugin has a STAT group, interior cells and a worldspace of
exterior cells; each cell a compressed CELL with PCMB, VISI and XCRI (two meshes, twenty
references), a LAND and about a hundred REFRs of 134 bytes. Each DLC overrides one Fallout 4
cell in twenty (its CELL, five of its combined references, half of them dated after PCMB) and
adds cells of its own. Records are numpy structured arrays written as bytes.

Times whole processes, alternating, median of three: the report, and a floor reading every
plugin's bytes in 16 MB chunks (what the disk and Python start-up are worth). Prints both and
their ratio, in wall and in CPU seconds (the latter steadier on cores shared with other work).
"""

import json
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
from processes import alternating, generated, print_ratios

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3
VERSION = 3  # of the generated files: a change here regenerates them
REFS_PER_CELL = 100
COMBINED = 20
FILL = 64
LAND_SIZE = 2000
PCMB = (2016 - 2000) << 9 | 3 << 5 | 1
OLD, NEW = (2015 - 2000) << 9 | 6 << 5 | 1, (2023 - 2000) << 9 | 1 << 5 | 1
DLCS = ("DLCRobot.esm", "DLCworkshop01.esm", "DLCCoast.esm", "DLCworkshop02.esm", "DLCworkshop03.esm", "DLCNukaWorld.esm")

HEADER = [("type", "S4"), ("size", "<u4"), ("flags", "<u4"), ("form_id", "<u4"), ("vci", "<u4"), ("version", "<u2"),
          ("vc2", "<u2")]
REFR = np.dtype(HEADER + [("name_tag", "S4"), ("name_size", "<u2"), ("base", "<u4"), ("data_tag", "S4"),
                          ("data_size", "<u2"), ("data", "<f4", (6,)), ("fill_tag", "S4"), ("fill_size", "<u2"),
                          ("fill", "u1", (FILL,))])
STAT = np.dtype(HEADER + [("edid_tag", "S4"), ("edid_size", "<u2"), ("edid", "S16"), ("modl_tag", "S4"),
                          ("modl_size", "<u2"), ("modl", "S40")])


def records(dtype, kind, form_ids, vci=OLD):
    out = np.zeros(len(form_ids), dtype)
    out["type"], out["size"], out["form_id"], out["vci"], out["version"] = kind, dtype.itemsize - 24, form_ids, vci, 131
    return out


def references(form_ids, vci=OLD):
    out = records(REFR, b"REFR", form_ids, vci)
    out["name_tag"], out["name_size"], out["base"] = b"NAME", 4, 0x800
    out["data_tag"], out["data_size"], out["fill_tag"], out["fill_size"] = b"DATA", 24, b"XFIL", FILL
    out["data"][:, :3] = np.arange(len(form_ids))[:, None] % 4000
    return out


def record(kind, form_id, body, flags=0, vci=OLD):
    return struct.pack("<4sIIIIHH", kind, len(body), flags, form_id, vci, 131, 0) + body


def field(kind, data):
    return struct.pack("<4sH", kind, len(data)) + data


def cell_record(form_id, refs, exterior, grid):
    xcri = struct.pack("<II", 2, 2 * len(refs)) + struct.pack("<2I", form_id * 2 + 1, form_id * 2 + 2) \
        + np.stack([refs, np.full(len(refs), form_id * 2 + 1)], 1).astype("<u4").tobytes()
    body = field(b"EDID", b"Cell%08X\0" % form_id) + field(b"DATA", struct.pack("<H", 0 if exterior else 1)) \
        + field(b"VISI", struct.pack("<H", PCMB)) + field(b"PCMB", struct.pack("<H", PCMB))
    if exterior:
        body += field(b"XCLC", struct.pack("<2iI", *grid, 0)) + field(b"RVIS", struct.pack("<I", form_id))
    body += field(b"XCRI", xcri)
    return record(b"CELL", form_id, struct.pack("<I", len(body)) + zlib.compress(body, 1), flags=0x40000)


class Writer:
    def __init__(self, path):
        self.handle = open(path, "wb")
        self.open = []

    def write(self, data):
        self.handle.write(data)

    def begin(self, label, group_type):
        self.open.append(self.handle.tell())
        label = label if isinstance(label, bytes) else struct.pack("<I", label)
        self.write(struct.pack("<4sI4siHHI", b"GRUP", 0, label, group_type, 0, 0, 0))

    def end(self):
        start = self.open.pop()
        end = self.handle.tell()
        self.handle.seek(start + 4)
        self.handle.write(struct.pack("<I", end - start))
        self.handle.seek(end)

    def close(self):
        self.handle.close()


def grid_of(form_id):
    return (form_id & 0xFFFF) % 100, (form_id & 0xFFFF) // 100


def write_cell(out, form_id, land_id, refs, combined, exterior):
    grid = grid_of(form_id) if exterior else None
    if exterior:  # the references inside their cell
        refs["data"][:, 0], refs["data"][:, 1] = grid[0] * 4096.0 + 100, grid[1] * 4096.0 + 100
    out.write(cell_record(form_id, combined, exterior, grid))
    out.begin(form_id, 6)
    out.begin(form_id, 9)
    if land_id is not None:
        out.write(record(b"LAND", land_id, field(b"VHGT", bytes(LAND_SIZE))))
    out.write(refs.tobytes())
    out.end()
    out.end()


def write_plugin(path, masters, flags, own_cells, own_refs, overrides, top):
    """``own_cells``: the count of new cells (a fifth interior), ``own_refs`` REFRs each, ``top``
    the plugin's FormID top byte; ``overrides``: [(cell FormID, its combined refs, LAND id)]."""
    out = Writer(path)
    header = field(b"HEDR", struct.pack("<fiI", 1.0, 0, 0x800))
    for master in masters:
        header += field(b"MAST", master.encode() + b"\0") + field(b"DATA", bytes(8))
    out.write(record(b"TES4", 0, header, flags=flags))
    out.begin(b"STAT", 0)
    stats = records(STAT, b"STAT", top << 24 | 0x800 + np.arange(max(own_cells * 10, 1)))
    stats["edid_tag"], stats["edid_size"], stats["modl_tag"], stats["modl_size"] = b"EDID", 16, b"MODL", 40
    out.write(stats.tobytes())
    out.end()
    cell_ids = top << 24 | 0x10000 + np.arange(own_cells)
    ref_ids = top << 24 | 0x100000 + np.arange(own_cells * own_refs)
    all_refs = references(ref_ids)
    interior = own_cells // 5
    override_refs = [references(np.asarray(combined[:5], np.uint32), NEW) for _, combined, _ in overrides]
    for refs in override_refs:
        refs["vci"][::2] = OLD
    out.begin(b"CELL", 0)
    out.begin(0, 2)
    out.begin(0, 3)
    for number in range(interior):
        refs = all_refs[number * own_refs:(number + 1) * own_refs]
        write_cell(out, int(cell_ids[number]), None, refs, refs["form_id"][:COMBINED], False)
    out.end()
    out.end()
    out.end()
    out.begin(b"WRLD", 0)
    out.write(record(b"WRLD", 0x3C, field(b"EDID", b"Commonwealth\0")))
    out.begin(0x3C, 1)
    out.begin(0, 4)
    out.begin(0, 5)
    for (cell_id, combined, land_id), refs in zip(overrides, override_refs):
        write_cell(out, cell_id, land_id, refs, np.asarray(combined), True)
    for number in range(interior, own_cells):
        refs = all_refs[number * own_refs:(number + 1) * own_refs]
        form_id = int(cell_ids[number])
        write_cell(out, form_id, top << 24 | 0x80000 + number, refs, refs["form_id"][:COMBINED], True)
    for _ in range(4):
        out.end()
    out.close()
    exterior = [(int(cell_ids[n]), all_refs["form_id"][n * own_refs:n * own_refs + COMBINED].tolist(), 0x80000 + n)
                for n in range(interior, own_cells)]
    return exterior


def generate(folder, total):
    """Fallout4.esm with three quarters of ``total`` records, the DLCs the rest; every cell's
    meshes and previs file in one archive, as the game's are."""
    per_cell = REFS_PER_CELL + 3  # CELL, LAND, REFRs; STATs add a tenth of the cells' count
    base_cells = int(total * 0.75 / (per_cell + 10))
    exterior = write_plugin(folder / "Fallout4.esm", [], 1, base_cells, REFS_PER_CELL, [], 0)
    files = cell_files("", base_cells)
    dlc_cells = int(total * 0.25 / len(DLCS) / (per_cell + 10))
    for number, name in enumerate(DLCS):
        overridden = exterior[number::20 * len(DLCS)]
        write_plugin(folder / name, ["Fallout4.esm"], 1, dlc_cells, REFS_PER_CELL, overridden, 1)
        files.update(cell_files(f"{name}/", dlc_cells, 1))
    sys.path.insert(0, str(ROOT / "tests"))
    from archive_writer import write_ba2_gnrl

    write_ba2_gnrl(folder / "Fallout4 - Meshes.ba2", files, packed=False)


def cell_files(folder, count, top=0):
    """{inner path: stand-in bytes} of the meshes and previs files of a plugin's cells (the
    cells' objects ids from 0x10000, their meshes ids as cell_record gives them)."""
    out = {}
    for number in range(count):
        form_id = top << 24 | 0x10000 + number
        for mesh in (form_id * 2 + 1, form_id * 2 + 2):
            out[f"Meshes/Precombined/{folder}{form_id & 0xFFFFFF:08X}_{mesh & 0xFFFFFFFF:08X}_OC.nif"] = b"x"
        out[f"Vis/{folder}{form_id & 0xFFFFFF:08X}.uvd"] = b"x"
    return out


def data_folder(total):
    return generated(f"precombine-bench-{total}-v{VERSION}", generate, total)


FLOOR = """
import sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("*.esm")):
    with open(path, "rb", buffering=0) as handle:
        while handle.read(16 << 20):
            pass
"""


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [3_000_000, 600_000]
    for total in sizes:
        print(f"{total} records:")
        folder = data_folder(total)
        size = sum(p.stat().st_size for p in folder.glob("*.esm"))
        report = [sys.executable, str(ROOT / "cli.py"), "precombines", str(folder), "--json"]
        floor = [sys.executable, "-c", FLOOR, str(folder)]
        runs = alternating(RUNS, {"floor": floor, "report": report})
        cells = json.loads(runs["report"][-1][2])
        print(f"  {size / 1e6:.0f} MB in {len(cells['load_order'])} plugins; {len(cells['cells'])} cells with "
              f"precombines, {cells['broken']} broken")
        print_ratios(runs, "floor", "read every byte", "report")


if __name__ == "__main__":
    main()
