"""Havok animation decoding: whole processes against the floor, per second of animation; and, in
one process, against PyNifly's pure-Python readers.

    python benchmarks/hkx_decode.py [REPEAT] [CORPUS] [--peer FOLDER]

The corpus's animation .hkx files (FO4, Skyrim SE and LE) are decoded to per-frame
transforms by a fresh Python process (start-up, imports, read_hkx of every file), once and
REPEAT times over (default 8), alternating with the floor: a process that only reads the same
files' bytes. Median of five runs each. Prints seconds, the ratio to the floor, and decoding
cost per second of animation (whole process, and with the floor taken off). Then, in one
process, the spline encoder's time per second of animation (the export's share).

--peer FOLDER: PyNifly's io_scene_nifly/hkx folder (its anim_fo4.py and anim_skyrim.py, which
decode FO4 and Skyrim files to per-frame lists); the same files are read by both, in this
process, alternately, best of 3 each (CPU time), and the ratios printed per game and for both.
Speed only: PyNifly's values differ from ours past frame 255 (it repeats each block's shared
frame) and by up to 0.2 degrees in 40-bit rotations (it centres the fields on 2049, Havok on
2047).

Where the time goes (read_hkx of the 18 corpus animations, 356,000 track-frames, 170,000 spline
queries, CPU time): two fifths in evaluating the splines (a tenth in the Cox-de Boor basis; the
rest in the spans, the weighted control points in float64, normalising rotations and writing
the rows, every degree and kind of a chunk of about 4,096 queries together), a sixth in
dequantising the control points, an eighth in laying out the blocks (the spline headers chain:
a Python loop over the splines), a fifth in the packfile container (objects and fixups; the one
annotation track per bone, read a field at a time for all of them, a twentieth), the rest in
copying each block's static values down its frames. Every step is numpy over all the splines of
a file at once, so a file costs mostly fixed work: 1.1 ms for 8 tracks of 31 frames, 1.5 ms for
99 tracks of 10 frames (PyNifly's reader: 7 ms each), 5 ms for 99 tracks of 333 frames
(PyNifly's: 200 ms). Hence the Skyrim set, mostly short files, gains less than FO4's.
"""

import argparse
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


def against_peer(peer, files, read_hkx):
    """PyNifly's FO4 and Skyrim readers (from the folder ``peer``) and read_hkx on the same files,
    alternately in this process; the best of 3 of each, per game and for both (the sum)."""
    sys.path.insert(0, str(peer))
    import anim_fo4
    import anim_skyrim

    games = {"FO4": [], "Skyrim": []}
    for path in files:
        games["FO4" if path.read_bytes()[0x0C] == 11 else "Skyrim"].append(path)  # file version 11: FO4

    def theirs(paths):
        for path in paths:
            data = path.read_bytes()
            (anim_fo4 if data[0x0C] == 11 else anim_skyrim)._parse_animation_hkx(data)

    def ours(paths):
        for path in paths:
            read_hkx(path)

    # CPU time of this process: what each reader costs, whatever else the machine runs
    totals = [0.0, 0.0]
    print("in process, best of 3 (CPU seconds):")
    for game, paths in games.items():
        times = {theirs: [], ours: []}
        for _ in range(3):
            for run in times:
                started = time.process_time()
                run(paths)
                times[run].append(time.process_time() - started)
        peer_time, our_time = min(times[theirs]), min(times[ours])
        totals[0] += peer_time
        totals[1] += our_time
        print(f"  {game:7s} {len(paths):2d} files: PyNifly's reader {peer_time:.2f} s, read_hkx {our_time:.3f} s: {peer_time / our_time:.1f}x faster")
    print(f"  both    {len(files):2d} files: PyNifly's readers {totals[0]:.2f} s, read_hkx {totals[1]:.3f} s: {totals[0] / totals[1]:.1f}x faster")


def main():
    if sys.argv[1:2] == ["--worker"]:
        return worker(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repeat", nargs="?", type=int, default=8, help="how many times over the second batch decodes the files")
    parser.add_argument("corpus", nargs="?", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--peer", type=Path, metavar="FOLDER", help="PyNifly's io_scene_nifly/hkx folder")
    args = parser.parse_args()
    repeat, corpus, peer = args.repeat, args.corpus, args.peer
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
    if peer is not None:
        against_peer(peer, files, read_hkx)


if __name__ == "__main__":
    main()
