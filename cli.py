"""Command line of the Precombined NIF extension.

    python cli.py COMMAND ...                      (core commands need only numpy)
    blender -b --python cli.py -- COMMAND ...      (the same under Blender; import and
                                                    export need it, or the bpy module)

Every failure exits with status 2 and one line on stderr naming the file and what is wrong.
"""

import argparse
import errno
import functools
import importlib.util
import json
import sys
from pathlib import Path

PACKAGE = "precombined_nif"
ROOT = Path(__file__).resolve().parent


def load_package():
    """Import the repository root as the package ``precombined_nif``, whatever its folder is
    called (its ``io`` subpackage would shadow the standard library as a top-level name)."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


class UsageError(Exception):
    pass


class CommandError(Exception):
    """A failure whose message is already the lines to print."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


# -- commands ---------------------------------------------------------------------------------
def command_info(args):
    from precombined_nif.core import batch, info

    if len(args.files) > 1 or is_many(args.files[0]):
        if args.plugin:
            raise UsageError("info: --plugin reads one cell at a time")
        return run_batch(batch.info_task, [(path, ()) for path, _ in batch.expand(args.files)], args, args.files)
    (path,) = args.files
    result = info.file_info(path)
    if args.plugin:
        from precombined_nif.core.formats import read_file
        from precombined_nif.core.plugin.references import references_report

        result["references"] = references_report(read_file(path), path, args.plugin)
    if args.json:
        return json.dumps(result, indent=2, ensure_ascii=False)
    text = info.render_text(path, result)
    if args.plugin:
        from precombined_nif.core.plugin.references import render_references

        text += "\n" + render_references(result["references"])
    return text


def command_roundtrip(args):
    from precombined_nif.core import batch

    return run_batch(batch.roundtrip_task, file_pairs(args.input, args.output), args, [args.input])


def command_sample(args):
    from precombined_nif.core.nif import samples

    if args.cell:
        samples.precombined_cell().write(args.output)
        return f"{args.output}: sample Fallout 4 precombined cell written"
    samples.fo4_cube().write(args.output)
    return f"{args.output}: sample Fallout 4 cube written"


def command_convert(args):
    from precombined_nif.core import batch

    return run_batch(batch.convert_task, file_pairs(args.input, args.output), args, [args.input])


def is_many(path):
    """A folder or an archive: the batch commands take each NIF (or .bsm2) in it."""
    from precombined_nif.core.archives.data import ARCHIVE_SUFFIXES

    path = Path(path)
    return path.is_dir() or path.suffix.lower() in ARCHIVE_SUFFIXES


def file_pairs(source, target):
    """(input, (output,)) per file: a folder's (or an archive's) files go to the same places under
    the output folder; a file goes to the output file, or into it when it is a folder."""
    from precombined_nif.core import batch

    source, target = Path(source), Path(target)
    if is_many(source):
        if target.exists() and not target.is_dir():
            raise UsageError(f"{target} is a file: the files of {source} need an output folder")
        return [(path, (target / relative,)) for path, relative in batch.expand([source])]
    return [(source, (target / source.name if target.is_dir() else target,))]


WORKER = "precombined_nif.worker"  # the run name under which a spawned worker runs this file


def run_batch(task, jobs_list, args, given):
    """Each file's line (with --json its object) on stdout, its error on stderr (with --json its
    object on stdout too); with several files a summary on stderr. Returns the exit status: 2
    when any file failed."""
    import runpy
    import time

    from precombined_nif.core import batch

    if not jobs_list:  # folders or archives holding no mesh
        raise UsageError(f"{', '.join(map(str, given))}: holds no .nif, .kf or .bsm2 file (`cli.py ls` lists an archive's files)")
    started, failed = time.monotonic(), 0
    # A spawned worker (under Blender, on Windows) imports the package as main() does here.
    setup = (runpy.run_path, (str(ROOT / "cli.py"), None, WORKER))
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
    from precombined_nif.core.precombined.status import precombine_report, render_report

    report = precombine_report(args.data_folder, args.plugins, args.cell, args.geometry or None)
    # One line: a whole game's report is large, and only the C encoder (no indent) keeps it quick.
    return json.dumps(report, ensure_ascii=False) if args.json else render_report(report)


def form_id(text):
    try:
        return int(text, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a hexadecimal FormID") from None


def command_ls(args):
    from precombined_nif.core.archives import open_archive

    with open_archive(args.archive) as archive:
        lines = [f"{'-' if entry.size is None else entry.size:>10}  {entry.path}"
                 for entry in map(archive.find, archive.names(args.pattern))]
        lines.append(f"{args.archive}: {archive.kind} archive, {len(lines)} of {len(archive.entries)} file(s)")
    return "\n".join(lines)


def command_extract(args):
    from precombined_nif.core.archives import extract, open_archive

    with open_archive(args.archive) as archive:
        written = extract(archive, args.pattern, args.outdir)
    if not written:
        raise CommandError(f"error: {args.archive}: no file matches {args.pattern!r}")
    return f"{args.outdir}: {len(written)} file(s) extracted from {args.archive}"


def require_bpy(command):
    try:
        import bpy
    except ImportError:
        raise UsageError(
            f"{command} needs Blender or the bpy module: run blender -b --python cli.py -- {command} ..."
        ) from None
    return bpy


def command_import(args):
    """Import every file (folders: their .nif and .bsm2 files) into an empty scene and save it.
    A file that fails is reported on one line and left out; the others are imported and saved,
    and the status is 2. Nothing is saved when no file imports."""
    bpy = require_bpy("import")
    from precombined_nif.core.batch import expand
    from precombined_nif.core.formats import is_bsm2
    from precombined_nif.io.plugin.references import name_instances
    from precombined_nif.io.precombined.importer import CellBuilder, GeometrySource
    from precombined_nif.operators import bsm2, nif_import
    from precombined_nif.operators.precombined_import import import_nif_looking_beside

    if not Path(args.blend).suffix.lower() == ".blend":
        raise UsageError(f"import: {args.blend}: the output must be a .blend file")
    paths = [path for path, _ in expand(args.files)]
    if not paths:
        raise UsageError("import: no .nif or .bsm2 files found")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    errors, built = [], []
    if args.skeleton:  # the armature the animations (.hkx) go onto
        from precombined_nif.io.havok.animation.importer import import_skeleton

        import_skeleton(bpy.context, args.skeleton)
    geometry = GeometrySource(args.csg)
    try:
        for path in paths:
            havok = Path(path).suffix.lower() == ".hkx"
            if is_bsm2(path):
                import_one = bsm2.import_bsm2
            elif havok:  # skeletons as armatures, animations onto the last one
                from precombined_nif.io.havok.animation.importer import import_hkx as import_one
            else:  # plain NIFs and precombined cells alike
                import_one = functools.partial(import_nif_looking_beside, builder=CellBuilder, lod=args.lod, geometry=geometry,
                                               instancing=args.instancing.upper().replace("-", "_"))
            imported, messages = nif_import.import_files(bpy.context, [str(path)], import_one)
            if not imported:  # then its one message is its error
                errors += messages
                print(f"error: {messages[0]}", file=sys.stderr, flush=True)
                continue
            built += imported
            if not (is_bsm2(path) or havok):
                messages += name_instances(imported[0], args.plugin or (), find_plugin=True)
            for message in messages:
                print(f"warning: {message}", file=sys.stderr)
    finally:
        geometry.close()
    if not built:
        raise CommandError(f"error: {args.blend}: not written, no file imported")
    output = Path(args.blend).resolve()
    try:
        bpy.ops.wm.save_as_mainfile(filepath=str(output))
    except RuntimeError as error:
        raise CommandError(f"error: {args.blend}: cannot be saved ({_blender_message(error)})") from None
    lines = [f"{args.blend}: {len(built)} of {len(paths)} file(s) imported"] + [describe_collection(c) for c in built]
    print("\n".join(lines))
    if errors:
        print(f"{len(errors)} file(s) failed", file=sys.stderr)
    return 2 if errors else 0


def describe_collection(collection):
    """What an import built (a collection, or an object with its children), in one line."""
    import bpy

    if isinstance(collection, bpy.types.Collection):
        from precombined_nif.io.collection_objects import objects_in

        objects = objects_in(collection)
    else:
        objects = [collection, *collection.children_recursive]
    meshes = {o.data for o in objects if o.type == "MESH"}
    placed = [o for o in objects if "precombined_object" in o]
    line = f"  {collection.name}: {len(objects)} objects, {len(meshes)} meshes"
    if placed:  # an object per copy, or a geometry-nodes point cloud of a record's copies
        copies = sum(len(o.data.vertices) if o.data is not None and "precombined_instances_raw" in o.data else 1 for o in placed)
        records = {(o.get("precombined_block"), o["precombined_object"]) for o in placed}  # numbered per block
        line += f", {copies} precombined instances of {len(records)} records"
        named = sum("reference_form_id" in o for o in placed)
        if named:
            line += f", {named} named after their references"
    armatures = [o for o in objects if o.type == "ARMATURE"]
    if armatures:
        line += f", {sum(len(a.data.bones) for a in armatures)} bones"
    return line


CELL_OPTIONS = ("layout", "plugin")  # what applies to precombined cells only
NIF_OPTIONS = ("game", "full_precision", "write_materials")  # to general NIFs only


def ignored(args, names, what):
    """Warn about options given that do not apply to what is written."""
    for name in names:
        if getattr(args, name):
            print(f"warning: --{name.replace('_', '-')} does not apply to {what}: ignored", file=sys.stderr)


def command_export(args):
    from precombined_nif.core.formats import is_bsm2

    if args.each:
        if Path(args.output).suffix or args.object:
            raise UsageError("export --each: the output is a folder (one NIF per collection) and --object does not apply")
    elif Path(args.output).suffix.lower() not in (".nif", ".kf", ".bsm2", ".hkx"):
        raise UsageError(f"export: {args.output}: the output must be a .nif, .kf, .bsm2 or .hkx file")
    bpy = require_bpy("export")
    from precombined_nif.operators import bsm2

    source = Path(args.input)
    if not source.is_file():
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", args.input)
    try:
        bpy.ops.wm.open_mainfile(filepath=str(source.resolve()))
    except RuntimeError as error:
        raise CommandError(f"error: {args.input}: cannot be opened ({_blender_message(error)})") from None
    if args.each:
        return export_each(bpy, args)
    if Path(args.output).suffix.lower() == ".hkx":
        return export_animation_file(bpy, args)
    if not is_bsm2(args.output):
        return export_nif_file(bpy, args)
    ignored(args, CELL_OPTIONS + NIF_OPTIONS, "a .bsm2 file")
    mesh_object = None
    if args.object is not None:
        mesh_object = bpy.data.objects.get(args.object)
        if mesh_object is None or mesh_object.type != "MESH":
            raise CommandError(f"error: {args.input}: no mesh object named {args.object!r}")
    bsm, warnings = bsm2.export_file(bpy.context, args.output, mesh_object)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return (
        f"{args.output}: {len(bsm.vertices)} vertices, {len(bsm.indices) // 3} triangles, {bsm.num_bones} bones, "
        f"{len(bsm.animations)} animation(s)"
    )


def export_animation_file(bpy, args):
    """An armature's action (--object, else the active or only armature; --action, else its
    active action) as a Havok animation."""
    from precombined_nif.operators.hkx import export_animation

    ignored(args, CELL_OPTIONS + ("full_precision", "write_materials"), "a .hkx file")
    if args.object is not None:
        armature = bpy.data.objects.get(args.object)
        if armature is None or armature.type != "ARMATURE":
            raise CommandError(f"error: {args.input}: no armature object named {args.object!r}")
    else:
        active = bpy.context.view_layer.objects.active
        armatures = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
        armature = active if active is not None and active.type == "ARMATURE" else armatures[0] if len(armatures) == 1 else None
        if armature is None:
            raise CommandError(f"error: {args.input}: {len(armatures)} armatures and none active: name one with --object")
    game = args.game if args.game in ("FO4", "SSE") else None  # FO3 has no Havok animations
    animation, game = export_animation(bpy.context, args.output, armature, args.action, compressed=not args.uncompressed, game=game)
    return (f"{args.output}: {game} Havok animation, {animation.track_count} tracks, {animation.frame_count} frames, "
            f"{animation.duration:.4g} s")


def export_nif_file(bpy, args):
    """The .blend's objects (or --object's collection) as a NIF; a .kf from its import."""
    from precombined_nif.io.collection_objects import objects_in

    objects = list(bpy.context.scene.objects)
    if args.object is not None:
        chosen = bpy.data.objects.get(args.object)
        if chosen is None:
            raise CommandError(f"error: {args.input}: no object named {args.object!r}")
        objects = list({o for c in chosen.users_collection for o in objects_in(c)})
    if Path(args.output).suffix.lower() == ".kf":
        # A .kf is written from the collection its import made (an empty standing for the file).
        handles = [o for o in objects if "nif_kf" in o]
        if len(handles) != 1:
            found = f"{len(handles)} .kf imports: choose one with --object" if handles else "no .kf import"
            raise CommandError(f"error: {args.input}: {found} (a .kf is written from its import's empty)")
        objects = objects_in(handles[0].users_collection[0])
    return export_objects(objects, args.output, args)


def export_objects(objects, output, args):
    """``objects`` as a NIF: a precombined cell when they came from one, else a general NIF
    written back into the file they were imported from, if any. Returns the line to print."""
    from precombined_nif.io.nif.exporter import export_nif
    from precombined_nif.io.precombined.exporter import export_cell

    args = argparse.Namespace(**{**vars(args), "output": output})
    if any("precombined_object" in o for o in objects):
        ignored(args, NIF_OPTIONS, "a precombined cell")
        nif, geometry = export_cell(args.output, objects, layout=args.layout, plugin=args.plugin)
        records = [r for b in nif.blocks if hasattr(b, "records") for r in b.records]
        line = f"{args.output}: precombined cell, {len(records)} records, {sum(len(r.instances) for r in records)} instances"
        return line + (f"\n{geometry}: edited records' geometry" if geometry else "")
    ignored(args, CELL_OPTIONS, "a NIF that is not a precombined cell")
    nif, messages = export_nif(args.output, objects, game=args.game, full_precision=args.full_precision)
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    if args.write_materials:
        from precombined_nif.io.nif.material_export import write_material_files

        for path in write_material_files(args.output, objects):
            print(f"{path}: material file written")
    if Path(args.output).suffix.lower() == ".kf":
        return f"{args.output}: {nif.header.game} animation, {len(nif.roots)} sequence(s), {len(nif.blocks)} blocks"
    shapes = sum(1 for b in nif.blocks if b.type_name in ("BSTriShape", "BSSubIndexTriShape", "BSMeshLODTriShape", "NiTriShape", "NiTriStrips"))
    return f"{args.output}: {nif.header.game} NIF, {len(nif.blocks)} blocks, {shapes} shapes"


def export_each(bpy, args):
    """Every collection of the scene holding objects (each imported file is one) as its own NIF
    in the output folder, named after the file it came from; --jobs N runs N processes, each
    opening the .blend. A collection that fails is reported and the others are written."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from precombined_nif.core.batch import failure_text, summary
    from precombined_nif.io.collection_objects import objects_in

    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    collections = [c for c in bpy.context.scene.collection.children_recursive if c.objects]
    if not collections:
        raise CommandError(f"error: {args.input}: no collection holds objects")
    targets = [(c, folder / f"{Path(c.get('nif_path', c.name)).stem}.nif") for c in collections]
    started, failed = time.monotonic(), 0
    if args.jobs <= 1:
        results = []
        for collection, target in targets:
            try:
                results.append((True, export_objects(objects_in(collection), str(target), args)))
            except Exception as error:  # this collection's failure only
                results.append((False, failure_text(target, error)))
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda pair: _export_in_process(args, *pair), targets))
    for ok, text in results:
        failed += not ok
        print(text if ok else f"error: {text}", file=sys.stdout if ok else sys.stderr, flush=True)
    print(summary(len(targets), failed, time.monotonic() - started), file=sys.stderr)
    return 2 if failed else 0


def _export_in_process(args, collection, target):
    """One collection exported by a new process of this command line (Blender's own binary when
    running inside Blender, else this Python with the bpy module)."""
    import subprocess

    import bpy

    runner = [bpy.app.binary_path, "-b", "--python", str(ROOT / "cli.py"), "--"] if bpy.app.binary_path else [sys.executable, str(ROOT / "cli.py")]
    options = [f"--{name.replace('_', '-')}" for name in ("full_precision", "write_materials") if getattr(args, name)]
    options += [item for name in ("game", "layout", "plugin") if getattr(args, name) for item in (f"--{name}", getattr(args, name))]
    command = [*runner, "export", args.input, str(target), "--object", collection.objects[0].name, *options]
    result = subprocess.run(command, capture_output=True, text=True, errors="backslashreplace")
    for line in result.stderr.splitlines():
        if line.startswith("warning: "):
            print(line, file=sys.stderr, flush=True)
    if result.returncode:
        lines = [line.removeprefix("error: ") for line in result.stderr.splitlines() if line.startswith("error: ")]
        return False, lines[0] if lines else f"{target}: the export process failed ({result.returncode})"
    return True, result.stdout.strip()


def _blender_message(error):
    """The first line of a bpy.ops RuntimeError, without its "Error: " prefix."""
    return str(error).strip().splitlines()[0].removeprefix("Error: ").strip()


def add_jobs(parser):
    parser.add_argument(
        "--jobs", type=positive, default=1, metavar="N", help="files at once, in N worker processes (default 1)"
    )


def add_batch_options(parser):
    """What the commands working file by file share: several files at once, JSON lines."""
    add_jobs(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per file (failures too: their \"error\")")


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return value


def version():
    """The extension's version, from its manifest."""
    for line in (ROOT / "blender_manifest.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def build_parser():
    parser = Parser(prog="cli.py", description="Read, write and inspect Bethesda NIF and Banuba .bsm2 files.")
    parser.add_argument("--version", action="version", version=f"%(prog)s (Precombined NIF) {version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    info = commands.add_parser("info", help="summarise files (folders and archives: every .nif, .kf and .bsm2 in them)")
    info.add_argument("files", nargs="+", metavar="file")
    add_batch_options(info)
    info.add_argument("--plugin", action="append", help="precombined cells: the cell's plugin (.esm/.esp/.esl), then "
                      "any of its masters, to name the reference placing each copy (repeatable)")
    info.set_defaults(run=command_info)

    roundtrip = commands.add_parser("roundtrip", help="read a file (or a folder's or archive's files) and write it back unchanged")
    roundtrip.add_argument("input")
    roundtrip.add_argument("output")
    add_batch_options(roundtrip)
    roundtrip.set_defaults(run=command_roundtrip)

    convert = commands.add_parser(
        "convert", help="convert an Xbox 360 FO3/FNV NIF (or a folder's or archive's) into a PC (little-endian) NIF"
    )
    convert.add_argument("input")
    convert.add_argument("output")
    add_batch_options(convert)
    convert.set_defaults(run=command_convert)

    sample = commands.add_parser("sample", help="write a small Fallout 4 NIF (a textured cube)")
    sample.add_argument("output")
    sample.add_argument("--cell", action="store_true", help="a precombined cell of placed cubes instead")
    sample.set_defaults(run=command_sample)

    listing = commands.add_parser("ls", help="list the files of a BA2 or BSA archive")
    listing.add_argument("archive")
    listing.add_argument("pattern", nargs="?", help="a glob pattern on the inner paths (any case, / or \\)")
    listing.set_defaults(run=command_ls)

    unpack = commands.add_parser("extract", help="extract the files of a BA2 or BSA archive matching a pattern")
    unpack.add_argument("archive")
    unpack.add_argument("pattern", help="a glob pattern on the inner paths (any case, / or \\), e.g. '*' or 'meshes/*.nif'")
    unpack.add_argument("outdir")
    unpack.set_defaults(run=command_extract)

    precombines = commands.add_parser(
        "precombines", help="Fallout 4: which precombined cells of a load order the game draws, and what breaks the others"
    )
    precombines.add_argument("data_folder", help="the game's Data folder")
    precombines.add_argument("--plugins", help="the load order's plugins.txt (default: the game's masters, then the "
                             "folder's other plugins, masters first, by name)")
    precombines.add_argument("--cell", type=form_id, help="only this cell (its load-order FormID, hexadecimal)")
    precombines.add_argument("--geometry", action="store_true", help="also open every cell's meshes to check their "
                             "geometry files (always done with --cell)")
    precombines.add_argument("--json", action="store_true", help="print the report as JSON")
    precombines.set_defaults(run=command_precombines)

    load = commands.add_parser("import", help="import files (.bsm2, .nif, .hkx) into a new .blend (needs Blender)")
    load.add_argument("files", nargs="+")
    load.add_argument("--blend", required=True, help="the .blend file to write")
    load.add_argument("--skeleton", help=".hkx animations: the skeleton (.hkx or .nif) whose armature they animate "
                      "(default: the last skeleton .hkx imported before them)")
    load.add_argument("--lod", type=int, choices=(0, 1, 2), default=0, help="precombined cells: the LOD to build")
    load.add_argument("--csg", help="precombined cells: the .csg/.psg holding vanilla cells' geometry")
    load.add_argument("--instancing", choices=("objects", "geometry-nodes"), default="objects",
                      help="precombined cells: one object per placed copy, or per record one point cloud whose points "
                      "geometry nodes instance (very large cells)")
    load.add_argument("--plugin", action="append", help="precombined cells: the cell's plugin, then any of its masters "
                      "(repeatable), to name every copy after the reference placing it (default: the plugin found in "
                      "the cell's Data folder)")
    load.set_defaults(run=command_import)

    save = commands.add_parser(
        "export",
        help="export a .blend as .bsm2 (a skinned mesh), .nif (a NIF, or a precombined cell when the objects came "
        "from one), .kf (an imported .kf's animations) or .hkx (an armature's action as a Havok animation) (needs Blender)",
    )
    save.add_argument("input", help="the .blend file")
    save.add_argument("output", help="the .bsm2, .nif, .kf or .hkx file to write")
    save.add_argument(
        "--object",
        help=".bsm2: the mesh object (default: the active one, or the only one); .nif: an object whose collection is "
        "written (default: the whole scene); .kf: an object of the .kf's import (default: the only one); .hkx: the "
        "armature (default: the active one, or the only one)",
    )
    save.add_argument(
        "--layout", choices=("inline", "baked"), help=".nif: the precombined block layout (default: as imported; new cells: inline)"
    )
    save.add_argument(
        "--plugin",
        help=".nif, precombined cells: the plugin whose '<Plugin> - Geometry.csg' receives edited records of cells "
        "keeping their geometry in a .csg (default: the plugin the records came from, else the output's stem)",
    )
    save.add_argument(
        "--each", action="store_true", help=".nif: OUTPUT is a folder; every collection (each imported file) becomes "
        "its own NIF there, named after the file it came from"
    )
    save.add_argument("--action", help=".hkx: the armature's action to write (default: its active action)")
    save.add_argument("--uncompressed", action="store_true", help=".hkx: every frame as it is, not spline-compressed")
    add_jobs(save)
    save.add_argument("--game", choices=("FO4", "FO3", "SSE"), help=".nif: the game to write for (default: as imported, else "
                      "FO4); .hkx: FO4 or SSE, when the action's import does not say")
    save.add_argument("--full-precision", action="store_true", help=".nif, FO4: 32-bit vertex positions")
    save.add_argument("--write-materials", action="store_true", help=".nif, FO4: write the BGSM/BGEM files of materials "
                      "edited since their material file gave them their look")
    save.set_defaults(run=command_export)
    return parser


def numpy_quiet():
    """Damaged or odd values are judged by the codec and reported as errors; numpy's own
    RuntimeWarnings about them would only be noise on stderr."""
    import numpy as np

    return np.errstate(all="ignore")


def _arguments(argv):
    """Under Blender our arguments follow ``--``."""
    if argv is not None:
        return argv
    return sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]


def main(argv=None):
    load_package()
    for stream in (sys.stdout, sys.stderr):
        # Names may hold what the console's encoding lacks (lone surrogates: a UTF-8 file's stray
        # bytes): never let printing one fail.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from precombined_nif.core.errors import FormatError

    try:
        try:
            args = build_parser().parse_args(_arguments(argv))
        except SystemExit as done:  # --version and --help print and stop here
            return done.code or 0
        with numpy_quiet():
            output = args.run(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except CommandError as error:
        print(error, file=sys.stderr)
        return 2
    except FormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a command that stopped reading (head): not a failure
        sys.stderr.close()
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug of ours: still one line, never a traceback
        print(f"error: internal error ({type(error).__name__}: {error}); please report it", file=sys.stderr)
        return 2
    if isinstance(output, int):  # a batch: its lines are printed, this is its status
        return output
    if output:
        try:
            print(output)
        except BrokenPipeError:  # output piped into a command that stopped reading
            sys.stderr.close()
    return 0


if __name__ == WORKER:
    load_package()
elif __name__ == "__main__":
    status = main()
    if "bpy" in sys.modules:
        # Under Blender sys.exit only ends the script; the status must reach the shell.
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
