"""Add-on preferences: where the user's game Data folders are."""

import bpy

# The add-on's package name, whether installed as an extension (bl_ext.<repo>.precombined_nif)
# or loaded by cli.py.
ADDON_ID = __package__.rpartition(".")[0]


class PrecombinedNifPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    fo4_data: bpy.props.StringProperty(
        name="Fallout 4 Data",
        description="The game's Data folder: textures, materials and .csg geometry are looked up there",
        subtype="DIR_PATH",
    )
    fnv_data: bpy.props.StringProperty(
        name="Fallout 3 / New Vegas Data",
        description="The game's Data folder: textures are looked up there",
        subtype="DIR_PATH",
    )

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "fo4_data")
        layout.prop(self, "fnv_data")


def get(context):
    """The preferences of this add-on, or None when it is not enabled as an add-on."""
    addon = context.preferences.addons.get(ADDON_ID)
    return addon.preferences if addon else None


def data_folders(context, game):
    """The Data folders where a file of ``game`` finds its textures (empty when unset)."""
    settings = get(context)
    if settings is None:
        return []
    folder = settings.fnv_data if game == "FO3" else settings.fo4_data
    return [folder] if folder else []


def register():
    bpy.utils.register_class(PrecombinedNifPreferences)


def unregister():
    bpy.utils.unregister_class(PrecombinedNifPreferences)
