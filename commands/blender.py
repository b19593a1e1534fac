"""The commands needing Blender (or the bpy module): import files into a .blend, export a .blend.
bpy and the add-on's Blender side are imported when a command runs."""

import argparse
import contextlib
import os
import sys
from pathlib import Path

from . import ENTRY, CommandError, UsageError, counted
from .lookup import check_lookup, not_found_lines, split_not_found, user_folders
from .outputs import check_output_file, check_output_folder


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
    from .batch import expand
    from ..core.formats import is_bsm2
    from ..core.tri import is_tri
    from ..io.file_import import CellImport, each_file, import_bsm2
    from ..io.havok.animation.importer import import_hkx, import_skeleton
    from ..io.tri.importer import apply_file

    if not Path(args.blend).suffix.lower() == ".blend":
        raise UsageError(f"import: {args.blend}: the output must be a .blend file")
    check_output_file("import", args.blend, args.files)
    folders = user_folders(args)
    # A folder's .tri files come with the NIFs they belong to; those named go onto the file before them.
    paths = [str(path) for path, relative in expand(args.files) if relative is None or not is_tri(path)]
    if not paths:
        raise UsageError("import: no .nif or .bsm2 files found")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    errors, built, done = [], [], 0
    if args.skeleton:  # the armature the animations (.hkx) go onto
        import_skeleton(bpy.context, args.skeleton)
    # Plain NIFs and precombined cells alike go to the cell import; .hkx skeletons become
    # armatures, .hkx animations actions on the last one.
    instancing = args.instancing.upper().replace("-", "_")  # the INSTANCING name the parser spelled lower-case
    missing = {}  # the files not found, kind by kind: one line each at the end
    with CellImport(lod=args.lod, geometry_path=args.csg, instancing=instancing, plugins=args.plugin or (),
                    skeleton=args.starfield_skeleton, starfield_morphs=args.starfield_morphs,
                    morphs=args.morphs, folders=folders) as import_nif:
        def import_one(context, path, progress, rollback):
            if is_tri(path):  # onto the meshes of the file imported before, else (FaceGen) a mesh of its own
                meshes = [o for o in objects_of(built[-1]) if o.type == "MESH"] if built else []
                objects, warnings = apply_file(context, path, meshes, rollback=rollback)
                return (built[-1] if meshes else objects[0]), warnings
            havok = Path(path).suffix.lower() == ".hkx"
            if havok:  # root motion as the armature object's motion
                return import_hkx(context, path, progress, rollback=rollback, root_motion=True)
            importer = import_bsm2 if is_bsm2(path) else import_nif
            return importer(context, path, progress, rollback=rollback)

        for imported, messages in each_file(bpy.context, paths, import_one):
            if imported is None:  # then its one message is its error
                errors += messages
                print(f"error: {messages[0]}", file=sys.stderr, flush=True)
                continue
            done += 1
            if imported not in built:
                built.append(imported)
            messages, file_missing = split_not_found(messages)
            for kind, names in file_missing.items():
                missing.setdefault(kind, []).extend(names)
            for message in messages:
                print(f"warning: {message}", file=sys.stderr)
    for line in not_found_lines(missing, args.data):
        print(f"warning: {line}", file=sys.stderr)
    if args.csg and built and not any(is_cell(c) for c in built):
        print(f"warning: --csg {args.csg} applies to precombined cells (_OC.nif): none was imported, it was not read",
              file=sys.stderr)
    if not built:
        raise CommandError(f"error: {args.blend}: not written, no file imported")
    output = Path(args.blend).resolve()
    try:
        bpy.ops.wm.save_as_mainfile(filepath=str(output))
    except RuntimeError as error:
        raise CommandError(f"error: {args.blend}: cannot be saved ({_blender_message(error)})") from None
    lines = [f"{args.blend}: {done} of {len(paths)} file(s) imported"] + [describe_collection(c) for c in built]
    print("\n".join(lines))
    if errors:
        print(f"{len(errors)} file(s) failed", file=sys.stderr)
    return 2 if errors else 0


def is_cell(built):
    from ..io import schema

    return any(schema.PRECOMBINED_OBJECT in o for o in objects_of(built))


def objects_of(built):
    """The objects an import built (a collection, or an object with its children)."""
    import bpy

    if isinstance(built, bpy.types.Collection):
        from ..io.collection_objects import objects_in

        return objects_in(built)
    return [built, *built.children_recursive]


def describe_collection(collection):
    """What an import built (a collection, or an object with its children), in one line."""
    from ..io import schema

    objects = objects_of(collection)
    meshes = {o.data for o in objects if o.type == "MESH"}
    placed = [o for o in objects if schema.PRECOMBINED_OBJECT in o]
    line = f"  {collection.name}: {counted(len(objects), 'object')}, {counted(len(meshes), 'mesh')}"
    if placed:  # an object per copy, or a geometry-nodes point cloud of a record's copies
        copies = sum(len(o.data.vertices) if o.data is not None and schema.PRECOMBINED_INSTANCES_RAW in o.data else 1 for o in placed)
        records = {(o.get(schema.PRECOMBINED_BLOCK), o[schema.PRECOMBINED_OBJECT]) for o in placed}  # numbered per block
        line += f", {counted(copies, 'precombined instance')} of {counted(len(records), 'record')}"
        named = sum(schema.REFERENCE_FORM_ID in o for o in placed)
        if named:
            line += f", {named} named after their references"
    armatures = [o for o in objects if o.type == "ARMATURE"]
    if armatures:
        line += f", {counted(sum(len(a.data.bones) for a in armatures), 'bone')}"
    return line


def warn_once(message, warned=None):
    """Print a warning unless it is in ``warned`` (a set of those printed), which it joins."""
    if warned is None or message not in warned:
        print(f"warning: {message}", file=sys.stderr)
    if warned is not None:
        warned.add(message)


CELL_OPTIONS = ("layout", "plugin", "cdx", "patch", "esl", "update_patch", "cell_plugin", "dry_run", "data")  # cells only
NIF_OPTIONS = ("game", "full_precision", "write_materials")  # to general NIFs only


def ignored(args, names, what):
    """Warn about options given that do not apply to what is written."""
    for name in names:
        if getattr(args, name):
            print(f"warning: --{name.replace('_', '-')} does not apply to {what}: ignored", file=sys.stderr)


def command_export(args):
    from ..core.formats import is_bsm2

    if args.each:
        if args.patch or args.dry_run:
            raise UsageError("export --each: --patch and --dry-run take one cell at a time")
        if Path(args.output).suffix:
            raise UsageError(f"export --each: {args.output}: the output is a folder (one NIF per collection), not a file")
        if args.object:
            raise UsageError("export --each: --object does not apply (every collection is written)")
    elif Path(args.output).suffix.lower() not in (".nif", ".kf", ".bsm2", ".hkx"):
        raise UsageError(f"export: {args.output}: the output must be a .nif, .kf, .bsm2 or .hkx file")
    check_lookup(args)  # a --data that is no folder refused before the work (no Blender code loaded yet)
    bpy = require_bpy("export")
    source = Path(args.input)
    if not source.is_file():
        raise UsageError(f"export: {args.input}: the input .blend file does not exist")
    if args.each:
        check_output_folder(args.output, [source])
    else:
        check_output_file("export", args.output, [source])
    from ..io.bsm2.exporter import export_file

    try:
        with silenced():  # Blender prints its own line for a file it cannot read: the error below says it
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
    bsm, warnings = export_file(bpy.context, args.output, mesh_object)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return (
        f"{args.output}: {len(bsm.vertices)} vertices, {len(bsm.indices) // 3} triangles, {bsm.num_bones} bones, "
        f"{len(bsm.animations)} animation(s)"
    )


def export_animation_file(bpy, args):
    """An armature's action (--object, else the active or only armature; --action, else its
    active action) as a Havok animation."""
    from ..io.havok.animation.action_export import export_animation

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
    from ..io import schema
    from ..io.collection_objects import objects_in

    objects = list(bpy.context.scene.objects)
    if args.object is not None:
        chosen = bpy.data.objects.get(args.object)
        if chosen is None:
            raise CommandError(f"error: {args.input}: no object named {args.object!r}")
        objects = list({o for c in chosen.users_collection for o in objects_in(c)})
    if Path(args.output).suffix.lower() == ".kf":
        # A .kf is written from the collection its import made (an empty standing for the file).
        handles = [o for o in objects if schema.NIF_KF in o]
        if len(handles) != 1:
            found = f"{len(handles)} .kf imports: choose one with --object" if handles else "no .kf import"
            raise CommandError(f"error: {args.input}: {found} (a .kf is written from its import's empty)")
        objects = objects_in(handles[0].users_collection[0])
    return export_objects(objects, args.output, args)


def export_objects(objects, output, args, warned=None):
    """``objects`` as a NIF: a precombined cell when they came from one, else a general NIF
    written back into the file they were imported from, if any. Returns the line to print.
    ``warned``: the warnings printed already (--each: one .cdx's warning is every cell's)."""
    from ..core.nif.blocks.precombined import cell_totals
    from ..io import schema
    from ..io.nif.exporter import SHAPE_TYPES, export_nif
    from ..io.precombined.cell_outputs import PatchOptions
    from ..io.precombined.exporter import export_cell

    args = argparse.Namespace(**{**vars(args), "output": output})
    if any(schema.PRECOMBINED_OBJECT in o for o in objects):
        ignored(args, NIF_OPTIONS, "a precombined cell")
        patch = PatchOptions(args.patch, args.esl, args.update_patch) if args.patch else None
        if not patch:
            ignored(args, ("esl", "update_patch"), "an export without --patch")
        plan = export_cell(args.output, objects, layout=args.layout, plugin=args.plugin, index=args.cdx, patch=patch,
                           plugins=args.cell_plugin or (), dry_run=args.dry_run,
                           folders=user_folders(args).data_folders("FO4"))
        if args.dry_run:
            return "\n".join([f"{args.output}: dry run, nothing written", *plan.lines()])
        for message in plan.messages:
            warn_once(message, warned)
        records, instances = cell_totals(plan.nif)
        lines = [f"{args.output}: precombined cell, {counted(records, 'record')}, {counted(instances, 'instance')}"]
        lines += [f"{path}: {what}" for path, what in plan.wrote if str(path) != str(args.output)]
        return "\n".join(lines + [f"  {line}" for line in plan.records])
    ignored(args, CELL_OPTIONS, "a NIF that is not a precombined cell")
    morph_files = []
    nif, messages = export_nif(args.output, objects, game=args.game, full_precision=args.full_precision,
                               morphs=args.morphs, written=morph_files)
    for message in messages:
        warn_once(message, warned)
    for path in morph_files:
        print(f"{path}: morphs written")
    if args.write_materials:
        from ..io.nif.material_export import write_material_files

        for path in write_material_files(args.output, objects):
            print(f"{path}: material file written")
    if Path(args.output).suffix.lower() == ".kf":
        return f"{args.output}: {nif.header.game} animation, {len(nif.roots)} sequence(s), {len(nif.blocks)} blocks"
    shapes = sum(1 for b in nif.blocks if isinstance(b, SHAPE_TYPES))  # every kind, BSDynamicTriShape's too
    return f"{args.output}: {nif.header.game} NIF, {len(nif.blocks)} blocks, {shapes} shapes"


def export_each(bpy, args):
    """Every collection of the scene holding objects (each imported file is one) as its own NIF
    in the output folder, named after the file it came from; --jobs N runs N processes, each
    opening the .blend. A collection that fails is reported and the others are written."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from .batch import summary
    from ..core.errors import failure_text
    from ..io import schema
    from ..io.collection_objects import objects_in

    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    collections = [c for c in bpy.context.scene.collection.children_recursive if c.objects]
    if not collections:
        raise CommandError(f"error: {args.input}: no collection holds objects")
    targets = [(c, folder / nif_name(c.get(schema.NIF_PATH, c.name))) for c in collections]
    started, failed, warned = time.monotonic(), 0, set()
    if args.jobs <= 1:
        results = []
        for collection, target in targets:
            try:
                results.append((True, export_objects(objects_in(collection), str(target), args, warned)))
            except Exception as error:  # this collection's failure only
                results.append((False, failure_text(target, error)))
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda pair: _export_in_process(args, *pair, warned), targets))
    for ok, text in results:
        failed += not ok
        print(text if ok else f"error: {text}", file=sys.stdout if ok else sys.stderr, flush=True)
    print(summary(len(targets), failed, time.monotonic() - started), file=sys.stderr)
    return 2 if failed else 0


def nif_name(source):
    """The name a collection's NIF gets in the --each folder: its file's, the suffix as it was
    spelled (.NIF stays .NIF)."""
    source = Path(source)
    return source.name if source.suffix.lower() == ".nif" else f"{source.stem}.nif"


def _export_in_process(args, collection, target, warned):
    """One collection exported by a new process of this command line (Blender's own binary when
    running inside Blender, else this Python with the bpy module)."""
    import subprocess

    import bpy

    runner = [bpy.app.binary_path, "-b", "--python", str(ENTRY), "--"] if bpy.app.binary_path else [sys.executable, str(ENTRY)]
    options = [f"--{name.replace('_', '-')}" for name in ("full_precision", "write_materials") if getattr(args, name)]
    options += [item for name in ("game", "layout", "plugin", "data") if getattr(args, name) for item in (f"--{name}", getattr(args, name))]
    command = [*runner, "export", args.input, str(target), "--object", collection.objects[0].name, *options]
    result = subprocess.run(command, capture_output=True, text=True, errors="backslashreplace")
    for line in result.stderr.splitlines():
        if line.startswith("warning: "):
            warn_once(line.removeprefix("warning: "), warned)
    if result.returncode:
        lines = [line.removeprefix("error: ") for line in result.stderr.splitlines() if line.startswith("error: ")]
        return False, lines[0] if lines else f"{target}: the export process failed ({result.returncode})"
    return True, result.stdout.strip()


@contextlib.contextmanager
def silenced():
    """Blender's own prints (its C code writes to the process's stdout and stderr) go nowhere."""
    sys.stdout.flush()
    sys.stderr.flush()
    kept = [os.dup(1), os.dup(2)]
    try:
        with open(os.devnull, "wb") as nothing:
            os.dup2(nothing.fileno(), 1)
            os.dup2(nothing.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), kept):
            os.dup2(saved, fd)
            os.close(saved)


def _blender_message(error):
    """The first line of a bpy.ops RuntimeError, without its "Error: " prefix."""
    return str(error).strip().splitlines()[0].removeprefix("Error: ").strip()
