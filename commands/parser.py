"""The command line's arguments: every command, its options and the function running it."""

import argparse

from ..io.precombined import INSTANCING  # names only: no Blender code
from . import ENTRY, UsageError
from .lookup import add_data_option, add_lookup_options
from .blender import command_export, command_import
from .cell import command_export_cell, command_import_cell
from .codec import (command_convert, command_extract, command_info, command_ls, command_precombines, command_roundtrip,
                    command_sample)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def form_id(text):
    """A FormID as the reports print one: hexadecimal, or ``Plugin.esm:XXXXXX`` (a record of a
    plugin the Data folder lacks); checked again against the load order."""
    name, colon, number = text.rpartition(":")
    try:
        value = int(number, 16)
    except ValueError:
        value = -1
    if not 0 <= value <= (0xFFFFFF if colon else 0xFFFFFFFF) or colon and not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not a FormID: hexadecimal (00001E58), or Plugin.esm:XXXXXX")
    return text


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
    for line in (ENTRY.parent / "blender_manifest.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def build_parser():
    parser = Parser(prog="cli.py", description="Read, write and inspect Bethesda NIF and Banuba .bsm2 files.")
    parser.add_argument("--version", action="version", version=f"%(prog)s (Precombined NIF) {version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    info = commands.add_parser("info", help="summarise files (folders and archives: every .nif, .kf, .bsm2, .mesh and .tri in them)")
    info.add_argument("files", nargs="+", metavar="file")
    add_batch_options(info)
    info.add_argument("--plugin", action="append", help="precombined cells: the cell's plugin (.esm/.esp/.esl), then "
                      "any of its masters, to name the reference placing each copy (repeatable)")
    add_lookup_options(info)
    info.set_defaults(run=command_info)

    roundtrip = commands.add_parser("roundtrip", help="read a file (or a folder's or archive's files) and write it back unchanged")
    roundtrip.add_argument("input")
    roundtrip.add_argument("output")
    add_batch_options(roundtrip)
    roundtrip.set_defaults(run=command_roundtrip)

    convert = commands.add_parser(
        "convert", help="convert an Xbox 360 FO3/FNV NIF (or a folder's or archive's) into a PC (little-endian) NIF; "
        "a Havok .hkx between XML and binary and between 32- and 64-bit"
    )
    convert.add_argument("input")
    convert.add_argument("output")
    convert.add_argument("--to", choices=("xml", "32", "64"), help=".hkx: the form to write, an XML packfile or a binary "
                         "one of 32- or 64-bit pointers (default: 64 for an XML file, xml for a binary one)")
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
    precombines.add_argument("data_folder", nargs="?", help="the game's Data folder")
    precombines.add_argument("--plugins", help="the load order's plugins.txt (default: the game's masters, then the "
                             "folder's other plugins, masters first, by name)")
    precombines.add_argument("--cell", type=form_id, help="only this cell: its load-order FormID (hexadecimal), or "
                             "Plugin.esm:XXXXXX as the report names a cell of a plugin the folder lacks")
    precombines.add_argument("--geometry", action="store_true", help="also open every cell's meshes to check their "
                             "geometry files (always done with --cell)")
    precombines.add_argument("--plan", action="store_true", help="with --cell: which references of the cell the "
                             "Creation Kit will combine, into which group, and the rule keeping each other one out")
    precombines.add_argument("--build", action="store_true", help="with --cell: build the cell's precombines without "
                             "the Creation Kit (its _OC meshes, geometry, .cdx, physics and the CELL's XCRI and PCMB)")
    precombines.add_argument("--into", metavar="PLUGIN", help="--build: the patch plugin of the Data folder to write the "
                             "CELL into (default: '<cell's plugin> - Precombined.esp'), updated when it exists")
    precombines.add_argument("--layout", choices=("shared", "inline"), default="shared", help="--build: geometry in "
                             "'<patch> - Geometry.csg' as the Creation Kit writes it (shared), or in the _OC files")
    precombines.add_argument("--dry-run", action="store_true", help="--build: list the files, write none")
    precombines.add_argument("--meshes", nargs="*", metavar="NIF", help="whether the Creation Kit can combine each "
                             "model the load order's STAT and SCOL bases use (loose or archived), or each NIF given "
                             "(files, folders, archives; no Data folder needed): the rule and block when it cannot")
    precombines.add_argument("--json", action="store_true", help="print the report as JSON (--meshes: one JSON object "
                             "a model)")
    add_jobs(precombines)
    precombines.set_defaults(run=command_precombines)

    load = commands.add_parser("import", help="import files (.bsm2, .nif, .hkx, .tri) into a new .blend (needs Blender)")
    load.add_argument("files", nargs="+", help=".tri files named go onto the meshes of the file imported before them "
                      "(a FaceGen .tri with none: a mesh of its own)")
    load.add_argument("--blend", required=True, help="the .blend file to write")
    load.add_argument("--skeleton", help=".hkx animations: the skeleton (.hkx or .nif) whose armature they animate "
                      "(default: the last skeleton .hkx imported before them)")
    load.add_argument("--lod", type=int, choices=(0, 1, 2), default=0, help="precombined cells: the LOD to build")
    load.add_argument("--csg", help="precombined cells: the .csg/.psg holding vanilla cells' geometry")
    load.add_argument("--instancing", choices=[name.lower().replace("_", "-") for name in INSTANCING], default="objects",
                      help="precombined cells: one object per placed copy, or per record one point cloud whose points "
                      "geometry nodes instance (very large cells)")
    load.add_argument("--plugin", action="append", help="precombined cells: the cell's plugin, then any of its masters "
                      "(repeatable), to name every copy after the reference placing it (default: the plugin found in "
                      "the cell's Data folder)")
    load.add_argument("--starfield-skeleton", metavar="NIF", help="Starfield NIFs: the skeleton NIF whose nodes pose "
                      "their skins' bones (default: meshes\\actors\\human\\characterassets\\skeleton.nif when the "
                      "NIF's Data folder holds it)")
    load.add_argument("--starfield-morphs", metavar="MORPH.dat", help="Starfield NIFs: a morph.dat whose morphs become shape keys "
                      "of the shape with as many vertices")
    load.add_argument("--no-morphs", dest="morphs", action="store_false", help=".nif: leave out the .tri files the "
                      "games read with it (FaceGen files named after it, the BodySlide file its BODYTRI names)")
    add_lookup_options(load)
    load.set_defaults(run=command_import)

    cell = commands.add_parser("import-cell", help="import every reference of a cell of a load order into a new "
                               ".blend (needs Blender)")
    cell.add_argument("data", help="the game's Data folder (its plugins, models and archives)")
    cell.add_argument("--cell", required=True, help="the cell: its FormID (00001E58, Plugin.esm:XXXXXX) or EditorID")
    cell.add_argument("--plugins", metavar="plugins.txt", help="the active plugins, in order (default: every plugin "
                      "of the Data folder, masters first)")
    cell.add_argument("--blend", required=True, help="the .blend file to write")
    cell.add_argument("--models", action="store_true", help="show precombined references by their own models "
                      "(default: by the cell's _OC files)")
    cell.add_argument("--scol-object", action="store_true", help="a SCOL as one object (its own model), not its parts")
    cell.set_defaults(run=command_import_cell)

    cell_out = commands.add_parser("export-cell", help="write the edits of a cell's import as a plugin (needs Blender)")
    cell_out.add_argument("input", help="the .blend file")
    cell_out.add_argument("output", help="the plugin to write (.esp; .esl: flagged light)")
    cell_out.add_argument("--cell", help="the cell's collection (default: the only one)")
    cell_out.add_argument("--esl", action="store_true", help="flag the plugin as a light plugin (ESL)")
    cell_out.set_defaults(run=command_export_cell)

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
    save.add_argument("--cdx", help=".nif, precombined cells: the .cdx to start the plugin's resource index from "
                      "(default: the one beside the .csg the import read)")
    save.add_argument("--patch", metavar="OUT.esp", help=".nif, precombined cells: also write a patch plugin moving, "
                      "disabling and adding the REFRs of the copies edited, and its own '<Patch> - Geometry.csg' and "
                      "'<Patch>.cdx'")
    save.add_argument("--esl", action="store_true", help="--patch: flag the patch as a light plugin (ESL)")
    save.add_argument("--update-patch", action="store_true", help="--patch: the patch may exist; its records are kept "
                      "and updated (it is never overwritten otherwise)")
    save.add_argument("--cell-plugin", action="append", metavar="PLUGIN", help="--patch: the cell's plugin, then any "
                      "of its masters (repeatable; default: found in the cell's Data folder)")
    save.add_argument("--dry-run", action="store_true", help=".nif, precombined cells: list the files and the patch's "
                      "records the export would write, and write nothing")
    save.add_argument(
        "--each", action="store_true", help=".nif: OUTPUT is a folder; every collection (each imported file) becomes "
        "its own NIF there, named after the file it came from"
    )
    add_data_option(save, ".nif, precombined cells: the Fallout 4 Data folder (as the add-on's preferences set in "
                    "Blender), where the cell's plugin, its previs file and the .csg and .cdx to start from are looked "
                    "up after the cell's own Data folder")
    save.add_argument("--action", help=".hkx: the armature's action to write (default: its active action)")
    save.add_argument("--uncompressed", action="store_true", help=".hkx: every frame as it is, not spline-compressed")
    add_jobs(save)
    save.add_argument("--game", choices=("FO4", "FO76", "FO3", "SSE", "SKYRIM", "SF"), help=".nif: the game to write "
                      "for (default: as imported, else FO4; SKYRIM: Skyrim LE; SF: Starfield, its .mesh files under the "
                      "NIF's Data folder); .hkx: FO4 or SSE, when the action's import does not say")
    save.add_argument("--full-precision", action="store_true", help=".nif, FO4 and FO76: 32-bit vertex positions")
    save.add_argument("--no-morphs", dest="morphs", action="store_false", help=".nif: do not write the meshes' shape "
                      "keys to their .tri files beside it")
    save.add_argument("--write-materials", action="store_true", help=".nif: write the material files (FO4: BGSM/BGEM; "
                      "Starfield: .mat) of materials edited since their material file gave them their look")
    save.set_defaults(run=command_export)
    return parser
