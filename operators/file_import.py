"""What the import operators share: several files picked in the file browser (MultiFileImport),
files dropped on the 3D viewport (DropImport, the base of each importer's file handler) and the
report of what imported."""

from pathlib import Path

import bpy
from bpy_extras.io_utils import ImportHelper

from ..io.collection_objects import objects_in
from ..io import schema


def report_import(operator, collections, messages, kind):
    for message in messages:  # an error only when nothing imported: the other files did
        operator.report({"WARNING"} if collections else {"ERROR"}, message)
    if collections:
        cells = sum(
            1 for c in collections if isinstance(c, bpy.types.Collection) and any(schema.PRECOMBINED_OBJECT in o for o in objects_in(c))
        )
        detail = f" ({cells} precombined cell(s))" if cells else ""
        operator.report({"INFO"}, f"Imported {len(collections)} {kind} file(s){detail}")
    return {"FINISHED"} if collections else {"CANCELLED"}


class MultiFileImport(ImportHelper):
    """File browser properties shared by the importers: several files may be picked. Dropped
    files import at once when ``drop_shows_options`` is False, else after the options dialog."""

    files: bpy.props.CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: bpy.props.StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    drop_shows_options = True

    def paths(self):
        if self.files and self.directory:
            return [str(Path(self.directory) / f.name) for f in self.files if f.name]
        return [self.filepath]

    def invoke(self, context, event):
        if not self.drop_shows_options and self.directory and self.files:  # dropped files: nothing to choose
            return self.execute(context)
        return super().invoke(context, event)


class DropImport:
    """Mixin (before bpy.types.FileHandler) for an importer's file handler: files dropped on the
    3D viewport go to its ``bl_import_operator``."""

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"
