"""The imported file kept on its collection: the exporter's template (so what Blender does not
show is written back unchanged)."""

import zlib

from ...core.nif import NifFile

SOURCE_KEY = "nif_source"  # the imported file's bytes, zlib-compressed


def keep_source(collection, data):
    collection[SOURCE_KEY] = zlib.compress(bytes(data), 1)


def source_of(collection):
    """The imported file a collection was made from, or None."""
    data = collection.get(SOURCE_KEY)
    if data is None:
        return None
    # The import's path too: materials and skins recognise blocks of their own file by it.
    return NifFile.from_bytes(bytearray(zlib.decompress(bytes(data))), path=collection.get("nif_path"))


def template_collection(objects):
    """The imported collection most of the objects came from, or None."""
    counts = {}
    for obj in objects:
        for collection in obj.users_collection:
            if SOURCE_KEY in collection:
                counts[collection] = counts.get(collection, 0) + 1
    return max(counts, key=counts.get) if counts else None
