"""Command line: ``python cli.py COMMAND ...`` or ``blender -b --python cli.py -- COMMAND ...``.

Core commands (info, roundtrip, sample) need only numpy. Every failure exits with status 2 and
one line on stderr naming the file and what is wrong.
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


def _arguments(argv):
    """The arguments meant for us: under Blender they follow ``--``."""
    if argv is None:
        argv = sys.argv
        argv = argv[argv.index("--") + 1 :] if "--" in argv else argv[1:]
    return argv


def main(argv=None):
    load_package()
    from precombined_nif.core import commands
    from precombined_nif.core.errors import FormatError

    parser = commands.build_parser(argparse.ArgumentParser(prog="cli.py", description=__doc__.splitlines()[0]))
    args = parser.parse_args(_arguments(argv))
    try:
        result = args.run(args)
    except FormatError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        name = error.filename or "?"
        print(f"error: {name}: {error.strerror or error}", file=sys.stderr)
        return 2
    if result is not None:
        if args.json if hasattr(args, "json") else False:
            print(json.dumps(result, indent=2))
        else:
            print(result)
    return 0


if __name__ == "__main__":
    code = main()
    if "bpy" in sys.modules:
        # Under Blender, sys.exit would only end the script; the status must reach the shell.
        sys.stdout.flush()
        sys.stderr.flush()
        import os

        os._exit(code)
    sys.exit(code)
