"""Many files at once: folders expanded into the files the codec reads, one task per file run in
worker processes, each task's outcome reported as one line (or one JSON object), a progress
bar on a terminal and a summary at the end. A damaged file fails alone: the others finish."""

import json
import os
import sys
import time
from pathlib import Path

from .errors import FormatError

SUFFIXES = (".nif", ".bsm2")


def expand(paths):
    """Files named directly, and the readable files under folders (recursively, sorted), each
    with its path relative to the folder it was found in (None for a file named directly)."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            inner = sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
            found += [(p, p.relative_to(path)) for p in inner]
        else:
            found.append((path, None))
    return found


def failure_text(path, error):
    """One line naming the file and what is wrong."""
    if isinstance(error, FormatError):
        return str(error.located(path=path))
    if isinstance(error, OSError):
        return f"{error.filename or path}: {error.strerror or error}"
    return f"{path}: internal error ({type(error).__name__}: {error}); please report it"


# -- the tasks (top-level functions: worker processes receive them by name) ------------------
def info_task(path, as_json):
    from . import info

    result = info.file_info(path)
    if as_json:
        return json.dumps({"file": str(path), **result}, ensure_ascii=False)
    return info.render_text(path, result)


def roundtrip_task(source, target):
    from .formats import read_file

    Path(target).parent.mkdir(parents=True, exist_ok=True)
    read_file(source).write(target)
    same = Path(source).read_bytes() == Path(target).read_bytes()
    return f"{target}: written, {'identical to' if same else 'differs from'} {source}"


def convert_task(source, target):
    from .nif import NifFile
    from .nif.xbox import to_pc

    nif = NifFile.read(source)
    was_big = nif.header.big_endian
    unpacked = to_pc(nif)
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    nif.write(target)
    if not was_big:
        return f"{target}: {source} is already a PC (little-endian) file: written back as it is"
    return f"{target}: PC file written from an Xbox 360 (big-endian) file, {unpacked} shape(s) unpacked"


def _run_one(job):
    task, path, arguments = job
    try:
        return True, task(path, *arguments)
    except Exception as error:  # every failure is this file's alone
        return False, failure_text(path, error)


# -- running ---------------------------------------------------------------------------------
class Progress:
    """A one-line bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total, stream=None):
        self.stream = stream or sys.stderr
        self.total = total
        self.shown = self.stream.isatty() and total > 1
        self.last = 0.0

    def update(self, done, failed):
        now = time.monotonic()
        if not self.shown or (now - self.last < 0.1 and done < self.total):
            return
        self.last = now
        width = 30
        filled = width * done // max(self.total, 1)
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} files, {failed} failed")
        self.stream.flush()

    def close(self):
        if self.shown:
            self.stream.write("\n")


def run(task, jobs_list, jobs=1):
    """Run ``task(path, *arguments)`` for each (path, arguments) of ``jobs_list`` in ``jobs``
    worker processes; yields (ok, text) in input order while showing progress."""
    work = [(task, path, tuple(arguments)) for path, arguments in jobs_list]
    progress = Progress(len(work))
    failed = 0
    try:
        if jobs <= 1 or len(work) <= 1:
            results = map(_run_one, work)
            pool = None
        else:
            import multiprocessing  # 50 ms that single-file commands do not pay

            # spawn under Blender (forking a process holding bpy is unsafe); fork elsewhere
            method = "spawn" if "bpy" in sys.modules or os.name == "nt" else "fork"
            pool = multiprocessing.get_context(method).Pool(jobs)
            results = pool.imap(_run_one, work, chunksize=max(1, min(64, len(work) // (jobs * 8))))
        try:
            for done, (ok, text) in enumerate(results, 1):
                failed += not ok
                progress.update(done, failed)
                yield ok, text
        finally:
            if pool is not None:
                pool.terminate()
    finally:
        progress.close()


def summary(total, failed, seconds):
    rate = total / seconds if seconds > 0 else float("inf")
    return f"{total} file(s), {failed} failed, {seconds:.1f} s ({rate:.0f} files/s)"
