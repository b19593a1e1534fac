"""The command line's parts (cli.py at the repository root runs them): ``parser`` (the
arguments of every command), ``codec`` (the commands needing only numpy: info, roundtrip,
convert, sample, ls, extract, precombines) and ``blender`` (import and export, run under
Blender or with the bpy module), ``info`` (what ``info`` reports of each kind of file) and
``batch`` (folders and archives expanded into files, run in worker processes). The codec
commands never load Blender code."""

from pathlib import Path

ENTRY = Path(__file__).resolve().parent.parent / "cli.py"  # what users run; worker processes run it too


class UsageError(Exception):
    pass


class CommandError(Exception):
    """A failure whose message is already the lines to print."""


def counted(number, noun):
    """``number`` and the noun, plural unless one ("1 object", "2 meshes")."""
    return f"{number} {noun if number == 1 else noun + ('es' if noun.endswith(('sh', 's', 'x')) else 's')}"
