"""Command line of the Precombined NIF extension.

    python cli.py COMMAND ...                      (core commands need only numpy)
    blender -b --python cli.py -- COMMAND ...      (the same under Blender; import and
                                                    export need it, or the bpy module)

Every failure exits with status 2 and one line on stderr naming the file and what is wrong.
The commands live in the package's ``commands`` folder; this file loads the package and runs them.
"""

import importlib.util
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


NEEDS_NUMPY = ("cli.py needs numpy 1.26, which this Python lacks: run it with the project's environment "
               "(.venv/bin/python cli.py ..., made by python3 tasks.py main), or install it: "
               "python -m pip install numpy==1.26.4")


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
    from precombined_nif.commands import CommandError, UsageError
    from precombined_nif.commands.parser import build_parser
    from precombined_nif.core.errors import failure_text

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
    except BrokenPipeError:  # output piped into a command that stopped reading (head): not a failure
        sys.stderr.close()
        return 0
    except ImportError as error:
        if error.name != "numpy" and "numpy" not in str(error):
            print(f"error: {failure_text(None, error)}", file=sys.stderr)
            return 2
        print(f"error: {NEEDS_NUMPY}", file=sys.stderr)
        return 2
    except Exception as error:  # bad input, a file the system refuses, or a bug of ours: one line, never a traceback
        print(f"error: {failure_text(None, error)}", file=sys.stderr)
        return 2
    if isinstance(output, int):  # a batch: its lines are printed, this is its status
        return output
    if output:
        try:
            print(output)
        except BrokenPipeError:  # output piped into a command that stopped reading
            sys.stderr.close()
    return 0


if __name__ != "__main__":  # imported, or run by a batch's spawned worker process (commands.codec.run_batch)
    load_package()
else:
    status = main()
    if "bpy" in sys.modules:
        # Under Blender sys.exit only ends the script; the status must reach the shell.
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
