"""Blender import of a precombined cell against the bare bpy calls that build the same meshes
and objects from ready numpy arrays, side by side in one run (each in its own process, so
peak memory is comparable).

    .venv/bin/python benchmarks/precombined_blender_import.py [OBJECTS VERTICES TRIANGLES INSTANCES]

Default cell: 200 objects x 5000 vertices x 8000 triangles x 50 instances (10k instances).
"""

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def bare(path, lod=0):
    """Meshes (positions, faces, UVs, custom normals) and linked objects with bpy alone, from
    arrays the codec already decoded (decoding is not timed)."""
    import bpy
    import numpy as np

    from precombined_nif.core.nif import NifFile
    from precombined_nif.core.nif.blocks.precombined import instance_matrices

    block = NifFile.read(path).blocks[1]
    ready = []
    for record in block.records:
        triangles = record.lod_triangles(lod).astype(np.int32)
        uv = record.uvs[triangles.ravel()]
        uv[:, 1] = 1 - uv[:, 1]
        normals = record.normals
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-6)
        ready.append((record.positions, triangles, uv, normals, instance_matrices(record.instances)))
    start = time.perf_counter()
    collection = bpy.data.collections.new("bare")
    bpy.context.scene.collection.children.link(collection)
    all_matrices = []
    for index, (positions, triangles, uv, normals, matrices) in enumerate(ready):
        mesh = bpy.data.meshes.new(f"record {index}")
        mesh.vertices.add(len(positions))
        mesh.vertices.foreach_set("co", positions.ravel())
        mesh.loops.add(triangles.size)
        mesh.loops.foreach_set("vertex_index", triangles.ravel())
        mesh.polygons.add(len(triangles))
        mesh.polygons.foreach_set("loop_start", np.arange(0, triangles.size, 3, dtype=np.int32))
        mesh.update(calc_edges=True)
        mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", uv.ravel())
        mesh.shade_smooth()
        mesh.normals_split_custom_set_from_vertices(normals)
        for number in range(len(matrices)):
            collection.objects.link(bpy.data.objects.new(f"{index} #{number}", mesh))
        all_matrices.append(matrices)
    flat = np.concatenate(all_matrices).astype(np.float32).transpose(0, 2, 1).ravel()
    collection.objects.foreach_set("matrix_world", flat)
    return time.perf_counter() - start


def ours(path, lod=0):
    import bpy

    from precombined_nif.io.precombined.importer import CellBuilder
    from precombined_nif.operators.nif_import import import_nif

    start = time.perf_counter()
    import_nif(bpy.context, path, builder=CellBuilder, lod=lod)
    return time.perf_counter() - start


def child(kind, path):
    import cli

    cli.load_package()
    seconds = (bare if kind == "bare" else ours)(path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak}))


def main():
    import cli

    cli.load_package()
    import precombined_decode

    shape = tuple(int(a) for a in sys.argv[1:5]) if len(sys.argv) >= 5 else (200, 5000, 8000, 50)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cell_OC.nif"
        path.write_bytes(precombined_decode.build_cell(*shape))
        results = {}
        for kind in ("bare", "ours"):
            run = subprocess.run(
                [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=True
            )
            results[kind] = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"cell: {shape[0]} objects x {shape[1]} vertices x {shape[2]} triangles x {shape[3]} instances")
    for kind, label in (("bare", "bare bpy calls"), ("ours", "File > Import > Precombined NIF")):
        print(f"{label}: {results[kind]['seconds']:.2f} s, peak {results[kind]['peak_mb']:.0f} MB")
    print(f"ratio time: {results['ours']['seconds'] / results['bare']['seconds']:.2f}x")
    print(f"ratio peak memory: {results['ours']['peak_mb'] / results['bare']['peak_mb']:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
