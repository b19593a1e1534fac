"""Material codec: the FO3 property blocks, block fields through custom-property values and
back, the look a node tree shows and the way back, texture paths under Data folders."""

import copy

import numpy as np
import pytest
from support import corpus_files

from precombined_nif.core.data_paths import data_relative
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif import materials as m
from precombined_nif.core.nif.header import Header
from precombined_nif.core.nif.versions import WRITTEN
from precombined_nif.core.nif.blocks.properties import NiSpecularProperty, NiStencilProperty
from precombined_nif.core.stream import WriteStream

EMIT = "niftools/todo/old_nifs/fo3/test_emit.nif"


def block_bytes(nif, block):
    s = WriteStream(nif.header, big_endian=nif.header.big_endian)
    block.sync(s)
    return bytes(s.out)


def test_stencil_and_specular_properties_are_typed(corpus):
    nif = NifFile.read(corpus / EMIT)
    stencil, specular = nif.blocks[2], nif.blocks[3]
    assert isinstance(stencil, NiStencilProperty) and isinstance(specular, NiSpecularProperty)
    assert (stencil.flags, stencil.stencil_ref, stencil.stencil_mask, specular.flags) == (0, 0, 0xFFFFFFFF, 1)
    original = (corpus / EMIT).read_bytes()
    nif.header.little_endian = 0
    swapped = NifFile.from_bytes(nif.to_bytes())
    assert swapped.blocks[2].stencil_mask == 0xFFFFFFFF and swapped.blocks[2].flags == 0 and swapped.blocks[3].flags == 1
    swapped.header.little_endian = 1
    assert swapped.to_bytes() == original


def material_shapes():
    for path in corpus_files("**/*.nif"):
        if path.name == "Corrupt.nif":
            continue
        nif = NifFile.read(path)
        for block in nif.blocks:
            if hasattr(block, "shader_property") or (nif.header.bs_version <= 34 and len(getattr(block, "properties", ()))):
                found = m.material_blocks(nif, block)
                if found:
                    yield nif, block, found


def test_fields_survive_custom_properties_exactly(corpus):
    """A new block given the decoded fields (and the old references) writes the same bytes."""
    count = 0
    for nif, _, found in material_shapes():
        props = m.record_to_props(m.read_record(nif, found))
        record = m.record_from_props(copy.deepcopy(props))
        for role, index in found.items():
            old = nif.blocks[index]
            entry = record[role]
            new = m.BLOCK_CLASSES[entry["type"]]()
            m.apply_fields(new, {k: v for k, v in entry.items() if k != "type"})
            for ref in m.REF_FIELDS & vars(old).keys():
                setattr(new, ref, getattr(old, ref))
            assert block_bytes(nif, new) == block_bytes(nif, old), (nif.path, index)
            count += 1
    assert count > 300


def test_unchanged_look_changes_nothing(corpus):
    for nif, _, found in material_shapes():
        record = m.read_record(nif, found)
        bs = nif.header.bs_version
        shown = m.look(record, bs)
        assert m.changed_look(record, shown, bs) == {}
        # Texture paths compare as the game does: case and slashes do not matter.
        shown["textures"] = {role: path.upper().replace("\\", "/") for role, path in shown["textures"].items()}
        assert m.changed_look(record, shown, bs) == {}


def test_look_edits_reach_the_fields(corpus):
    nif = NifFile.read(corpus / "havok/V111SafetyPosterSmall01.nif")
    shape = next(b for b in nif.blocks if b.type_name == "BSTriShape")
    record = m.read_record(nif, m.material_blocks(nif, shape))
    before = copy.deepcopy(record)
    shown = m.look(record, 130)
    shown.update(roughness=0.25, two_sided=True, alpha_test=True, threshold=100, emission=(1.0, 0.5, 0.0))
    shown["textures"] = dict(shown["textures"], glow="textures\\glow_g.dds")
    changes = m.changed_look(record, shown, 130)
    assert set(changes) == {"roughness", "two_sided", "alpha_test", "threshold", "emission", "textures"}
    assert changes["textures"] == {"glow": "textures\\glow_g.dds"}
    m.apply_look(record, changes, 130)
    shader = record["shader"]
    assert shader["smoothness"] == 0.75 and shader["emissive_color"] == (1.0, 0.5, 0.0)
    assert shader["shader_flags_2"] == before["shader"]["shader_flags_2"] | m.DOUBLE_SIDED
    assert record["textures"][2] == "textures\\glow_g.dds" and record["textures"][7] == before["textures"][7]
    assert record["alpha"]["flags"] & (m.ALPHA_TEST | m.ALPHA_BLEND) == m.ALPHA_TEST and record["alpha"]["threshold"] == 100
    assert {k: v for k, v in shader.items() if k not in ("smoothness", "emissive_color", "shader_flags_2")} == {
        k: v for k, v in before["shader"].items() if k not in ("smoothness", "emissive_color", "shader_flags_2")
    }


def test_fo3_two_sided_is_a_stencil_property(corpus):
    nif = NifFile.read(corpus / "pynifly/tests/tests/FONV/outfitf_simple.nif")
    record = m.read_record(nif, m.material_blocks(nif, nif.blocks[1]))
    assert "stencil" not in record and not m.look(record, 34)["two_sided"]
    m.apply_look(record, {"two_sided": True}, 34)
    assert record["stencil"]["flags"] & m.STENCIL_DRAW_MODE == m.STENCIL_DRAW_BOTH
    assert m.look(record, 34)["two_sided"]
    m.apply_look(record, {"two_sided": False}, 34)
    assert record["stencil"]["flags"] & m.STENCIL_DRAW_MODE == m.STENCIL_DRAW_CCW


@pytest.mark.parametrize("game, shader", [("FO4", "BSLightingShaderProperty"), ("FO3", "BSShaderPPLightingProperty"),
                                          ("SKYRIM", "BSLightingShaderProperty")])
def test_new_records_hold_every_field_of_the_game(game, shader):
    record = m.new_record(game, skinned=True)
    assert record["shader"]["type"] == shader and record["shader"]["shader_flags_1"] & m.SKINNED
    assert len(record["textures"]) == m.TEXTURE_SET_SIZE[game]
    block = m.BLOCK_CLASSES[shader]()
    block.sync(WriteStream(Header(bs_version=WRITTEN[game][1])))  # every field set
    assert set(record["shader"]) - {"type"} <= set(vars(block))
    assert {"FO4": "smoothness", "FO3": "shade_flags", "SKYRIM": "glossiness"}[game] in record["shader"]


def test_new_skyrim_le_records_use_vertex_colours_only_for_shapes_having_them():
    """Skyrim LE's statics: 0x8021 in shader flags 2 with vertex colours (dockstepsdownend01,
    farmhouse01), 0x8001 without (cheesewedge01, draugr)."""
    assert m.new_record("SKYRIM")["shader"]["shader_flags_2"] == 0x8001
    assert m.new_record("SKYRIM", colors=True)["shader"]["shader_flags_2"] == 0x8021
    assert m.new_record("SSE")["shader"]["shader_flags_2"] == 0x8021


def test_new_fo76_record_names_its_material_file_and_holds_nothing_else():
    record = m.new_record("FO76", skinned=True, material_path="Materials\\Test\\Crate.bgsm")
    assert record["shader"] == {"type": "BSLightingShaderProperty", "name": "Materials\\Test\\Crate.bgsm"}
    assert len(record["textures"]) == m.TEXTURE_SET_SIZE["FO76"] == 13
    # two-sidedness is the material file's: no stencil property, unlike FO3's
    m.apply_look(record, {"two_sided": True}, 155)
    assert set(record) == {"shader", "textures"}


def test_encoded_values_fit_id_properties():
    values = m.encode_values(
        {"shader_flags_1": 0x80400201, "stencil_mask": 0xFFFFFFFF, "shader_type": 1, "uv_scale": (1.0, 2.0), "sf1": np.array([0xDEADBEEF], np.uint32)}
    )
    assert values == {"shader_flags_1": "0x80400201", "stencil_mask": "0xFFFFFFFF", "shader_type": 1, "uv_scale": [1.0, 2.0], "sf1": ["0xDEADBEEF"]}
    decoded = m.decode_fields("BSLightingShaderProperty", {**values, "no_such_field": 1})
    assert decoded["shader_flags_1"] == 0x80400201 and decoded["uv_scale"] == (1.0, 2.0)
    assert decoded["sf1"].tolist() == [0xDEADBEEF] and "no_such_field" not in decoded and "stencil_mask" not in decoded


def test_texture_paths_resolve_case_insensitively(tmp_path):
    data = tmp_path / "Data"
    (data / "Textures/Clothes/Residents").mkdir(parents=True)
    target = data / "Textures/Clothes/Residents/Resident6Body_D.DDS"
    target.write_bytes(b"x")
    (data / "Textures/Clothes/Residents/dir_d.dds").mkdir()
    finder = m.TextureFinder([str(tmp_path / "missing"), "", str(data)])
    assert finder.find("textures\\clothes\\residents\\resident6body_d.dds") == target
    assert finder.find("clothes/residents/RESIDENT6BODY_d.dds") == target  # no "textures\"
    assert finder.find("Data\\Textures\\Clothes\\Residents\\resident6body_d.dds") == target
    assert finder.find("textures\\clothes\\residents\\dir_d.dds") is None  # a folder, not a file
    assert finder.find("textures\\clothes\\other.dds") is None and finder.find("") is None
    assert m.game_texture_path(target) == "Textures\\Clothes\\Residents\\Resident6Body_D.DDS"
    loose = tmp_path / "loose.dds"
    assert m.game_texture_path(loose, [str(tmp_path)]) == "loose.dds"
    assert m.game_texture_path(loose) is None
    assert m.same_texture("Textures\\A\\b.dds", "a/B.DDS") and not m.same_texture("a/b.dds", "a/c.dds")
    # The Creation Kit's absolute paths (corpus ck-precombined shader names) count from materials\ or textures\.
    ck = "C:\\Projects\\Fallout4\\Build\\PC\\Data\\textures\\Clothes\\Residents\\resident6body_d.dds"
    assert finder.find(ck) == target
    bgsm = "C:\\projects\\Fallout4\\Build\\PC\\Data\\materials\\SetDressing\\Diner\\DinerQuad01.BGSM"
    assert data_relative(bgsm) == "materials\\SetDressing\\Diner\\DinerQuad01.BGSM"
    assert data_relative("Materials/interiors/x.bgsm") == "Materials\\interiors\\x.bgsm"
    assert data_relative("Data\\textures\\a.dds") == "textures\\a.dds"
