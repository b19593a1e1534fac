"""Mesh properties > Shape Keys > TRI Morphs: the .tri files the mesh's morphs came from, which
.tri the active shape key is written to, and where new shape keys go."""

from pathlib import Path

import bpy

from ..core.tri import naming
from ..io.tri.roles import AUTO, key_role, new_role, new_role_choice, sources
from ..operators.tri import OBJECT_OT_tri_morph_role, ROLE_ITEMS

LABELS = {role: label for role, label, _ in ROLE_ITEMS}


class DATA_PT_tri_morphs(bpy.types.Panel):
    bl_label = "TRI Morphs"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "data"
    bl_parent_id = "DATA_PT_shape_keys"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "MESH"

    def draw(self, context):
        layout = self.layout
        obj = context.object
        for role, source in sources(obj).items():
            layout.label(text=f"{LABELS[role]}: {Path(source['path']).name}", icon="FILE")
        key = obj.active_shape_key
        if key is not None and key != obj.data.shape_keys.reference_key:
            role, read = key_role(obj, key.name)
            where = LABELS[role] if role else "not written"
            layout.label(text=f"{key.name}: {where}" + (" (as read)" if read else ""))
            self._choices(layout, "ACTIVE", "Write Active Key To")
        target = new_role(obj)
        as_read = " (as read)" if new_role_choice(obj) == AUTO else ""
        layout.label(text=f"New keys: {LABELS[target] if target else 'not written'}{as_read}")
        self._choices(layout, "NEW", "Write New Keys To")

    @staticmethod
    def _choices(layout, which, text):
        row = layout.row(align=True)
        row.label(text=text)
        roles = naming.ROLES if which == "ACTIVE" else (AUTO, *naming.ROLES)
        for role in roles:
            operator = row.operator(OBJECT_OT_tri_morph_role.bl_idname, text=LABELS.get(role, "As Read"))
            operator.which, operator.role = which, role


def register():
    bpy.utils.register_class(DATA_PT_tri_morphs)


def unregister():
    bpy.utils.unregister_class(DATA_PT_tri_morphs)
