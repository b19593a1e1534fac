""".tri codec speed: read a file, decode every morph's offsets, write it back.

    python benchmarks/tri_codec.py [CORPUS]

Two sizes: the smallest corpus .tri (Skyrim eyes, 40 KB) and the two largest (FO4 body and head,
1.3 MB together). Runs alternate between the codec and a floor (SHA-1 over the same bytes, what
the machine is worth); prints the median of each and their ratio.
"""

import hashlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.tri import FaceGenTri, tri_from_bytes  # noqa: E402

SIZES = {
    "small": ["pynifly/tests/tests/Skyrim/eyeschild.tri"],
    "large": ["pynifly/tests/tests/FO4/BaseMaleBody.tri", "pynifly/tests/tests/FO4/BaseMaleHead.tri"],
}
RUNS = 15


def codec(files):
    for data in files:
        tri = tri_from_bytes(data)
        if isinstance(tri, FaceGenTri):
            for morph in tri.morphs + tri.modifiers:
                tri.offsets(morph)
        else:
            for shape in tri.shapes:
                for morph in shape.morphs:
                    morph.values
        tri.to_bytes()


def floor(files):
    for data in files:
        hashlib.sha1(data).digest()


def timed(function, files):
    start = time.perf_counter()
    function(files)
    return time.perf_counter() - start


def main():
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    for size, names in SIZES.items():
        files = [(corpus / name).read_bytes() for name in names]
        codec(files)  # warm up
        runs = {"codec": [], "floor": []}
        for _ in range(RUNS):
            runs["codec"].append(timed(codec, files))
            runs["floor"].append(timed(floor, files))
        total = sum(map(len, files))
        median = {name: statistics.median(values) for name, values in runs.items()}
        print(
            f"{size}: {total / 1e3:.0f} KB, codec {median['codec'] * 1e3:.2f} ms ({total / median['codec'] / 1e6:.0f} MB/s), "
            f"floor {median['floor'] * 1e3:.3f} ms, ratio {median['codec'] / median['floor']:.1f}"
        )


if __name__ == "__main__":
    main()
