"""Blender import and export of real NIFs against the codec alone, in one process.

    .venv/bin/python benchmarks/nif_blender_roundtrip.py [FILE.nif ...]

Default: the largest corpus NIFs of each kind (skinned FO4 body, FO4 static with collision,
FNV skinned outfit). Prints, per file, import, untouched export and edited export times, and
their ratio to reading plus writing the same file with the codec (the floor any importer
pays); then the whole-run peak memory.
"""

import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))
DEFAULT = [
    "pynifly/tests/tests/FO4/BodyRegression/MaleBody.nif",
    "pynifly/tests/tests/FO4/Meshes/BOSRadarDish.nif",
    "havok/MetalAddAwnARoofEndCap02.nif",
    "pynifly/tests/tests/FONV/outfitf_simple.nif",
]


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main(paths):
    import bpy

    import cli

    cli.load_package()
    from precombined_nif.core.nif import NifFile
    from precombined_nif.io.nif.exporter import export_nif
    from precombined_nif.io.file_import import import_nif

    out = Path(tempfile.mkdtemp()) / "out.nif"
    print(f"{'file':44} {'MB':>6} {'codec':>8} {'import':>8} {'export':>8} {'edited':>8}  ratios to codec")
    for path in paths:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        codec, _ = timed(lambda: NifFile.read(path).to_bytes())
        load, (collection, _) = timed(lambda: import_nif(bpy.context, path))
        objects = list(collection.all_objects)
        save, _ = timed(lambda: export_nif(out, objects))
        same = out.read_bytes() == Path(path).read_bytes()
        mesh = max((o.data for o in objects if o.type == "MESH"), key=lambda m: len(m.vertices))
        mesh.vertices[0].co.x += 1.0
        edited, _ = timed(lambda: export_nif(out, objects))
        print(
            f"{Path(path).name:44} {Path(path).stat().st_size / 1e6:6.2f} {codec * 1e3:6.1f}ms {load * 1e3:6.1f}ms "
            f"{save * 1e3:6.1f}ms {edited * 1e3:6.1f}ms  x{load / codec:.1f} x{save / codec:.1f} x{edited / codec:.1f}"
            f"{'' if same else '  (untouched export differs!)'}"
        )
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [CORPUS / p for p in DEFAULT])
