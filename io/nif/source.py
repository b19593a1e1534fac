"""The imported file kept on its collection: the exporter's template (so what Blender does not
show is written back unchanged), and the scale it was imported at (the export's default)."""

import zlib

from ...core.nif import NifFile
from .. import schema



def keep_source(collection, data):
    collection[schema.NIF_SOURCE] = zlib.compress(bytes(data), 1)


def source_of(collection):
    """The imported file a collection was made from, or None."""
    data = collection.get(schema.NIF_SOURCE)
    if data is None:
        return None
    schema.check_version(collection)
    # The import's path too: materials and skins recognise blocks of their own file by it.
    return NifFile.from_bytes(bytearray(zlib.decompress(bytes(data))), path=collection.get(schema.NIF_PATH))


def template_collection(objects, key=schema.NIF_SOURCE):
    """The imported collection (one holding ``key``) most of the objects came from, or None."""
    counts = {}
    for obj in objects:
        for collection in obj.users_collection:
            if key in collection:
                counts[collection] = counts.get(collection, 0) + 1
    return max(counts, key=counts.get) if counts else None


def keep_scale(collection, scale):
    collection[schema.NIF_SCALE] = float(scale)


def import_scale(objects):
    """The scale (Blender units per game unit) the objects were imported at, what their export
    writes back by default: 1.0 for objects of no import."""
    collection = template_collection(objects, schema.NIF_SCALE)
    return float(collection[schema.NIF_SCALE]) if collection is not None else 1.0
