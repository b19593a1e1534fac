"""Many files in one ``cli.py import``: the time per file at two sizes should be flat.

    .venv/bin/python benchmarks/many_file_import.py [--runs N] [--copies K]

The first 18 NIFs of the corpus FO4 folder (statics, skinned bodies, animated meshes), copied
into 1 and K (default 4) folders, imported in one call each (whole processes, alternating, the
median of N runs, default 2). A floor run imports one of them (the process's start: Blender's
and the add-on's loading). Prints wall and CPU seconds, the CPU seconds per file above the
floor at each size, and their ratio (1.0: linear; issue 44 measured 8.5 before named texture
nodes were copied instead of renamed).
"""

import argparse
import shutil
import statistics
import sys
from pathlib import Path

from processes import alternating, generated

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
FILES = 18


def copies(folder, count):
    sources = sorted((CORPUS / "pynifly/tests/tests/FO4").glob("*.nif"))[:FILES]
    if len(sources) < FILES:
        sys.exit(f"many_file_import: {FILES} NIFs needed in {CORPUS / 'pynifly/tests/tests/FO4'}")
    for copy in range(count):
        (folder / f"copy{copy}").mkdir()
        for source in sources:
            shutil.copy(source, folder / f"copy{copy}" / source.name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--copies", type=int, default=4)
    args = parser.parse_args()
    folder = generated(f"precombined_nif_many_import_{args.copies}", copies, args.copies)
    small = sorted((folder / "copy0").glob("*.nif"))
    large = sorted(folder.glob("copy*/*.nif"))
    python = str(ROOT / ".venv" / "bin" / "python")
    out = folder / "out.blend"
    commands = {
        "floor": [python, str(ROOT / "cli.py"), "import", str(small[0]), "--blend", str(out)],
        f"{len(small)} files": [python, str(ROOT / "cli.py"), "import", *map(str, small), "--blend", str(out)],
        f"{len(large)} files": [python, str(ROOT / "cli.py"), "import", *map(str, large), "--blend", str(out)],
    }
    results = alternating(args.runs, commands)
    medians = {name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
               for name, runs in results.items()}
    floor_cpu = medians["floor"][1]
    per_file = {}
    for (name, (wall, cpu)), count in zip(medians.items(), (1, len(small), len(large))):
        line = f"  {name:9s} wall {wall:7.2f} s   CPU {cpu:7.2f} s"
        if name != "floor":
            per_file[count] = (cpu - floor_cpu) / (count - 1)
            line += f"   CPU per file above the floor {per_file[count]:.3f} s"
        print(line)
    ratio = per_file[len(large)] / per_file[len(small)]
    print(f"  time per file, {len(large)} files against {len(small)}: ratio {ratio:.2f}x (flat: 1.0; within 1.2x wanted)")


if __name__ == "__main__":
    main()
