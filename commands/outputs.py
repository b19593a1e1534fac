"""Outputs checked before any work, worded as outputs: a missing folder, a folder where a file
goes, an output that is the input."""

import os
from pathlib import Path

from . import UsageError


def same_path(first, second):
    """Whether two paths name one file or folder (the same inode, or the same resolved path for
    one that does not exist yet)."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return Path(first).resolve() == Path(second).resolve()


def check_output_file(command, output, inputs=()):
    """``output`` can be written: its folder exists, it is no folder, and it is none of ``inputs``."""
    output = Path(output)
    if output.is_dir():
        raise UsageError(f"{command}: {output}: the output is a folder, not a file")
    folder = output.parent
    if not folder.is_dir():
        raise UsageError(f"{command}: {output}: the output's folder {folder} does not exist")
    for source in inputs:
        if same_path(source, output):
            raise UsageError(f"{command}: {output}: the output is the input: give another file")


def check_output_folder(output, inputs=()):
    """A folder output: none of ``inputs``, and not a file."""
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise UsageError(f"{output}: the output is a file, not a folder")
    for source in inputs:
        if output.exists() and same_path(source, output):
            raise UsageError(f"{output}: the output folder is the input folder: its files would be written over; "
                             f"give another folder")
