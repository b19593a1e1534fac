"""Starfield morph.dat: the corpus file's per-morph deltas match a struct read of its rows and
masks, it writes back byte for byte and is rebuilt identically from its deltas; edits write and
read back; damaged files are refused naming the file."""

import struct

import numpy as np
import pytest
from raw_starfield import SF, read_mesh, read_morphs, refusal

from precombined_nif.core.starfield.morphs import MorphFile

MORPHS = f"{SF}/morphs/female_chargen_body_morph.dat"


def test_deltas_match_the_struct_reader(corpus):
    data = (corpus / MORPHS).read_bytes()
    morphs = MorphFile.from_bytes(data)
    names, count, expected = read_morphs(data)
    assert morphs.names == names == ["Overweight", "Thin", "Strong"] and len(morphs.vertices) == count
    dense = np.zeros((3, count, 3), np.float32)
    normals = np.zeros((3, count, 3), np.float32)
    for (morph, vertex), (delta, normal) in expected.items():
        dense[morph, vertex], normals[morph, vertex] = delta, normal
    np.testing.assert_array_equal(morphs.deltas, dense)
    np.testing.assert_allclose(morphs.normal_deltas, normals, atol=1e-6)
    assert len(expected) == 19290


def test_morphs_fit_the_body_mesh(corpus):
    """The chargen morphs move the body's 6616 vertices, by up to a tenth of its units."""
    morphs = MorphFile.read(corpus / MORPHS)
    mesh = read_mesh((corpus / SF / "body_skinned.mesh").read_bytes())
    assert len(morphs.vertices) == len(mesh["positions"])
    assert 0.05 < np.abs(morphs.deltas).max() < 0.1


def test_writes_back_and_rebuilds_from_its_deltas(corpus):
    data = (corpus / MORPHS).read_bytes()
    morphs = MorphFile.from_bytes(data)
    assert morphs.to_bytes() == data
    rebuilt = MorphFile.from_deltas(morphs.names, morphs.deltas, morphs.normal_deltas, morphs.tangent_deltas)
    assert rebuilt.to_bytes() == data


def test_edited_deltas_write_and_read_back(corpus):
    morphs = MorphFile.read(corpus / MORPHS)
    deltas = morphs.deltas
    untouched = np.flatnonzero(~deltas[2].any(axis=1))[0]  # a vertex Strong leaves alone
    deltas[2, untouched] = (0.01, -0.02, 0.03)
    deltas[0, 5] = 0
    edited = MorphFile.from_deltas([*morphs.names, "Extra"], np.concatenate([deltas, deltas[:1] * 2]))
    names, count, read = read_morphs(edited.to_bytes())
    assert names[-1] == "Extra" and count == 6616
    assert read[2, untouched][0] == pytest.approx((0.01, -0.02, 0.03), abs=1e-4)
    assert (0, 5) not in read and (3, 6) in read
    np.testing.assert_array_equal(MorphFile.from_bytes(edited.to_bytes()).deltas[3], (deltas[0] * 2).astype(np.float16))


def damaged_cases():
    good = MorphFile.from_deltas(["A", "B"], np.float32([[[0.1, 0, 0], [0, 0, 0]], [[0, 0.2, 0], [0, 0, 0.3]]])).to_bytes()
    rows_at = 4 + 12 + 5 + 5 + 8
    yield "truncated", good[:-3], "needs"
    yield "magic", b"MDAX" + good[4:], "not a morph file"
    yield "vertex counts differ", good[:8] + struct.pack("<I", 3) + good[12:], "says 3 vertices, then lists 2"
    mask_at = rows_at + 3 * 16 + 20 + 4
    yield "morph past the names", good[:mask_at] + struct.pack("<I", 0b111) + good[mask_at + 4:], "past the 2 named"
    first_at = rows_at + 3 * 16 + 20
    yield "rows past the end", good[:first_at] + struct.pack("<I", 3) + good[first_at + 4:], "run past the 3 rows"
    yield "hostile row count", good[:rows_at - 8] + struct.pack("<I", 0x7FFFFFFF) + good[rows_at - 4:], "morph rows"


@pytest.mark.parametrize("name, data, message", damaged_cases(), ids=[c[0] for c in damaged_cases()])
def test_damaged_files_are_refused_naming_the_file(tmp_path, name, data, message):
    text = refusal(MorphFile, tmp_path / "morph.dat", data)
    assert text.startswith(f"{tmp_path / 'morph.dat'}") and message in text
