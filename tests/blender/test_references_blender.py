"""Precombined copies imported with their plugin carry the reference that placed them."""

import importlib
import struct

import numpy as np
from support import corpus_files

PLUGIN = "ck-precombined/AlootHomePlate.esp"
CELLS = corpus_files("ck-precombined/**/*_OC.NIF")


def test_copies_carry_the_refr_placing_them(clean_scene, corpus, addon):
    import bpy

    precombined_import = importlib.import_module(f"{addon.__name__}.operators.precombined_import")
    plugin_module = importlib.import_module(f"{addon.__name__}.core.plugin")
    collections, messages = precombined_import.import_cells(bpy.context, [str(p) for p in CELLS],
                                                            plugins=[str(corpus / PLUGIN)])
    assert len(collections) == len(CELLS)
    with plugin_module.Plugin(corpus / PLUGIN) as plugin:
        copies = [o for c in collections for o in c.all_objects if "precombined_instance" in o]
        named = [o for o in copies if "reference_form_id" in o]
        assert len(copies) == 116 and len(named) == 84
        for obj in named:
            refr = plugin.record(int(obj["reference_form_id"], 16))
            x, y, z, *_ = struct.unpack("<6f", refr.field("DATA"))
            # The copy sits where its REFR is (import scale 1), within 0.01 units.
            assert np.abs(np.array(obj.matrix_world.translation) - (x, y, z)).max() <= 0.01
            assert obj["base_form_id"] == f"{struct.unpack('<I', refr.field('NAME'))[0]:08X}"
            if "base_editor_id" in obj:
                assert obj.name.startswith(obj["base_editor_id"])
    unnamed = [m for m in messages if "match no reference" in m]
    assert len(unnamed) == sum(1 for c in collections
                               if any("precombined_instance" in o and "reference_form_id" not in o for o in c.all_objects))
    assert all("Fallout4.esm" in m for m in unnamed)


def test_the_plugin_is_found_in_the_cells_data_folder(clean_scene, corpus, addon):
    import bpy

    precombined_import = importlib.import_module(f"{addon.__name__}.operators.precombined_import")
    collections, _ = precombined_import.import_cells(bpy.context, [str(CELLS[1])])
    assert sum("reference_form_id" in o for o in collections[0].all_objects) == 10
