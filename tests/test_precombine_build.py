"""Precombines built without the Creation Kit (issue 40): a test plugin placing corpus Fallout 4
statics (one shape and several, several materials, a BSMeshLODTriShape, with and without
collision, a SCOL) in an interior, turned and scaled, built; every copy of the built ``_OC``
files is checked against the model's vertices placed by its REFR, both computed here from the
files' bytes (nif_rewriter, struct, plugin_writer), not by the product's reader of the model."""

import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from nif_rewriter import RawNif
from plugin_writer import (cell_with_children, group, independent_records, interior_cells, plugin, record, worldspace,
                           xcri_pairs, zstring)
from raw_nodes import read_nodes, world_matrices
from raw_tri_shape import shape_fields, vertex_buffer
import ck_meshes
from ck_cell_source import CkCell, write_stand_in
from support import ROOT, corpus_plugin_folder
from test_ck_rules import expected_bound, expected_group
from test_precombine_physics_build import expected as physics_expected

from precombined_nif.core.formats import read_file
from precombined_nif.core.stream import WriteStream
from precombined_nif.core.havok import GAME_UNITS
from precombined_nif.core.nif import NifFile
from precombined_nif.core.plugin.file import PluginFile
from precombined_nif.core.plugin.records import Plugin
from precombined_nif.core.precombined.build.cell import Build
from precombined_nif.core.precombined.build.ck_rotation import ck_rotation
from precombined_nif.core.nif.blocks.tri_shape import BSTriShape
from precombined_nif.core.precombined.cdx import (COLOR_TEXTURE, DATA_TEXTURE, GEOMETRY, MATERIAL, MESH, NO_VISIBILITY,
                                                  CdxFile)
from precombined_nif.core.precombined.csg import GeometryFile
from precombined_nif.core.precombined.names import geometry_hash
from precombined_nif.core.precombined.physics import MergedMesh

CELL = 0x1000
HOME = "ck-precombined/Meshes/aloot/HomePlate/"
MODELS = {  # base FormID: (EditorID, corpus model, what it brings)
    0x800: ("Golden", "nifly/tests/input/TestNifFile_Static_FO4.nif", "two shapes (one moved and scaled), no collision"),
    0x801: ("Poster", HOME + "ALOOT_HP_Poster01.nif", "two shapes with alpha, convex collision"),
    0x802: ("Curtains", HOME + "ALOOT_HP_Curtains.nif", "a BSMeshLODTriShape"),
    0x803: ("Shelf", HOME + "ALOOT_HP_ChemistryShelf.nif", "60 shapes, several materials, vertex colours"),
}
SCOL = 0x810
PLACED = {  # REFR FormID: (base, position, rotation in radians, scale)
    0x2000: (0x800, (100.0, 200.0, 50.0), (0.0, 0.0, 0.0), 1.0),
    0x2001: (0x800, (-300.0, 40.0, 10.0), (0.3, -0.2, 1.2), 1.5),
    0x2002: (0x801, (120.0, 210.0, 60.0), (0.0, 0.0, 2.5), 0.75),
    0x2003: (0x802, (1800.0, -900.0, 0.0), (0.1, 0.2, 0.3), 1.0),
    0x2004: (0x803, (600.0, 700.0, 0.0), (0.0, 0.0, -1.0), 1.25),
    0x2005: (SCOL, (-1500.0, 1500.0, 100.0), (0.0, 0.0, 0.7), 1.1),
}
SCOL_PARTS = [(0x800, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0), (0x800, (300.0, 0.0, 0.0), (0.0, 0.0, 1.5), 2.0),
              (0x801, (0.0, 200.0, 50.0), (0.2, 0.0, 0.0), 1.0)]


def refr(form_id, base, position, angles, scale):
    fields = [("NAME", struct.pack("<I", base))]
    if scale != 1.0:
        fields.append(("XSCL", struct.pack("<f", scale)))
    return record("REFR", form_id, fields + [("DATA", struct.pack("<6f", *position, *angles))])


def scol_record():
    onam = []
    for base in dict.fromkeys(part[0] for part in SCOL_PARTS):
        onam += [("ONAM", struct.pack("<I", base)),
                 ("DATA", b"".join(struct.pack("<7f", *p, *a, s) for b, p, a, s in SCOL_PARTS if b == base))]
    return record("SCOL", SCOL, [("EDID", zstring("Collection")), ("OBND", bytes(12)), *onam])


def write_load_order(corpus, folder):
    """Fallout4.esm with the statics, the SCOL and the interior cell; the models loose."""
    folder.mkdir(parents=True, exist_ok=True)
    statics = []
    for form_id, (name, model, _) in MODELS.items():
        target = folder / "meshes" / "Test" / model.rsplit("/", 1)[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        if form_id == 0x800:  # its second shape moved and scaled in the model: that goes into each copy
            golden = ck_meshes.golden(corpus)
            golden.set_transform(ck_meshes.OTHER_SHAPE, (0.0, 700.0, 50.0), ((1, 0, 0), (0, 1, 0), (0, 0, 1)), 2.0)
            ck_meshes.write(golden, target)
        else:
            target.write_bytes((corpus / model).read_bytes())
        statics.append(record("STAT", form_id, [("EDID", zstring(name)), ("OBND", bytes(12)),
                                                ("MODL", zstring(f"Test\\{target.name}"))]))
    scol = scol_record()
    cell = record("CELL", CELL, [("EDID", zstring("BuildCell")), ("DATA", struct.pack("<H", 1))])
    placed = [refr(form_id, *values) for form_id, values in PLACED.items()]
    (folder / "Fallout4.esm").write_bytes(plugin([], [
        group("STAT", statics), group("SCOL", [scol]), interior_cells(cell_with_children(cell, CELL, temporary=placed)),
    ], flags=0x1))
    return folder


@pytest.fixture
def load_order(corpus, tmp_path):
    return write_load_order(corpus, tmp_path / "Data")


def rotation(angles):
    """A REFR's DATA rotation as the game applies it (xEdit, the CK wiki): Rx(-x) Ry(-y) Rz(-z)."""
    x, y, z = (-a for a in angles)
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rx @ ry @ rz


def placement(position, angles, scale):
    matrix = np.eye(4)
    matrix[:3, :3] = rotation(angles) * scale
    matrix[:3, 3] = position
    return matrix


def model_shapes(path):
    """[(4x4 of the shape below the model's root, positions (n, 3))] of a model's shapes not
    below a marker node, read with struct: the root's own transform is the REFR's to replace."""
    nif = RawNif.read(path)
    nodes, roots = read_nodes(path)
    worlds = world_matrices(nodes, roots)
    shapes = []
    for index in sorted(worlds):
        if nif.type_of(index) not in ("BSTriShape", "BSMeshLODTriShape"):
            continue
        fields, at = shape_fields(nif, index)
        desc, (_, count) = fields["desc"], fields["counts"]
        stride = (desc & 0xF) * 4
        buffer = np.frombuffer(bytes(nif.blocks[index][at:at + stride * count]), np.uint8).reshape(count, stride)
        positions = vertex_buffer(buffer, desc, False)["positions"]
        shapes.append((np.linalg.inv(worlds[roots[0]]) @ worlds[index], positions))
    return shapes


def expected_copies(folder):
    """Per REFR, the placed vertices of each of its model's shapes: [(REFR, (n, 3))]."""
    copies = []
    for form_id, (base, position, angles, scale) in PLACED.items():
        placed = placement(position, angles, scale)
        parts = [(b, placement(p, a, s)) for b, p, a, s in SCOL_PARTS] if base == SCOL else [(base, np.eye(4))]
        for part, matrix in parts:
            path = folder / "meshes" / "Test" / MODELS[part][1].rsplit("/", 1)[-1]
            for shape, positions in model_shapes(path):
                world = placed @ matrix @ shape
                copies.append((form_id, positions @ world[:3, :3].T + world[:3, 3]))
    return copies


def built_copies(folder, layout):
    """[(group, (n, 3) placed vertices)] of every instance of every record of the built files,
    the geometry read from the .csg (shared) or the block (inline)."""
    copies = []
    csg = GeometryFile(folder / "Fallout4 - Precombined - Geometry.csg") if layout == "shared" else None
    for path in sorted((folder / "meshes/precombined").glob("*_OC.nif")):
        group = int(path.name.split("_")[1], 16)
        nif = read_file(path)
        for block in nif.blocks:
            for at, record in enumerate(getattr(block, "records", ()) or ()):
                if csg is not None:
                    _, vertices, _ = csg.record_geometry(int(block.objects[at]["data_offset"]), record.vertex_desc,
                                                         record.num_vertices, record.lod_counts)
                else:
                    vertices = record.vertex_data
                positions = vertices["position"][:, :3].astype(np.float64)
                for instance in record.instances:
                    matrix = np.asarray(instance["rotation"], np.float64) * float(instance["scale"])
                    copies.append((group, positions @ matrix.T + np.asarray(instance["translation"], np.float64)))
    if csg is not None:
        csg.close()
    return copies


def match(expected, built):
    """For each expected copy, the groups of the built copies with the same vertices (1e-2 units:
    float32 placements of half-float vertices)."""
    found = []
    for _, positions in expected:
        found.append([group for group, vertices in built
                      if vertices.shape == positions.shape and np.abs(vertices - positions).max() < 1e-2])
    return found


@pytest.mark.parametrize("layout", ["shared", "inline"])
def test_every_copy_stands_where_its_reference_places_its_model(load_order, layout):
    Build(load_order, f"{CELL:08X}", layout=layout).write()
    expected, built = expected_copies(load_order), built_copies(load_order, layout)
    found = match(expected, built)
    assert len(expected) == len(built) == 2 * 2 + 2 + 1 + 60 + (2 + 2 + 2)
    assert all(len(groups) == 1 for groups in found)
    # every shape of one reference in one group: the reference's
    by_reference = {}
    for (form_id, _), groups in zip(expected, found):
        by_reference.setdefault(form_id, set()).update(groups)
    assert all(len(groups) == 1 for groups in by_reference.values())
    patch = (load_order / "Fallout4 - Precombined.esp").read_bytes()
    (cell,) = [r for r in independent_records(patch) if r["type"] == "CELL"]
    meshes, pairs = xcri_pairs(cell["fields"]["XCRI"][0])
    assert sorted(form_id for form_id, _ in pairs) == sorted(PLACED)  # each combined reference once
    assert {form_id: mesh for form_id, mesh in pairs} == {f: next(iter(g)) for f, g in by_reference.items()}
    assert sorted(meshes) == sorted({group for group, _ in built})
    golden = load_order / "meshes/Test" / MODELS[0x800][1].rsplit("/", 1)[-1]
    for form_id in (0x2000, 0x2001):  # the group of the bound's centre, computed here from the model's bytes
        _, position, angles, scale = PLACED[form_id]
        assert by_reference[form_id] == {expected_group(expected_bound(golden, position, angles, scale)[0])}


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_cli_dry_run_lists_the_files_and_writes_none_then_the_build_says_intact(load_order):
    before = listing(load_order)
    dry = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = [line.split(" would write ", 1)[1].rsplit(" (", 1)[0] for line in dry.stdout.splitlines() if " would write " in line]
    assert listing(load_order) == before and len(listed) == 6 + 4  # _OC, csg, cdx, physics, esp
    done = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build")
    assert done.returncode == 0, done.stderr
    assert sorted(set(listing(load_order)) - set(before)) == sorted(str(Path(p).relative_to(load_order)) for p in listed)
    report = json.loads(run("precombines", load_order, "--json").stdout)
    (cell,) = report["cells"]
    assert (cell["cell"], cell["status"], cell["references"], cell["plugin"]) == ("00001000", "intact", 6,
                                                                                  "Fallout4 - Precombined.esp")
    assert cell["previs_status"] == "disabled"  # the stale previs dropped: drawn without occlusion culling


def test_a_cell_with_nothing_to_combine_writes_nothing_and_says_so(corpus, tmp_path):
    """The corpus cell without Fallout4.esm: every reference the CK combined waits on it."""
    folder = corpus_plugin_folder(corpus, tmp_path / "Data")
    result = run("precombines", folder, "--cell", "Fallout4.esm:001E58", "--build")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "CELL Fallout4.esm:001E58: no reference to combine: nothing written"
    assert "left out: 0000220A: needs: meshes\\SetDressing\\Signage\\BillboardSmSign02.nif" not in result.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["AlootHomePlate - Geometry.csg", "AlootHomePlate.esp", "Meshes"]


def test_bad_models_are_left_out_and_named(corpus, load_order):
    """A model the CK crashes on (full precision) is left out with its rule, a missing one named,
    the others built."""
    broken = ck_meshes.golden(corpus)
    ck_meshes.full_precision(broken, ck_meshes.SHAPE)
    ck_meshes.write(broken, load_order / "meshes/Test/Full.nif")
    extra = [record("STAT", 0x820, [("EDID", zstring("Full")), ("MODL", zstring("Test\\Full.nif"))]),
             record("STAT", 0x821, [("EDID", zstring("Gone")), ("MODL", zstring("Test\\Gone.nif"))])]
    cell = record("CELL", CELL, [("EDID", zstring("BuildCell")), ("DATA", struct.pack("<H", 1))])
    placed = [refr(form_id, *values) for form_id, values in PLACED.items()]
    placed += [refr(0x2100, 0x820, (0, 0, 0), (0, 0, 0), 1.0), refr(0x2101, 0x821, (0, 0, 0), (0, 0, 0), 1.0)]
    statics = [record("STAT", form_id, [("EDID", zstring(name)), ("MODL", zstring(f"Test\\{model.rsplit('/', 1)[-1]}"))])
               for form_id, (name, model, _) in MODELS.items()]
    (load_order / "Fallout4.esm").write_bytes(plugin([], [
        group("STAT", statics + extra), group("SCOL", [scol_record()]),
        interior_cells(cell_with_children(cell, CELL, temporary=placed))], flags=0x1))
    result = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert ("  left out: 00002100: crashes the CK: its model Test\\Full.nif: full-precision vertices in BSTriShape "
            "'cylinder_1' (block 3): the CK crashes on it") in lines
    assert "  left out: 00002101: needs: meshes\\Test\\Gone.nif" in lines
    assert "CELL 00001000: 6 references combined into 6 meshes" in lines


def test_an_unreadable_model_leaves_its_references_out_named(load_order):
    (load_order / "meshes/Test/TestNifFile_Static_FO4.nif").write_bytes(b"not a mesh")
    result = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build")
    assert result.returncode == 0, result.stderr
    why = ("excluded: its model Test\\TestNifFile_Static_FO4.nif cannot be read (not a NIF file (no 'Gamebryo File "
           "Format' header line))")
    assert [line for line in result.stdout.splitlines() if "left out" in line] == [
        f"  left out: {form_id}: {why}" for form_id in ("00002000", "00002001", "00002005")]  # the SCOL holds it too
    assert "CELL 00001000: 3 references combined into 3 meshes" in result.stdout


def test_an_unreadable_plugin_is_a_clear_error_and_nothing_is_written(load_order):
    (load_order / "Fallout4.esm").write_bytes(b"TES4 cut")
    before = listing(load_order)
    result = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Fallout4.esm: 8 bytes: not even a record header" in result.stderr
    assert listing(load_order) == before


def test_a_failed_write_leaves_no_file_in_place(load_order):
    """All files or none: the last file cannot be staged (its name is too long for the file
    system), so none of the others is put in place."""
    build = Build(load_order, f"{CELL:08X}")
    build.files[-1] = (load_order / ("x" * 300 + ".esp"), b"")
    before = listing(load_order)
    with pytest.raises(OSError):
        build.write()
    assert listing(load_order) == before


# -- the Creation Kit's own cell ---------------------------------------------------------------
@pytest.fixture(scope="module")
def ck_rebuild(corpus, tmp_path_factory):
    """The corpus cell rebuilt from its references, Fallout4.esm's part stood in for from the
    CK's records (ck_cell_source says how)."""
    ck = CkCell(corpus)
    folder = tmp_path_factory.mktemp("ck") / "Data"
    expected = write_stand_in(ck, folder)
    # The plugin without its precombines (the Data folder has none of its combined meshes, .csg
    # or .cdx): its CELL's XCRI and PCMB removed, every other byte the CK's.
    stripped = PluginFile.read(ck.root / "AlootHomePlate.esp")
    cell = stripped.record(0x1E58, "CELL")
    for name in ("XCRI", "PCMB"):
        cell.remove_field(name)
    (folder / "AlootHomePlate.esp").unlink()
    (folder / "AlootHomePlate.esp").write_bytes(stripped.to_bytes())
    # Built into the mod's own plugin, as the CK builds a mod's precombines: the geometry goes to
    # AlootHomePlate - Geometry.csg, its records carry that file's hash.
    build = Build(folder, "00001E58", into="AlootHomePlate.esp")
    build.write()
    yield ck, folder, expected, build
    ck.close()


def test_the_ck_cell_s_references_are_combined_again_in_the_same_groups(ck_rebuild):
    ck, folder, expected, build = ck_rebuild
    # the plugin's 141 REFRs among the copies of the corpus's 11 combined meshes, and 40 of Fallout4.esm's
    assert len(expected) == 181 and sum(form_id >> 24 == 0 and ck.plugin.record(form_id) is None for form_id in expected) == 40
    rebuilt = {form_id & 0xFFFFFF: group for form_id, group in build.pairs}
    listed = {form_id & 0xFFFFFF: group for form_id, group in ck.xcri.items()}
    assert all(rebuilt.get(form_id & 0xFFFFFF) == group for form_id, group in expected.items())
    assert all(ck.xcri[form_id] == group for form_id, group in expected.items())  # and the CK's XCRI says so
    # The stand-in bases place other references of theirs too, in meshes the corpus lacks: each
    # is one the CK combined, in the group its XCRI names.
    others = {form_id: group for form_id, group in rebuilt.items() if form_id not in {f & 0xFFFFFF for f in expected}}
    assert len(others) == 307 and all(listed.get(form_id) == group for form_id, group in others.items())
    assert set(ck.files) <= set(build.groups)


def rebuilt_copies(build, group):
    """[(record bytes, instance)] of the rebuilt file of ``group``."""
    path, data = next((p, d) for p, d in build.files if p.name.upper() == f"00001E58_{group:08X}_OC.NIF")
    nif = read_file(path)
    csg = GeometryFile(next(p for p, _ in build.files if p.suffix == ".csg"))
    out = []
    for block in nif.blocks:
        for at, rec in enumerate(getattr(block, "records", ()) or ()):
            desc, vertices, triangles = csg.record_geometry(int(block.objects[at]["data_offset"]), rec.vertex_desc,
                                                            rec.num_vertices, rec.lod_counts)
            out += [(vertices.tobytes() + triangles.tobytes(), rec, instance) for instance in rec.instances]
    csg.close()
    return out


def test_the_ck_cell_s_records_and_instances_are_the_ck_s(ck_rebuild):
    """Each copy of the 11 files, rebuilt: a record of the CK's geometry bytes (vertices and every
    LOD's triangles) and LOD counts, its instance the CK's (rotation, translation and scale to
    float32 rounding, the same grayscale scale and bound)."""
    ck, folder, expected, build = ck_rebuild
    checked = 0
    for group_id, index, at, number, owner, rec, instance in ck.copies:
        if owner is None:
            continue
        _, vertices, triangles = ck.geometry(ck.files[group_id], index, at)
        ours = [(r, i) for data, r, i in rebuilt_copies(build, group_id) if data == vertices.tobytes() + triangles.tobytes()
                and np.abs(i["translation"] - instance["translation"]).max() < 1e-3
                and np.abs(i["rotation"] - instance["rotation"]).max() < 1e-5]
        assert len(ours) == 1, (hex(owner.form_id), group_id)
        (r, i), = ours
        assert (r.num_vertices, r.lod_counts, r.vertex_desc) == (rec.num_vertices, rec.lod_counts, rec.vertex_desc)
        assert i["scale"] == pytest.approx(instance["scale"], rel=1e-6) and i["grayscale_scale"] == instance["grayscale_scale"]
        assert np.allclose(i["bound_center"], instance["bound_center"], atol=1e-2)
        assert i["bound_radius"] == pytest.approx(instance["bound_radius"], rel=1e-5)
        checked += 1
    assert checked == len(ck.copies) == 223  # every copy of the 11 files


def test_the_ck_s_instance_rotation_is_its_refr_s_by_its_own_sine_and_cosine(ck_rebuild):
    """Every copy of the 11 files whose REFR the plugin holds and whose record sits at its model's
    root (178): its rotation is ck_rotation of the REFR's DATA angles to the bit; the float64
    rotation rounded to float32 is not (28 of them only)."""
    ck, folder, expected, build = ck_rebuild
    exact = rounded = checked = 0
    for *_, owner, rec, instance in ck.copies:
        refr = ck.plugin.record(owner.form_id) if owner is not None else None
        if refr is None:
            continue
        angles = np.array(struct.unpack_from("<6f", refr.field("DATA"))[3:], np.float32)
        if np.abs(instance["rotation"] - rotation(angles)).max() > 1e-5:
            continue  # a shape turned in its model
        checked += 1
        exact += np.array_equal(ck_rotation(angles), instance["rotation"])
        rounded += np.array_equal(rotation(angles).astype(np.float32), instance["rotation"])
    assert (checked, exact, rounded) == (178, 178, 28)


CK_FILES = ("03EF817C", "0F5ED9F3", "1200ADBE", "15ACA888", "35AE2C56", "3CE78DD2", "95ACA888", "995ED6C2", "9FD7982C",
            "A8F0581B", "AAE782E3")
# Files holding copies of Fallout4.esm bases, whose stand-in bases (tests/ck_cell_source.py) have
# other FormIDs and one base per stand-in REFR: the CK orders a material's records by base
# FormID and keeps one record per base, so these files' record order (and their split into
# records) is not the CK's. Their copies are checked one by one above.
RECORD_ORDER = ("0F5ED9F3", "1200ADBE", "15ACA888", "35AE2C56")
# Files whose CK version holds collision the CK cloned from a combined reference's model (a
# BSXFlags of 2 on the root, a "HavokRoot" NiNode under it holding per cloned reference a
# "CLONE <base EditorID>" node at the reference's placement with the model's collision object
# and physics system, and a node per other collision object of that system): the stand-in
# models of those references hold the CK's clone blocks put back (ck_cell_source), so the
# rebuild writes them (build/clones.py).
CLONED = ("0F5ED9F3", "A8F0581B", "AAE782E3")
# Within 2e-5 of the CK's value, not its bits: 7 of 3CE78DD2's 15 instances' bound centres, all
# of stand-in models (meshes\ck\*) whose bounding sphere ck_cell_source recovers from one
# instance's float32 bound, so the copies at another scale (0.94, 0.98) round elsewhere; one of
# A8F0581B's two combined shapes' bound radius (3 units in the last place: the order of the
# CK's float32 sums over the placed vertices is not known).
BOUND_CENTRES, SHAPE_RADII = ("3CE78DD2",), ("A8F0581B",)


def block_bytes(nif, index):
    stream = WriteStream(nif.header)
    nif.blocks[index].sync(stream)
    return bytes(stream.out)


@pytest.mark.parametrize("group", CK_FILES)
def test_the_ck_cell_s_files_are_the_ck_s_bytes_but_for_named_fields(ck_rebuild, group):
    """Each rebuilt ``_OC`` file against the CK's: none is byte-identical, for one named field
    they all hold: the records' data offsets (the CK's .csg holds the geometry of the cell's 27
    combined meshes the corpus lacks too, so its offsets are not the rebuilt .csg's; the geometry
    at each offset is the CK's, test_the_ck_cell_s_records_and_instances_are_the_ck_s). The
    geometry file hash is the CK's (the build goes into AlootHomePlate.esp: its geometry file is
    AlootHomePlate - Geometry.csg), the instances' rotations the CK's to the bit (ck_rotation).
    With the offsets taken from the CK's: 03EF817C, 95ACA888, 995ED6C2, 9FD7982C and AAE782E3
    (with its cloned collision, CLONED) are the CK's bytes; 3CE78DD2 but for 7 instances' bound
    centres (BOUND_CENTRES); A8F0581B (cloned collision too) but for one shape's bound radius
    (SHAPE_RADII); RECORD_ORDER's four have the CK's materials, root and node flags, their copies
    checked one by one (0F5ED9F3's cloned collision: test_the_ck_cell_s_cloned_collision_is_the_ck_s)."""
    ck, folder, expected, build = ck_rebuild
    name = f"00001E58_{group}_OC.NIF"
    theirs = read_file(ck.root / "Meshes/PreCombined" / name)
    ours = read_file(next(p for p, _ in build.files if p.name.upper() == name))
    assert ours.to_bytes() != theirs.to_bytes()
    assert [b.type_name for b in ours.blocks] == [b.type_name for b in theirs.blocks] or group == "15ACA888"
    packed = [(mine, their) for mine, their in zip(ours.blocks, theirs.blocks) if getattr(mine, "records", None) is not None]
    assert all((mine.objects["filename_hash"] == 0x5C4304E6).all() for mine, _ in packed)
    if group in RECORD_ORDER:
        assert sorted(ours.header.strings.strings) == sorted(theirs.header.strings.strings)  # the same materials
        node = ours.blocks[0].children[0]  # block 2 after a BSXFlags
        assert block_bytes(ours, 0) == block_bytes(theirs, 0) and ours.blocks[node].flags == theirs.blocks[node].flags
        return
    for mine, their in packed:
        assert (mine.objects["data_offset"] != their.objects["data_offset"]).any()
        mine.objects = their.objects
        if group in BOUND_CENTRES:
            for r1, r2 in zip(mine.records, their.records):
                assert np.allclose(r1.instances["bound_center"], r2.instances["bound_center"], rtol=2e-5, atol=1e-3)
                r1.instances["bound_center"] = r2.instances["bound_center"]
    for mine, their in zip(ours.blocks, theirs.blocks):
        if group in SHAPE_RADII and isinstance(mine, BSTriShape) and mine.bound_radius != their.bound_radius:
            assert mine.bound_radius == pytest.approx(their.bound_radius, rel=2e-5)
            mine.bound_radius = their.bound_radius
    assert [block_bytes(ours, i) for i in range(len(ours.blocks))] == [block_bytes(theirs, i) for i in range(len(theirs.blocks))]
    assert ours.to_bytes() == theirs.to_bytes()



@pytest.mark.parametrize("group", CLONED)
def test_the_ck_cell_s_cloned_collision_is_the_ck_s(ck_rebuild, group):
    """The rebuilt files' HavokRoot subtrees against the CK's, block by block: the stand-in model
    of the reference holds the CK's clone blocks put back (tests/ck_cell_source.py), so what the
    build writes from them (BSXFlags, HavokRoot, the CLONE node at the REFR's DATA/XSCL with the
    CK's rotation, the nodes of the system's other objects, the objects, the system's bytes) is
    the CK's to the byte; 0F5ED9F3's Point002 but for its rotation's last bits (the stand-in
    model's node is the CK's world matrix brought back by the REFR's placement, within 1e-5 of the
    identity: taken as the identity, as a stand-in shape's; the real model's rotation is not)."""
    ck, folder, expected, build = ck_rebuild
    name = f"00001E58_{group}_OC.NIF"
    theirs = read_file(ck.root / "Meshes/PreCombined" / name)
    ours = read_file(next(p for p, _ in build.files if p.name.upper() == name))
    start = lambda nif: next(i for i, b in enumerate(nif.blocks) if getattr(b, "name", None) == "HavokRoot")
    assert list(ours.blocks[0].extra_data) == list(theirs.blocks[0].extra_data) == [1]
    assert block_bytes(ours, 1) == block_bytes(theirs, 1) and ours.blocks[0].children[-1] == start(ours)
    mine, their = ours.blocks[start(ours):], theirs.blocks[start(theirs):]
    assert [b.type_name for b in mine] == [b.type_name for b in their]
    shift = start(ours) - start(theirs)  # 0F5ED9F3's records are split otherwise (RECORD_ORDER)
    for at, (a, b) in enumerate(zip(mine, their)):
        if group == "0F5ED9F3" and getattr(b, "name", None) == "Point002":
            assert np.allclose(a.rotation, b.rotation, atol=1e-7) and a.rotation != b.rotation
            a.rotation = b.rotation
        for field in ("children", "collision_object", "target", "data"):
            if hasattr(b, field):
                values = np.atleast_1d(getattr(b, field))
                assert list(np.atleast_1d(getattr(a, field))) == [v + shift if v >= 0 else v for v in values]
                setattr(a, field, getattr(b, field))
        assert block_bytes(ours, start(ours) + at) == block_bytes(theirs, start(theirs) + at), (at, b.type_name)

def test_the_ck_cell_built_into_its_own_plugin_keeps_its_other_records(ck_rebuild, corpus):
    """--into AlootHomePlate.esp, the mod's own plugin placing the cell's references: its CELL gets
    XCRI and PCMB again (and drops the stale previs fields), every other record is the CK's
    (read with struct, plugin_writer.independent_records)."""
    ck, folder, expected, build = ck_rebuild
    written = independent_records(next(d for p, d in build.files if p.name == "AlootHomePlate.esp"))
    original = independent_records((ck.root / "AlootHomePlate.esp").read_bytes())
    key = lambda r: (r["type"], r["form_id"])
    assert [key(r) for r in written] == [key(r) for r in original]
    changed = [key(a) for a, b in zip(written, original) if a != b]
    assert changed == [("CELL", 0x1E58)]
    cell, = [r for r in written if key(r) == ("CELL", 0x1E58)]
    meshes, pairs = xcri_pairs(cell["fields"]["XCRI"][0])
    assert sorted(meshes) == sorted(build.groups) and len(pairs) == len(build.pairs) == 488
    assert "PCMB" in cell["fields"] and not {"VISI", "RVIS", "XPRI"} & set(cell["fields"])


def test_the_ck_cell_s_physics_is_not_rebuilt_and_says_why(ck_rebuild):
    """No 00001E58_Physics.nif: the CK's merges the collision of Fallout4.esm's models, which the
    corpus lacks (the stand-in models are made from render records; the three holding the CK's
    cloned collision are not merged), and none of the plugin's own combined models has collision;
    the report says none was written."""
    ck, folder, expected, build = ck_rebuild
    assert not [p for p, _ in build.files if p.name.lower().endswith("_physics.nif")]
    assert "no <cell>_Physics.nif written: no combined reference has collision to merge" in build.messages
    assert (ck.root / "Meshes/PreCombined/00001E58_Physics.NIF").is_file()


def test_the_ck_cell_s_cdx_rows_are_among_the_ck_s(ck_rebuild):
    """The rebuilt AlootHomePlate.cdx against the CK's: not identical; every row of a combined
    mesh, material and texture is one the CK's has for the cell (the rebuild's 36 meshes are a part
    of the CK's 38: the corpus lacks the others' records); geometry rows carry the CK's geometry
    file hash, their values (data offsets) are the rebuilt .csg's, one per record the rebuilt
    files name; the previs row is the no-previs one (0x88 for the CK's 0x87: the stale previs
    dropped)."""
    ck, folder, expected, build = ck_rebuild
    data = next(d for p, d in build.files if p.name == "AlootHomePlate.cdx")
    ours = CdxFile.from_bytes(data).rows
    theirs = CdxFile.read(ck.root / "AlootHomePlate.cdx").rows
    assert data != (ck.root / "AlootHomePlate.cdx").read_bytes()
    kinds = (MATERIAL, DATA_TEXTURE, COLOR_TEXTURE, MESH)
    pick = lambda rows: {tuple(int(v) for v in row) for row in rows if row["kind"] in kinds}
    assert pick(ours) <= pick(theirs) and len(pick(ours)) > 100
    assert {int(v) for v in ours["value"][ours["kind"] == MESH]} == set(build.groups)
    assert list(ours["kind"][ours["kind"] >= NO_VISIBILITY - 1]) == [NO_VISIBILITY]
    assert list(theirs["kind"][theirs["kind"] >= NO_VISIBILITY - 1]) == [NO_VISIBILITY - 1]
    assert set(ours["extra"][ours["kind"] == GEOMETRY]) == set(theirs["extra"][theirs["kind"] == GEOMETRY]) == {0x5C4304E6}
    offsets = {int(offset) for path, _ in build.files if path.name.endswith("_OC.nif")
               for block in read_file(path).blocks if getattr(block, "records", None) is not None
               for offset in block.objects["data_offset"]}
    assert {int(v) for v in ours["value"][ours["kind"] == GEOMETRY]} == offsets


def test_the_ck_cell_s_csg_holds_the_ck_s_records(ck_rebuild):
    """The rebuilt AlootHomePlate - Geometry.csg against the CK's: not identical (the CK's holds
    the records of the cell's 27 combined meshes the corpus lacks too: 110 objects in 5 chunks
    where the rebuild has 59 in 3, so its object table, chunks and offsets differ); each object
    the rebuilt 11 files name is a record of the CK's file byte for byte (vertices and every
    LOD's triangles), and the chunks are zlib streams with the CK's header (78 9C)."""
    ck, folder, expected, build = ck_rebuild
    data = next(d for p, d in build.files if p.name == "AlootHomePlate - Geometry.csg")
    theirs = (ck.root / "AlootHomePlate - Geometry.csg").read_bytes()
    assert data[:4] == theirs[:4] == b"bcsg" and data != theirs
    objects, chunks = struct.unpack_from("<II", data, 4)
    ck_objects, ck_chunks = struct.unpack_from("<II", theirs, 4)
    assert (objects, chunks, ck_objects, ck_chunks) == (59, 3, 110, 5)
    for at in range(chunks):
        size, offset = struct.unpack_from("<II", data, 12 + 8 * at)
        assert data[offset:offset + 2] == b"\x78\x9c"
    csg = GeometryFile(next(p for p, _ in build.files if p.name == "AlootHomePlate - Geometry.csg"))
    checked = set()
    for group in CK_FILES:
        mine = read_file(next(p for p, _ in build.files if p.name.upper() == f"00001E58_{group}_OC.NIF"))
        for block in mine.blocks:
            for at, rec in enumerate(getattr(block, "records", None) or ()):
                offset = int(block.objects[at]["data_offset"])
                _, vertices, triangles = csg.record_geometry(offset, rec.vertex_desc, rec.num_vertices, rec.lod_counts)
                found = [(v, t) for _, v, t in (ck.geometry(ck.files[int(group, 16)], i, a)
                                                  for i, b in enumerate(ck.files[int(group, 16)].blocks)
                                                  for a in range(len(getattr(b, "records", None) or ())))
                         if v.tobytes() == vertices.tobytes() and t.tobytes() == triangles.tobytes()]
                assert found, (group, offset)
                checked.add(offset)
    csg.close()
    assert len(checked) > 50


def test_an_exterior_cell_is_refused_by_name(load_order):
    cell = record("CELL", 0x01001100, [("EDID", zstring("Outside")), ("DATA", struct.pack("<H", 0)),
                                   ("XCLC", struct.pack("<iiI", 0, 0, 0))])
    (load_order / "Outside.esp").write_bytes(plugin(["Fallout4.esm"], [
        worldspace(0x0100003C, cell_with_children(cell, 0x01001100,
                                                  temporary=[refr(0x01002000, 0x800, (1, 2, 3), (0, 0, 0), 1.0)]))]))
    result = run("precombines", load_order, "--cell", "01001100", "--build")
    assert result.returncode == 2 and "CELL 01001100 is an exterior cell" in result.stderr and "not built" in result.stderr


def test_the_patch_is_never_the_cell_s_plugin_or_a_game_master(load_order):
    result = run("precombines", load_order, "--cell", f"{CELL:08X}", "--build", "--into", "Fallout4.esm")
    assert result.returncode == 2 and "the game's masters are never rewritten" in result.stderr


def expected_collision(folder):
    """The combined references' collision placed by their REFRs' DATA and XSCL (computed here):
    (per REFR and model part, its compressed meshes' triangles (k, 3, 3); [(polytope, 4x4 placing
    it in the cell)]), the models' own decoded shapes walked by the physics tests' helper."""
    meshes, polytopes = [], []
    for form_id, (base, position, angles, scale) in PLACED.items():
        placed = placement(position, angles, scale)
        parts = [(b, placement(p, a, s)) for b, p, a, s in SCOL_PARTS] if base == SCOL else [(base, np.eye(4))]
        for part, matrix in parts:
            model = NifFile.read(folder / "meshes" / "Test" / MODELS[part][1].rsplit("/", 1)[-1])
            triangles, _, shapes = physics_expected(model, placed @ matrix)
            meshes.append(((form_id, part), triangles))
            polytopes += shapes
    return meshes, polytopes


def polytope_reach(shape, at, points):
    """Per face of the polytope, how far beyond its plane moved out by the convex radius each
    point (cell space) lies, in its own Havok units: (faces, points)."""
    local = (points - at[:3, 3]) @ np.linalg.inv(at[:3, :3]).T / GAME_UNITS
    planes = shape.planes[: len(shape.faces)].astype(np.float64)
    return (local @ planes[:, :3].T + planes[:, 3] - shape.convex_radius).T


def test_the_physics_lies_over_the_copies_it_belongs_to(load_order):
    """<cell>_Physics.nif holds the combined references' static collision in cell coordinates:
    every triangle of the shelf's compressed mesh (turned, scaled 1.25) placed by its REFR is in
    it, every other triangle lies on a placed polytope (the posters', one in the SCOL, and the
    curtains'), every face of each polytope touched; the golden static has none."""
    build = Build(load_order, f"{CELL:08X}")
    build.write()
    path = next(path for path, _ in build.files if path.name == "00001000_Physics.nif")
    nif = read_file(path)
    assert nif.blocks[0].name == "00001000_Physics"
    merged = MergedMesh(nif)
    meshes, polytopes = expected_collision(load_order)
    owner = np.full(len(merged.triangles), -1)
    for number, ((form_id, part), triangles) in enumerate(meshes):
        found = merged.find(triangles)
        assert (found >= 0).all(), f"{form_id:08X}'s {MODELS[part][0]}: {(found < 0).sum()} of {len(found)} missing"
        assert (owner[found] == -1).all()
        owner[found] = number
    assert sum(len(t) for _, t in meshes) == (owner >= 0).sum() == 84  # the shelf's
    assert len(polytopes) == 3
    rest = merged.triangles[owner == -1]
    reach = [polytope_reach(shape, at, merged.vertices[rest.reshape(-1)]) for shape, at in polytopes]
    # corner on a polytope's surface: beyond no face plane, on one of them (within the reader's
    # slack, game units over the smallest scale placed: Havok units * 70 / 0.75)
    slack = merged.slack[rest.reshape(-1)] / GAME_UNITS / 0.75
    on = np.array([(np.abs(r.max(axis=0)) <= slack) for r in reach])
    holder = np.where(on.reshape(len(polytopes), -1, 3).all(axis=2), np.arange(len(polytopes))[:, None], -1).max(axis=0)
    assert len(rest) and (holder >= 0).all()
    for number, r in enumerate(reach):  # every face of every polytope is there
        mine = np.repeat(holder == number, 3)
        assert mine.any() and (np.abs(r[:, mine]).min(axis=1) <= slack.max()).all()
