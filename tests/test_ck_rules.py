"""The Creation Kit's precombine rules, told before it runs: models built to break one rule each
(tests/ck_meshes.py) are flagged with it and their unbroken twin is not; every corpus Fallout 4
NIF gets a verdict; the corpus cell's copies key to the combined meshes holding them; the corpus
cell's plan agrees with its XCRI; a built load order exercises each reference rule and the
group a combined reference lands in, computed here on its own from the model's bytes."""

import json
import math
import os
import struct
import subprocess
import sys
import zlib

import ck_meshes
import numpy as np
import pytest
from archive_writer import write_ba2_gnrl
from plugin_writer import cell_with_children, group, interior_cells, plugin, record, zstring
from raw_nodes import read_nodes, world_matrices
from support import CODE_FREE_PACKAGES, ROOT, corpus_files, corpus_plugin_folder

from precombined_nif.core.plugin.references import cell_instances
from precombined_nif.core.precombined.ck_rules import meshes
from precombined_nif.core.precombined.ck_rules.groups import interior_group
from precombined_nif.core.precombined.ck_rules.plan import cell_plan
from precombined_nif.core.precombined.ck_rules.references import SCRAPPABLE
from precombined_nif.core.formats import read_file


def verdict(nif):
    return meshes.check_bytes(nif.to_bytes())


def found(result):
    return [(f.rule, f.effect, f.block, f.block_type, f.name) for f in result.findings]


# -- models ------------------------------------------------------------------------------------
def test_the_golden_static_is_combinable(corpus):
    result = verdict(ck_meshes.golden(corpus))
    assert (result.verdict, result.findings, result.notes) == (meshes.COMBINABLE, [], [])


def full_precision(nif):
    ck_meshes.full_precision(nif, ck_meshes.SHAPE)


def no_shader(nif):
    ck_meshes.set_link(nif, ck_meshes.SHAPE, 1, -1)


def texture_set_as_shader(nif):
    ck_meshes.set_link(nif, ck_meshes.SHAPE, 1, 5)


def cut_shader(nif):
    ck_meshes.cut(nif, ck_meshes.SHADER, 8)


def link_past_the_end(nif):
    nif.set_children(0, [1, 2, 3, 6, 40])


@pytest.mark.parametrize("damage, expected", [
    (full_precision, [("full precision", "crash", 3, "BSTriShape", "cylinder_1")]),
    (no_shader, [("no shader", "crash", 3, "BSTriShape", "cylinder_1")]),
    (texture_set_as_shader, [("no shader", "crash", 3, "BSTriShape", "cylinder_1")]),
    (cut_shader, [("corrupt block", "crash", 4, "BSLightingShaderProperty", None)]),
    (link_past_the_end, [("corrupt block", "crash", 0, "NiNode", "Scene Root")]),
])
def test_each_crash_rule_flags_its_model(corpus, damage, expected):
    nif = ck_meshes.golden(corpus)
    damage(nif)
    result = verdict(nif)
    assert result.verdict == meshes.CRASHES and found(result) == expected


def test_the_issue_s_line_for_a_full_precision_shape(corpus):
    nif = ck_meshes.golden(corpus)
    desc = ck_meshes.full_precision(nif, ck_meshes.SHAPE)
    assert desc == 0x0041B00000650407  # the golden's 0x0001B00000430205 with 32-bit positions
    (finding,) = verdict(nif).findings
    assert finding.text() == "full-precision vertices in BSTriShape 'cylinder_1' (block 3): the CK crashes on it"


@pytest.mark.parametrize("value, flagged", [(0x1, True), (0x42, True), (0x83, True), (0x2, False), (0x40, False),
                                            (0x82, False), (0x8A, False)])
def test_bsxflags_animated_or_havok_and_dynamic_stay_uncombined(corpus, value, flagged):
    nif = ck_meshes.golden(corpus)
    block = ck_meshes.add_bsx(nif, value)
    result = verdict(nif)
    if flagged:
        assert result.verdict == meshes.NOT_COMBINED
        assert found(result) == [("bsxflags", "uncombined", block, "BSXFlags", "BSX")]
    else:
        assert (result.verdict, result.findings) == (meshes.COMBINABLE, [])


def test_a_billboard_node_stays_uncombined(corpus):
    nif = ck_meshes.golden(corpus)
    ck_meshes.billboard(nif, 1)
    result = verdict(nif)
    assert found(result) == [("unsupported block", "uncombined", 1, "NiBillboardNode", "BoneB")]


def test_a_shape_without_vertices_stays_uncombined_unless_below_a_marker(corpus):
    nif = ck_meshes.golden(corpus)
    ck_meshes.no_vertices(nif, ck_meshes.SHAPE)
    assert found(verdict(nif)) == [("vertex count", "uncombined", 3, "BSTriShape", "cylinder_1")]
    ck_meshes.rename(nif, ck_meshes.SHAPE, "EditorMarker:0")
    assert verdict(nif).verdict == meshes.COMBINABLE
    ck_meshes.rename(nif, ck_meshes.OTHER_SHAPE, "EditorMarker:1")
    assert verdict(nif).notes == ["only marker geometry: nothing to combine"]


def test_a_skinned_shape_or_a_controller_stays_uncombined(corpus):
    """Neither is in the CK's output (none of the corpus cell's 110 records is skinned, no block
    of its combined meshes has a controller), and bacup's baker takes neither."""
    nif = ck_meshes.golden(corpus)
    ck_meshes.set_link(nif, ck_meshes.SHAPE, 0, ck_meshes.SHADER)  # a skin link: any block will do for the rule
    assert found(verdict(nif)) == [("skinned", "uncombined", 3, "BSTriShape", "cylinder_1")]
    nif = ck_meshes.golden(corpus)
    at = nif.av_offsets(ck_meshes.OTHER_SHAPE)["name"]
    (extra,) = struct.unpack_from("<I", nif.blocks[ck_meshes.OTHER_SHAPE], at + 4)
    struct.pack_into("<i", nif.blocks[ck_meshes.OTHER_SHAPE], at + 8 + 4 * extra, ck_meshes.SHADER)
    assert found(verdict(nif)) == [("controller", "uncombined", 6, "BSTriShape", "cylinder_2")]


def test_an_effect_shader_stays_uncombined(corpus):
    """The CK's output holds lighting shaders only (and its .cdx no BGEM row): the plugin's own
    cooking station, whose first shape has a BSEffectShaderProperty, is named for it."""
    result = meshes.check_path(corpus / "ck-precombined/Meshes/aloot/HomePlate/ALOOT_HP_CookingStation.nif")
    assert result.verdict == meshes.NOT_COMBINED
    assert [(f.rule, f.block, f.what) for f in result.findings] == [("effect shader", 4, "an effect shader (block 5)")]


def test_a_file_that_is_not_a_nif_is_unreadable_not_a_crash(tmp_path):
    result = meshes.check_bytes(b"TES4 not a mesh at all")
    assert result.verdict == meshes.UNREADABLE and result.error and result.findings == []
    assert meshes.check_path(tmp_path / "absent.nif").verdict == meshes.UNREADABLE


FO4_CORPUS = [path for path in corpus_files("**/*.nif") + corpus_files("**/*.NIF")]
VERDICTS = {meshes.COMBINABLE, meshes.CRASHES, meshes.NOT_COMBINED, meshes.UNREADABLE, meshes.NOT_FALLOUT4,
            meshes.PRECOMBINED_CELL}
EXPECTED = {  # corpus files and their verdicts, checked by hand against their BSXFlags and blocks
    "pynifly/tests/tests/FO4/Corrupt.nif": meshes.CRASHES,
    "pynifly/tests/tests/FO4/AlarmClock.nif": meshes.NOT_COMBINED,  # BSXFlags 0xC2: Havok and Dynamic
    "pynifly/tests/tests/FO4/CigaretteMachine.nif": meshes.NOT_COMBINED,  # 0x8B: Animated
    "pynifly/tests/tests/FO4/GlowingOneTEST.nif": meshes.NOT_COMBINED,  # BSBehaviorGraphExtraData
    "pynifly/tests/tests/FO4/ShackPrefabMid01.nif": meshes.COMBINABLE,  # 0xA2
    "pynifly/tests/tests/FO4/Meshes/Architecture/DiamondCity/DExt/DExBrickColumn01.nif": meshes.COMBINABLE,
    "nifly/tests/input/TestNifFile_Static_FO4.nif": meshes.COMBINABLE,
    "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF": meshes.PRECOMBINED_CELL,
    "pynifly/tests/tests/SkyrimSE/body1m_1.nif": meshes.NOT_FALLOUT4,
}


@pytest.mark.parametrize("path", FO4_CORPUS, ids=lambda p: str(p.relative_to(p.parents[len(p.parts) - 5])))
def test_every_corpus_nif_gets_a_verdict(corpus, path):
    result = meshes.check_path(path)
    assert result.verdict in VERDICTS
    relative = path.relative_to(corpus).as_posix()
    if relative in EXPECTED:
        assert result.verdict == EXPECTED[relative], result.line()


def test_the_corpus_corrupt_file_names_its_block(corpus):
    (finding,) = meshes.check_path(corpus / "pynifly/tests/tests/FO4/Corrupt.nif").findings
    assert (finding.rule, finding.block, finding.block_type) == ("corrupt block", 5, "BSLightingShaderProperty")


# -- groups ------------------------------------------------------------------------------------
def test_every_copy_of_the_corpus_cell_keys_to_its_combined_mesh(corpus):
    """The CK named each _OC file after its group: every copy's bound centre keys to it."""
    files = sorted((corpus / "ck-precombined/Meshes/PreCombined").glob("*_OC.NIF"))
    keyed = []
    for path in files:
        group_id = int(path.name.split("_")[1], 16)
        keyed += [interior_group(instance["bound_center"].tolist(), bool(group_id >> 31)) == group_id
                  for *_, instance in cell_instances(read_file(path))]
    assert len(files) == 11 and len(keyed) == 223 and all(keyed)


# -- the corpus cell's plan --------------------------------------------------------------------
def corpus_data(corpus, tmp_path):
    return corpus_plugin_folder(corpus, tmp_path / "Data")


def tally(items):
    counts = {}
    for item in items:
        counts[item["verdict"]] = counts.get(item["verdict"], 0) + 1
    return counts


def test_the_corpus_cell_plan_agrees_with_its_xcri(corpus, tmp_path):
    """XCRI's 719 references: no rule whose data is here keeps one out (their bases and 164 of
    their records are Fallout4.esm's, which the corpus lacks). The 1788 others the plugin places:
    each excluded with a reason, or waiting on Fallout4.esm or on a model the corpus lacks; none
    combined. The 23 whose models the corpus holds (the plugin's posters, carpet runner,
    chemistry shelf, tool racks) are out because the plugin's recipes make their bases
    scrappable, while its wood basket, of no recipe, is in XCRI."""
    plan = cell_plan(corpus_data(corpus, tmp_path), "Fallout4.esm:001E58")
    assert plan["cell"] == "Fallout4.esm:001E58" and plan["interior"] and plan["xcri_plugin"] == "AlootHomePlate.esp"
    listed = [item for item in plan["references"] if item["xcri_group"]]
    others = [item for item in plan["references"] if not item["xcri_group"]]
    assert len(listed) == 719 and tally(listed) == {"needs": 719}
    absent = [item for item in listed if item["type"] is None]
    assert len(absent) == 164 and all(item["needs"] == ["Fallout4.esm"] for item in absent)
    assert sum(item["needs"] == ["meshes\\Props\\BucketsAndBaskets\\WoodBasket.nif"] for item in listed) == 1
    assert len(others) == 1788 and tally(others) == {"excluded": 748, "needs": 1040}
    # The plugin's own models are in the corpus: the 23 references the plan combined before the recipe rule (and
    # three potted plants, whose links' keyword is Fallout4.esm's) have nothing else keeping them out.
    own_models = [item for item in others if item["reasons"] == [SCRAPPABLE] and item["model"].lower().startswith("aloot\\")]
    names = sorted(item["editor_id"] for item in own_models)
    assert names == sorted(["ALOOT_Static_CarpetRunner", "ALOOT_Static_ChemistryShelf", "ALOOT_Static_ToolRack01",
                            "ALOOT_Static_ToolRack02", "ALOOT_Static_Poster17", *["ALOOT_Static_Plant01"] * 3,
                            *(f"ALOOT_Static_Poster{n:02}" for n in range(1, 19))])
    (basket,) = [item for item in listed if item["editor_id"] == "ALOOT_Static_WoodBasket"]
    assert basket["base"] == "000020E0" and not any(SCRAPPABLE in item["reasons"] for item in listed)
    assert all(item["reasons"] for item in others if item["verdict"] == "excluded")
    reasons = {reason for item in others for reason in item["reasons"]}
    assert {"initially disabled", "an enable parent (XESP)", "a primitive (XPRM)", "another reference links to it (XLKR)",
            "its base is of type CONT: only STAT and SCOL bases are combined"} <= reasons
    waiting = {need.split(" ", 1)[0] for item in others if item["verdict"] == "needs" for need in item["needs"]}
    assert waiting == {"Fallout4.esm"} | {need for item in others for need in item["needs"] if need.startswith("meshes")}


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_cli_takes_the_cell_id_its_report_prints(corpus, tmp_path):
    folder = corpus_data(corpus, tmp_path)
    report = json.loads(run("precombines", folder, "--json").stdout)
    cell = report["cells"][0]["cell"]
    assert cell == "Fallout4.esm:001E58"
    alone = run("precombines", folder, "--cell", cell)
    assert alone.returncode == 0 and f"CELL {cell} DmndPlayerHouse01" in alone.stdout
    planned = run("precombines", folder, "--cell", cell, "--plan")
    assert planned.returncode == 0 and planned.stdout.splitlines()[-1] == "XCRI lists 719 of them: 719 needs"
    wrong = run("precombines", folder, "--cell", "00001E58")
    assert wrong.returncode == 2 and "(Fallout4.esm is not in the Data folder: a record it defines is named " \
        "Fallout4.esm:001E58)" in wrong.stderr
    refused = run("precombines", folder, "--cell", "Fallout4.esm:1001E58")
    assert refused.returncode == 2 and "is not a FormID" in refused.stderr


# -- a built load order ------------------------------------------------------------------------
CELL = 0x1000
KEYWORDS = {0x900: "MultirefLOD", 0x901: "WorkshopItemKeyword"}
PLACE = (100.0, 200.0, 50.0)
ANGLES = (0.3, 0.0, 1.2)
SCALE = 1.5


def stat(form_id, name, model, flags=0, extra=()):
    fields = [("EDID", zstring(name)), ("OBND", bytes(12)), ("MODL", zstring(model)), *extra]
    return record("STAT", form_id, fields, flags=flags)


def refr(form_id, base, flags=0, extra=(), position=PLACE, angles=ANGLES, scale=SCALE):
    fields = [("NAME", struct.pack("<I", base)), *extra, ("XSCL", struct.pack("<f", scale)),
              ("DATA", struct.pack("<6f", *position, *angles))]
    return record("REFR", form_id, fields, flags=flags)


def link(keyword, target):
    return ("XLKR", struct.pack("<II", keyword, target))


REFERENCES = {  # FormID: (base, flags, extra fields, verdict, what the reasons or needs hold)
    0x2000: (0x800, 0, (), "combined", None),
    0x2001: (0x800, 0x20, (), "excluded", "deleted"),
    0x2002: (0x800, 0x800, (), "excluded", "initially disabled"),
    0x2003: (0x800, 0, (("XESP", bytes(8)),), "excluded", "an enable parent (XESP)"),
    0x2004: (0x800, 0, (("XATR", bytes(4)),), "excluded", "an attach ref (XATR)"),
    0x2005: (0x800, 0, (("XEMI", bytes(4)),), "excluded", "an emittance (XEMI)"),
    0x2006: (0x800, 0, (("XLRT", bytes(4)),), "excluded", "a location ref type (XLRT)"),
    0x2007: (0x800, 0, (("VMAD", bytes(6)),), "excluded", "scripts (VMAD)"),
    0x2008: (0x800, 0, (("XPRM", bytes(32)),), "excluded", "a primitive (XPRM)"),
    0x2009: (0x800, 0, (link(0x900, 0x2001),), "combined", None),
    0x200A: (0x800, 0, (link(0x901, 0x2001),), "excluded", "a linked reference (XLKR, keyword WorkshopItemKeyword)"),
    0x200B: (0x800, 0, (link(0, 0x2001),), "excluded", "a linked reference (XLKR, keyword none)"),
    0x200C: (0x800, 0, (), "excluded", "another reference links to it (XLKR)"),
    0x200D: (0x801, 0, (), "crashes the CK", "full-precision vertices in BSTriShape 'cylinder_1' (block 3)"),
    0x200E: (0x802, 0, (), "excluded", "BSXFlags 0x1 Animated"),
    0x200F: (0x803, 0, (), "needs", "meshes\\Test\\Missing.nif"),
    0x2010: (0x804, 0, (), "excluded", "its base has a forced location ref type (FTYP)"),
    0x2011: (0x805, 0, (), "excluded", "its base is flagged a marker"),
    0x2012: (0x808, 0, (), "excluded", "its base is of type CONT: only STAT and SCOL bases are combined"),
    0x2013: (0x809, 0, (), "combined", None),
    0x2014: (0x80A, 0, (), "combined", None),
    0x2015: (0x807, 0, (), "combined", None),
    0x2016: (0x806, 0, (), "combined", None),
    0x2018: (0x80B, 0, (), "excluded", "its base can be scrapped in the workshop"),  # a recipe creates it
    0x2019: (0x80C, 0, (), "excluded", "its base can be scrapped in the workshop"),  # a recipe's form list holds it
}
LINKING = 0x2017  # links to 0x200C


def expected_bound(model_path, position, angles, scale):
    """The bound computed here from the model's bytes: shapes' spheres (struct) through their
    nodes (raw_nodes), merged into the smallest sphere holding both, placed as the REFR says
    (Rx(-x) Ry(-y) Rz(-z), then scale and position)."""
    nodes, roots = read_nodes(model_path)
    worlds = world_matrices(nodes, roots)
    nif = ck_meshes.RawNif.read(model_path)
    spheres = []
    for index in (3, 6):
        at = nif.av_offsets(index)["end"]
        *center, radius = struct.unpack_from("<4f", nif.blocks[index], at)
        matrix = np.linalg.inv(worlds[roots[0]]) @ worlds[index]
        spheres.append((matrix[:3, :3] @ center + matrix[:3, 3], radius * np.cbrt(np.linalg.det(matrix[:3, :3]))))
    (c1, r1), (c2, r2) = spheres
    distance = np.linalg.norm(c2 - c1)
    radius = (distance + r1 + r2) / 2
    center = c1 + (radius - r1) / distance * (c2 - c1)
    x, y, z = (-a for a in angles)
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rx @ ry @ rz @ center * scale + np.array(position), radius * scale


def expected_group(center, non_occluder=False):
    """The key as bacup's crc.rs describes it: floor, & 0xFFFFFE00 as u32, as floats, CRC-32 >> 2."""
    values = [float((math.floor(v) & 0xFFFFFFFF) & 0xFFFFFE00) for v in center]
    key = (zlib.crc32(struct.pack("<3f", *values), 0xFFFFFFFF) ^ 0xFFFFFFFF) >> 2
    return key | (0x80000000 if non_occluder else 0)


@pytest.fixture
def load_order(corpus, tmp_path):
    """Fallout4.esm with keywords, bases (good, full precision, animated, missing model, FTYP,
    marker, non-occluder, base material swap, a CONT, a SCOL, an archived model, two a recipe
    makes scrappable: itself and through a form list) and an interior
    cell placing a reference for each rule; the good model moved off its origin so its bound
    is not trivial."""
    folder = tmp_path / "Data"
    good = ck_meshes.golden(corpus)
    good.set_transform(ck_meshes.OTHER_SHAPE, (0.0, 700.0, 50.0), ((1, 0, 0), (0, 1, 0), (0, 0, 1)), 2.0)
    ck_meshes.write(good, folder / "meshes/Test/Good.nif")
    broken = ck_meshes.golden(corpus)
    ck_meshes.full_precision(broken, ck_meshes.SHAPE)
    ck_meshes.write(broken, folder / "meshes/Test/Full.nif")
    animated = ck_meshes.golden(corpus)
    ck_meshes.add_bsx(animated, 0x1)
    ck_meshes.write(animated, folder / "meshes/Test/Animated.nif")
    write_ba2_gnrl(folder / "Fallout4 - Meshes.ba2", {"meshes/Test/Archived.nif": good.to_bytes()})
    keywords = [record("KYWD", form_id, [("EDID", zstring(name))]) for form_id, name in KEYWORDS.items()]
    statics = [
        stat(0x800, "Good", "Test\\Good.nif"), stat(0x801, "Full", "Test\\Full.nif"),
        stat(0x802, "Animated", "Test\\Animated.nif"), stat(0x803, "Missing", "Test\\Missing.nif"),
        stat(0x804, "Forced", "Test\\Good.nif", extra=[("FTYP", bytes(4))]),
        stat(0x805, "Marker", "Test\\Good.nif", flags=0x800000), stat(0x806, "NonOccluder", "Test\\Good.nif", flags=0x10),
        stat(0x807, "Swapped", "Test\\Good.nif", extra=[("MODS", bytes(4))]),
        stat(0x80A, "Archived", "Test\\Archived.nif"), stat(0x80B, "Scrappable", "Test\\Good.nif"),
        stat(0x80C, "Listed", "Test\\Good.nif"),
    ]
    form_list = record("FLST", 0x90A, [("EDID", zstring("ScrapList")), ("LNAM", struct.pack("<I", 0x80C))])
    recipes = [record("COBJ", 0x90B, [("EDID", zstring("ScrapOne")), ("CNAM", struct.pack("<I", 0x80B))]),
               record("COBJ", 0x90C, [("EDID", zstring("ScrapList")), ("CNAM", struct.pack("<I", 0x90A))])]
    scol = record("SCOL", 0x809, [("EDID", zstring("Collection")), ("MODL", zstring("Test\\Good.nif")),
                                  ("ONAM", struct.pack("<I", 0x800)), ("DATA", struct.pack("<7f", 0, 0, 0, 0, 0, 0, 1))])
    container = record("CONT", 0x808, [("EDID", zstring("Chest")), ("MODL", zstring("Test\\Good.nif"))])
    placed = [refr(form_id, base, flags, extra) for form_id, (base, flags, extra, *_) in REFERENCES.items()]
    placed.append(refr(LINKING, 0x808, extra=(link(0x901, 0x200C),)))
    cell = record("CELL", CELL, [("EDID", zstring("TestCell")), ("DATA", struct.pack("<H", 1))])
    (folder / "Fallout4.esm").write_bytes(plugin([], [
        group("KYWD", keywords), group("STAT", statics), group("CONT", [container]), group("SCOL", [scol]),
        group("FLST", [form_list]), group("COBJ", recipes),
        interior_cells(cell_with_children(cell, CELL, temporary=placed)),
    ], flags=0x1))
    return folder


def test_each_reference_rule_of_a_built_cell(load_order):
    plan = cell_plan(load_order, f"{CELL:08X}")
    items = {item["reference"]: item for item in plan["references"]}
    assert len(items) == len(REFERENCES) + 1 and plan["problems"] == []
    for form_id, (_, _, _, expected, text) in REFERENCES.items():
        item = items[f"{form_id:08X}"]
        assert item["verdict"] == expected, (hex(form_id), item)
        if text:
            assert any(text in line for line in item["reasons"] + item["needs"]), (hex(form_id), item)
        else:
            assert item["reasons"] == item["needs"] == [], item
    assert items[f"{LINKING:08X}"]["verdict"] == "excluded"
    assert items["00002015"]["notes"] == ["its base's material swap (MODS) is ignored by the CK: the combined mesh "
                                          "shows the model's textures"]


def test_a_combined_reference_lands_in_the_group_of_its_bound(load_order):
    plan = cell_plan(load_order, f"{CELL:08X}")
    items = {item["reference"]: item for item in plan["references"]}
    center, radius = expected_bound(load_order / "meshes/Test/Good.nif", PLACE, ANGLES, SCALE)
    assert np.allclose(items["00002000"]["bound"], [*center, radius], atol=1e-3)
    want = expected_group(center)
    assert items["00002000"]["group"] == f"{want:08X}"
    assert items["00002014"]["group"] == f"{want:08X}"  # the same model, from the archive
    assert items["00002016"]["group"] == f"{want | 0x80000000:08X}"  # a non-occluder base: its own class
    assert want != expected_group((0, 0, 0))


def test_a_mod_without_its_master_needs_it(load_order, tmp_path):
    """Only the mod: what its references' bases and keywords are needs Fallout4.esm; a moved
    reference is out whatever its base; the mod's own STAT is judged in full."""
    folder = tmp_path / "ModData"
    (folder / "meshes").mkdir(parents=True)
    os.symlink(load_order / "meshes/Test", folder / "meshes/Test")
    own = stat(0x01000800, "ModGood", "Test\\Good.nif")
    cell = record("CELL", CELL, [("EDID", zstring("TestCell")), ("DATA", struct.pack("<H", 1)),
                                 ("XCRI", struct.pack("<IIIII", 1, 2, 0xABC, 0x3000, 0xABC))])
    placed = [refr(0x2000, 0x800), refr(0x01002100, 0x01000800), refr(0x01002101, 0x01000800, extra=(link(0x900, 0),))]
    other = record("CELL", 0x01001001, [("EDID", zstring("Other")), ("DATA", struct.pack("<H", 1))])
    (folder / "Mod.esp").write_bytes(plugin(["Fallout4.esm"], [
        group("STAT", [own]),
        interior_cells(cell_with_children(cell, CELL, temporary=placed),
                       cell_with_children(other, 0x01001001, temporary=[refr(0x2002, 0x800)])),
    ]))
    plan = cell_plan(folder, "Fallout4.esm:001000")
    items = {item["reference"]: item for item in plan["references"]}
    assert items["Fallout4.esm:002000"]["needs"] == ["Fallout4.esm"]
    assert items["Fallout4.esm:003000"]["needs"] == ["Fallout4.esm"] and items["Fallout4.esm:003000"]["xcri_group"] == "00000ABC"
    assert items["00002100"]["verdict"] == "combined" and items["00002100"]["group"]
    assert items["00002101"]["needs"] == ["Fallout4.esm (is keyword Fallout4.esm:000900 of a linked reference MultirefLOD?)"]
    assert "Fallout4.esm:002002" not in items  # the mod moved it into its own cell: not one of this cell's
    moved = cell_plan(folder, "00001001")
    assert {i["reference"]: i["reasons"] for i in moved["references"]} == {"Fallout4.esm:002002": []}


def test_a_reference_moved_out_by_a_later_plugin_is_excluded(load_order):
    moved = record("CELL", 0x01000900, [("EDID", zstring("Elsewhere")), ("DATA", struct.pack("<H", 1))])
    (load_order / "Mod.esp").write_bytes(plugin(["Fallout4.esm"], [
        interior_cells(cell_with_children(moved, 0x01000900, temporary=[refr(0x2000, 0x800)]))]))
    items = {item["reference"]: item for item in cell_plan(load_order, f"{CELL:08X}")["references"]}
    assert items["00002000"]["reasons"] == ["moved to another cell by Mod.esp"]


# -- the command line --------------------------------------------------------------------------
def test_cli_meshes_of_a_load_order(load_order):
    (load_order / "meshes/Test/Animated.nif").write_bytes(b"not a mesh")  # unreadable: a line, not a failure
    result = run("precombines", load_order, "--meshes", "--json", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    by_model = {line["model"]: line for line in lines}
    assert len(lines) == len(by_model) == 5  # Good, Full, Animated, Missing, Archived: each once
    assert by_model["Test\\Good.nif"]["verdict"] == "combinable"
    assert by_model["Test\\Full.nif"]["verdict"] == "crashes the CK"
    assert by_model["Test\\Full.nif"]["findings"][0]["text"] == ("full-precision vertices in BSTriShape 'cylinder_1' "
                                                                  "(block 3): the CK crashes on it")
    assert by_model["Test\\Animated.nif"]["verdict"] == "unreadable"
    assert by_model["Test\\Missing.nif"]["verdict"] == "not found"
    assert by_model["Test\\Archived.nif"]["file"].endswith("Fallout4 - Meshes.ba2:meshes/Test/Archived.nif")
    assert "5 model(s): 2 combinable, 1 crashes the CK, 1 not found, 1 unreadable" in result.stderr
    text = run("precombines", load_order, "--meshes")
    assert "Test\\Full.nif: crashes the CK; full-precision vertices in BSTriShape 'cylinder_1' (block 3): the CK " \
        "crashes on it" in text.stdout.splitlines()


def test_cli_meshes_of_nifs_given_and_the_plan_load_no_blender_code(load_order):
    result = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "cli.py"), "precombines", "--meshes",
                             str(load_order / "meshes/Test"), str(load_order / "Fallout4 - Meshes.ba2")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    verdicts = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert len(verdicts) == 4 and verdicts[str(load_order / "meshes/Test/Full.nif")].startswith("crashes the CK")
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    assert not [m for m in imported if m.split(".")[0] == "bpy" or m.startswith(("precombined_nif.io", "precombined_nif.ui"))
                and m not in CODE_FREE_PACKAGES]
    plan = run("precombines", load_order, "--cell", "1000", "--plan")
    assert plan.returncode == 0 and "  REFR 00002002 (STAT 00000800 Good, Test\\Good.nif): excluded: initially disabled" \
        in plan.stdout.splitlines()
    assert run("precombines", load_order, "--plan").returncode == 2
