"""Havok codec throughput: packfiles read and written, compressed meshes decoded and built.

    python benchmarks/havok_throughput.py [CORPUS]

Times reading every corpus packfile (NIF physics and ragdoll blocks, cut-out blobs with their
typed objects; binary .hkx as the .hkx reader decodes them), writing them back, decoding every compressed mesh to
triangles, and building a compressed mesh of a 200 x 200 vertex terrain (79 202 triangles).
"""

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.havok import CompressedMeshShape, Packfile, build_compressed_mesh  # noqa: E402
from precombined_nif.core.havok.animation.hkx import CLASSES  # noqa: E402
from precombined_nif.core.nif import NifFile  # noqa: E402
from precombined_nif.core.nif.blocks.collision import bhkSystem  # noqa: E402


MAGIC = b"W\xe0"  # a binary packfile (Starfield's physics blocks hold another format)


def best_of(repeats, function):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def packfiles(corpus):
    """(bytes, classes decoded): NIF blocks and blobs whole, .hkx files as the .hkx reader reads them."""
    found = []
    for path in sorted(corpus.glob("**/*.nif")):
        data = path.read_bytes()
        if b"bhkPhysicsSystem" in data or b"bhkRagdollSystem" in data:
            blocks = NifFile.from_bytes(data, path).blocks_of(bhkSystem)
            found += [(block.packfile, None) for _, block in blocks if bytes(block.packfile[:2]) == MAGIC]
    found += [(path.read_bytes(), None) for path in sorted(corpus.glob("havok/*.packfile*.bin"))]
    found += [(data, CLASSES) for data in (path.read_bytes() for path in sorted(corpus.glob("**/*.hkx"))) if data[:2] == MAGIC]
    return found


def terrain(n):
    x, y = np.meshgrid(np.linspace(-5000, 5000, n), np.linspace(-5000, 5000, n))
    vertices = np.stack([x.ravel(), y.ravel(), (200 * np.sin(x / 700) * np.cos(y / 900)).ravel()], axis=1)
    corner = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)).ravel()
    cells = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    return vertices, np.concatenate([cells[:, [0, 1, 2]], cells[:, [0, 2, 3]]])


def main():
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    blobs = packfiles(corpus)
    size = sum(len(data) for data, _ in blobs) / 1e6
    read = best_of(5, lambda: [Packfile.from_bytes(*blob) for blob in blobs])
    parsed = [Packfile.from_bytes(*blob) for blob in blobs]
    write = best_of(5, lambda: [packfile.to_bytes() for packfile in parsed])
    meshes = [obj for packfile in parsed for obj, _ in packfile.objects() if isinstance(obj, CompressedMeshShape)]
    triangles = sum(len(mesh.mesh()[1]) for mesh in meshes)
    decode = best_of(5, lambda: [mesh.mesh() for mesh in meshes])
    print(f"{len(blobs)} packfiles, {size:.2f} MB: read {size / read:.1f} MB/s, write {size / write:.1f} MB/s")
    print(f"{len(meshes)} compressed meshes, {triangles} triangles: decoded in {decode * 1e3:.1f} ms")
    vertices, faces = terrain(200)
    build = best_of(3, lambda: build_compressed_mesh(vertices, faces))
    shape = build_compressed_mesh(vertices, faces)
    print(f"terrain of {len(faces)} triangles: built in {build:.2f} s, {len(shape.data.sections)} sections")


if __name__ == "__main__":
    main()
