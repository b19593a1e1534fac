"""What a new user's first hour with cli.py ran into (issue 44): outputs checked before the work
and worded as outputs, an output that is its input refused, JSON whenever --json is given."""

import json
import subprocess
import sys

import pytest
from support import ROOT


def run(*args, python=sys.executable, **options):
    return subprocess.run([python, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120,
                          **options)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("first-hour") / "sample.nif"
    assert run("sample", path).returncode == 0
    return path


def one_error(result):
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# -- 8: roundtrip X X ---------------------------------------------------------------------------------
def test_roundtrip_refuses_its_input_as_output(sample, tmp_path):
    copy = tmp_path / "copy.nif"
    copy.write_bytes(sample.read_bytes())
    before = copy.stat().st_mtime_ns
    line = one_error(run("roundtrip", copy, copy))
    assert "the output is the input" in line and str(copy) in line
    line = one_error(run("roundtrip", copy, tmp_path))  # into its own folder: the same file
    assert "the output is the input" in line
    line = one_error(run("roundtrip", tmp_path, tmp_path))
    assert "the output folder is the input folder" in line
    assert copy.read_bytes() == sample.read_bytes() and copy.stat().st_mtime_ns == before
    assert run("roundtrip", copy, tmp_path / "other.nif").returncode == 0  # another file is written


# -- 11: --json always prints JSON ---------------------------------------------------------------------
def test_info_json_of_one_bad_file_is_json(tmp_path):
    bad = tmp_path / "bad.nif"
    bad.write_bytes(b"\0" * 64)
    result = run("info", bad, "--json")
    assert result.returncode == 2
    (line,) = result.stdout.splitlines()
    found = json.loads(line)
    assert found["file"] == str(bad) and "not a NIF file" in found["error"]
    assert one_error(result) == f"error: {found['error']}"
    missing = json.loads(run("info", tmp_path / "missing.nif", "--json").stdout)
    assert missing["file"] == str(tmp_path / "missing.nif") and "No such file" in missing["error"]


# -- 9: output folders checked before the work -----------------------------------------------------------
@pytest.mark.parametrize("command", ["export", "import"])
def test_a_missing_output_folder_is_named_as_the_output_before_any_work(sample, tmp_path, command):
    """Checked before the .blend is opened or any file imported."""
    output = tmp_path / "nodir" / ("x.nif" if command == "export" else "x.blend")
    blend = tmp_path / "a.blend"
    blend.write_bytes(b"BLENDER")
    args = ("export", blend, output) if command == "export" else ("import", sample, "--blend", output)
    line = one_error(run(*args))
    assert line == f"error: {command}: {output}: the output's folder {output.parent} does not exist"
    assert not output.parent.exists()


def test_export_of_a_missing_blend_names_it_as_the_input(tmp_path):
    line = one_error(run("export", tmp_path / "gone.blend", tmp_path / "x.nif"))
    assert line == f"error: export: {tmp_path / 'gone.blend'}: the input .blend file does not exist"


def test_export_refuses_a_folder_as_its_output_file(tmp_path):
    blend = tmp_path / "a.blend"
    blend.write_bytes(b"BLENDER")
    (tmp_path / "d.nif").mkdir()
    assert one_error(run("export", blend, tmp_path / "d.nif")) == f"error: export: {tmp_path / 'd.nif'}: the output is a folder, not a file"


# -- 10: a bad .blend ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_bad_blend_prints_the_projects_error_line_only(tmp_path):
    """Blender's own "Error: File format is not supported" line is not printed before ours."""
    blend = tmp_path / "bad.blend"
    blend.write_bytes(b"not a blend file at all")
    result = run("export", blend, tmp_path / "x.nif", python=str(ROOT / ".venv/bin/python"))
    assert result.stdout == ""
    assert one_error(result).startswith(f"error: {blend}: cannot be opened (")


# -- 12: without numpy -----------------------------------------------------------------------------------
def test_without_numpy_the_error_says_what_to_install(sample):
    """A Python whose numpy cannot be imported (as a system Python without it): one line naming
    numpy 1.26 and the project's environment, no "internal error"."""
    hide_numpy = ("import runpy, sys; sys.modules['numpy'] = None; sys.argv = sys.argv[1:]; "
                  "runpy.run_path(sys.argv[0], run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", hide_numpy, str(ROOT / "cli.py"), "info", str(sample)],
                            capture_output=True, text=True, timeout=120)
    line = one_error(result)
    assert "internal error" not in line and "numpy 1.26" in line and ".venv/bin/python" in line and "pip install numpy" in line


# -- 13: precombines --meshes of a file that is no NIF ------------------------------------------------
@pytest.mark.parametrize("json_output", [False, True])
def test_precombines_meshes_of_an_unreadable_nif_exits_2(sample, tmp_path, json_output):
    """As command-line.md says of any file the command line cannot read: its verdict line, an
    error line naming it, status 2; a readable NIF given with it still gets its verdict."""
    text = tmp_path / "text.nif"
    text.write_text("hello\n")
    result = run("precombines", "--meshes", text, sample, *(["--json"] if json_output else []))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {text}: not a NIF file (no 'Gamebryo File Format' header line)"]
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    if json_output:
        assert [json.loads(line)["verdict"] for line in lines][0] == "unreadable"
    else:
        assert lines[0].startswith(f"{text}: unreadable") and lines[1].startswith(f"{sample}: ")
    assert run("precombines", "--meshes", sample).returncode == 0


# -- 7: info and roundtrip of plugins and material files --------------------------------------------
def corpus_kinds(*suffixes):
    from support import CORPUS

    return sorted(p for p in CORPUS.rglob("*") if p.suffix.lower() in suffixes and p.is_file())


def built_plugin(folder):
    """A light plugin of two masters, a compressed precombined CELL and a STAT (tests/plugin_writer.py)."""
    import plugin_writer as pw

    data = pw.plugin(["Fallout4.esm", "DLCCoast.esm"], [
        pw.group("STAT", [pw.static(0x01000801, "Crate", "Props\\Crate.nif")]),
        pw.interior_cells(pw.precombined_cell(0x01000802, [0x11, 0x22, 0x33], [0x01000803, 0x01000804], pw.stamp(2024, 5, 1))),
    ], flags=0x200)
    path = folder / "Built.esl"
    path.write_bytes(data)
    return path


def plugin_facts(data):
    """Masters, record counts by type and the precombined cells, read with tests/plugin_writer.py."""
    import plugin_writer as pw

    records = pw.independent_records(data)
    counts = {}
    for record in records:
        counts[record["type"]] = counts.get(record["type"], 0) + 1
    cells = []
    for record in records:
        if record["type"] == "CELL" and "XCRI" in record["fields"]:
            meshes, pairs = pw.xcri_pairs(record["fields"]["XCRI"][0])
            cells.append((f"{record['form_id']:08X}", len(meshes), len(pairs)))
    return pw.masters_of(data), dict(sorted(counts.items())), cells


@pytest.mark.parametrize("source", ["corpus", "built"])
def test_info_summarises_plugins(tmp_path, source):
    paths = corpus_kinds(".esp", ".esm", ".esl") if source == "corpus" else [built_plugin(tmp_path)]
    assert paths
    for path in paths:
        result = run("info", path, "--json")
        assert result.returncode == 0, result.stderr
        info = json.loads(result.stdout)
        masters, counts, cells = plugin_facts(path.read_bytes())
        assert info["format"] == "plugin" and info["masters"] == masters and info["records"] == counts
        assert [(c["cell"], c["meshes"], c["references"]) for c in info["precombined_cells"]] == cells
        text = run("info", path)
        assert text.returncode == 0 and f"masters: {', '.join(masters)}" in text.stdout
        if source == "built":
            assert info["flags"] == ["light"] and cells == [("01000802", 3, 2)]
            assert "CELL 01000802 Cell1000802: 3 combined meshes, 2 references combined" in text.stdout


def test_info_and_roundtrip_of_every_corpus_material_file(tmp_path):
    """Every corpus BGSM and BGEM: info (one call, a JSON line each) lists its textures (each a
    length-prefixed string of the file); roundtrip (the command's task, and the command for one)
    writes it back byte for byte."""
    import struct

    from precombined_nif.commands.batch import roundtrip_task

    paths = corpus_kinds(".bgsm", ".bgem")
    assert len(paths) > 10
    result = run("info", *paths, "--json")
    assert result.returncode == 0, result.stderr
    infos = {line["file"]: line for line in map(json.loads, result.stdout.splitlines())}
    for index, path in enumerate(paths):
        data = path.read_bytes()
        info = infos[str(path)]
        assert info["format"] == "material" and info["kind"] == data[:4].decode()
        assert info["version"] == struct.unpack_from("<I", data, 4)[0]
        for texture in info["textures"].values():
            assert struct.pack("<I", len(texture.encode()) + 1) + texture.encode() + b"\0" in data
        out = tmp_path / f"{index}{path.suffix}"
        assert roundtrip_task(path, out, False).startswith(f"{out}: written, identical to")
        assert out.read_bytes() == data
    result = run("roundtrip", paths[0], tmp_path / f"cli{paths[0].suffix}")
    assert result.returncode == 0 and "identical to" in result.stdout, result.stderr


def test_roundtrip_of_plugins(tmp_path):
    for path in corpus_kinds(".esp", ".esm", ".esl") + [built_plugin(tmp_path)]:
        out = tmp_path / "out" / path.name
        (tmp_path / "out").mkdir(exist_ok=True)
        result = run("roundtrip", path, out)
        assert result.returncode == 0 and "identical to" in result.stdout, result.stderr
        assert out.read_bytes() == path.read_bytes()


# -- 14: hints that help ------------------------------------------------------------------------------
def test_a_nif_given_as_plugin_is_named_not_a_plugin(sample, corpus):
    """``info CELL --plugin text.nif``: the plugin is said not to be one (not "record header at 0")."""
    cell = corpus / "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
    result = run("info", cell, "--plugin", sample)
    assert result.returncode == 2
    assert f"{sample}" in result.stderr and "not a plugin (it starts with b'Game'" in result.stderr
    assert "record header" not in result.stderr


def test_ls_explains_sizes_it_does_not_know(tmp_path):
    """A BSA whose files are compressed lists '-' for their sizes, and the last line says why."""
    from archive_writer import write_bsa

    archive = tmp_path / "x.bsa"
    write_bsa(archive, {"meshes/a.nif": b"x" * 100}, version=105, compressed=True)
    result = run("ls", archive)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["-", "meshes/a.nif"]
    assert "size -: the archive stores it compressed and does not record its size" in lines[-1]


# -- 4: info --data ---------------------------------------------------------------------------------
def test_info_of_a_cell_finds_its_plugin_in_the_data_folder_given(tmp_path, corpus):
    """A cell copied out of its Data folder: ``info --data DIR`` names the copies after their
    references as ``--plugin`` with the plugin does; without either, no references."""
    data = corpus / "ck-precombined"
    cell = tmp_path / "00001E58_1200ADBE_OC.NIF"
    cell.write_bytes((data / "Meshes/PreCombined/00001E58_1200ADBE_OC.NIF").read_bytes())
    alone = json.loads(run("info", cell, "--json").stdout)
    assert "references" not in alone
    found = run("info", cell, "--data", data, "--json")
    assert found.returncode == 0, found.stderr
    given = run("info", cell, "--plugin", data / "AlootHomePlate.esp", "--json")
    assert json.loads(found.stdout)["references"] == json.loads(given.stdout)["references"]
    assert json.loads(found.stdout)["references"]
    assert "not a folder" in one_error(run("info", cell, "--data", tmp_path / "none"))
