"""Skyrim compressed-mesh collision written anew: encoding the data and building its MOPP.

    python benchmarks/skyrim_compressed_mesh.py

Bumpy grids of 5 000 and 20 000 triangles spanning 200 Havok units (14 000 game units, so they
split into many chunks), two materials in stripes: medians of alternating runs of the encoder
(core.nif.compressed_mesh_build.build_compressed_data), of decoding what it wrote and of the
MOPP build over it, with the ratio to a floor: one np.unique over the triangles' corners.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.nif.compressed_mesh_build import build_compressed_data, build_mopp  # noqa: E402


def grid(n):
    x, y = np.meshgrid(np.linspace(0, 200, n + 1), np.linspace(0, 200, n + 1), indexing="ij")
    vertices = np.stack([x, y, 3 * np.sin(x / 10) * np.cos(y / 10)], axis=-1).reshape(-1, 3)
    a = (np.arange(n)[:, None] * (n + 1) + np.arange(n)).ravel()
    triangles = np.concatenate([np.stack([a, a + n + 1, a + 1], 1), np.stack([a + 1, a + n + 1, a + n + 2], 1)])
    materials = np.where(vertices[triangles[:, 0], 0] < 100, 0x1DD9C611, 0xDF02F237)
    return vertices, triangles, materials


def timings(sizes, runs=5):
    meshes = {n: grid(n) for n in sizes}
    found = {n: ([], [], [], []) for n in sizes}
    chunks = {}
    for _ in range(runs):  # alternating sizes, so drift hits both alike
        for n, (vertices, triangles, materials) in meshes.items():
            times = [time.perf_counter()]
            data = build_compressed_data(vertices, triangles, materials)
            times.append(time.perf_counter())
            data.mesh()
            times.append(time.perf_counter())
            build_mopp(data, 0.005)
            times.append(time.perf_counter())
            np.unique(triangles)
            times.append(time.perf_counter())
            for column, spent in zip(found[n], np.diff(times)):
                column.append(spent)
            chunks[n] = len(data.chunks)
    return {n: (len(meshes[n][1]), chunks[n], *(statistics.median(column) for column in columns)) for n, columns in found.items()}


def main():
    for n, (triangles, chunks, encode, decode, tree, base) in timings((50, 100)).items():
        print(f"{triangles} triangles ({chunks} chunks): encode {encode * 1e3:.0f} ms, decode {decode * 1e3:.0f} ms, "
              f"MOPP {tree * 1e3:.0f} ms (medians of 5); floor {base * 1e3:.2f} ms, encode ratio {encode / base:.0f}")


if __name__ == "__main__":
    main()
