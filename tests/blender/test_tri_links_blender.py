"""An untouched export writes the files the import read and nothing more: a BodySlide .tri found
under a Skyrim SE body NIF's name (no BODYTRI names it) is written back there as it was and the
NIF gets no BODYTRI; a corpus head's FaceGen .tri comes back alone. The export dialog says which
.tri files the morphs go to and whether a BODYTRI is added (io.tri.exporter.morph_links). The
body's .tri is built by tests/raw_tri.py; offsets are checked against its struct reader."""

import importlib
import shutil

import numpy as np
import pytest
import raw_tri
from nif_rewriter import RawNif
from scene import export_file, imported
from support import CORPUS

BASE = CORPUS / "pynifly/tests/tests"
BODY = "SkyrimSE/malebody_1.nif"  # a Skyrim SE body: BSTriShape "MaleBody", no BODYTRI
# two sliders of the body's shape: (name, scale, [(vertex, i16 offsets)])
SLIDERS = [("Belly", 0.001, [(0, (1000, 0, 0)), (5, (0, -300, 20))]), ("Thin", 0.0005, [(7, (0, 0, 4000))])]


def morph_links(objects, name):
    """What the export dialog says (io.tri.exporter.morph_links of the add-on as installed)."""
    import addon_utils

    (module,) = [m for m in addon_utils.modules() if m.__name__.endswith(".precombined_nif")]
    return importlib.import_module(f"{module.__name__}.io.tri.exporter").morph_links(objects, name)


def body_folder(folder):
    """(NIF path, .tri bytes): the corpus body with a BodySlide .tri of its name beside it."""
    folder.mkdir()
    shutil.copy(BASE / BODY, folder / "femalebody_1.nif")
    data = raw_tri.bodyslide_bytes([("MaleBody", SLIDERS)])
    (folder / "femalebody_1.tri").write_bytes(data)
    return folder / "femalebody_1.nif", data


def body_object(collection):
    (obj,) = [o for o in collection.all_objects if o.type == "MESH" and o.data.shape_keys is not None]
    return obj


def offsets(obj, name):
    keys = obj.data.shape_keys
    co, basis = (np.empty(3 * len(obj.data.vertices), np.float32) for _ in range(2))
    keys.key_blocks[name].data.foreach_get("co", co)
    keys.reference_key.data.foreach_get("co", basis)
    return (co - basis).reshape(-1, 3)


def extra_data_names(path):
    raw = RawNif.read(path)
    return [raw.strings[int.from_bytes(raw.blocks[i][:4], "little")] for i in raw.indices_of("NiStringExtraData")]


def test_a_bodyslide_tri_found_by_name_comes_back_alone_and_unlinked(clean_scene, tmp_path):
    path, data = body_folder(tmp_path / "in")
    collection = imported(path)
    obj = body_object(collection)
    read = raw_tri.bodyslide(data)["shapes"]["MaleBody"]
    for name, moved in read.items():
        expected = np.zeros((len(obj.data.vertices), 3))
        for vertex, offset in moved.items():
            expected[vertex] = offset
        np.testing.assert_allclose(offsets(obj, name), expected, atol=2e-5)  # a key holds reference + offset in float32
    assert morph_links([obj], "femalebody_1") == ["BodySlide morphs: femalebody_1.tri, found by the NIF's name: no BODYTRI is added"]
    out = tmp_path / "out" / "femalebody_1.nif"
    out.parent.mkdir()
    export_file(collection, out)
    assert out.read_bytes() == path.read_bytes() and "BODYTRI" not in extra_data_names(out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["femalebody_1.nif", "femalebody_1.tri"]
    assert (out.parent / "femalebody_1.tri").read_bytes() == data


def test_an_edited_bodyslide_key_found_by_name_goes_back_by_name(clean_scene, tmp_path):
    path, data = body_folder(tmp_path / "in")
    collection = imported(path)
    obj = body_object(collection)
    key = obj.data.shape_keys.key_blocks["Thin"]
    key.data[9].co = tuple(np.array(key.data[9].co) + (0.0, 0.25, 0.0))
    out = tmp_path / "out" / "renamed.nif"
    out.parent.mkdir()
    export_file(collection, out)
    assert "BODYTRI" not in extra_data_names(out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["renamed.nif", "renamed.tri"]
    written = raw_tri.bodyslide((out.parent / "renamed.tri").read_bytes())["shapes"]["MaleBody"]
    stored = raw_tri.bodyslide(data)["shapes"]["MaleBody"]
    assert set(written["Belly"]) == set(stored["Belly"]) and set(written["Thin"]) == {7, 9}
    assert all(np.allclose(written["Belly"][vertex], offset, atol=1e-4) for vertex, offset in stored["Belly"].items())
    assert np.allclose(written["Thin"][9], (0, 0.25, 0), atol=1e-4) and np.allclose(written["Thin"][7], stored["Thin"][7], atol=1e-4)


@pytest.mark.parametrize("nif, tri, line", [
    ("SkyrimSE/malehead.nif", "SkyrimSE/malehead.tri", "Expression morphs: malehead.tri"),
    ("SkyrimSE/Anchor.nif", "SkyrimSE/Anchor.tri", "Expression morphs: Anchor.tri"),
    ("FO4/BTBaseMaleBody.nif", "FO4/BaseMaleBody.tri",
     "BodySlide morphs: BTBaseMaleBody.tri, or where the NIF's BODYTRI names it"),
])
def test_a_corpus_mesh_s_tri_comes_back_alone(clean_scene, tmp_path, nif, tri, line):
    """Untouched, the NIF and the one .tri read are written, the same bytes; nothing else."""
    collection = imported(BASE / nif)
    obj = next(o for o in collection.all_objects if o.type == "MESH" and o.data.shape_keys is not None)
    assert morph_links([obj], (BASE / nif).stem) == [line]
    out = tmp_path / "out" / (BASE / nif).name
    out.parent.mkdir()
    export_file(collection, out)
    assert out.read_bytes() == (BASE / nif).read_bytes()
    assert sorted(p.name for p in out.parent.glob("*.tri")) == [(BASE / tri).name]
    assert (out.parent / (BASE / tri).name).read_bytes() == (BASE / tri).read_bytes()


def test_the_dialog_says_a_new_bodyslide_file_is_linked(clean_scene):
    import bpy

    from scene import cube

    obj = cube("Body")
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Belly", from_mix=False)
    bpy.context.view_layer.objects.active = obj
    assert morph_links([obj], "Body") == []  # no .tri, and new keys go nowhere yet
    bpy.ops.object.tri_morph_role(which="NEW", role="BODYSLIDE")
    assert morph_links([obj], "Body") == ["BodySlide morphs: Body.tri, a BODYTRI naming it is added to the NIF"]
    bpy.ops.object.tri_morph_role(which="NEW", role="CHARGEN")
    assert morph_links([obj], "Body") == ["Character creation morphs: BodyChargen.tri"]
