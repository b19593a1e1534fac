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
