"""Blender objects back into a NIF (FO4 or FO3/FNV). Objects an import made keep pointing at
their blocks (``nif_block``) in the source file the import kept on its collection: that file is
the template, edited in place, so what Blender does not show (extra data, controllers, unknown
blocks) is written back unchanged and an untouched import writes back byte for byte. Anything
new is appended as new blocks. Knows bpy and core objects, never file bytes."""

from ..core.nif import NifFile
from ..core.nif.header import Header

GAME_VERSIONS = {
    # game: (user version, bs version)
    "FO4": (12, 130),
    "FO3": (11, 34),
}


def empty_nif(game):
    user_version, bs_version = GAME_VERSIONS[game]
    return NifFile(Header(user_version=user_version, bs_version=bs_version), blocks=[], roots=[])


class NifExporter:
    """The file being written and what the parts writing into it share.

    ``nif``: the NifFile (the template when there is one). ``game``: "FO4" or "FO3".
    ``scale``: Blender units per game unit. ``template``: True when ``nif`` came from an import.
    """

    def __init__(self, game="FO4", scale=1.0, nif=None):
        if game not in GAME_VERSIONS:
            raise ValueError(f"cannot export for {game!r}: only {', '.join(GAME_VERSIONS)}")
        self.game = game
        self.scale = scale
        self.template = nif is not None
        self.nif = nif if nif is not None else empty_nif(game)
        self.messages = []
        self.bone_nodes = {}  # (armature name, bone name) -> NiNode index

    def add(self, block):
        """Append a block; returns its index."""
        self.nif.blocks.append(block)
        return len(self.nif.blocks) - 1

    def warn(self, message):
        if message not in self.messages:
            self.messages.append(message)

    def bone_index(self, armature, bone_name):
        """The NiNode block of an armature's bone (made when first asked for)."""
        return self.bone_nodes[(armature.name, bone_name)]
