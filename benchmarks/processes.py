"""What the benchmarks share: inputs generated once into the temporary folder and reused, and
whole processes timed in wall and CPU seconds (the latter steadier on cores shared with other
work)."""

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generated(name, generate, *arguments):
    """The folder ``name`` in the temporary folder, filled by ``generate(folder, *arguments)`` the
    first time (a file "done" marks it complete)."""
    folder = Path(tempfile.gettempdir()) / name
    if not (folder / "done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        generate(folder, *arguments)
        (folder / "done").write_text("")
        print(f"  generated in {time.perf_counter() - started:.1f} s")
    return folder


def timed(args):
    """(wall seconds, CPU seconds, stdout) of a process; a failing one stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(args, capture_output=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(result.stderr.decode(errors="replace"))
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, result.stdout


def alternating(runs, commands):
    """{name: [timed result]} of ``commands`` ({name: args}) run one after the other ``runs``
    times, alternating (a slow spell of the machine falls on each alike)."""
    results = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            results[name].append(timed(args))
    return results


def print_ratios(results, floor, floor_label, subject):
    """Median wall and CPU seconds of ``floor`` and ``subject`` and their ratio, a line each."""
    for what, at in (("wall", 0), ("CPU", 1)):
        base = statistics.median(run[at] for run in results[floor])
        whole = statistics.median(run[at] for run in results[subject])
        print(f"  {what:4s} floor ({floor_label}): {base:.2f} s   {subject}: {whole:.2f} s   ratio {whole / base:.1f}x")
