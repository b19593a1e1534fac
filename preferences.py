"""Add-on preferences: where the user's game Data folders are. The operators read them (as
``folders``) and draw them in their options; the add-on registers them."""

import bpy

from .core.games import GAMES
from .io.file_import import NO_FOLDERS, UserFolders

# The add-on's package name, whether installed as an extension (bl_ext.<repo>.precombined_nif)
# or loaded by cli.py.
ADDON_ID = __package__

# The preference holding each game's Data folder (the first two names predate the others and
# stay, so saved preferences keep their folders).
SETTINGS = {"FO4": "fo4_data", "FO3": "fnv_data", "SSE": "sse_data", "SKYRIM": "skyrim_data", "FO76": "fo76_data",
            "SF": "sf_data"}


def _folder(game, looked_up):
    return bpy.props.StringProperty(
        name=f"{GAMES[game].label} Data",
        description=f"The game's Data folder: {looked_up} are looked up there",
        subtype="DIR_PATH",
    )


class PrecombinedNifPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    fo4_data: _folder("FO4", "textures, materials, .csg geometry and (exports) a cell's plugin, previs file and .cdx")
    fnv_data: _folder("FO3", "textures")
    sse_data: _folder("SSE", "textures")
    skyrim_data: _folder("SKYRIM", "textures")
    fo76_data: _folder("FO76", "textures")
    sf_data: _folder("SF", "meshes (.mesh), materials (.mat), textures and the human skeleton")

    plugins_txt: bpy.props.StringProperty(
        name="Fallout 4 plugins.txt",
        description="The load order imported precombined cells are checked against (the game's own masters first, "
        "then the active '*' lines; empty: the Data folder's plugins, masters first, by name)",
        subtype="FILE_PATH",
    )

    cache_folder: bpy.props.StringProperty(
        name="Archive Cache",
        description="Where files taken from the Data folders' archives (textures) are extracted once, so Blender "
        "can load them (empty: a folder in the system's temporary folder)",
        subtype="DIR_PATH",
    )

    def draw(self, context):
        draw_data_folders(self.layout, self, SETTINGS)
        self.layout.prop(self, "plugins_txt")
        self.layout.prop(self, "cache_folder")


def draw_data_folders(layout, settings, games):
    """Each game's Data folder field, with what is wrong with it under it."""
    for game in games:
        layout.prop(settings, SETTINGS[game])
        problem = folder_problem(settings, game)
        if problem:
            layout.label(text=problem, icon="ERROR")


def draw_import_folders(layout, context, games):
    """In an import's options: the Data folders of ``games`` it looks in, editable there too."""
    settings = get(context)
    if settings is None:
        return
    box = layout.box()
    box.label(text="Data folders (add-on preferences)")
    draw_data_folders(box, settings, games)


def folder_problem(settings, game):
    """Why the folder set for ``game`` is not its Data folder, or None (also when unset)."""
    return GAMES[game].data_folder_problem(bpy.path.abspath(getattr(settings, SETTINGS[game])))


def get(context):
    """The preferences of this add-on, or None when it is not enabled as an add-on."""
    addon = context.preferences.addons.get(ADDON_ID)
    return addon.preferences if addon else None


def folders(context):
    """The UserFolders the preferences set (none when the add-on is not enabled, as under cli.py)."""
    settings = get(context)
    if settings is None:
        return NO_FOLDERS
    load_order = None
    if settings.fo4_data:
        load_order = (bpy.path.abspath(settings.fo4_data), bpy.path.abspath(settings.plugins_txt) or None)
    return UserFolders({game: getattr(settings, name) for game, name in SETTINGS.items()}, settings.cache_folder or None,
                       load_order)


def register():
    bpy.utils.register_class(PrecombinedNifPreferences)


def unregister():
    bpy.utils.unregister_class(PrecombinedNifPreferences)
