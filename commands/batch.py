"""Many files at once: folders and archives expanded into the files the codec reads, one task
per file run in worker processes, each task's outcome reported as one line (or one JSON object),
a progress bar on a terminal and a summary at the end. A damaged file fails alone: the others
finish."""

import json
import os
import sys
import time
from pathlib import Path, PurePosixPath

from ..core.errors import FormatError, failure_text

SUFFIXES = (".nif", ".kf", ".bsm2", ".mesh", ".tri")
ARCHIVED_SUFFIXES = (".nif", ".kf", ".mesh", ".tri")  # what game archives hold of these (a .bsm2 is never packed in one)


def expand(paths):
    """Files named directly, the readable files under folders (recursively, sorted) and inside
    archives (.ba2/.bsa, named ``ARCHIVE:inner/path``), each with its path relative to the folder
    or archive it was found in (None for a file named directly). A folder's archives are read
    too: a game's Data folder covers its loose and its archived meshes."""
    from ..core.archives.data import ARCHIVE_SUFFIXES

    found = []
    for path in map(Path, paths):
        if path.is_dir():
            for inner in sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES + ARCHIVE_SUFFIXES and p.is_file()):
                if inner.suffix.lower() in ARCHIVE_SUFFIXES:
                    found += [(name, inner.relative_to(path) / relative) for name, relative in archive_files(inner)]
                else:
                    found.append((inner, inner.relative_to(path)))
        elif path.suffix.lower() in ARCHIVE_SUFFIXES:
            found += archive_files(path)
        else:
            found.append((path, None))
    return found


def archive_files(path):
    """(``ARCHIVE:inner/path``, inner path) of the NIFs (and .tri files) an archive holds, in archive order. An
    archive that cannot be read is one entry, ``ARCHIVE:``, whose reading fails with its error:
    a batch reports it as one failed file and goes on."""
    from ..core.archives.data import opened_archive

    try:
        names = opened_archive(path).names()
    except FormatError:
        return [(f"{path}:", PurePosixPath(Path(path).name))]
    return [(f"{path}:{name}", PurePosixPath(name)) for name in names if PurePosixPath(name).suffix.lower() in ARCHIVED_SUFFIXES]


# -- the tasks (top-level functions: worker processes receive them by name) ------------------
# Each returns its file's line of text, or with ``as_json`` its JSON object (a dict).
def info_task(path, as_json):
    from . import info

    result = info.file_info(path)
    return {"file": str(path), **result} if as_json else info.render_text(path, result)


def roundtrip_task(source, target, as_json):
    from ..core.archives.data import read_path, split_archive_path
    from ..core.files import write_replacing
    from ..core.formats import read_file, read_plugin_or_material

    other = read_plugin_or_material(source) if split_archive_path(source) is None else None
    written = (other or read_file(source)).to_bytes()
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    write_replacing(target, written)
    same = written == read_path(source)
    if as_json:
        return {"file": str(source), "output": str(target), "identical": same}
    return f"{target}: written, {'identical to' if same else 'differs from'} {source}"


def convert_task(source, target, to, as_json):
    from ..core.formats import read_file
    from ..core.nif import NifFile
    from ..core.nif.xbox import to_pc

    if Path(str(source)).suffix.lower() == ".hkx":
        return hkx_convert_task(source, target, to, as_json)
    if to is not None:
        raise FormatError("--to is for .hkx files", path=source)
    nif = read_file(source)
    if not isinstance(nif, NifFile):
        raise FormatError("not a NIF: only NIFs have an Xbox 360 byte order to convert", path=source)
    was_big = nif.header.big_endian
    unpacked = to_pc(nif)
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    nif.write(target)
    if as_json:
        return {"file": str(source), "output": str(target), "from": "xbox360" if was_big else "pc", "shapes_unpacked": unpacked}
    if not was_big:
        return f"{target}: {source} is already a PC (little-endian) file: written back as it is"
    return f"{target}: PC file written from an Xbox 360 (big-endian) file, {unpacked} shape(s) unpacked"


def hkx_convert_task(source, target, to, as_json):
    """A .hkx converted (core.havok.xml.convert_hkx), written only when it reads back to the
    values the source holds."""
    from ..core.archives.data import read_path
    from ..core.files import write_replacing
    from ..core.havok.xml.convert import convert_hkx, same_values

    data = read_path(source)
    try:
        written, read, wrote = convert_hkx(data, to)
        differing = same_values(data, written)
    except FormatError as error:
        raise error.located(path=source) from None
    if differing is not None:
        raise FormatError(f"the converted file would not read back to the same values ({differing}): not written", path=source)
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    write_replacing(target, written)
    if as_json:
        return {"file": str(source), "output": str(target), "from": read, "to": wrote, "same_values": True}
    return f"{target}: {wrote} written from {read}, reading back to the same skeletons and animations"


def ck_mesh_task(path, label, as_json):
    """Whether the Creation Kit can combine the model at ``path`` (``label``: how to name it);
    an unreadable model is a verdict, not a failure."""
    from ..core.precombined.ck_rules.meshes import check_path

    verdict = check_path(path)
    return {"model": label, "file": str(path), **verdict.as_dict()} if as_json else f"{label}: {verdict.line()}"


def _run_one(job):
    """(ok, line to print, error text or None) of one file."""
    task, path, arguments, as_json = job
    try:
        outcome = task(path, *arguments, as_json)
    except Exception as error:  # every failure is this file's alone
        text = failure_text(path, error)
        return False, json.dumps({"file": str(path), "error": text}, ensure_ascii=False) if as_json else None, text
    return True, json.dumps(outcome, ensure_ascii=False) if as_json else outcome, None


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


class WorkerLost(Exception):
    """A worker process ended before finishing its files (killed, out of memory, failed to start)."""


def run(task, jobs_list, jobs=1, as_json=False, worker_setup=None):
    """Run ``task(path, *arguments, as_json)`` for each (path, arguments) of ``jobs_list`` in
    ``jobs`` worker processes; yields (ok, line, error text) in input order while showing
    progress (``line``: what to print on stdout, None for a failure in text mode).
    ``worker_setup``: (function, arguments) making this package importable in a worker that
    starts afresh (spawn), called there before its first task."""
    from concurrent.futures import BrokenExecutor, ProcessPoolExecutor  # 16 ms (logging) info of one file does not pay

    work = [(task, path, tuple(arguments), as_json) for path, arguments in jobs_list]
    progress = Progress(len(work))
    failed = 0
    pool = None
    try:
        if jobs <= 1 or len(work) <= 1:
            results = map(_run_one, work)
        else:
            import multiprocessing  # 50 ms that single-file commands do not pay

            # spawn under Blender (forking a process holding bpy is unsafe) and on Windows; fork elsewhere
            method = "spawn" if "bpy" in sys.modules or os.name == "nt" else "fork"
            setup, arguments = worker_setup if method == "spawn" and worker_setup else (None, ())
            # A worker that dies (killed, out of memory) breaks the executor, which says so, where a
            # multiprocessing.Pool would start another and wait for the lost tasks for ever.
            pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=setup, initargs=arguments)
            results = pool.map(_run_one, work, chunksize=max(1, min(64, len(work) // (jobs * 8))))
        done = 0
        try:
            for done, (ok, line, error) in enumerate(results, 1):
                failed += not ok
                progress.update(done, failed)
                yield ok, line, error
        except BrokenExecutor as error:
            raise WorkerLost(f"a worker process stopped ({error}): {len(work) - done} file(s) not processed") from None
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)  # no worker outlives the command (Blender exits with os._exit)
        progress.close()


def summary(total, failed, seconds):
    rate = total / seconds if seconds > 0 else float("inf")
    return f"{total} file(s), {failed} failed, {seconds:.1f} s ({rate:.0f} files/s)"
