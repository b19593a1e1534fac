"""Starfield .mesh codec speed: reading, writing, decoding every attribute, and rebuilding
meshlets and culling data (the stored triangle order, and a new mesh's Morton order), on the
corpus body (6616 vertices) and head (15370), and on two grids made here (10 201 and 40 401
vertices). Medians of 7 runs, the steps alternated; each against a floor: copying the file's
bytes (reading), or numpy's own sort of the triangles' indices (meshlets).

    .venv/bin/python benchmarks/starfield_mesh.py
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "pynifly/tests/tests/SF"
sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()
from precombined_nif.core.starfield.mesh import MeshData  # noqa: E402
from precombined_nif.core.starfield.meshlets import rebuild_meshlets  # noqa: E402

RUNS = 7


def medians(steps):
    """{name: median seconds}, the steps run in turn RUNS times."""
    times = {name: [] for name in steps}
    for _ in range(RUNS):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def grid(n):
    mesh = MeshData()
    x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n))
    mesh.set_vertices(np.stack([x.ravel(), y.ravel(), 0.1 * np.sin(3 * x).ravel()], axis=1))
    corner = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)).ravel()
    cells = np.stack([corner, corner + 1, corner + n + 1, corner + n], axis=1)
    mesh.triangles = np.concatenate([cells[:, [0, 1, 2]], cells[:, [0, 2, 3]]]).astype(np.uint16)
    mesh.set_normals(np.tile([0.0, 0.0, 1.0], (n * n, 1)), np.tile([1.0, 0.0, 0.0], (n * n, 1)), np.ones(n * n))
    return rebuild_meshlets(mesh, reorder=True).to_bytes()


def decode(mesh):
    return mesh.vertices, mesh.vertex_normals, mesh.vertex_tangents, mesh.bitangent_signs, mesh.uv, mesh.bone_weights


def report(name, data):
    mesh = MeshData.from_bytes(data)
    fresh = MeshData.from_bytes(data)
    times = medians({
        "floor": lambda: bytearray(data),
        "read": lambda: MeshData.from_bytes(data),
        "write": mesh.to_bytes,
        "decode": lambda: decode(mesh),
        "sort floor": lambda: np.sort(mesh.triangles, axis=None),
        "meshlets": lambda: rebuild_meshlets(fresh),
        "reordered": lambda: rebuild_meshlets(MeshData.from_bytes(data), reorder=True),
    })
    ms = {key: value * 1e3 for key, value in times.items()}
    print(f"{name}: {len(mesh.positions)} vertices, {len(mesh.triangles)} triangles, {len(data) / 1e6:.2f} MB")
    print(f"  read {ms['read']:.2f} ms ({times['read'] / times['floor']:.1f} x copying the bytes), "
          f"write {ms['write']:.2f} ms, decode {ms['decode']:.2f} ms")
    print(f"  meshlets {ms['meshlets']:.1f} ms, reordered {ms['reordered']:.1f} ms "
          f"({times['meshlets'] / times['sort floor']:.0f} x sorting the indices)")


def main():
    for name in ("body_skinned.mesh", "geometries/022faa031bcfca93c813/0b3a78e1d720af51f83d.mesh"):
        path = CORPUS / name
        if path.is_file():
            report(path.name, path.read_bytes())
    for n in (101, 201):
        report(f"grid {n} x {n}", grid(n))


if __name__ == "__main__":
    main()
