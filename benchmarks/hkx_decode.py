"""Havok animation decoding: whole processes against the floor, per second of animation.

    python benchmarks/hkx_decode.py [REPEAT] [CORPUS]

The corpus's animation .hkx files (FO4, Skyrim SE and LE) are decoded to per-frame
transforms by a fresh Python process (start-up, imports, read_hkx of every file), once and
REPEAT times over (default 8), alternating with the floor: a process that only reads the same
files' bytes. Median of five runs each. Prints seconds, the ratio to the floor, and decoding
cost per second of animation (whole process, and with the floor taken off). Then, in one
process, the spline encoder's time per second of animation (the export's share).
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5


def animation_files(corpus, read_hkx, error):
    """Every corpus .hkx holding an animation (FO4, Skyrim SE, Skyrim LE)."""
    found = []
    for path in sorted(corpus.rglob("*.hkx")):
        try:
            if read_hkx(path).animations:
                found.append(path)
        except error:
            pass  # XML files, behaviour projects
    return found


def worker(mode, files):
    if mode == "floor":
        for path in files:
            Path(path).read_bytes()
        return
    sys.path.insert(0, str(ROOT))
    import cli

    cli.load_package()
    from precombined_nif.core.havok.animation import read_hkx

    for path in files:
        read_hkx(path)


def timed(mode, files):
    started = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--worker", mode, *map(str, files)], check=True)
    return time.perf_counter() - started


def main():
    if sys.argv[1:2] == ["--worker"]:
        return worker(sys.argv[2], sys.argv[3:])
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    corpus = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT.parent / "shared" / "corpus"
    sys.path.insert(0, str(ROOT))
    import cli

    cli.load_package()
    from precombined_nif.core.errors import FormatError
    from precombined_nif.core.havok.animation import build_hkx, read_hkx

    files = animation_files(corpus, read_hkx, FormatError)

    read = [read_hkx(path) for path in files]
    seconds = sum(hkx.animations[0].duration for hkx in read)
    frames = sum(hkx.animations[0].frame_count * hkx.animations[0].track_count for hkx in read)
    size = sum(path.stat().st_size for path in files)
    print(f"{len(files)} animations, {size / 1e6:.2f} MB, {seconds:.1f} s of animation, {frames} track-frames")
    timed("decode", files)  # an untimed first run compiles the modules, as on a user's machine
    for count in (1, repeat):
        batch = files * count
        times = {"floor": [], "decode": []}
        for _ in range(RUNS):
            for mode in times:
                times[mode].append(timed(mode, batch))
        floor, decode = statistics.median(times["floor"]), statistics.median(times["decode"])
        animation = seconds * count
        print(
            f"x{count:<3d} floor {floor:6.2f} s   decode {decode:6.2f} s ({decode / floor:4.1f}x the floor)   "
            f"{decode / animation * 1e3:6.2f} ms per animation second, {(decode - floor) / animation * 1e3:6.2f} ms above the floor"
        )
    started = time.perf_counter()
    for hkx in read:
        build_hkx(hkx.animations[0], hkx.game).to_bytes()
    encode = time.perf_counter() - started
    print(f"spline encode (in process): {encode:.2f} s, {encode / seconds * 1e3:.1f} ms per animation second")


if __name__ == "__main__":
    main()
