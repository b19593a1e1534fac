"""Many files in one import (issue 44): each finished file's collection waits out of the view
layer while the next import; at the end every one is back, its objects hidden and selected as
an import of the file alone leaves them, the active object kept."""

import pytest


def states(collection):
    import bpy

    layer = bpy.context.view_layer
    layer.update()
    return sorted((obj.name.split(".")[0], obj.hide_get(), obj.visible_get()) for obj in collection.all_objects
                  if obj.name in layer.objects)


@pytest.mark.parametrize("count", [10])
def test_files_imported_together_are_as_imported_alone(clean_scene, corpus, count):
    import bpy

    from precombined_nif.io.file_import import import_cells

    # FO4 files, and Starfield ones whose inner LODs are hidden objects
    paths = [str(p) for p in sorted((corpus / "pynifly/tests/tests/FO4").glob("*.nif"))[:count]]
    paths += [str(p) for p in sorted((corpus / "pynifly/tests/tests/SF").rglob("*.nif")) if p.name != "skeleton.nif"][:3]
    alone = {}
    for path in paths:
        (collection,), _ = import_cells(bpy.context, [path])
        alone[collection.name] = states(collection)
        bpy.data.collections.remove(collection)
    collections, _ = import_cells(bpy.context, paths)
    layers = bpy.context.view_layer.layer_collection.children
    assert [layers[c.name].exclude for c in collections] == [False] * len(paths)
    assert any(hidden for objects in alone.values() for _, hidden, _ in objects)
    for collection in collections:
        assert states(collection) == alone[collection.name.split(".")[0]], collection.name
