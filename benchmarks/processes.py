"""What the benchmarks share: inputs generated once into the temporary folder and reused, and
whole processes timed in wall and CPU seconds (the latter steadier on cores shared with other
work)."""

import resource
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
