"""Damaged packfiles fail cleanly: ``Packfile.from_bytes`` returns or raises ``FormatError``
carrying a file offset, quickly and without large allocations, for truncations, overwritten
header and table fields, bad fixups, pointers out of range, cycles and huge counts. What was
read must also write (or raise FormatError) and summarise (or raise FormatError)."""

import functools
import random
import struct
import time
import tracemalloc

import numpy as np
import pytest
from packfiles import nif_systems
from support import CORPUS, FO4_MOD_ANIMATION, SSE_CHARACTER_SKELETON

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.classes.physics_system import PhysicsSystemData
from precombined_nif.core.havok.fixups import GLOBAL, LOCAL
from precombined_nif.core.havok.summary import body_summary

TIME_LIMIT = 1.0
PER_SOURCE = 150  # mutations tried per source file, drawn from all kinds (fewer for the big .hkx)
SOURCES = {
    "compressed mesh": "pynifly/tests/tests/FO4/Meshes/Props/CrateDeathclaw01.nif#3",
    "compound": "pynifly/tests/tests/FO4/44BullBarrel.nif#5",
    "compound of meshes": "pynifly/tests/tests/FO4/Meshes/TerminalOn.nif#16",
    "polytope": "pynifly/tests/tests/FO4/AlarmClock.nif#3",
    "sphere": "pynifly/tests/tests/FO4/Workshop_HighTechLightFloor05_On.nif#37",
    "ragdoll": "pynifly/io_scene_nifly/skeletons/FO4/skeleton.nif#9",
}
FILES = {
    "hkx": "pynifly/tests/tests/FO4/skeleton_vanilla.hkx",
    "hk_2010 32-bit": "pynifly/tests/tests/Skyrim/skeleton.hkx",
    "numbered objects": SSE_CHARACTER_SKELETON,
    "types with fixups": FO4_MOD_ANIMATION,
}


def source(name):
    if name in FILES:
        return (CORPUS / FILES[name]).read_bytes()
    return nif_systems()[SOURCES[name]][1]


def sections(data):
    version = struct.unpack_from("<I", data, 12)[0]
    at = 0x40 + (struct.unpack_from("<h", data, 0x3E)[0] if version >= 11 else 0)
    size = 0x40 if version >= 11 else 0x30
    return [struct.unpack_from("<7I", data, at + index * size + 20) for index in range(3)], at, size


def mutations(data, rng, count=PER_SOURCE):
    """(description, damaged bytes) pairs, a sample of all the kinds below."""
    out = []

    def put(description, offset, value):
        out.append((description, functools.partial(_put, data, offset, value)))

    for length in sorted({0, 8, 0x3F, 0x40, 0x4F, 0x80, len(data) // 2, len(data) - 16, len(data) - 1}):
        out.append((f"truncated to {length}", functools.partial(bytes.__getitem__, data, slice(length))))
    (_, kept, data_section), headers_at, size = sections(data)
    for offset in range(0, headers_at + 3 * size, 4):
        for value in (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0, 0x10):
            put(f"u32 {value:#x} at header {offset:#x}", offset, value)
    kept_tables = range(kept[0] + kept[1], kept[0] + kept[4], 4)  # the __types__ section's fixups, if any
    for offset in rng.sample(kept_tables, min(len(kept_tables), 40)):
        for value in (0xFFFFFFF0, 0, 1, 2, rng.randrange(0, kept[1] + 64)):
            put(f"__types__ fixup field at {offset:#x} = {value:#x}", offset, value)
    start, local, global_, virtual, end = data_section[:5]
    for name, (first, last), dtype in (("local", (local, global_), LOCAL), ("global", (global_, virtual), GLOBAL)):
        rows = (last - first) // dtype.itemsize
        for row in rng.sample(range(rows), min(rows, 6)):
            for field in range(len(dtype.names)):
                for value in (0xFFFFFFF0, 0x7FFFFFFF, 0, 8, 0x10, rng.randrange(0, local + 64)):
                    offset = start + first + row * dtype.itemsize + 4 * field
                    put(f"{name} fixup {row} field {field} = {value:#x}", offset, value)
    for row in range(min((end - virtual) // 12, 8)):
        for field in range(3):
            for value in (0xFFFFFFFF, 0, 4, rng.randrange(0, local + 16)):
                put(f"virtual fixup {row} field {field} = {value:#x}", start + virtual + row * 12 + 4 * field, value)
    # huge counts in the hkArrays and relative arrays the local fixups point at
    table = np.frombuffer(data, LOCAL, (global_ - local) // 8, start + local)
    for src in table["src"][table["src"] != 0xFFFFFFFF][:40]:
        for value in (0x3FFFFFFF, 0x7FFFFFFF, 0xFFFF):
            put(f"array size {value:#x} at {src:#x}", start + int(src) + 8, value)
    for _ in range(150):
        offset = rng.randrange(0, max(1, local - 4))
        put(f"u32 random at data {offset:#x}", start + offset, rng.getrandbits(32))
        out.append((f"bit flip at data {offset:#x}", functools.partial(_flip, data, start + offset, rng.randrange(8))))
    # cycles and pointers into the middle of objects: retarget every global fixup
    table = np.frombuffer(data, GLOBAL, (virtual - global_) // 12, start + global_)
    for row in range(len(table)):
        for target in (0, int(table["src"][row]) & ~15, int(table["dst"][row]) + 4, local):
            put(f"global fixup {row} to {target:#x}", start + global_ + row * 12 + 8, target)
    out.append(("garbage", functools.partial(rng.randbytes, len(data))))
    return [(description, damage()) for description, damage in rng.sample(out, min(count, len(out)))]


def _flip(data, offset, bit):
    damaged = bytearray(data)
    damaged[offset] ^= 1 << bit
    return bytes(damaged)


def _put(data, offset, value):
    damaged = bytearray(data)
    if offset + 4 <= len(damaged):
        damaged[offset : offset + 4] = struct.pack("<I", value)
    return bytes(damaged)


def exercise(damaged):
    """Read, write and summarise; FormatError allowed at each step (with an offset when reading)."""
    try:
        packfile = Packfile.from_bytes(damaged)
    except FormatError as error:
        assert error.offset is not None, f"no offset: {error}"
        assert "\n" not in str(error)
        return
    try:
        packfile.to_bytes()
    except FormatError:
        pass
    if isinstance(packfile.root, PhysicsSystemData):
        for body in packfile.root.bodies:
            try:
                body_summary(packfile.root, body)
            except FormatError:
                pass


@pytest.mark.parametrize("name", [*SOURCES, *FILES])
def test_damaged_packfiles_fail_cleanly(corpus, name):
    data = source(name)
    rng = random.Random(name)
    problems = []
    for description, damaged in mutations(data, rng, PER_SOURCE // 3 if name in FILES else PER_SOURCE):
        tracemalloc.start()
        started = time.process_time()
        try:
            exercise(damaged)
        except Exception as error:  # noqa: BLE001 - any other exception is the failure reported
            problems.append(f"{description}: {type(error).__name__}: {error}")
        finally:
            elapsed = time.process_time() - started
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        if elapsed > TIME_LIMIT:
            problems.append(f"{description}: took {elapsed:.2f} s")
        if peak > 16 * len(data) + (4 << 20):
            problems.append(f"{description}: allocated {peak} bytes")
    assert not problems, f"{len(problems)} problems, first: " + "; ".join(problems[:5])


def test_self_containing_compound_is_refused(corpus):
    """A compound whose instance points back at the compound: reading works (the graph is kept),
    summarising refuses, writing keeps the cycle without looping."""
    packfile = Packfile.from_bytes(source("compound"))
    compound = packfile.root.bodies[0].shape
    compound.instances[1].shape = compound
    written = packfile.to_bytes()
    again = Packfile.from_bytes(written)
    again_compound = again.root.bodies[0].shape
    assert again_compound.instances[1].shape is again_compound
    with pytest.raises(FormatError, match="contains itself"):
        body_summary(again.root, again.root.bodies[0])
