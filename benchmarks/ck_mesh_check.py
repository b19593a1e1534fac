"""Seconds of ``cli.py precombines DATA --meshes --json`` on a generated load order whose STATs use
as many models as the base game's (about 40,000), against the floor of inflating every model
out of its archive.

    python benchmarks/ck_mesh_check.py [MODELS ...] [--jobs N]

For each size (default 40,000, then 10,000) a Data folder is generated once into the temporary
folder and reused: Fallout4.esm (ESM-flagged) with one STAT a model, and "Fallout4 - Meshes.ba2"
holding the models, zlib-packed as the game's are. The models are ten Fallout 4 statics of the
corpus (2 to 121 KB, 42 KB on average; the base game's average about 37 KB) in turn, each
under its own path; one in a hundred is made full-precision, one in a hundred cut short, so
every verdict's path is taken.

Times whole processes, alternating, median of three: the check, and a floor inflating every
archived model in Python (what any check reading the models must at least do). Prints both
and their ratio, in wall and in CPU seconds (the latter steadier on cores shared with other
work), and the check's verdict counts.
"""

import json
import sys
from pathlib import Path

from processes import alternating, generated, print_ratios

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
RUNS = 3
VERSION = 1  # of the generated files: a change here regenerates them
CORPUS = ROOT.parent / "shared" / "corpus" / "pynifly/tests/tests/FO4"
TEMPLATES = (
    "Meshes/Architecture/DiamondCity/DExt/DExBrickColumn01.nif", "ShackPrefabMid01.nif", "APC01.nif",
    "ScaffFrame1x2Str01.nif", "InsFloorMat01.nif", "VltWorkShopROOMNurseryWindow01.nif", "FederalistChairOffice01.nif",
    "CapsuleExtStairsFree01.nif", "Meshes/Architecture/DiamondCity/ShackRV_Ext/DiamondPipeSm01.nif",
    "Meshes/TrashEdge01.nif",
)


def models(corpus_root):
    """The ten statics' bytes, a full-precision one and a cut one (tests/ck_meshes.py)."""
    import ck_meshes

    base = [(CORPUS / name).read_bytes() for name in TEMPLATES]
    full = ck_meshes.golden(corpus_root)
    ck_meshes.full_precision(full, ck_meshes.SHAPE)
    cut = ck_meshes.golden(corpus_root)
    ck_meshes.cut(cut, ck_meshes.SHADER, 8)
    return base, full.to_bytes(), cut.to_bytes()


def generate(folder, count):
    from archive_writer import write_ba2_gnrl
    from plugin_writer import group, plugin, record, zstring

    base, full, cut = models(CORPUS.parents[3])
    files, statics = {}, []
    for number in range(count):
        model = f"Bench\\Set{number // 1000:02}\\Model{number:05}.nif"
        files[f"meshes/{model}".replace("\\", "/")] = full if number % 100 == 7 else cut if number % 100 == 13 else \
            base[number % len(base)]
        statics.append(record("STAT", 0x10000 + number, [("EDID", zstring(f"BenchStatic{number:05}")),
                                                          ("OBND", bytes(12)), ("MODL", zstring(model))]))
    (folder / "Fallout4.esm").write_bytes(plugin([], [group("STAT", statics)], flags=0x1))
    write_ba2_gnrl(folder / "Fallout4 - Meshes.ba2", files)


def data_folder(count):
    return generated(f"ck-mesh-bench-{count}-v{VERSION}", generate, count)


FLOOR = """
import sys
sys.path.insert(0, sys.argv[2])
import cli
cli.load_package()
from precombined_nif.core.archives import open_archive
with open_archive(sys.argv[1]) as archive:
    for name in archive.names():
        archive.read(name)
"""


def main():
    arguments = sys.argv[1:]
    jobs = "1"
    if "--jobs" in arguments:
        at = arguments.index("--jobs")
        jobs = arguments[at + 1]
        del arguments[at:at + 2]
    sizes = [int(a) for a in arguments] or [40_000, 10_000]
    for count in sizes:
        print(f"{count} models, --jobs {jobs}:")
        folder = data_folder(count)
        check = [sys.executable, str(ROOT / "cli.py"), "precombines", str(folder), "--meshes", "--json", "--jobs", jobs]
        floor = [sys.executable, "-c", FLOOR, str(folder / "Fallout4 - Meshes.ba2"), str(ROOT)]
        runs = alternating(RUNS, {"floor": floor, "check": check})
        verdicts = {}
        for line in runs["check"][-1][2].splitlines():
            verdict = json.loads(line)["verdict"]
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
        size = (folder / "Fallout4 - Meshes.ba2").stat().st_size
        print(f"  archive {size / 1e6:.0f} MB; verdicts: {verdicts}")
        print_ratios(runs, "floor", "inflate every model", "check")


if __name__ == "__main__":
    main()
