"""``import-cell`` and ``export-cell``: a whole cell of a load order into a .blend, and its
edits back as a plugin (io.plugin.cell_import, io.plugin.cell_export; run under Blender or with
the bpy module)."""

import sys
from pathlib import Path

from . import CommandError, UsageError
from .blender import _blender_message, require_bpy


def command_import_cell(args):
    bpy = require_bpy("import-cell")
    from ..core.errors import FormatError
    from ..io import schema
    from ..io.plugin.cell_import import import_cell

    if Path(args.blend).suffix.lower() != ".blend":
        raise UsageError(f"import-cell: {args.blend}: the output must be a .blend file")
    if not Path(args.data).is_dir():
        raise UsageError(f"import-cell: {args.data}: not a folder (the game's Data folder)")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    try:
        collection, warnings = import_cell(bpy.context, args.data, args.cell, args.plugins,
                                           precombined="MODELS" if args.models else "COPIES",
                                           scol="OBJECT" if args.scol_object else "PARTS")
    except FormatError as error:
        raise CommandError(f"error: {error}\nerror: {args.blend}: not written") from None
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        bpy.ops.wm.save_as_mainfile(filepath=str(Path(args.blend).resolve()))
    except RuntimeError as error:
        raise CommandError(f"error: {args.blend}: cannot be saved ({_blender_message(error)})") from None
    references = len(str(collection.get(schema.CELL_REFERENCES, "")).splitlines())
    print(f"{args.blend}: cell {collection.name}: {references} references imported")
    return 0


def command_export_cell(args):
    bpy = require_bpy("export-cell")
    from ..core.errors import FormatError
    from ..io import schema
    from ..io.plugin.cell_export import export_cell

    if Path(args.output).suffix.lower() not in (".esp", ".esl", ".esm"):
        raise UsageError(f"export-cell: {args.output}: the output must be a plugin (.esp, .esl or .esm)")
    try:
        bpy.ops.wm.open_mainfile(filepath=str(Path(args.input).resolve()))
    except RuntimeError as error:
        raise CommandError(f"error: {args.input}: cannot be opened ({_blender_message(error)})") from None
    cells = [c for c in bpy.data.collections if schema.CELL_KEY in c and (args.cell is None or c.name == args.cell)]
    if len(cells) != 1:
        names = ", ".join(c.name for c in bpy.data.collections if schema.CELL_KEY in c) or "none"
        raise CommandError(f"error: {args.input}: {'no' if not cells else 'more than one'} cell's import "
                           f"{'named ' + args.cell if args.cell else ''} (cells: {names}; --cell picks one)")
    try:
        written, messages = export_cell(cells[0], args.output, light=args.esl or args.output.lower().endswith(".esl"))
    except FormatError as error:
        raise CommandError(f"error: {error}\nerror: {args.output}: not written") from None
    print("\n".join(messages))
    return 0
