""".tri codec without Blender: every corpus .tri read and written back byte-identical, its morphs
checked against an independent struct reader (raw_tri), layouts the corpus lacks built to the
public descriptions, damaged files, the games' naming, and the command line."""

import json
import random
import struct
import subprocess
import sys

import numpy as np
import pytest
import raw_tri
from support import ROOT, corpus_files
from test_fuzz import run_case, traced  # noqa: F401 - the fixture the damage tests use

from precombined_nif.core.archives.data import read_path
from precombined_nif.core.errors import FormatError
from precombined_nif.core.formats import read_file
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.extra_data import NiStringExtraData
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape
from precombined_nif.core.tri import BodySlideTri, FaceGenTri, ModifierMorph, read_tri, tri_from_bytes
from precombined_nif.core.tri import naming
from precombined_nif.core.tri.facegen import DifferenceMorph
from precombined_nif.core.tri.quantize import dequantize, quantize

TRI_FILES = corpus_files("pynifly/tests/tests/*/*.tri")
# Counts read by hand from the headers (corpus README lists the files).
KNOWN = {
    "FO4/BaseMaleBody.tri": ("bodyslide", {"BaseMaleBody": 50}),
    "FO4/TEST_SEGMENTS_EMPTY.tri": ("bodyslide", {"ArmorUnder": 57}),
    "FO4/BaseMaleHead.tri": ("facegen", (1690, 3231, 1690, 49, 0, 0)),
    "FO4/malehead.tri": ("facegen", (898, 1694, 898, 44, 0, 0)),
    "FONV/headfemale_willow.tri": ("facegen", (1211, 2294, 1211, 38, 8, 1078)),
    "Skyrim/bad_tri.tri": ("facegen", (6711, 12902, 7259, 3, 0, 0)),
    "Skyrim/eyeschild.tri": ("facegen", (204, 234, 204, 14, 8, 825)),
    "SkyrimSE/Anchor.tri": ("facegen", (16534, 23584, 16534, 0, 0, 0)),
    "SkyrimSE/malehead.tri": ("facegen", (898, 1694, 898, 44, 0, 0)),
}
# The NIF shapes the BodySlide files name, with their vertex counts (cli.py info).
BODYSLIDE_MESHES = {"FO4/BaseMaleBody.tri": ("FO4/BTBaseMaleBody.nif", 8717), "FO4/TEST_SEGMENTS_EMPTY.tri": ("FO4/TEST_SEGMENTS_EMPTY.nif", 3675)}


def key(path):
    return f"{path.parent.name}/{path.name}"


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_corpus_has_the_tri_files(corpus):
    assert {key(path) for path in TRI_FILES} == set(KNOWN)


# -- corpus ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", TRI_FILES, ids=key)
def test_round_trip_is_byte_identical(path):
    data = path.read_bytes()
    tri = read_tri(path)
    assert tri.to_bytes() == data
    assert not tri.warnings


@pytest.mark.parametrize("path", TRI_FILES, ids=key)
def test_counts_and_morphs_agree_with_the_struct_reader(path):
    data = path.read_bytes()
    tri = read_tri(path)
    kind, known = KNOWN[key(path)]
    assert tri.kind == kind
    if kind == "bodyslide":
        raw = raw_tri.bodyslide(data)
        assert raw["end"] == len(data) and raw["uv_shapes"] is None and tri.uv_shapes is None
        assert {shape.name: len(shape.morphs) for shape in tri.shapes} == known
        for shape in tri.shapes:
            expected = raw["shapes"][shape.name]
            assert [m.name for m in shape.morphs] == list(expected)
            for morph in shape.morphs:
                assert morph.indices.tolist() == list(expected[morph.name])
                want = np.array(list(expected[morph.name].values()), np.float32).reshape(-1, 3)
                assert np.array_equal(morph.values, want), morph.name
        return
    raw = raw_tri.facegen(data)
    assert raw["end"] == len(data)
    v, t, _q, _lv, _ls, x, _ext, md, ms, k = raw["counts"]
    assert (v, t, x if x else v, md, ms, k) == known
    assert (len(tri.vertices), len(tri.triangles), len(tri.uvs), len(tri.morphs), len(tri.modifiers)) == known[:5]
    assert np.array_equal(tri.vertices, raw["vertices"])
    assert [m.name for m in tri.morphs] == list(raw["morphs"])
    for morph in tri.morphs:
        assert np.array_equal(tri.offsets(morph), raw["morphs"][morph.name]), morph.name
    assert [m.name for m in tri.modifiers] == list(raw["modifiers"])
    for morph in tri.modifiers:
        expected = raw["modifiers"][morph.name]
        offsets = tri.offsets(morph)
        assert morph.indices.tolist() == list(expected)
        for index, offset in expected.items():
            assert np.array_equal(offsets[index], offset)
        untouched = np.ones(v, bool)
        untouched[list(expected)] = False
        assert not offsets[untouched].any()


def test_per_corner_uvs_of_bad_tri(corpus):
    """PyNifly's ``bad_tri.tri``: more texture coordinates than vertices, indexed per corner."""
    tri = read_tri(corpus / "pynifly/tests/tests/Skyrim/bad_tri.tri")
    assert tri.uv_triangles.shape == (12902, 3) and tri.uvs.shape == (7259, 2)
    assert int(tri.uv_triangles.max()) < 7259


@pytest.mark.parametrize("tri_name", list(BODYSLIDE_MESHES))
def test_bodyslide_shapes_are_the_nif_shapes(corpus, tri_name):
    """A BodySlide .tri names its NIF's shapes and indexes their vertices: every index is inside."""
    nif_name, count = BODYSLIDE_MESHES[tri_name]
    base = corpus / "pynifly/tests/tests"
    tri = read_tri(base / tri_name)
    nif = NifFile.read(base / nif_name)
    names = {block.name for _, block in nif.blocks_of(BSTriShape)}
    for shape in tri.shapes:
        assert shape.name in names
        tri.check_shape(shape.name, count)
        assert max(int(m.indices.max()) for m in shape.morphs if len(m.offsets)) == count - 1
    with pytest.raises(FormatError, match=r"morph '.+': vertex index \d+ is past the shape's 8 vertices") as error:
        tri.check_shape(tri.shapes[0].name, 8)
    assert str(error.value).startswith(str(base / tri_name))


@pytest.mark.parametrize("tri_name", list(BODYSLIDE_MESHES))
def test_the_nif_names_its_bodyslide_file(corpus, tri_name):
    """The BODYTRI string extra data of the NIF leads to the .tri beside it."""
    nif_name, _ = BODYSLIDE_MESHES[tri_name]
    base = corpus / "pynifly/tests/tests"
    nif = NifFile.read(base / nif_name)
    values = [b.string_data for b in nif.blocks if isinstance(b, NiStringExtraData) and b.name == naming.BODYTRI]
    assert len(values) == 1
    assert naming.bodyslide_file(base / nif_name, values[0]) == base / tri_name


# -- layouts the corpus lacks ------------------------------------------------------------------------
SQUARE = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0.5, 0.5, 1)]


def built(**options):
    options.setdefault("morphs", [("Smile", 0.5, [(2, -4, 6)] * 5)])
    return raw_tri.facegen_bytes(SQUARE, [(0, 1, 4), (1, 2, 4)], **options)


@pytest.mark.parametrize("wide", [False, True])
def test_labels_quads_and_points_decode(wide):
    data = built(
        quads=[(0, 1, 2, 3)], uvs=[(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.5), (0.25, 0.25)],
        uv_triangles=[(0, 1, 4), (1, 2, 5)], uv_quads=[(0, 1, 2, 3)],
        labelled=[(4, "Nose tip"), (0, "Corner")], points=[(1, (0.25, 0.25, 0.5), "Cheek")],
        modifiers=[("LookUp", [4, 2], [(0.5, 0.5, 2), (1, 1, 0.25)]), ("Empty", [], [])], wide=wide,
    )
    tri = FaceGenTri.from_bytes(data)
    assert tri.to_bytes() == data
    assert [(v.index, v.label) for v in tri.labelled_vertices] == [(4, "Nose tip"), (0, "Corner")]
    assert tri.surface_points[0].triangle == 1 and tri.surface_points[0].weights == (0.25, 0.25, 0.5)
    assert tri.quads.tolist() == [[0, 1, 2, 3]] and tri.uv_quads.tolist() == [[0, 1, 2, 3]]
    assert tri.morphs[0].name == "Smile" and tri.offsets(tri.morphs[0]).tolist() == [[1.0, -2.0, 3.0]] * 5
    offsets = tri.offsets(tri.modifiers[0])
    assert offsets[4].tolist() == [0.0, 0.0, 1.0] and offsets[2].tolist() == [0.0, 0.0, 0.25]
    assert not offsets[[0, 1, 3]].any() and tri.modifiers[1].positions.shape == (0, 3)


def test_per_vertex_uvs_and_unterminated_labels():
    data = built(uvs=[(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.5)], per_vertex_uvs=True, nul=False)
    tri = FaceGenTri.from_bytes(data)
    assert tri.uv_triangles is None and tri.uvs.shape == (5, 2)
    assert tri.morphs[0].name == "Smile" and not tri.morphs[0].name.terminated
    assert tri.to_bytes() == data


def test_a_new_file_writes_what_the_struct_reader_reads():
    tri = FaceGenTri()
    tri.vertices = np.array(SQUARE, np.float32)
    tri.triangles = np.array([(0, 1, 4)], np.uint32)
    tri.uvs = np.zeros((5, 2), np.float32)  # per vertex: the flag is set on writing
    offsets = np.zeros((5, 3), np.float32)
    offsets[4] = (0.0, 0.2, -0.4)
    scale, values = quantize(offsets)
    tri.morphs = [DifferenceMorph("JawOpen", scale, values)]
    tri.modifiers = [ModifierMorph("Blink", np.array([1], np.uint32), np.array([(1, 0, 0.5)], np.float32))]
    raw = raw_tri.facegen(tri.to_bytes())
    assert raw["counts"] == (5, 1, 0, 0, 0, 0, 1, 1, 1, 1)
    assert np.allclose(raw["morphs"]["JawOpen"], offsets, atol=0.4 / 32767)
    assert raw["modifiers"]["Blink"][1].tolist() == [0.0, 0.0, 0.5]


def test_bodyslide_with_texture_coordinate_morphs():
    data = raw_tri.bodyslide_bytes(
        [("Body", [("Breasts", 0.01, [(3, (100, -200, 300)), (7, (0, 0, 1))]), ("Empty", 0.0, [])]), ("Hands", [])],
        uv_shapes=[("Body", [("Seam", 0.5, [(2, (2, -2))])])],
    )
    tri = BodySlideTri.from_bytes(data)
    assert tri.to_bytes() == data
    morph = tri.shape("Body").morphs[0]
    assert morph.indices.tolist() == [3, 7]
    assert np.array_equal(morph.values, np.array([(100, -200, 300), (0, 0, 1)], np.float32) * np.float32(0.01))
    assert tri.uv_shapes[0].morphs[0].values.tolist() == [[1.0, -1.0]]
    assert tri.shape("Nobody") is None
    # BodySlide's writer always adds the (maybe empty) texture-coordinate section; files without it read too.
    assert BodySlideTri.from_bytes(raw_tri.bodyslide_bytes([("Body", [])], uv_shapes=[])).uv_shapes == []


def test_quantize_round_trip():
    rng = np.random.default_rng(3)
    offsets = rng.normal(0, 2, (100, 3)).astype(np.float32)
    scale, values = quantize(offsets)
    assert np.abs(values).max() == 32767
    assert np.abs(dequantize(scale, values) - offsets).max() <= scale
    assert quantize(np.zeros((4, 3))) == (0.0, pytest.approx(np.zeros((4, 3))))
    with pytest.raises(FormatError, match="not a usable number"):
        quantize([[np.nan, 0, 0]], "morph 'x'")


def test_writer_refuses_what_the_format_cannot_hold():
    tri = FaceGenTri.from_bytes(built())
    tri.morphs[0].values = tri.morphs[0].values[:3]
    with pytest.raises(FormatError, match="difference morph 'Smile' has 3 offsets for 5 vertices"):
        tri.to_bytes()
    body = BodySlideTri.from_bytes(raw_tri.bodyslide_bytes([("Body", [("M", 1.0, [])])]))
    body.shapes[0].morphs[0].name = "x" * 300
    with pytest.raises(FormatError, match="longer than 255 bytes"):
        body.to_bytes()


# -- damaged files -----------------------------------------------------------------------------------
def test_modifier_index_past_the_vertices_names_the_morph():
    data = built(modifiers=[("LookUp", [1, 5], [(0, 0, 0), (0, 0, 1)])])
    with pytest.raises(FormatError, match=r"modifier morph 'LookUp': its vertex 1 is index 5, past the 5 vertices") as error:
        FaceGenTri.from_bytes(data, path="eyes.tri")
    assert str(error.value).startswith("eyes.tri")


def test_modifier_vertices_past_the_header_count():
    data = bytearray(built(modifiers=[("LookUp", [1, 2], [(0, 0, 0), (0, 0, 1)])]))
    # K says one target position where the morph lists two: the morph's vertices pass the data.
    struct.pack_into("<I", data, 44, 1)
    data[64 + 12 * 5 + 12 : 64 + 12 * 5 + 24] = b""  # and the file holds one
    with pytest.raises(FormatError, match="modifier morph 'LookUp': its 2 vertices pass the 1 modifier vertices"):
        FaceGenTri.from_bytes(bytes(data), path="eyes.tri")


@pytest.mark.parametrize(
    "offset, value, message",
    [
        (8, 0xFFFFFFFF, "counts"),  # vertices
        (36, 0x7FFFFFFF, "counts"),  # difference morphs
        (40, 1000, "counts"),  # modifier morphs
        (44, 0x10000000, "counts"),  # modifier vertices
    ],
)
def test_counts_past_the_data(offset, value, message):
    data = bytearray(built())
    struct.pack_into("<I", data, offset, value)
    with pytest.raises(FormatError, match=message) as error:
        FaceGenTri.from_bytes(bytes(data), path="head.tri")
    assert str(error.value).startswith("head.tri")


def test_bodyslide_counts_past_the_data():
    data = bytearray(raw_tri.bodyslide_bytes([("Body", [("Breasts", 0.01, [(3, (100, -200, 300))])])]))
    struct.pack_into("<H", data, 4 + 2 + 1 + 4 + 2 + 1 + 7 + 4, 500)  # the morph's vertex count
    with pytest.raises(FormatError, match="morph 'Breasts' vertices: count 500 needs 4000 bytes") as error:
        BodySlideTri.from_bytes(bytes(data), path="body.tri")
    assert str(error.value).startswith("body.tri")


def test_every_truncation_fails():
    """FaceGen files end with their last morph; a BodySlide file may end after its position
    section (no texture-coordinate section), nowhere else."""
    facegen = built(modifiers=[("LookUp", [4], [(0, 0, 2)])], labelled=[(1, "a")])
    for size in range(len(facegen)):
        with pytest.raises(FormatError):
            FaceGenTri.from_bytes(facegen[:size], path="cut.tri")
    positions = raw_tri.bodyslide_bytes([("Body", [("A", 1.0, [(1, (1, 2, 3))])])])
    body = raw_tri.bodyslide_bytes([("Body", [("A", 1.0, [(1, (1, 2, 3))])])], uv_shapes=[("Body", [("B", 1.0, [(0, (1, 2))])])])
    for size in range(len(body)):
        if size == len(positions):
            assert BodySlideTri.from_bytes(body[:size]).uv_shapes is None
            continue
        with pytest.raises(FormatError):
            BodySlideTri.from_bytes(body[:size], path="cut.tri")


def test_a_truncated_morph_is_named():
    data = built(morphs=[("Smile", 0.5, [(2, -4, 6)] * 5), ("Frown", 0.25, [(1, 1, 1)] * 5)])
    with pytest.raises(FormatError, match=r"head.tri, offset \d+ \(0x[0-9A-F]+\): difference morph 'Frown': truncated"):
        FaceGenTri.from_bytes(data[:-7], path="head.tri")


def test_trailing_bytes_are_kept_and_reported():
    data = built() + b"\x01\x02"
    tri = FaceGenTri.from_bytes(data)
    assert tri.tail == b"\x01\x02" and "2 bytes after the last morph" in tri.warnings[0]
    assert tri.to_bytes() == data


def test_not_a_tri():
    with pytest.raises(FormatError, match="not a .tri file") as error:
        tri_from_bytes(b"Gamebryo File Format", path="x.tri")
    assert str(error.value).startswith("x.tri")
    with pytest.raises(FormatError, match="not a FaceGen .tri file"):
        FaceGenTri.from_bytes(b"FRTRI002" + bytes(56))


def damaged_variants(paths, count=80):
    """Flipped bytes, overwritten u32 and truncations of each file (deterministic)."""
    for path in paths:
        data = path.read_bytes()
        rng = random.Random(path.name)
        for i in range(count):
            out = bytearray(data)
            kind = i % 3
            # Counts and names live near the start: half the damage lands in the first 256 bytes.
            at = rng.randrange(0, min(len(data), 256) if rng.random() < 0.5 else len(data) - 4)
            if kind == 0:
                out[at] ^= rng.randint(1, 255)
            elif kind == 1:
                struct.pack_into("<I", out, at, rng.choice((0xFFFFFFFF, 0x7FFFFFFF, 0x8000, 0xFFFF)))
            else:
                out = out[:at]
            yield f"{key(path)} variant {i}", bytes(out)


def test_damaged_corpus_files_fail_cleanly(traced):  # noqa: F811
    problems, outcomes = [], {}
    for description, data in damaged_variants(TRI_FILES):
        outcome, problem = run_case(data, parse=tri_from_bytes)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if problem:
            problems.append(f"{description}: {problem}")
    assert not problems, "\n".join(problems[:15])
    assert outcomes.get("rejected", 0) > 100 and outcomes.get("accepted", 0) > 100, outcomes


# -- naming ----------------------------------------------------------------------------------------
def test_facegen_roles_by_name():
    assert naming.facegen_role("MaleHead.tri") == naming.EXPRESSION
    assert naming.facegen_role("FemaleHeadCharGen.tri") == naming.CHARGEN
    assert naming.facegen_role("TigerHead_chargen.tri") == naming.CHARGEN
    assert naming.facegen_role("FemaleHeadRaces.tri") == naming.RACE


def test_facegen_files_beside_a_head(tmp_path):
    for name in ("MaleHead.nif", "malehead.TRI", "MaleHeadCharGen.tri", "MaleHead_faceBones.nif", "Other.tri"):
        (tmp_path / name).write_bytes(b"")
    found = naming.facegen_files(tmp_path / "MaleHead.nif")
    assert found == [(naming.EXPRESSION, tmp_path / "malehead.TRI"), (naming.CHARGEN, tmp_path / "MaleHeadCharGen.tri")]
    assert naming.facegen_files(tmp_path / "MaleHead_faceBones.nif") == []
    assert naming.facegen_path(tmp_path / "Out.nif", naming.CHARGEN) == tmp_path / "OutChargen.tri"


def test_bodytri_under_meshes(tmp_path):
    folder = tmp_path / "Data" / "Meshes" / "Actors" / "Character" / "CharacterAssets"
    folder.mkdir(parents=True)
    (folder / "MaleBody.TRI").write_bytes(b"")
    nif = tmp_path / "Data" / "Meshes" / "Actors" / "Character" / "CharacterAssets" / "MaleBody.nif"
    assert naming.bodyslide_file(nif, r"actors\character\characterassets\MaleBody.tri") == folder / "MaleBody.TRI"
    assert naming.bodyslide_file(nif, r"Meshes\Actors\Character\CharacterAssets\malebody.tri") == folder / "MaleBody.TRI"
    assert naming.bodyslide_file(nif, r"C:\Work\MaleBody.tri") == folder / "MaleBody.TRI"  # by name, beside it
    assert naming.bodyslide_file(nif, r"actors\nothing.tri") is None
    assert naming.bodytri_value(folder / "Out.tri") == r"Actors\Character\CharacterAssets\Out.tri"
    assert naming.bodytri_value(tmp_path / "Out.tri") == "Out.tri"


def test_companions_of_an_archived_nif(tmp_path):
    """A NIF inside an archive finds its .tri files in the archive's Data folder as the game does:
    by the same names and BODYTRI rules, a loose file before the archives, a later archive in
    load order before an earlier one."""
    from archive_writer import write_ba2_gnrl

    data = tmp_path / "Data"
    (data / "meshes" / "actors" / "head").mkdir(parents=True)
    folder = "meshes/actors/head"
    write_ba2_gnrl(data / "Mod - Main.ba2", {
        f"{folder}/MaleHead.nif": b"nif", f"{folder}/malehead.tri": b"archived", f"{folder}/MaleHead_faceBones.nif": b"",
        f"{folder}/maleheadchargen.tri": b"first", "meshes/actors/body/MaleBody.tri": b"body",
        f"{folder}/Beside.tri": b"beside",
    })
    write_ba2_gnrl(data / "Patch - Main.ba2", {f"{folder}/MaleHeadChargen.tri": b"second"})  # loads after Mod
    (data / "meshes" / "actors" / "head" / "MALEHEAD.tri").write_bytes(b"loose")
    nif = f"{data / 'Mod - Main.ba2'}:{folder}/MaleHead.nif"
    found = naming.companion_files(nif, [r"actors\body\malebody.tri", r"C:\Work\beside.tri", r"actors\none.tri"])
    assert found == [
        (naming.EXPRESSION, str(data / "meshes" / "actors" / "head" / "MALEHEAD.tri")),
        (naming.CHARGEN, f"{data / 'Patch - Main.ba2'}:{folder}/MaleHeadChargen.tri"),
        (naming.BODYSLIDE, f"{data / 'Mod - Main.ba2'}:meshes/actors/body/MaleBody.tri"),
        (naming.BODYSLIDE, f"{data / 'Mod - Main.ba2'}:{folder}/Beside.tri"),
    ]
    assert [read_path(name) for _, name in found] == [b"loose", b"second", b"body", b"beside"]
    assert naming.companion_files(f"{data / 'Mod - Main.ba2'}:{folder}/MaleHead_faceBones.nif", []) == []


# -- command line ----------------------------------------------------------------------------------
def test_cli_info_json(corpus):
    result = run("info", corpus / "pynifly/tests/tests/FONV/headfemale_willow.tri", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["format"], info["kind"], info["role"], info["vertices"]) == ("tri", "facegen", "expression", 1211)
    kinds = [m["kind"] for m in info["morphs"]]
    assert kinds.count("difference") == 38 and kinds.count("modifier") == 8
    assert info["morphs"][38] == {"name": "SquintLeft", "kind": "modifier", "vertices": 455}
    result = run("info", corpus / "pynifly/tests/tests/FO4/TEST_SEGMENTS_EMPTY.tri", "--json")
    info = json.loads(result.stdout)
    assert info["kind"] == "bodyslide" and info["shapes"][0]["name"] == "ArmorUnder"
    assert len(info["shapes"][0]["morphs"]) == 57 and info["shapes"][0]["morphs"][0]["vertices"] == 508


def test_cli_info_text_folder_and_roundtrip(corpus, tmp_path):
    result = run("info", corpus / "pynifly/tests/tests/FO4/BaseMaleBody.tri")
    assert result.returncode == 0
    assert result.stdout.startswith(f"{corpus / 'pynifly/tests/tests/FO4/BaseMaleBody.tri'}: BodySlide .tri, 1 shape(s), 50 morphs")
    assert "shape 'BaseMaleBody': 50 morphs (vertices listed): AryaydaMuscleSlider (285)" in result.stdout
    result = run("info", corpus / "pynifly/tests/tests/Skyrim", "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {line["file"].rsplit("/", 1)[1] for line in lines if line.get("format") == "tri"} == {"bad_tri.tri", "eyeschild.tri"}
    source = corpus / "pynifly/tests/tests/Skyrim/eyeschild.tri"
    result = run("roundtrip", source, tmp_path / "out.tri")
    assert result.returncode == 0 and "identical to" in result.stdout
    assert (tmp_path / "out.tri").read_bytes() == source.read_bytes()


def test_cli_damaged_tri_is_one_line(tmp_path):
    damaged = tmp_path / "damaged.tri"
    damaged.write_bytes(built()[:100])
    result = run("info", damaged)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {damaged}")


def test_read_file_knows_tri_and_nif_commands_name_it(tmp_path):
    path = tmp_path / "head.tri"
    path.write_bytes(built())
    assert isinstance(read_file(path), FaceGenTri)
    wrong = tmp_path / "head.nif"
    wrong.write_bytes(built())
    with pytest.raises(FormatError, match="FaceGen morph file"):
        read_file(wrong)
