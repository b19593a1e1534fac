"""The corpus cell imported with a load order holding a plugin built by the test that overrides
some of its references: exactly the copies those references place are marked, and the
Precombined panel shows the cell's state."""

import importlib
import os
import struct
import zlib

import numpy as np
import pytest
from plugin_writer import cell_with_children, independent_refrs, interior_cells, placed, plugin, precombined_cell, stamp
from support import corpus_files

PLUGIN = "ck-precombined/AlootHomePlate.esp"
CELL = next(p for p in corpus_files("ck-precombined/**/*_OC.NIF") if "1200ADBE" in p.name.upper())
NEW = stamp(2024, 6, 1)


def aloot_cell_fields(data):
    """{field: bytes} of AlootHomePlate's CELL 00001E58, read with struct and zlib only."""
    at = data.index(b"CELL\x00\x00", 24)
    while True:
        kind, size, flags, form_id = struct.unpack_from("<4sIII", data, at)
        if kind == b"CELL" and form_id == 0x1E58:
            break
        at = data.index(b"CELL", at + 4)
    body = zlib.decompress(data[at + 28:at + 24 + size])
    fields, pos = {}, 0
    while pos < len(body):
        name, length = struct.unpack_from("<4sH", body, pos)
        fields.setdefault(name, body[pos + 6:pos + 6 + length])
        pos += 6 + length
    return fields


def later_data(corpus, folder):
    """A Data folder: AlootHomePlate.esp, its .csg and meshes (linked from the corpus) and
    Later.esp, which overrides three of the plugin's references placing copies of CELL and one
    of Fallout4.esm's, all dated after PCMB. Returns (folder, the three, Fallout4.esm's)."""
    from precombined_nif.core.nif import NifFile
    from precombined_nif.core.plugin.references import cell_instances

    data = (corpus / PLUGIN).read_bytes()
    fields = aloot_cell_fields(data)
    meshes, count = struct.unpack_from("<II", fields[b"XCRI"])
    listed = np.frombuffer(fields[b"XCRI"], "<u4", count, 8 + 4 * meshes)[0::2].tolist()
    refrs = independent_refrs(data)
    translations = np.array([instance["translation"] for *_, instance in cell_instances(NifFile.read(CELL))])
    # The plugin's own references placing copies of this cell file, and one of Fallout4.esm's.
    own = [f for f in listed if f >> 24 == 1 and f in refrs
           and (np.abs(translations - refrs[f][:3]).max(axis=1) <= 0.01).any()]
    chosen = own[:3]
    vanilla = next(f for f in listed if f >> 24 == 0)
    overrides = [placed(f, 0x800, refrs[f][:3], NEW) for f in chosen] + [placed(vanilla, 0x800, (0, 0, 0), NEW)]
    folder.mkdir()
    for name in ("AlootHomePlate.esp", "AlootHomePlate - Geometry.csg", "Meshes"):
        os.symlink(corpus / "ck-precombined" / name, folder / name)
    pcmb = struct.unpack("<H", fields[b"PCMB"])[0]
    # The CELL override copies PCMB and VISI; its XCRI stays AlootHomePlate's (none of its own).
    (folder / "Later.esp").write_bytes(plugin(["Fallout4.esm", "AlootHomePlate.esp"], [interior_cells(cell_with_children(
        precombined_cell(0x1E58, [], [], pcmb=pcmb, visi=pcmb, vci=pcmb, xcri=False), 0x1E58, temporary=overrides))]))
    return folder, chosen, vanilla


def test_copies_overridden_later_are_marked(clean_scene, corpus, addon, tmp_path):
    import bpy

    folder, chosen, vanilla = later_data(corpus, tmp_path / "Data")
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), messages = file_import.import_cells(bpy.context, [str(CELL)], plugins=[str(corpus / PLUGIN)],
                                                              load_order=(str(folder), None))
    copies = [o for o in collection.all_objects if "precombined_instance" in o]
    marked = [o for o in copies if "precombine_breaker" in o]
    expected = [o for o in copies if int(o.get("reference_form_id", "0"), 16) in chosen]
    assert len(expected) >= 3 and sorted(o.name for o in marked) == sorted(o.name for o in expected)
    assert {o["precombine_breaker"] for o in marked} == {"Later.esp"}
    assert {o["precombine_override"] for o in marked} == {
        "ignored by the game: the reference is not defined by the cell's master"}
    breakers = collection.children[f"{collection.name} precombine breakers"]
    assert sorted(o.name for o in breakers.objects) == sorted(o.name for o in marked)
    # Fallout4.esm's reference overridden with a later date breaks the cell; 27 of its 38 meshes
    # are not in the corpus.
    assert collection["precombine_status"] == "broken" and collection["precombine_plugin"] == "Later.esp"
    causes = collection["precombine_causes"].split("\n")
    assert causes[-1] == f"reference override: Later.esp, REFR Fallout4.esm:{vanilla & 0xFFFFFF:06X}"
    assert sum(c.startswith("missing _OC file") for c in causes) == 27
    assert any("holds no Fallout4.esm" in m for m in messages)
    panel = importlib.import_module(f"{addon.__name__}.ui.precombined_panel")
    lines = panel.precombine_state_lines(marked[0])
    assert lines[0] == ("Precombines: broken (CELL of Later.esp), previs: off", "ERROR")
    assert lines[-1] == ("Overridden by Later.esp: ignored by the game: the reference is not defined by the cell's "
                         "master", "ERROR")
    assert lines[-2][0] == "... and 22 more (cli.py precombines DATA --cell lists them)"
    unmarked = next(o for o in copies if "precombine_breaker" not in o)
    assert panel.precombine_state_lines(unmarked)[-1][0] == lines[-2][0]


@pytest.mark.parametrize("step", ["name_instances", "load_order_report", "mark_breakers", "warnings"])
def test_a_failure_in_a_pass_after_the_build_leaves_nothing(clean_scene, corpus, addon, tmp_path, monkeypatch, step):
    """Reference naming, the load order's report, its marks and the builder's report run after
    the cell is built, in the file's rollback: a failure in any of them (injected here, after
    the pass did its work) removes everything the file made, the breakers' collection too, and
    the file's one message says what failed."""
    import bpy
    from scene import snapshot

    folder, _, _ = later_data(corpus, tmp_path / "Data")
    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    owner = file_import.CellBuilder if step == "warnings" else file_import
    real = getattr(owner, step)

    def failing(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError(f"{step} failed")

    monkeypatch.setattr(owner, step, failing)
    before = snapshot()
    collections, messages = file_import.import_cells(bpy.context, [str(CELL)], plugins=[str(corpus / PLUGIN)],
                                                     load_order=(str(folder), None))
    assert collections == [] and len(messages) == 1
    assert messages[0] == f"{CELL}: internal error (RuntimeError: {step} failed); please report it"
    assert snapshot() == before


def test_without_a_load_order_nothing_is_marked(clean_scene, corpus, addon):
    import bpy

    file_import = importlib.import_module(f"{addon.__name__}.io.file_import")
    (collection,), _ = file_import.import_cells(bpy.context, [str(CELL)], plugins=[str(corpus / PLUGIN)])
    assert "precombine_status" not in collection
    assert not [o for o in collection.all_objects if "precombine_breaker" in o]


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_precombine_state_on_other_blender_versions(extension_zip, corpus, tmp_path, version):
    import subprocess
    from pathlib import Path

    import extension
    from support import unavailable

    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    folder, _, _ = later_data(corpus, tmp_path / "Data")
    command = [extension.python(venv), Path(__file__).with_name("smoke_precombine_state.py"), extension_zip,
               tmp_path / "user", folder, CELL, corpus / PLUGIN]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "state read, overridden copies marked" in result.stdout
