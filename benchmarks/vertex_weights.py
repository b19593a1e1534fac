"""Vertex-group weights of skinned NIFs: the importer's route against the other ways Blender's
Python API offers, on the same meshes and weights, alternated, medians of 5.

    .venv/bin/python benchmarks/vertex_weights.py [FILE.nif ...]

Routes: ``VertexGroup.add`` once per distinct weight of a group (what the importer did), once per
vertex, and a BMesh deform layer (what it does now). Default: the largest skinned corpus files.
Prints, per file, the weights, the add calls the first route makes, each route's median time
and the whole import's time.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))
DEFAULT = [
    "pynifly/tests/tests/FO4/BodyRegression/MaleBody.nif",
    "pynifly/tests/tests/FO4/Meshes/CanineFemBody.nif",
    "pynifly/tests/tests/FO4/Bathrobe.nif",
]


def per_distinct_weight(obj, weights):
    for column, group in enumerate(obj.vertex_groups):
        used = np.flatnonzero(weights[:, column] > 0)
        values, inverse = np.unique(weights[used, column], return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(values) + 1))
        for number, value in enumerate(values.tolist()):
            group.add(used[order[bounds[number] : bounds[number + 1]]].tolist(), value, "REPLACE")


def per_vertex(obj, weights):
    for column, group in enumerate(obj.vertex_groups):
        used = np.flatnonzero(weights[:, column] > 0)
        for vertex, value in zip(used.tolist(), weights[used, column].tolist()):
            group.add([vertex], value, "REPLACE")


def bmesh_layer(obj, weights):
    from precombined_nif.io.nif.skin_import import _set_weights

    _set_weights(obj.data, list(range(len(obj.vertex_groups))), weights)


def weights_of(obj):
    weights = np.zeros((len(obj.data.vertices), len(obj.vertex_groups)), np.float32)
    for vertex in obj.data.vertices:
        for element in vertex.groups:
            weights[vertex.index, element.group] = element.weight
    return weights


def main():
    import cli

    cli.load_package()
    import bpy

    from precombined_nif.io.file_import import import_files, import_nif
    from precombined_nif.io.precombined.importer import CellBuilder, GeometrySource

    routes = {"add per distinct weight": per_distinct_weight, "add per vertex": per_vertex, "bmesh deform layer": bmesh_layer}
    for name in sys.argv[1:] or [str(CORPUS / path) for path in DEFAULT]:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        started = time.perf_counter()

        def import_one(context, path, progress):
            return import_nif(context, path, progress, builder=CellBuilder, geometry=GeometrySource(None))

        import_files(bpy.context, [name], import_one)
        imported = time.perf_counter() - started
        skinned = [o for o in bpy.data.objects if o.type == "MESH" and o.vertex_groups]
        weights = [weights_of(o) for o in skinned]
        calls = sum(len(np.unique(w[:, c][w[:, c] > 0])) for w in weights for c in range(w.shape[1]))
        times = {route: [] for route in routes}
        for _ in range(5):
            for route, fill in routes.items():
                for obj in skinned:  # empty groups of the same names, same order
                    names = [g.name for g in obj.vertex_groups]
                    obj.vertex_groups.clear()
                    for group_name in names:
                        obj.vertex_groups.new(name=group_name)
                started = time.perf_counter()
                for obj, w in zip(skinned, weights):
                    fill(obj, w)
                times[route].append(time.perf_counter() - started)
        count = sum(int((w > 0).sum()) for w in weights)
        print(f"{Path(name).name}: {count} weights, {calls} add calls per distinct weight; whole import {imported:.3f} s")
        for route, values in times.items():
            print(f"  {route + ':':26s} {statistics.median(values):.3f} s")


if __name__ == "__main__":
    main()
