"""The games whose files the extension reads, and how to recognise each one's Data folder.

Keys are the names ``core.nif.header`` gives a file's game ("FO3" covers Fallout 3 and New
Vegas, which share their NIF version and their archives' naming).
"""

import fnmatch
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Game:
    key: str
    label: str
    plugins: tuple  # main plugins, any one of which a Data folder holds
    archives: tuple  # glob patterns of the game's own archives

    def data_folder_problem(self, folder):
        """Why ``folder`` is not this game's Data folder, or None when it is. Names are compared
        without case: Windows does not keep it, and Linux installs (Proton) mix both."""
        if not folder:
            return None
        if not os.path.isdir(folder):
            return f"{folder}: no such folder"
        try:
            names = os.listdir(folder)
        except OSError as error:
            return f"{folder}: cannot be listed ({error.strerror or error})"
        if self.holds_game_files(names):
            return None
        wanted = " or ".join(self.plugins)
        problem = f"{folder}: not a {self.label} Data folder (it holds neither {wanted} nor any {self.archives[0]!r} archive)"
        # The commonest slip: the game's own folder, which holds the Data folder.
        data = next((name for name in names if name.lower() == "data"), None)
        if data and self.data_folder_problem(os.path.join(folder, data)) is None:
            problem += f"; did you mean {os.path.join(folder, data)}?"
        return problem

    def holds_game_files(self, names):
        names = [name.lower() for name in names]
        if {plugin.lower() for plugin in self.plugins}.intersection(names):
            return True
        return any(fnmatch.fnmatchcase(name, pattern.lower()) for name in names for pattern in self.archives)


GAMES = {
    game.key: game
    for game in (
        Game("FO4", "Fallout 4", ("Fallout4.esm",), ("Fallout4 - *.ba2",)),
        Game("FO3", "Fallout 3 / New Vegas", ("Fallout3.esm", "FalloutNV.esm"), ("Fallout - *.bsa",)),
        Game("SSE", "Skyrim Special Edition", ("Skyrim.esm",), ("Skyrim - *.bsa",)),
        Game("SKYRIM", "Skyrim", ("Skyrim.esm",), ("Skyrim - *.bsa",)),
        Game("FO76", "Fallout 76", ("SeventySix.esm",), ("SeventySix - *.ba2",)),
        Game("SF", "Starfield", ("Starfield.esm",), ("Starfield - *.ba2",)),
    )
}


def data_folder_problem(game, folder):
    """Why ``folder`` is not the Data folder of the game keyed ``game``, or None."""
    return GAMES[game].data_folder_problem(folder)
