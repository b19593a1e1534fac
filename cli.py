"""Command line of the Precombined NIF extension.

    python cli.py COMMAND ...                      (core commands need only numpy)
    blender -b --python cli.py -- COMMAND ...      (the same under Blender)

Every failure exits with status 2 and one line on stderr naming the file and what is wrong.
"""

import argparse
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


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


# -- commands ---------------------------------------------------------------------------------
def command_info(args):
    from precombined_nif.core import info

    result = info.file_info(args.file)
    if args.json:
        return json.dumps(result, indent=2, ensure_ascii=False)
    return info.render_text(args.file, result)


def command_roundtrip(args):
    from precombined_nif.core.nif import NifFile

    nif = NifFile.read(args.input)
    nif.write(args.output)
    same = Path(args.input).read_bytes() == Path(args.output).read_bytes()
    return f"{args.output}: written, {'identical to' if same else 'differs from'} {args.input}"


def command_sample(args):
    from precombined_nif.core.nif import samples

    samples.fo4_cube().write(args.output)
    return f"{args.output}: sample Fallout 4 cube written"


def build_parser():
    parser = Parser(prog="cli.py", description="Read, write and inspect Bethesda NIF files.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    info = commands.add_parser("info", help="summarise a file")
    info.add_argument("file")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(run=command_info)

    roundtrip = commands.add_parser("roundtrip", help="read a file and write it back unchanged")
    roundtrip.add_argument("input")
    roundtrip.add_argument("output")
    roundtrip.set_defaults(run=command_roundtrip)

    sample = commands.add_parser("sample", help="write a small Fallout 4 NIF (a textured cube)")
    sample.add_argument("output")
    sample.set_defaults(run=command_sample)
    return parser


def _arguments(argv):
    """Under Blender our arguments follow ``--``."""
    if argv is not None:
        return argv
    return sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]


def main(argv=None):
    load_package()
    from precombined_nif.core.errors import FormatError

    try:
        args = build_parser().parse_args(_arguments(argv))
        output = args.run(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except FormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    if output:
        try:
            print(output)
        except BrokenPipeError:  # output piped into a command that stopped reading
            sys.stderr.close()
    return 0


if __name__ == "__main__":
    status = main()
    if "bpy" in sys.modules:
        # Under Blender sys.exit only ends the script; the status must reach the shell.
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
