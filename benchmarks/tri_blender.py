"""What morphs cost a NIF's import and export in Blender: each run with the .tri files (Morphs on)
against the same without (the floor), alternating, medians printed with their ratio.

    .venv/bin/python benchmarks/tri_blender.py [CORPUS]

Two sizes: Skyrim child eyes (204 vertices, 22 morphs) and a Fallout 4 body (8,717 vertices, 50
BodySlide sliders). Export is timed untouched (stored bytes kept) and with every key edited
(every morph encoded anew).
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SIZES = {"small": "pynifly/tests/tests/Skyrim/eyeschild.nif", "large": "pynifly/tests/tests/FO4/BTBaseMaleBody.nif"}
RUNS = 7


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main():
    import bpy

    import cli

    cli.load_package()
    from precombined_nif.io.file_import import import_nif
    from precombined_nif.io.nif.exporter import export_nif

    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    out = Path(tempfile.mkdtemp()) / "out.nif"
    for size, name in SIZES.items():
        runs = {key: [] for key in ("import", "import, no morphs", "export", "export, no morphs", "export, keys edited")}
        for _ in range(RUNS):
            for morphs in (False, True):  # the last import, with morphs, is the one edited below
                bpy.ops.wm.read_factory_settings(use_empty=True)
                seconds, (collection, _) = timed(lambda: import_nif(bpy.context, str(corpus / name), morphs=morphs))
                runs["import" if morphs else "import, no morphs"].append(seconds)
                objects = list(collection.all_objects)
                seconds, _ = timed(lambda: export_nif(out, objects, morphs=morphs))
                runs["export" if morphs else "export, no morphs"].append(seconds)
            for obj in objects:
                for key in (obj.data.shape_keys.key_blocks[1:] if obj.type == "MESH" and obj.data.shape_keys else ()):
                    key.data[0].co.x += 0.01
            runs["export, keys edited"].append(timed(lambda: export_nif(out, objects))[0])
        median = {key: statistics.median(values) * 1e3 for key, values in runs.items()}
        print(f"{size} ({Path(name).name}): " + ", ".join(f"{key} {value:.1f} ms" for key, value in median.items()))
        print(f"  ratios to the floor: import x{median['import'] / median['import, no morphs']:.2f}, export "
              f"x{median['export'] / median['export, no morphs']:.2f}, edited x{median['export, keys edited'] / median['export, no morphs']:.2f}")


if __name__ == "__main__":
    main()
