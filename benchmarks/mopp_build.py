"""MOPP code built here against the games' own: size, false positives, build time.

    python benchmarks/mopp_build.py [CORPUS]

For every corpus MOPP (Skyrim LE/SE compressed meshes, read by tests/raw_mopp.py) the shape's
triangles are rebuilt from scratch and both programs are asked about the same points: half
uniform in the shape's box, half near its surface (a random point of a random triangle moved
up to 2% of the box's size). A returned leaf is a false positive when the point is outside its
triangle's box grown by the shape's radius; the rate is false positives over all returned
leaves. Then build times (medians of alternating runs) for bumpy grids of 5 000 and 20 000
triangles, with the ratio to a floor: computing the triangles' boxes and sorting them once.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import cli  # noqa: E402

cli.load_package()
from raw_mopp import mopp_blocks, shape_triangles  # noqa: E402

from precombined_nif.core.havok import mopp  # noqa: E402

POINTS = 2000


def queries(vertices, triangles, rng):
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    uniform = rng.uniform(low, high, (POINTS // 2, 3))
    chosen = vertices[triangles[rng.integers(0, len(triangles), POINTS // 2)]]
    weights = rng.dirichlet(np.ones(3), POINTS // 2)
    near = np.einsum("ij,ijk->ik", weights, chosen) + rng.uniform(-1, 1, (POINTS // 2, 3)) * 0.02 * (high - low).max()
    return np.concatenate([uniform, near])


def rates(code, origin, scale, points, boxes, index_of):
    hits = false = 0
    for point in points:
        found = mopp.leaves_at_point(code, origin, scale, point)
        rows = index_of(found)
        inside = ((boxes[0][rows] <= point) & (point <= boxes[1][rows])).all(axis=1)
        hits += len(found)
        false += int((~inside).sum())
    return false / max(hits, 1), hits / len(points)


def grid(n):
    x, y = np.meshgrid(np.linspace(0, 10, n + 1), np.linspace(0, 10, n + 1), indexing="ij")
    vertices = np.stack([x, y, 0.3 * np.sin(x) * np.cos(y)], axis=-1).reshape(-1, 3)
    a = (np.arange(n)[:, None] * (n + 1) + np.arange(n)).ravel()
    return vertices, np.concatenate([np.stack([a, a + n + 1, a + 1], 1), np.stack([a + 1, a + n + 1, a + n + 2], 1)])


def floor(vertices, triangles):
    corners = vertices[triangles]
    low, high = corners.min(axis=1), corners.max(axis=1)
    np.argsort((low + high)[:, 0])


def timings(sizes, runs=5):
    meshes = {n: grid(n) for n in sizes}
    found = {n: ([], []) for n in sizes}
    for _ in range(runs):  # alternating sizes, so drift hits both alike
        for n, (vertices, triangles) in meshes.items():
            ids = np.arange(len(triangles))
            start = time.perf_counter()
            mopp.build(vertices, triangles, ids)
            middle = time.perf_counter()
            floor(vertices, triangles)
            found[n][0].append(middle - start)
            found[n][1].append(time.perf_counter() - middle)
    return {n: (len(meshes[n][1]), statistics.median(a), statistics.median(b)) for n, (a, b) in found.items()}


def main():
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    rng = np.random.default_rng(26)
    print(f"{'file:block':40} {'tris':>5} {'game B':>7} {'ours B':>7} {'game FP':>8} {'ours FP':>8} {'game/q':>7} {'ours/q':>7}")
    totals = np.zeros(4)
    for path in sorted(p for p in corpus.glob("**/*.nif") if b"bhkMoppBvTreeShape" in p.read_bytes()):
        for index, code, origin, scale, type_name, payload, raw in mopp_blocks(path.read_bytes()):
            vertices, triangles, keys, radius = shape_triangles(type_name, payload, raw)
            built = mopp.build(vertices, triangles, keys, radius)
            corners = vertices[triangles]
            boxes = (corners.min(axis=1) - radius, corners.max(axis=1) + radius)
            order = np.argsort(keys)
            index_of = lambda found, order=order, keys=keys: order[np.searchsorted(keys[order], found)]  # noqa: E731
            points = queries(vertices, triangles, rng)
            game = rates(code, origin, scale, points, boxes, index_of)
            ours = rates(built.code, built.origin, built.scale, points, boxes, index_of)
            totals += (len(code), len(built.code), game[0], ours[0])
            name = f"{path.parent.name}/{path.name}:{index}"
            print(f"{name:40} {len(triangles):5} {len(code):7} {len(built.code):7} {game[0]:8.3f} {ours[0]:8.3f} {game[1]:7.2f} {ours[1]:7.2f}")
    print(f"code size, ours / game's: {totals[1] / totals[0]:.2f}")
    for n, (triangles, built, base) in timings((50, 100)).items():
        print(f"build {triangles} triangles: {built * 1e3:.0f} ms (median of 5), floor {base * 1e3:.1f} ms, ratio {built / base:.0f}")


if __name__ == "__main__":
    main()
