"""Where the command line looks things up: ``--data DIR`` (a game's Data folder: textures,
materials, .csg geometry, archives, plugins) and ``--plugins plugins.txt`` (its load order),
as the add-on's preferences set them in Blender; and the one line that sums up the files not
found there instead of a warning each."""

import re
from pathlib import Path

from . import UsageError

NOT_FOUND = re.compile(r": (texture|material file) (.+) not found in (.+)$")
KINDS = {"texture": "textures", "material file": "material files"}


def add_lookup_options(parser):
    add_data_option(parser, "the game's Data folder, where textures, materials, .csg geometry, archives and plugins "
                    "are looked up (as the add-on's preferences set in Blender)")
    parser.add_argument("--plugins", metavar="PLUGINS.txt", help="with --data: the load order's plugins.txt (precombined "
                        "cells: which are drawn, and the copies overridden since; default: the folder's plugins)")


def add_data_option(parser, help):
    parser.add_argument("--data", metavar="DIR", help=help)


def check_lookup(args):
    """Refuse a ``--data`` that is not a folder, a ``--plugins`` that is no file or comes without
    ``--data`` (no Blender code: the codec commands check them too)."""
    data, plugins = getattr(args, "data", None), getattr(args, "plugins", None)
    if plugins and not data:
        raise UsageError(f"{args.command}: --plugins needs --data (the Data folder the load order is of)")
    if data is not None and not Path(data).is_dir():
        raise UsageError(f"{args.command}: --data {data}: not a folder")
    if plugins and not Path(plugins).is_file():
        raise UsageError(f"{args.command}: --plugins {plugins}: no such file")


def user_folders(args):
    """The io.file_import.UserFolders ``--data`` and ``--plugins`` give (no Data folder: none)."""
    from ..core.games import GAMES
    from ..io.file_import import NO_FOLDERS, UserFolders

    check_lookup(args)
    data, plugins = getattr(args, "data", None), getattr(args, "plugins", None)
    if data is None:
        return NO_FOLDERS
    return UserFolders({game: str(data) for game in GAMES}, None, (str(data), plugins))


def split_not_found(messages):
    """(other messages, {kind: [names]}) of an import's warnings: the files not found go to the
    summary, the others are printed as they are."""
    others, missing = [], {}
    for message in messages:
        match = NOT_FOUND.search(message)
        if match is None:
            others.append(message)
        else:
            missing.setdefault(match.group(1), []).append(match.group(2))
    return others, missing


def not_found_lines(missing, data):
    """One line per kind of file not found: how many (each named once), the first, and where to give them."""
    where = f"in {data}" if data else "(no Data folder given: --data DIR)"
    lines = []
    for kind, names in missing.items():
        unique = list(dict.fromkeys(name.lower() for name in names))
        lines.append(f"{len(unique)} {KINDS[kind] if len(unique) != 1 else kind} not found {where} (first: {names[0]})")
    return lines
