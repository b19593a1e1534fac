"""Full-decode throughput of the NIF codec over the corpus.

    python benchmarks/decode_throughput.py [CORPUS]

Reads every corpus NIF into memory, then times parsing plus decoding every vertex array
(positions, UVs, normals, tangents, bitangents, colours, skin weights and indices, FO3
triangles from strips). Prints MB/s, and the ratio against SHA-1 over the same bytes in the
same process, a baseline that shows what the machine itself is worth.
"""

import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.errors import FormatError  # noqa: E402
from precombined_nif.core.nif import NifFile  # noqa: E402
from precombined_nif.core.nif.blocks.geometry import NiTriBasedGeomData  # noqa: E402
from precombined_nif.core.nif.packed_vertices import PackedVertices  # noqa: E402

ATTRIBUTES = ("positions", "uvs", "normals", "tangents", "bitangents", "colors", "bone_weights", "bone_indices", "eye_data")


def full_decode(data):
    nif = NifFile.from_bytes(data)
    values = 0
    for block in nif.blocks:
        if isinstance(block, PackedVertices):
            for name in ATTRIBUTES:
                array = getattr(block, name)
                values += 0 if array is None else array.size
        elif isinstance(block, NiTriBasedGeomData):
            values += block.triangles.size if block.triangles is not None else 0
    return values


def best_of(repeats, function, files):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for data in files:
            function(data)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    files = []
    for path in sorted(corpus.glob("**/*.nif")):
        data = bytearray(path.read_bytes())  # as NifFile.read() holds a file it has read
        try:
            NifFile.from_bytes(data)
        except FormatError:
            continue  # the corpus' deliberately corrupt file
        files.append(data)
    if not files:
        sys.exit(f"no readable NIF files under {corpus}")
    total = sum(len(d) for d in files)
    values = sum(full_decode(d) for d in files)
    decode = best_of(5, full_decode, files)
    baseline = best_of(5, lambda d: hashlib.sha1(d).digest(), files)
    print(f"files: {len(files)}, bytes: {total / 1e6:.2f} MB, decoded vertex values: {values}")
    print(f"full decode: {decode * 1e3:.1f} ms, {total / decode / 1e6:.1f} MB/s")
    print(f"baseline sha1: {baseline * 1e3:.1f} ms, {total / baseline / 1e6:.1f} MB/s")
    print(f"ratio decode/sha1 throughput: {baseline / decode:.3f}")


if __name__ == "__main__":
    main()
