"""Collision the Creation Kit clones into a combined mesh (core/precombined/build/clones.py):
corpus FO4 models whose physics system is not all static on layer 1 (CapsuleExtStairsFree01: a
layer-1 mesh and a layer-31 polytope, its second object on StairHelper03, as the CK's own stairs
in 00001E58_AAE782E3; DiamondCrossbeams01: a static layer-1 mesh and a dynamic layer-3 one),
placed turned and scaled in an interior and built. The built file's nodes are read by
tests/raw_nodes (struct), the placements computed here from DATA/XSCL."""

import struct

import numpy as np
import pytest
from plugin_writer import cell_with_children, group, interior_cells, plugin, record, zstring
from raw_nodes import read_nodes, world_matrices
from test_precombine_build import placement, refr

from precombined_nif.core.formats import read_file
from precombined_nif.core.nif import NifFile
from precombined_nif.core.precombined.build.cell import Build
from precombined_nif.core.stream import WriteStream

CELL = 0x1000
FO4 = "pynifly/tests/tests/FO4/"
MODELS = {  # base FormID: (EditorID, corpus model)
    0x800: ("StairsFree", FO4 + "CapsuleExtStairsFree01.nif"),
    0x801: ("Crossbeams", FO4 + "Meshes/Architecture/DiamondCity/Stadium_Ext/DiamondCrossbeams01.nif"),
}
PLACED = {  # REFR FormID: (base, position, rotation in radians, scale)
    0x2000: (0x800, (100.0, 200.0, 50.0), (0.1, -0.2, 1.2), 1.25),
    0x2001: (0x801, (140.0, 260.0, 70.0), (0.0, 0.0, 2.5), 0.75),
}


def write_load_order(corpus, folder):
    statics = []
    for form_id, (name, model) in MODELS.items():
        target = folder / "meshes" / "Test" / model.rsplit("/", 1)[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((corpus / model).read_bytes())
        statics.append(record("STAT", form_id, [("EDID", zstring(name)), ("OBND", bytes(12)),
                                                ("MODL", zstring(f"Test\\{target.name}"))]))
    cell = record("CELL", CELL, [("EDID", zstring("CloneCell")), ("DATA", struct.pack("<H", 1))])
    placed = [refr(form_id, *values) for form_id, values in PLACED.items()]
    (folder / "Fallout4.esm").write_bytes(plugin([], [group("STAT", statics),
                                                      interior_cells(cell_with_children(cell, CELL, temporary=placed))],
                                                 flags=0x1))
    return folder


def block_bytes(nif, index):
    stream = WriteStream(nif.header)
    nif.blocks[index].sync(stream)
    return bytes(stream.out)


@pytest.fixture
def built(corpus, tmp_path):
    folder = write_load_order(corpus, tmp_path / "Data")
    build = Build(folder, f"{CELL:08X}")
    build.write()
    return folder, build


def clone_nodes(path):
    """{name: (world 4x4, collision object index)} of the nodes under the file's HavokRoot."""
    nodes, roots = read_nodes(path)
    worlds = world_matrices(nodes, roots)
    havok, = [i for i, n in nodes.items() if n.name == "HavokRoot"]
    assert havok in nodes[roots[0]].children and np.array_equal(worlds[havok], np.eye(4))
    return {nodes[i].name: (worlds[i], nodes[i].collision) for i in nodes[havok].children}


def test_cloned_collision_stands_at_its_reference_with_the_model_s_system(built, corpus):
    folder, build = built
    files = sorted((folder / "meshes/precombined").glob("*_OC.nif"))
    found = {}
    for path in files:
        nif = read_file(path)
        if not any(getattr(b, "name", None) == "HavokRoot" for b in nif.blocks):
            continue
        assert nif.blocks[1].type_name == "BSXFlags" and nif.blocks[1].integer_data == 2
        assert list(nif.blocks[0].extra_data) == [1] and nif.blocks[2].type_name == "NiNode"
        assert NifFile.from_bytes(path.read_bytes()).to_bytes() == path.read_bytes()  # re-reads
        for name, (world, collision) in clone_nodes(path).items():
            found[name] = (path, nif, world, collision)
    assert sorted(found) == ["CLONE Crossbeams", "CLONE StairsFree", "StairHelper03", "TransDummy"]
    for form_id, (base, position, angles, scale) in PLACED.items():
        edid, model_path = MODELS[base]
        model_file = folder / "meshes/Test" / model_path.rsplit("/", 1)[-1]
        model = read_file(model_file)
        model_nodes, model_roots = read_nodes(model_file)
        model_worlds = world_matrices(model_nodes, model_roots)
        placed = placement(position, angles, scale)
        root = model_roots[0]
        for index, node in model_nodes.items():
            if node.collision < 0:
                continue
            name = f"CLONE {edid}" if index == root else node.name
            path, nif, world, collision = found[name]
            local = np.linalg.inv(model_worlds[root]) @ model_worlds[index]  # the root's own transform left out
            assert np.allclose(world, placed @ local, atol=1e-4), name
            mine, theirs = nif.blocks[collision], model.blocks[node.collision]
            assert (mine.flags, mine.body_id, mine.target) == (theirs.flags, theirs.body_id, collision - 1)
            assert block_bytes(nif, mine.data) == block_bytes(model, theirs.data)  # the system untouched
            assert nif.blocks[mine.data].packfile == model.blocks[theirs.data].packfile



def test_cloned_collision_of_a_scol_component_is_named_not_written(corpus, tmp_path):
    """The CK's files show clones of STAT references only: the stairs as a SCOL's component are
    combined, their cloned collision named and no HavokRoot written."""
    folder = write_load_order(corpus, tmp_path / "Data")
    scol = record("SCOL", 0x810, [("EDID", zstring("Collection")), ("OBND", bytes(12)), ("ONAM", struct.pack("<I", 0x800)),
                                  ("DATA", struct.pack("<7f", 10.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0))])
    statics = [record("STAT", 0x800, [("EDID", zstring("StairsFree")), ("OBND", bytes(12)),
                                      ("MODL", zstring("Test\\CapsuleExtStairsFree01.nif"))])]
    cell = record("CELL", CELL, [("EDID", zstring("CloneCell")), ("DATA", struct.pack("<H", 1))])
    placed = [refr(0x2000, 0x810, (100.0, 200.0, 50.0), (0.0, 0.0, 1.0), 1.0)]
    (folder / "Fallout4.esm").write_bytes(plugin([], [group("STAT", statics), group("SCOL", [scol]),
                                                      interior_cells(cell_with_children(cell, CELL, temporary=placed))],
                                                 flags=0x1))
    build = Build(folder, f"{CELL:08X}")
    assert len(build.pairs) == 1
    assert [m for m in build.messages if "cloned collision not written" in m] == [
        "00002000: cloned collision not written: a SCOL component's cloned collision (the CK's files show a STAT's only)"]
    for path, data in build.files:
        if path.name.endswith("_OC.nif"):
            assert b"HavokRoot" not in data and b"BSXFlags" not in data
