"""What a user waits for when importing a whole cell: the ``cli.py import-cell DATA --cell ID
--models --blend OUT`` process (start-up, the load order, every reference, its model's NIF
import, the save) against a floor process building the same objects with bare bpy from ready
arrays (one mesh a model in its own collection, one empty a reference instancing it, every
matrix in one foreach_set) and saving them the same way.

    .venv/bin/python benchmarks/cell_import.py [REFERENCES] [--models N] [--runs N]

Default: a generated cell of 20,000 references of 300 models (copies of the corpus's
AlootHomePlate models under 300 names), measured at a quarter and at the full size; runs
alternate import and floor, medians of N (default 3) printed with their ratio.
"""

import argparse
import math
import random
import shutil
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from processes import alternating, generated, print_ratios  # noqa: E402

CELL = 0xA00
FLOOR = """
import sys
import bpy
import numpy as np
data = np.load(sys.argv[1])
bpy.ops.wm.read_factory_settings(use_empty=True)
cell = bpy.data.collections.new("cell")
bpy.context.scene.collection.children.link(cell)
models = bpy.data.collections.new("Models")
cell.children.link(models)
collections = []
for index in range(int(data["models"])):
    positions, triangles = data[f"positions{index}"], data[f"triangles{index}"]
    mesh = bpy.data.meshes.new(f"m{index}")
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.ravel())
    mesh.loops.add(triangles.size)
    mesh.loops.foreach_set("vertex_index", triangles.ravel())
    mesh.polygons.add(len(triangles))
    mesh.polygons.foreach_set("loop_start", np.arange(0, triangles.size, 3, dtype=np.int32))
    mesh.update()
    holder = bpy.data.collections.new(f"m{index}")
    models.children.link(holder)
    holder.objects.link(bpy.data.objects.new(f"m{index}", mesh))
    collections.append(holder)
references = bpy.data.collections.new("References")
cell.children.link(references)
for number, model in enumerate(data["uses"]):
    obj = bpy.data.objects.new(f"r{number}", None)
    references.objects.link(obj)
    obj.instance_type = "COLLECTION"
    obj.instance_collection = collections[model]
    obj.rotation_mode = "QUATERNION"
references.objects.foreach_set("matrix_basis", data["matrices"].transpose(0, 2, 1).ravel())
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[2])
"""


def rotation(angles):
    x, y, z = (-a for a in angles)
    rx = [[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]]
    ry = [[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]]
    rz = [[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]]
    import numpy as np

    return np.array(rx) @ np.array(ry) @ np.array(rz)


def generate(folder, references, models):
    import numpy as np
    from cell_plugins import base_record, interior, placed, _versioned_plugin
    from plugin_writer import group

    import cli

    cli.load_package()
    from precombined_nif.core.nif import NifFile
    from precombined_nif.core.nif.blocks.tri_shape import BSTriShape

    sources = sorted((CORPUS / "ck-precombined/Meshes/aloot/HomePlate").glob("*.nif"))
    meshes = folder / "Data" / "meshes" / "bench"
    meshes.mkdir(parents=True)
    arrays, bases = {"models": models}, []
    for index in range(models):
        source = sources[index % len(sources)]
        shutil.copyfile(source, meshes / f"m{index:03d}.nif")
        nif = NifFile.read(source)
        shapes = [b for b in nif.blocks if isinstance(b, BSTriShape) and b.positions is not None]
        positions, triangles, at = [], [], 0
        for shape in shapes:
            positions.append(np.asarray(shape.positions, np.float32))
            triangles.append(np.asarray(shape.triangles, np.int32) + at)
            at += len(shape.positions)
        arrays[f"positions{index}"] = np.concatenate(positions) if positions else np.zeros((0, 3), np.float32)
        arrays[f"triangles{index}"] = np.concatenate(triangles) if triangles else np.zeros((0, 3), np.int32)
        bases.append(base_record("STAT", 0x1000 + index, f"bench\\m{index:03d}.nif", "FO4"))
    chance = random.Random(41)
    refs, uses, matrices = [], [], []
    for number in range(references):
        model = chance.randrange(models)
        position = (chance.uniform(-4000, 4000), chance.uniform(-4000, 4000), chance.uniform(0, 500))
        angles = (chance.uniform(-0.2, 0.2), chance.uniform(-0.2, 0.2), chance.uniform(-math.pi, math.pi))
        scale = chance.choice((1.0, 1.0, 0.5, 1.5))
        refs.append(placed("REFR", 0x10000 + number, 0x1000 + model, position, angles, "FO4", scale))
        matrix = np.eye(4)
        matrix[:3, :3] = rotation(angles) * scale
        matrix[:3, 3] = position
        uses.append(model)
        matrices.append(matrix)
    arrays["uses"] = np.array(uses)
    arrays["matrices"] = np.array(matrices, np.float32)
    (folder / "Data" / "Fallout4.esm").write_bytes(
        _versioned_plugin([], [group("STAT", bases), interior(CELL, "BenchCell", refs, "FO4")], "FO4", flags=1))
    np.savez(folder / "floor.npz", **arrays)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("references", nargs="?", type=int, default=20000)
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not (CORPUS / "ck-precombined").is_dir():
        sys.exit(f"the corpus's AlootHomePlate models are needed: {CORPUS} not found")
    python = sys.executable
    for references in (args.references // 4, args.references):
        folder = generated(f"precombined_nif_cell_{references}_{args.models}", generate, references, args.models)
        print(f"cell of {references} references of {args.models} models")
        commands = {
            "import-cell": [python, str(ROOT / "cli.py"), "import-cell", str(folder / "Data"), "--cell",
                            f"{CELL:08X}", "--models", "--blend", str(folder / "cell.blend")],
            "floor": [python, "-c", FLOOR, str(folder / "floor.npz"), str(folder / "floor.blend")],
        }
        print_ratios(alternating(args.runs, commands), "floor", "bare bpy", "import-cell")


if __name__ == "__main__":
    main()
