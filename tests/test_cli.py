"""cli.py as a user runs it: plain Python, JSON summary, round trip, one-line failures."""

import json
import struct
import subprocess
import sys

import pytest
from support import CODE_FREE_PACKAGES, ROOT


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "sample.nif"
    result = run("sample", path)
    assert result.returncode == 0, result.stderr
    return path


def test_info_json_of_the_sample(sample):
    result = run("info", sample, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert {k: info[k] for k in ("format", "version", "user_version", "bs_version", "endian", "game")} == {
        "format": "nif",
        "version": "20.2.0.7",
        "user_version": 12,
        "bs_version": 130,
        "endian": "little",
        "game": "FO4",
    }
    assert [b["type"] for b in info["blocks"]] == ["BSFadeNode", "BSTriShape", "BSLightingShaderProperty", "BSShaderTextureSet"]
    assert all(b["size"] > 0 and b["index"] == i for i, b in enumerate(info["blocks"]))
    assert info["shapes"] == [
        {"block": 1, "type": "BSTriShape", "name": "Cube", "vertices": 24, "triangles": 12, "skinned": False}
    ]


def test_info_json_of_fnv_and_skinned_files(corpus):
    info = json.loads(run("info", "--json", corpus / "pynifly/tests/tests/FONV/outfitf_simple.nif").stdout)
    assert info["game"] == "FO3" and info["bs_version"] == 34
    assert info["shapes"] and all(s["vertices"] > 0 and s["triangles"] > 0 for s in info["shapes"])
    assert any(s["skinned"] for s in info["shapes"])
    info = json.loads(run("info", "--json", corpus / "pynifly/tests/tests/FO4/BTBaseMaleBody.nif").stdout)
    assert info["game"] == "FO4"
    assert any(s["type"] == "BSSubIndexTriShape" and s["skinned"] for s in info["shapes"])


def test_info_text(sample):
    result = run("info", sample)
    assert result.returncode == 0
    assert "Fallout 4" in result.stdout and "24 vertices, 12 triangles" in result.stdout


def test_roundtrip(corpus, tmp_path):
    source = corpus / "pynifly/tests/tests/FO4/AlarmClock.nif"
    result = run("roundtrip", source, tmp_path / "out.nif")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.nif").read_bytes() == source.read_bytes()


@pytest.mark.parametrize(
    "args, expected",
    [
        (("info", "{missing}"), "No such file"),
        (("info", "{garbage}"), "not a NIF file"),
        (("info", "{truncated}"), "truncated"),
        (("info",), "required"),
        (("explode",), "invalid choice"),
    ],
)
def test_failures_are_one_line_with_status_2(tmp_path, sample, args, expected):
    files = {
        "missing": tmp_path / "missing.nif",
        "garbage": tmp_path / "garbage.nif",
        "truncated": tmp_path / "truncated.nif",
    }
    files["garbage"].write_bytes(b"\x00" * 100)
    files["truncated"].write_bytes(sample.read_bytes()[:300])
    result = run(*(arg.format(**files) for arg in args))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert expected in lines[0]
    if len(args) > 1:
        assert str(files[args[1].strip("{}")]) in lines[0]


def old_header(line, version, *fields):
    """The first bytes of a NIF of an older version, after nif.xml's header: the text line, the
    version number (since 3.1) and what follows it in that version (``fields``: struct format and
    values), then a block type name as its first block's type would start."""
    return line.encode() + b"\n" + struct.pack("<I", version) + struct.pack(*fields) + struct.pack("<I", 6) + b"NiNode"


@pytest.mark.parametrize("name, data", [
    ("4.0.0.2", old_header("NetImmerse File Format, Version 4.0.0.2", 0x04000002, "<I", 12)),  # Morrowind: block count
    ("4.2.2.0", old_header("NetImmerse File Format, Version 4.2.2.0", 0x04020200, "<I", 3)),
    ("10.0.1.0", old_header("NetImmerse File Format, Version 10.0.1.0", 0x0A000100, "<I", 7)),
    ("10.1.0.106", old_header("Gamebryo File Format, Version 10.1.0.106", 0x0A01006A, "<II", 10, 7)),  # user version, count
    ("10.2.0.0", old_header("Gamebryo File Format, Version 10.2.0.0", 0x0A020000, "<III", 10, 7, 5)),  # Oblivion: bs header
    ("20.0.0.5", old_header("Gamebryo File Format, Version 20.0.0.5", 0x14000005, "<BIII", 1, 11, 7, 11)),  # endian byte first
])  # fmt: skip
def test_old_nif_versions_are_named_and_refused(tmp_path, name, data):
    """NetImmerse and Gamebryo files of versions before 20.2.0.7: one line naming the file and
    its version, as unsupported (not 'not a NIF file')."""
    path = tmp_path / "old.nif"
    path.write_bytes(data)
    result = run("info", path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"error: {path}, offset 0 (0x0): NIF version {name} is not supported (only 20.2.0.7)"


def test_truncated_file_names_block_and_offset(sample, tmp_path):
    damaged = tmp_path / "cut.nif"
    damaged.write_bytes(sample.read_bytes()[:-120])
    line = run("info", damaged).stderr.strip()
    assert f"{damaged}, block 2 (BSLightingShaderProperty), offset " in line and "truncated" in line


def test_roundtrip_failure_leaves_no_output(tmp_path):
    (tmp_path / "bad.nif").write_bytes(b"Gamebryo File Format, Version 20.2.0.7\n\x07\x00\x02\x14")
    result = run("roundtrip", tmp_path / "bad.nif", tmp_path / "out.nif")
    assert result.returncode == 2
    assert not (tmp_path / "out.nif").exists()


def test_package_and_codec_import_without_bpy():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import cli; cli.load_package(); "
        "import precombined_nif.core.nif, precombined_nif.commands.info, precombined_nif.core.nif.samples; "
        "assert 'bpy' not in sys.modules and 'mathutils' not in sys.modules, sorted(sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_codec_commands_load_no_blender_code(tmp_path):
    """The command line's codec part (commands.codec and the parser) runs without the add-on's
    Blender side: neither bpy nor a module of io, operators, ui or preferences gets loaded (but
    for the packages io and io.precombined, whose names the parser reads: they hold no code)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import cli; "
        "assert cli.main(['sample', '--cell', sys.argv[2]]) == 0 and cli.main(['info', sys.argv[2]]) == 0; "
        f"names = {CODE_FREE_PACKAGES!r}; "
        "loaded = [m for m in sys.modules if m in ('bpy', 'mathutils') or m.split('.')[1:2] in "
        "(['io'], ['operators'], ['ui'], ['preferences']) and m.startswith('precombined_nif.') and m not in names]; "
        "assert not loaded, loaded"
    )
    result = subprocess.run([sys.executable, "-c", code, str(ROOT), str(tmp_path / "cell.nif")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_sample_cell(tmp_path):
    path = tmp_path / "cell.nif"
    assert run("sample", "--cell", path).returncode == 0
    info = json.loads(run("info", "--json", path).stdout)
    cell = info["precombined"][0]
    assert cell["layout"] == "inline" and cell["block"] == 1
    assert [o["instances"] for o in cell["objects"]] == [4, 4, 4]
    assert all(o["vertices"] == 24 and o["lod_triangles"] == [12, 6, 3] and o["hash"] == "DDF19A67" for o in cell["objects"])
    roundtrip = run("roundtrip", path, tmp_path / "again.nif")
    assert "identical" in roundtrip.stdout


@pytest.mark.parametrize("json_output", [False, True])
def test_names_with_any_byte_print_under_a_strict_utf8_console(corpus, tmp_path, json_output):
    """A name holding byte 0x81 (undefined in Windows-1252: read as U+0081) printed where stdout
    is strict UTF-8 (PYTHONIOENCODING=utf-8, a Windows redirect)."""
    import os

    from nif_rewriter import RawNif

    nif = RawNif.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    shape = nif.indices_of("BSTriShape")[0]
    name = nif.node_name(shape)
    nif.strings[nif.strings.index(name)] = name + "\x81"
    path = tmp_path / "Odd.nif"
    path.write_bytes(nif.to_bytes())
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, str(ROOT / "cli.py"), "info", str(path), *(["--json"] if json_output else [])]
    result = subprocess.run(command, capture_output=True, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    # The text lists names as Python literals (\x81); JSON holds the character itself.
    assert (f'"{name}\x81"' if json_output else f"'{name}\\x81'").encode() in result.stdout


@pytest.mark.parametrize("name, says", [
    ("ck-precombined/ColterFix-Main-scripts.ba2", "this is a Fallout 4 BA2 archive: `cli.py ls` lists it"),
    ("ck-precombined/AlootHomePlate - Geometry.csg", "this is a precombined geometry file: give it to a cell's import with --csg"),
])
def test_files_of_other_kinds_given_as_nifs_are_named_for_what_they_are(corpus, name, says):
    result = run("info", corpus / name)
    if name.endswith(".ba2"):  # an archive given to info is the batch of its NIFs: this one holds none
        says = "holds no .nif, .kf, .bsm2, .mesh or .tri file (`cli.py ls` lists an archive's files)"
        assert result.returncode == 2 and result.stderr.strip() == f"error: {corpus / name}: {says}"
        result = run("info", f"{corpus / name}:scripts/x.nif")
        assert result.returncode == 2 and "holds no file scripts/x.nif" in result.stderr
        return
    assert result.returncode == 2 and result.stderr.strip() == f"error: {corpus / name}: not a NIF: {says}"

