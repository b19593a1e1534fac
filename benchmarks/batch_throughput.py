"""Files per second of the command line's batch work, as a user runs it on a whole game's meshes.

    python benchmarks/batch_throughput.py [FILES] [JOBS] [CORPUS]

Builds a folder of FILES entries (default 20000) by linking the corpus's readable .nif and
.bsm2 files over and over, then times whole ``cli.py info FOLDER --json --jobs N`` and
``cli.py roundtrip FOLDER OUT --jobs N`` processes for N = 1 and JOBS (default: the CPU count),
alternating, median of three. Prints files/s for each and the speed-up of JOBS over 1, and a
floor: the same process reading every file's bytes (SHA-1) in one process, what the disk and
Python start-up are worth.
"""

import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3


def corpus_files(corpus):
    from_cli = [sys.executable, str(ROOT / "cli.py"), "info", "--json"]
    found = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix.lower() in (".nif", ".bsm2") and path.is_file():
            if subprocess.run([*from_cli, str(path)], capture_output=True).returncode == 0:
                found.append(path)
    return found


def floor(folder):
    started = time.perf_counter()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            hashlib.sha1(path.read_bytes()).digest()
    return time.perf_counter() - started


def timed(*args):
    started = time.perf_counter()
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True)
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 2):
        sys.exit(result.stderr.decode(errors="replace"))
    return seconds


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    corpus = Path(sys.argv[3]) if len(sys.argv) > 3 else ROOT.parent / "shared" / "corpus"
    sources = corpus_files(corpus)
    with tempfile.TemporaryDirectory(prefix="batch-") as tmp:
        folder = Path(tmp) / "meshes"
        for number in range(count):
            source = sources[number % len(sources)]
            target = folder / f"{number // 1000:02d}" / f"{number:05d}_{source.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(source, target)
        size = sum(path.stat().st_size for path in sources) * count / len(sources)
        print(f"{count} files ({size / 1e9:.2f} GB, {len(sources)} distinct corpus files), {os.cpu_count()} CPUs")
        base = statistics.median(floor(folder) for _ in range(RUNS))
        print(f"floor (read + SHA-1 every file, one process): {count / base:8.0f} files/s")
        for command in ("info", "roundtrip"):
            times = {1: [], jobs: []}
            for _ in range(RUNS):
                for n in times:
                    out = [Path(tmp) / "out"] if command == "roundtrip" else []
                    extra = ["--json"] if command == "info" else []
                    times[n].append(timed(command, folder, *out, *extra, "--jobs", n))
            one, many = statistics.median(times[1]), statistics.median(times[jobs])
            print(
                f"{command:9s} --jobs 1: {count / one:6.0f} files/s   --jobs {jobs}: {count / many:6.0f} files/s   "
                f"speed-up {one / many:.2f}x   ({one / base:.1f}x / {many / base:.1f}x the floor's time)"
            )


if __name__ == "__main__":
    main()
