"""Damaged files through Blender's importers: each import either succeeds or fails with a
message naming the file, leaving bpy.data exactly as it was (no orphan mesh, material, image,
armature or action), and never reports an internal error."""

import random
import struct

import pytest
from conftest import DATA_KINDS

SOURCES = {  # corpus file -> import operator
    "pynifly/tests/tests/FO4/AlarmClock.nif": "precombined_nif",
    "pynifly/tests/tests/FO4/MaleBody.nif": "precombined_nif",
    "pynifly/tests/tests/FONV/9mmscp.nif": "precombined_nif",
    "pynifly/tests/tests/FONV/outfitf_simple.nif": "precombined_nif",
    "pynifly/tests/tests/FO4/VaaMaleScarR04.nif": "precombined_nif",
    "havok/MetalIntCeilingA1x1Mid02.nif": "precombined_nif",
    "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF": "precombined_nif",
    "bsm2/Rabbit.bsm2": "bsm2",
}
VARIANTS = 60  # per source


def variants(data, seed):
    """Deterministic damage: truncations, flipped bytes, 32-bit values overwritten."""
    rng = random.Random(seed)
    for number in range(VARIANTS):
        damaged = bytearray(data)
        kind = number % 3
        at = rng.randrange(len(data))
        if kind == 0:
            damaged = damaged[:at]
        elif kind == 1:
            damaged[at] ^= 1 << rng.randrange(8)
        else:
            at = min(at, len(data) - 4)
            struct.pack_into("<I", damaged, at, rng.choice((0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x10000)))
        yield f"{kind}@{at}", bytes(damaged)


def snapshot():
    import bpy

    return {kind: {d.as_pointer() for d in getattr(bpy.data, kind)} for kind in DATA_KINDS}


def remove_new(before):
    import bpy

    for kind in DATA_KINDS:
        for datablock in [d for d in getattr(bpy.data, kind) if d.as_pointer() not in before[kind]]:
            getattr(bpy.data, kind).remove(datablock)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_damaged_files_import_or_leave_nothing_behind(clean_scene, corpus, tmp_path, name):
    import bpy

    source = corpus / name
    operator = getattr(bpy.ops.import_scene, SOURCES[name])
    failed = 0
    for label, data in variants(source.read_bytes(), name):
        path = tmp_path / f"damaged{source.suffix}"
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
    from precombined_nif.core import info

    text = str(info.file_info(path))
    assert "internal error" not in text


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
