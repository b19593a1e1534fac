"""Damaged files through Blender's importers: each import either succeeds or fails with a
message naming the file, leaving bpy.data exactly as it was (no orphan mesh, material, image,
armature or action), and never reports an internal error."""

import random
import struct

import numpy as np

import pytest
from conftest import DATA_KINDS
from scene import snapshot

def corpus_file(name):
    return lambda corpus: (corpus / name).read_bytes()


def xbox_file(corpus):
    from xbox_writer import make_xbox

    return make_xbox((corpus / "pynifly/tests/tests/FONV/9mmscp.nif").read_bytes())


def kf_file(corpus):
    from kf_writer import build_kf

    return build_kf()


def bsm2_with_hierarchy(corpus):
    from precombined_nif.core.bsm2 import samples

    return samples.skinned_strip(True).to_bytes()


SOURCES = {  # name -> (import operator, file suffix, the undamaged bytes)
    "AlarmClock": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FO4/AlarmClock.nif")),
    "MaleBody": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FO4/MaleBody.nif")),
    "CigaretteMachine": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FO4/CigaretteMachine.nif")),
    "AnimatronicSpaceMan": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FO4/AnimatronicSpaceMan.nif")),
    "9mmscp": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FONV/9mmscp.nif")),
    "outfitf_simple": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FONV/outfitf_simple.nif")),
    "FNV skeleton": ("precombined_nif", ".nif", corpus_file("pynifly/io_scene_nifly/skeletons/FONV/skeleton.nif")),
    "FO3 test_emit": ("precombined_nif", ".nif", corpus_file("niftools/todo/old_nifs/fo3/test_emit.nif")),
    "VaaMaleScarR04 (SSE)": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/FO4/VaaMaleScarR04.nif")),
    "malebody_1 (SSE)": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/SkyrimSE/malebody_1.nif")),
    "childhead (SSE)": ("precombined_nif", ".nif", corpus_file("pynifly/tests/tests/SkyrimSE/childhead.nif")),
    "MetalIntCeilingA1x1Mid02": ("precombined_nif", ".nif", corpus_file("havok/MetalIntCeilingA1x1Mid02.nif")),
    "CK cell 1200ADBE": ("precombined_nif", ".nif", corpus_file("ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF")),
    "Xbox 9mmscp": ("precombined_nif", ".nif", xbox_file),
    "New Vegas kf": ("precombined_nif", ".kf", kf_file),
    "Rabbit": ("bsm2", ".bsm2", corpus_file("bsm2/Rabbit.bsm2")),
    "bsm2 with hierarchy": ("bsm2", ".bsm2", bsm2_with_hierarchy),
}
VARIANTS = 60  # per source


def variants(data, seed):
    """Deterministic damage: truncations, flipped bytes, 32-bit values overwritten with huge
    counts, with small numbers (block references, indices: right type or not, in range or just
    past it) and with odd floats (NaN, infinity, zero, 1e30)."""
    rng = random.Random(seed)
    for number in range(VARIANTS):
        damaged = bytearray(data)
        kind = number % 5
        at = rng.randrange(len(data))
        if kind == 0:
            damaged = damaged[:at]
        elif kind == 1:
            damaged[at] ^= 1 << rng.randrange(8)
        else:
            at = min(at, len(data) - 4)
            if kind == 2:
                struct.pack_into("<I", damaged, at, rng.choice((0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x10000)))
            elif kind == 3:
                struct.pack_into("<i", damaged, at, rng.choice((rng.randrange(64), rng.randrange(256, 300), -2)))
            else:
                struct.pack_into("<f", damaged, at, rng.choice((float("nan"), float("inf"), 0.0, 1e30)))
        yield f"{kind}@{at}", bytes(damaged)


def remove_new(before):
    import bpy

    for kind in DATA_KINDS:
        for datablock in [d for d in getattr(bpy.data, kind) if d.as_pointer() not in before[kind]]:
            getattr(bpy.data, kind).remove(datablock)


@pytest.mark.slow
@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_damaged_files_import_or_leave_nothing_behind(clean_scene, corpus, tmp_path, name):
    import bpy

    operator_name, suffix, source = SOURCES[name]
    operator = getattr(bpy.ops.import_scene, operator_name)
    failed = 0
    for label, data in variants(source(corpus), name):
        path = tmp_path / f"damaged{suffix}"
        path.write_bytes(data)
        before = snapshot()
        try:
            operator(filepath=str(path))
        except RuntimeError as error:
            failed += 1
            message = str(error)
            assert "internal error" not in message, f"{name} {label}: {message}"
            assert str(path) in message or path.name in message, f"{name} {label}: {message}"
            assert snapshot() == before, f"{name} {label}: the failed import left data behind"
        remove_new(before)
    assert failed  # the damage is real


@pytest.mark.parametrize("target", ["a node", "out of range"])
def test_skin_reference_to_the_wrong_block_is_a_clean_warning(clean_scene, corpus, tmp_path, target):
    """A shape's skin reference naming a NiNode, or a block past the end: the shape imports
    unskinned with a warning naming the reference; nothing is called an internal error."""
    import bpy
    from nif_rewriter import RawNif

    nif = RawNif.read(corpus / "pynifly/tests/tests/FO4/MaleBody.nif")
    shape = nif.indices_of("BSSubIndexTriShape")[0]
    value = nif.indices_of("NiNode")[1] if target == "a node" else len(nif.blocks) + 50
    struct.pack_into("<i", nif.blocks[shape], nif.av_offsets(shape)["end"] + 16, value)
    path = tmp_path / "BadSkin.nif"
    path.write_bytes(nif.to_bytes())
    reports = []
    before = snapshot()
    try:
        bpy.ops.import_scene.precombined_nif(filepath=str(path))
    except RuntimeError as error:
        reports.append(str(error))
        assert snapshot() == before
    assert not any("internal error" in report for report in reports)
    from precombined_nif.commands import info

    text = str(info.file_info(path))
    assert "internal error" not in text


def test_vertex_naming_a_bone_the_skin_lacks_imports_unskinned_with_a_warning(clean_scene, corpus, tmp_path):
    """A vertex's bone index past the skin's bones (FO4 packed vertex, written here at the byte
    layout of BSVertexDesc): the shape imports without its skin, the warning says which bone."""
    import bpy
    from nif_rewriter import RawNif

    nif = RawNif.read(corpus / "pynifly/tests/tests/FO4/BTMaleBody.nif")
    shape = nif.indices_of("BSSubIndexTriShape")[0]  # a BSTriShape's fields first
    block, end = nif.blocks[shape], nif.av_offsets(shape)["end"]
    (desc,) = struct.unpack_from("<Q", block, end + 28)  # after bound, skin, shader, alpha
    (vertex_count,) = struct.unpack_from("<H", block, end + 40)
    stride, skinning = (desc & 0xF) * 4, ((desc >> 28) & 0xF) * 4
    first_weight = np.frombuffer(bytes(block[end + 46 + skinning : end + 54 + skinning]), "<f2")[0]
    assert vertex_count > 0 and stride and first_weight > 0  # the layout read right: vertex 0 is weighted
    block[end + 46 + skinning + 8] = 200  # vertex 0's first bone index
    path = tmp_path / "BadBone.nif"
    path.write_bytes(nif.to_bytes())
    from precombined_nif.io.file_import import import_nif

    collection, warnings = import_nif(bpy.context, str(path))
    (mesh,) = [o for o in collection.objects if o.type == "MESH"]
    assert len(mesh.data.vertices) == vertex_count and not mesh.vertex_groups
    assert any("skin not imported (a vertex names bone 200 of only" in warning for warning in warnings), warnings


def test_node_flags_of_any_32_bits_import_and_write_back(clean_scene, corpus, tmp_path):
    """FO4 node flags are 32 bits; Blender's integers hold 31 and a sign: kept bit for bit."""
    import bpy
    from nif_rewriter import RawNif

    nif = RawNif.read(corpus / "pynifly/tests/tests/FO4/AlarmClock.nif")
    node = nif.indices_of("NiNode")[0]
    flags_at = nif.av_offsets(node)["transform"] - 4
    struct.pack_into("<I", nif.blocks[node], flags_at, 0xFFFF000E)
    path = tmp_path / "Flags.nif"
    path.write_bytes(nif.to_bytes())
    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    (obj,) = [o for o in bpy.data.collections["Flags"].objects if o.get("nif_block") == node]
    assert obj["nif_flags"] & 0xFFFFFFFF == 0xFFFF000E
    out = tmp_path / "out.nif"
    bpy.ops.object.select_all(action="DESELECT")
    for other in bpy.data.collections["Flags"].all_objects:
        other.select_set(True)
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert out.read_bytes() == path.read_bytes()


def test_strip_point_past_the_vertices_fails_cleanly_and_the_good_file_imports(clean_scene, corpus, tmp_path):
    import bpy
    from nif_rewriter import RawNif

    good = corpus / "pynifly/tests/tests/FONV/9mmscp.nif"
    nif = RawNif.read(good)
    data = nif.indices_of("NiTriStripsData")[0]
    struct.pack_into("<H", nif.blocks[data], len(nif.blocks[data]) - 2, 0xFFFE)  # the last strip point
    bad = tmp_path / "BadStrips.nif"
    bad.write_bytes(nif.to_bytes())
    from precombined_nif.core.errors import FormatError
    from precombined_nif.core.nif import NifFile

    with pytest.raises(FormatError, match="strip uses vertex 65534"):
        NifFile.read(bad)
    before = snapshot()
    with pytest.raises(RuntimeError, match="BadStrips.nif"):
        bpy.ops.import_scene.precombined_nif(filepath=str(bad))
    assert snapshot() == before
    directory = str(tmp_path)
    files = [{"name": "BadStrips.nif"}, {"name": good.name}]
    (tmp_path / good.name).write_bytes(good.read_bytes())
    bpy.ops.import_scene.precombined_nif(directory=directory, files=files)
    imported = bpy.data.collections[good.stem]
    expected = {block.name for block in NifFile.read(good).blocks if type(block).__name__ == "NiTriBasedGeom"}
    assert {o.data.name for o in imported.all_objects if o.type == "MESH" and "havok_shape" not in o} == expected
    assert not [m for m in bpy.data.meshes if m.users == 0]


# Damage longer fuzz runs found (source, offset, bytes written there), kept as fixed cases.
FOUND = [
    ("AnimatronicSpaceMan", 26679, struct.pack("<f", float("inf"))),  # two key groups then animate one bone
    ("CK cell 1200ADBE", 1088, struct.pack("<f", float("nan"))),  # a record offset past 2^31
    ("MaleBody", 74790, struct.pack("<f", float("nan"))),  # a bone posed by a singular matrix
    ("AnimatronicSpaceMan", 286286, struct.pack("<i", -2)),  # keys for a bone whose rest is singular
]


@pytest.mark.parametrize("name, offset, written", FOUND, ids=[f"{n}@{o}" for n, o, _ in FOUND])
def test_damage_found_by_longer_runs(clean_scene, corpus, tmp_path, name, offset, written):
    import bpy

    operator_name, suffix, source = SOURCES[name]
    data = bytearray(source(corpus))
    data[offset : offset + len(written)] = written
    path = tmp_path / f"damaged{suffix}"
    path.write_bytes(data)
    before = snapshot()
    try:
        getattr(bpy.ops.import_scene, operator_name)(filepath=str(path))
    except RuntimeError as error:
        assert "internal error" not in str(error) and path.name in str(error)
        assert snapshot() == before


def test_what_a_failed_import_made_is_removed_whatever_its_kind(clean_scene):
    """The importers register every datablock they make; on failure they are all removed, the
    kinds the NIF importer once forgot (actions) included."""
    import bpy

    from precombined_nif.io.datablocks import remove_all

    before = snapshot()
    mesh = bpy.data.meshes.new("m")
    made = [
        mesh,
        bpy.data.objects.new("o", mesh),
        bpy.data.armatures.new("a"),
        bpy.data.actions.new("act"),
        bpy.data.materials.new("mat"),
        bpy.data.images.new("img", 4, 4),
        bpy.data.node_groups.new("ng", "GeometryNodeTree"),
        bpy.data.collections.new("c"),
    ]
    assert {kind: len(ids - before[kind]) for kind, ids in snapshot().items()} == {kind: 1 for kind in before}
    bpy.data.objects.remove(made[1])  # one already gone is skipped
    remove_all(made)
    assert snapshot() == before
