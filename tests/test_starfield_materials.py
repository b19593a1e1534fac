"""Starfield .mat materials: every corpus file writes back byte for byte; edits keep every other
value's text (a game-laid-out file stays exactly as the game lays files out); textures are the
texture components' file names and are found loose or archived, whatever their case; damaged
text is refused naming the file and the place."""

import json

import pytest
from archive_writer import write_ba2_gnrl
from raw_starfield import SF, refusal
from support import corpus_files

from precombined_nif.core.archives.data import DataFiles
from precombined_nif.core.materials.mat import MatFile

MATERIALS = corpus_files(f"{SF}/materials/**/*.mat")
HAND_WRITTEN = "Naked_F_Body.mat"  # PyNifly's test file: one object written on one line


def ids(path):
    return path.name


def game_layout(data):
    return json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\r\n").encode()


def test_corpus_holds_starfield_materials(corpus):
    assert len(MATERIALS) == 7


@pytest.mark.parametrize("path", MATERIALS, ids=ids)
def test_reads_and_writes_back(path):
    data = path.read_bytes()
    material = MatFile.from_bytes(data, path)
    assert material.data == json.loads(data) and material.to_bytes() == data
    assert (game_layout(material.data) == data) == (path.name != HAND_WRITTEN)


@pytest.mark.parametrize("path", MATERIALS, ids=ids)
def test_textures_are_the_texture_components_file_names(path):
    data = json.loads(path.read_bytes())
    expected = [c["Data"]["FileName"] for o in data["Objects"] for c in o.get("Components", [])
                if c["Type"] == "BSMaterial::MRTextureFile" and c["Data"].get("FileName")]
    assert MatFile.read(path).textures == expected and expected


@pytest.mark.parametrize("path", MATERIALS, ids=ids)
def test_changed_value_keeps_the_rest_of_the_text(path):
    data = path.read_bytes()
    material = MatFile.from_bytes(data)
    old = material.textures[0]
    component = next(c for _, c in material.components("BSMaterial::MRTextureFile") if c["Data"].get("FileName") == old)
    component["Data"]["FileName"] = "Data\\Textures\\New\\edited_color.dds"
    token = json.dumps(old).encode()
    expected = data.replace(token, b'"Data\\\\Textures\\\\New\\\\edited_color.dds"', 1)
    assert data.count(token) >= 1 and material.to_bytes() == expected


@pytest.mark.parametrize("path", [p for p in MATERIALS if p.name != HAND_WRITTEN], ids=ids)
def test_added_component_is_laid_out_as_the_game_lays_files_out(path):
    material = MatFile.read(path)
    material.data["Objects"][0]["Components"].append(
        {"Type": "BSMaterial::MRTextureFile", "Index": 7, "Data": {"FileName": "Data\\Textures\\x.dds"}})
    material.data["Objects"].append({"ID": "res:00000001:00000002:00000003", "Components": []})
    assert material.to_bytes() == game_layout(material.data)


@pytest.mark.parametrize("path", [p for p in MATERIALS if p.name != HAND_WRITTEN], ids=ids)
def test_removed_members_leave_the_game_layout(path):
    material = MatFile.read(path)
    del material.data["Objects"][0]["Components"][-1]
    material.data["Objects"][-1].pop("Parent", None)
    assert material.to_bytes() == game_layout(material.data)


def test_hand_written_layout_survives_an_edit_elsewhere(corpus):
    path = corpus / SF / "materials/Actors/Human/Naked_Body/Female" / HAND_WRITTEN
    material = MatFile.read(path)
    material.data["Objects"][0]["ID"] = "res:0000000A:0000000B:0000000C"
    material.data["Objects"][0]["Components"].append({"Type": "BSMaterial::ParamBool", "Index": 0, "Data": {"Value": "true"}})
    out = material.to_bytes()
    assert json.loads(out) == material.data
    assert b'"Data": { "x": "0.9", "y": "0.1", "z": "0.1", "w": "1.0" }' in out
    assert b'\r\n        {\r\n          "Type": "BSMaterial::ParamBool",\r\n          "Index": 0,' in out


def test_textures_are_found_loose_or_archived_whatever_their_case(corpus, tmp_path):
    material = MatFile.read(corpus / SF / "materials/Actors/Human/Naked_Body/Female" / HAND_WRITTEN)
    data = tmp_path / "Data"
    (data / "TEXTURES" / "sf" / "Test").mkdir(parents=True)
    (data / "TEXTURES" / "sf" / "Test" / "BODY_COLOR.DDS").write_bytes(b"DDS loose")
    write_ba2_gnrl(data / "Starfield - Textures01.ba2", {"textures/sf/test/body_normal.dds": b"DDS archived"},
                   version=3, compression="lz4")
    files = DataFiles([data])
    found = material.found_textures(files)
    assert found["Data\\Textures\\SF\\test\\body_color.dds"] == data / "TEXTURES" / "sf" / "Test" / "BODY_COLOR.DDS"
    archive, inner = found["Data\\Textures\\SF\\test\\body_normal.dds"]
    assert inner == "textures/sf/test/body_normal.dds" and archive.read(inner) == b"DDS archived"
    assert found["Data\\Textures\\SF\\test\\body_rough.dds"] is None


@pytest.mark.parametrize("text, message", [
    (b'{\r\n  "Objects": [\r\n    {,\r\n  ]\r\n}', "a member name was expected at line 3, column 6"),
    (b'{"Objects": []} extra', "text after the JSON value at line 1, column 17"),
    (b'{"Name": "unterminated}', "Unterminated string"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b"[" * 5000, "values nest too deep"),
], ids=["member", "trailing", "string", "encoding", "depth"])
def test_damaged_text_is_refused_naming_the_file(tmp_path, text, message):
    refused = refusal(MatFile, tmp_path / "bad.mat", text)
    assert refused.startswith(f"{tmp_path / 'bad.mat'}: ") and message in refused
