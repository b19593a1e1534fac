"""The Creation Kit's rules in Blender: exporting a static Fallout 4 model warns when the CK would
crash on it or leave it uncombined, naming the shape and the rule; the Precombined panel shows
an imported object's verdict and a precombined copy's (its reference's model's)."""

import importlib
import os

import ck_meshes
from nif_rewriter import RawNif
from scene import cube, imported, panel_drawn
from support import corpus_files

CELL = next(p for p in corpus_files("ck-precombined/**/*_OC.NIF") if "1200ADBE" in p.name.upper())


def ck_messages(messages):
    return [m for m in messages if m.startswith("Creation Kit")]


def test_exporting_a_full_precision_static_warns_and_a_half_precision_one_does_not(clean_scene, addon, tmp_path):
    exporter = importlib.import_module(f"{addon.__name__}.io.nif.exporter")
    box = cube("Box")
    _, messages = exporter.export_nif(str(tmp_path / "half.nif"), [box], game="FO4")
    assert ck_messages(messages) == []
    _, messages = exporter.export_nif(str(tmp_path / "full.nif"), [box], game="FO4", full_precision=True)
    written = RawNif.read(tmp_path / "full.nif")
    (index,) = written.indices_of("BSTriShape")
    assert ck_messages(messages) == [f"Creation Kit precombines: full-precision vertices in BSTriShape 'Box' (block "
                                     f"{index}): the CK crashes on it"]


def test_exporting_an_animated_static_warns_it_stays_uncombined(clean_scene, addon, corpus, tmp_path):
    exporter = importlib.import_module(f"{addon.__name__}.io.nif.exporter")
    nif = ck_meshes.golden(corpus)
    block = ck_meshes.add_bsx(nif, 0x1)
    collection = imported(ck_meshes.write(nif, tmp_path / "Animated.nif"))
    _, messages = exporter.export_nif(str(tmp_path / "out.nif"), list(collection.all_objects))
    assert ck_messages(messages) == [f"Creation Kit precombines: BSXFlags 0x1 Animated in BSXFlags 'BSX' (block {block}): "
                                     "the CK leaves it uncombined"]


def labels(panel, obj):
    return [text for kind, text in panel_drawn(panel.OBJECT_PT_precombined, obj) if kind == "label"]


def test_the_panel_shows_an_imported_object_s_verdict_its_own_reason_first(clean_scene, addon, corpus, tmp_path):
    panel = importlib.import_module(f"{addon.__name__}.ui.precombined_panel")
    nif = ck_meshes.golden(corpus)
    ck_meshes.full_precision(nif, ck_meshes.OTHER_SHAPE)
    ck_meshes.set_link(nif, ck_meshes.SHAPE, 1, -1)
    collection = imported(ck_meshes.write(nif, tmp_path / "Broken.nif"))
    shapes = {obj.get("nif_block"): obj for obj in collection.all_objects}
    first = labels(panel, shapes[ck_meshes.SHAPE])
    at = first.index("Creation Kit: this file: crashes the CK")
    assert first[at + 1:at + 3] == ["no shader property in BSTriShape 'cylinder_1' (block 3): the CK crashes on it",
                                    "full-precision vertices in BSTriShape 'cylinder_2' (block 6): the CK crashes on it"]
    other = labels(panel, shapes[ck_meshes.OTHER_SHAPE])
    assert other[other.index("Creation Kit: this file: crashes the CK") + 1].startswith("full-precision vertices")
    twin = imported(ck_meshes.write(ck_meshes.golden(corpus), tmp_path / "Twin.nif"))
    assert "Creation Kit: this file: combinable" in labels(panel, next(iter(twin.all_objects)))


def test_the_panel_shows_a_copy_s_model_verdict(clean_scene, addon, corpus, tmp_path):
    """A copy whose reference's model the import learnt (io.plugin.references sets base_model):
    the model is read from the cell's Data folder."""
    import bpy

    folder = tmp_path / "Data"
    (folder / "meshes/precombined").mkdir(parents=True)
    os.symlink(CELL, folder / "meshes/precombined" / CELL.name)
    broken = ck_meshes.golden(corpus)
    ck_meshes.full_precision(broken, ck_meshes.SHAPE)
    ck_meshes.write(broken, folder / "meshes/Test/Full.nif")
    panel = importlib.import_module(f"{addon.__name__}.ui.precombined_panel")
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), _ = file_import.import_cells(bpy.context, [str(folder / "meshes/precombined" / CELL.name)],
                                                find_plugin=False)
    copy = next(o for o in collection.all_objects if "precombined_instance" in o)
    assert "Creation Kit: this copy's model is unknown (import the cell with its plugin)" in labels(panel, copy)
    copy["base_model"] = "Test\\Full.nif"
    drawn = labels(panel, copy)
    at = drawn.index("Creation Kit: its model Test\\Full.nif: crashes the CK")
    assert drawn[at + 1] == "full-precision vertices in BSTriShape 'cylinder_1' (block 3): the CK crashes on it"
    copy["base_model"] = "Test\\Absent.nif"
    assert "Creation Kit: its model Test\\Absent.nif is not in the cell's Data folder" in labels(panel, copy)
