"""Blender import and export of the corpus's Havok animations against the codec alone, in one
process.

    .venv/bin/python benchmarks/hkx_blender.py

Per animation (FO4 and Skyrim SE, onto an armature of their skeleton .hkx): the codec's floor
(read_hkx for the import; build_hkx spline-compressed for the export), the Blender import (an
action, one key per frame) and the export (sampling the action, then build_hkx), medians of
three runs, their ratio to the floor and the cost per second of animation.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "pynifly/tests/tests"
sys.path.insert(0, str(ROOT))
RUNS = 3


def median_time(action):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    import bpy

    import cli

    cli.load_package()
    from precombined_nif.core.havok.animation import build_hkx, read_hkx
    from precombined_nif.operators.hkx import export_animation, import_animations

    out = Path(tempfile.mkdtemp()) / "out.hkx"
    groups = [(CORPUS / "FO4/Animations/skeleton.hkx", sorted((CORPUS / "FO4/Animations").glob("*.hkx"))),
              (CORPUS / "SkyrimSE/skeleton.hkx", sorted((CORPUS / "SkyrimSE").glob("*.hkx")))]
    print(f"{'animation':38} {'frames':>6} {'tracks':>6} {'read':>7} {'import':>7} {'encode':>7} {'export':>7}  "
          "import, export: x floor, ms per animation s")
    for skeleton, paths in groups:
        for path in (p for p in paths if "skeleton" not in p.name):
            bpy.ops.wm.read_factory_settings(use_empty=True)
            armature = import_animations(bpy.context, [str(skeleton)])[0][0]
            animation = read_hkx(path).animations[0]
            read = median_time(lambda: read_hkx(path))
            encode = median_time(lambda: build_hkx(animation, "FO4" if "FO4" in str(path) else "SSE").to_bytes())
            load = median_time(lambda: import_animations(bpy.context, [str(path)]))
            write = median_time(lambda: export_animation(bpy.context, out, armature))
            seconds = max(animation.duration, 1e-9)
            print(f"{path.name:38} {animation.frame_count:6d} {animation.track_count:6d} {read:7.3f} {load:7.3f} {encode:7.3f} "
                  f"{write:7.3f}  {load / read:5.1f}x {load / seconds * 1e3:6.1f} ms, {write / encode:5.1f}x "
                  f"{write / seconds * 1e3:6.1f} ms")


if __name__ == "__main__":
    main()
