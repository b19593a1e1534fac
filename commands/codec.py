"""The commands needing only numpy (and the standard library): they never load Blender code."""

import json
import sys
from pathlib import Path

from . import ENTRY, CommandError, UsageError


def command_info(args):
    from . import batch, info
    from .lookup import check_lookup

    check_lookup(args)  # before the work
    if len(args.files) > 1 or is_many(args.files[0]):
        if args.plugin:
            raise UsageError("info: --plugin reads one cell at a time")
        return run_batch(batch.info_task, [(path, ()) for path, _ in batch.expand(args.files)], args, args.files)
    (path,) = args.files
    try:
        result = info.file_info(path)
    except Exception as error:  # with --json, a failure is JSON too (as with several files)
        if not args.json:
            raise
        from ..core.errors import failure_text

        text = failure_text(path, error)
        print(json.dumps({"file": str(path), "error": text}, ensure_ascii=False), flush=True)
        print(f"error: {text}", file=sys.stderr)
        return 2
    plugins = args.plugin or cell_plugin_in(args, path, result)
    if plugins:
        from ..core.formats import read_file
        from ..core.plugin.references import references_report

        result["references"] = references_report(read_file(path), path, plugins)
    if args.json:
        return json.dumps(result, indent=2, ensure_ascii=False)
    text = info.render_text(path, result)
    if plugins:
        from ..core.plugin.references import render_references

        text += "\n" + render_references(result["references"])
    return text


def cell_plugin_in(args, path, result):
    """With ``--data DIR``, a precombined cell's plugin found there (as the import finds it): [path], else []."""
    if not getattr(args, "data", None) or not result.get("precombined"):
        return []
    from ..core.formats import read_file
    from ..core.plugin.references import find_cell_plugin, geometry_hashes

    found = find_cell_plugin(path, geometry_hashes(read_file(path)), args.data)
    return [found] if found is not None else []


def command_roundtrip(args):
    from . import batch

    return run_batch(batch.roundtrip_task, file_pairs(args.input, args.output), args, [args.input])


def command_sample(args):
    from ..core.nif import samples

    if args.cell:
        samples.precombined_cell().write(args.output)
        return f"{args.output}: sample Fallout 4 precombined cell written"
    samples.fo4_cube().write(args.output)
    return f"{args.output}: sample Fallout 4 cube written"


def command_convert(args):
    from . import batch

    jobs = [(source, (target, args.to)) for source, (target,) in file_pairs(args.input, args.output)]
    return run_batch(batch.convert_task, jobs, args, [args.input])


def is_many(path):
    """A folder or an archive: the batch commands take each NIF (or .bsm2) in it."""
    from ..core.archives.data import ARCHIVE_SUFFIXES

    path = Path(path)
    return path.is_dir() or path.suffix.lower() in ARCHIVE_SUFFIXES


def file_pairs(source, target):
    """(input, (output,)) per file: a folder's (or an archive's) files go to the same places under
    the output folder; a file goes to the output file, or into it when it is a folder."""
    from . import batch

    from .outputs import check_output_folder, same_path

    source, target = Path(source), Path(target)
    if is_many(source):
        if target.exists() and not target.is_dir():
            raise UsageError(f"{target} is a file: the files of {source} need an output folder")
        if source.is_dir():
            check_output_folder(target, [source])
        return [(path, (target / relative,)) for path, relative in batch.expand([source])]
    output = target / source.name if target.is_dir() else target
    if same_path(source, output):
        raise UsageError(f"{output}: the output is the input: give another file (or folder)")
    return [(source, (output,))]


def run_batch(task, jobs_list, args, given):
    """Each file's line (with --json its object) on stdout, its error on stderr (with --json its
    object on stdout too); with several files a summary on stderr. Returns the exit status: 2
    when any file failed."""
    import runpy
    import time

    from . import batch

    if not jobs_list:  # folders or archives holding no mesh
        raise UsageError(f"{', '.join(map(str, given))}: holds no .nif, .kf, .bsm2, .mesh or .tri file (`cli.py ls` lists an archive's files)")
    started, failed = time.monotonic(), 0
    # A spawned worker (under Blender, on Windows) imports the package as cli.py does when not run as main.
    setup = (runpy.run_path, (str(ENTRY),))
    try:
        for ok, line, error in batch.run(task, jobs_list, args.jobs, args.json, setup):
            if line is not None:
                print(line, flush=True)
            if not ok:
                failed += 1
                print(f"error: {error}", file=sys.stderr, flush=True)
    except batch.WorkerLost as error:
        raise CommandError(f"error: {error}") from None
    if len(jobs_list) > 1:
        print(batch.summary(len(jobs_list), failed, time.monotonic() - started), file=sys.stderr)
    return 2 if failed else 0


def command_precombines(args):
    if args.meshes is not None:
        from .creation_kit import command_meshes

        return command_meshes(args)
    if args.data_folder is None:
        raise UsageError("precombines: give the game's Data folder")
    if not Path(args.data_folder).is_dir():
        raise UsageError(f"precombines: {args.data_folder}: not a folder (the game's Data folder)")
    if args.build:
        from .precombine_build import command_build

        return command_build(args)
    if args.plan:
        from .creation_kit import command_plan

        return command_plan(args)
    from ..core.precombined.status import precombine_report, render_report

    report = precombine_report(args.data_folder, args.plugins, args.cell, args.geometry or None)
    # One line: a whole game's report is large, and only the C encoder (no indent) keeps it quick.
    return json.dumps(report, ensure_ascii=False) if args.json else render_report(report)


def command_ls(args):
    from ..core.archives import open_archive

    with open_archive(args.archive) as archive:
        entries = list(map(archive.find, archive.names(args.pattern)))
        lines = [f"{'-' if entry.size is None else entry.size:>10}  {entry.path}" for entry in entries]
        unknown = " (size -: the archive stores it compressed and does not record its size)" \
            if any(entry.size is None for entry in entries) else ""
        lines.append(f"{args.archive}: {archive.kind} archive, {len(lines)} of {len(archive.entries)} file(s){unknown}")
    return "\n".join(lines)


def command_extract(args):
    from ..core.archives import extract, open_archive

    with open_archive(args.archive) as archive:
        written = extract(archive, args.pattern, args.outdir)
    if not written:
        raise CommandError(f"error: {args.archive}: no file matches {args.pattern!r}")
    return f"{args.outdir}: {len(written)} file(s) extracted from {args.archive}"
