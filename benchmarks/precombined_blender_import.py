"""What a user waits for when importing a precombined cell: the whole ``cli.py import CELL
--blend OUT`` process (start-up, decoding, building, Blender's scene evaluation, the save)
against a floor process that builds the same Blender data from the codec's ready arrays with
bare bpy calls (LOD 0 meshes with UVs and custom normals, one object per placed copy, all
matrices in one foreach_set) and saves it the same way.

    .venv/bin/python benchmarks/precombined_blender_import.py [OBJECTS VERTICES TRIANGLES INSTANCES] [--runs N] [--geometry-nodes]

Default cell: 200 records x 5000 vertices x 8000 triangles x 50 copies (10k copies, 1M
vertices), measured at 1x and 2x (twice the copies), so cost that grows faster than the work
shows. Runs alternate import and floor; medians of N (default 3) are printed with the ratios of
time and peak memory (each process's own maximum resident size). With --geometry-nodes it
measures instead the geometry-nodes instancing mode at 10x the copies (100k by default) against
objects mode at 1x, alternated.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

FLOOR = """
import sys
import bpy
import numpy as np
sys.path.insert(0, sys.argv[3])
import cli
cli.load_package()
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.precombined import instance_matrices

bpy.ops.wm.read_factory_settings(use_empty=True)
block = NifFile.read(sys.argv[1]).blocks[1]
collection = bpy.data.collections.new("floor")
bpy.context.scene.collection.children.link(collection)
matrices = []
for index, record in enumerate(block.records):
    triangles = record.lod_triangles(0).astype(np.int32)
    uv = record.uvs[triangles.ravel()]
    uv[:, 1] = 1 - uv[:, 1]
    normals = record.normals
    normals = normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-6)
    mesh = bpy.data.meshes.new(f"record {index:04d}")
    mesh.vertices.add(len(record.positions))
    mesh.attributes["position"].data.foreach_set("vector", record.positions.ravel())
    mesh.loops.add(triangles.size)
    mesh.attributes[".corner_vert"].data.foreach_set("value", triangles.ravel())
    mesh.polygons.add(len(triangles))
    mesh.polygons.foreach_set("loop_start", np.arange(0, triangles.size, 3, dtype=np.int32))
    mesh.update(calc_edges=True)
    mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", uv.ravel())
    mesh.shade_smooth()
    mesh.normals_split_custom_set_from_vertices(normals)
    for number in range(len(record.instances)):
        collection.objects.link(bpy.data.objects.new(f"{index:04d} #{number:05d}", mesh))
    matrices.append(instance_matrices(record.instances))
flat = np.concatenate(matrices).astype(np.float32).transpose(0, 2, 1).ravel()
collection.objects.foreach_set("matrix_basis", flat)  # "matrix_world" in bulk does not stay
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[2])
"""


# As on a user's machine, Python keeps the modules it compiled (a setting to the contrary would
# charge the import, which loads more of the package, for compiling it on every run).
ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def measured(command):
    """(seconds, peak resident MB) of a whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENVIRONMENT)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace")
    if process.returncode:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{error}")
    return seconds, usage.ru_maxrss / 1024


def main():
    import cli

    cli.load_package()
    import precombined_decode

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    if "--runs" in sys.argv:
        args.remove(str(runs))
    objects, vertices, triangles, instances = (int(a) for a in args[:4]) if len(args) >= 4 else (200, 5000, 8000, 50)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="precombined-bench-") as folder:
        folder = Path(folder)

        def cell(factor):
            path = folder / f"{factor}x_OC.nif"
            path.write_bytes(precombined_decode.build_cell(objects, vertices, triangles, instances * factor))
            return path

        def imported(path, *options):
            return [python, ROOT / "cli.py", "import", path, "--blend", folder / "out.blend", *options]

        if "--geometry-nodes" in sys.argv:
            commands = {"objects 1x": imported(cell(1)), "geometry nodes 10x": imported(cell(10), "--instancing", "geometry-nodes")}
            report(commands, runs, "geometry nodes 10x", "objects 1x", f"{objects} records x {vertices} vertices, {instances} and {instances * 10} copies each")
            return
        floor_script = folder / "floor.py"
        floor_script.write_text(FLOOR)
        for factor in (1, 2):
            path = cell(factor)
            commands = {"cli.py import": imported(path), "floor": [python, floor_script, path, folder / "out.blend", ROOT]}
            report(commands, runs, "cli.py import", "floor", f"{factor}x: {objects} records x {vertices} vertices x {triangles} triangles x {instances * factor} copies")


def report(commands, runs, measured_name, base_name, title):
    """Run the commands in turn ``runs`` times; print medians and the ratios of the first to the second."""
    results = {name: [] for name in commands}
    for command in commands.values():  # untimed: compiles what each imports, as a first use would
        measured(command)
    for _ in range(runs):
        for name, command in commands.items():
            results[name].append(measured(command))
    medians = {name: [statistics.median(v[i] for v in values) for i in (0, 1)] for name, values in results.items()}
    print(title)
    for name, (seconds, peak) in medians.items():
        print(f"  {name + ':':22s} {seconds:6.2f} s, peak {peak:6.0f} MB")
    ours, base = medians[measured_name], medians[base_name]
    print(f"  ratio time {ours[0] / base[0]:.2f}x, peak memory {ours[1] / base[1]:.2f}x", flush=True)

if __name__ == "__main__":
    main()
