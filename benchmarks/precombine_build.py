"""Seconds of ``cli.py precombines DATA --cell ID --build`` (issue 40, point 4): the corpus cell
00001E58 (2,507 references, Fallout4.esm's part stood in for from the CK's records as
tests/ck_cell_source.py does) and generated interiors of REFERENCES references (default 20,000,
then 5,000) placing four corpus statics and a SCOL, turned and scaled, against the floor of a
process reading the same inputs (the plugins and the models' bytes).

    python benchmarks/precombine_build.py [REFERENCES ...]

Inputs are generated once into the temporary folder and reused. Times whole processes,
alternating, median of three; prints both and their ratio, wall and CPU seconds.
"""

import math
import struct
import sys
from pathlib import Path

from processes import alternating, generated, print_ratios

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RUNS = 3
VERSION = 3  # of the generated folders


def load_tests():
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT))
    import cli

    cli.load_package()


def generate_ck(folder):
    load_tests()
    from ck_cell_source import CkCell, write_stand_in

    ck = CkCell(CORPUS)
    try:
        write_stand_in(ck, folder / "Data")
    finally:
        ck.close()


def generate_interior(folder, count):
    """The test plugin's statics (tests/test_precombine_build.py) placed ``count`` times on a
    grid 4,096 units across (a large interior: 64 of the CK's 512-unit groups), each turned and
    scaled its own way."""
    load_tests()
    from plugin_writer import cell_with_children, group, interior_cells, plugin, record, zstring
    from test_precombine_build import CELL, MODELS, PLACED, SCOL, refr, scol_record, write_load_order

    data = write_load_order(CORPUS, folder / "Data")
    bases = [*MODELS, SCOL]
    side = math.ceil(math.sqrt(count))
    step = 4096.0 / side
    placed = [refr(0x10000 + n, bases[n % len(bases)], (step * (n % side), step * (n // side), 0.0),
                   (0.0, 0.0, 0.1 * n % 6.28), 0.75 + 0.5 * (n % 3) / 2) for n in range(count)]
    statics = [record("STAT", form_id, [("EDID", zstring(name)), ("OBND", bytes(12)),
                                        ("MODL", zstring(f"Test\\{model.rsplit('/', 1)[-1]}"))])
               for form_id, (name, model, _) in MODELS.items()]
    cell = record("CELL", CELL, [("EDID", zstring("BenchCell")), ("DATA", struct.pack("<H", 1))])
    (data / "Fallout4.esm").write_bytes(plugin([], [group("STAT", statics), group("SCOL", [scol_record()]),
                                                    interior_cells(cell_with_children(cell, CELL, temporary=placed))],
                                               flags=0x1))
    assert len(PLACED)


FLOOR = ("import sys, pathlib\n"
         "for path in pathlib.Path(sys.argv[1]).rglob('*'):\n"
         "    if path.is_file() and path.suffix.lower() in ('.esm', '.esp', '.nif'): path.read_bytes()\n")


def measure(label, data, cell):
    build = [sys.executable, str(ROOT / "cli.py"), "precombines", str(data), "--cell", cell, "--build", "--into",
             "Bench.esp"]
    floor = [sys.executable, "-c", FLOOR, str(data)]
    print(label)
    print_ratios(alternating(RUNS, {"floor": floor, "build": build}), "floor", "reading the plugins and models", "build")


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [20000, 5000]
    ck = generated(f"precombined_nif_build_ck_v{VERSION}", generate_ck)
    measure("corpus cell 00001E58 (2,507 references; 488 built, the rest wait on Fallout4.esm)", ck / "Data",
            "Fallout4.esm:001E58")
    for size in sizes:
        folder = generated(f"precombined_nif_build_{size}_v{VERSION}", generate_interior, size)
        measure(f"generated interior of {size:,} references", folder / "Data", "00001000")


if __name__ == "__main__":
    main()
