"""What the add-on's panels share: each is a panel of the Properties editor's Object tab."""


class ObjectPanel:
    """Mixin (before bpy.types.Panel) for a panel of the Object tab, shown for any active object."""

    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None
