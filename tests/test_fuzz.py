"""Damaged input: the NIF reader must reject it cleanly, quickly and cheaply.

About 11500 deterministic variants of eight varied corpus files (truncated, bytes flipped,
32-bit values overwritten with 0x7FFFFFFF / 0xFFFFFFFF / 0x80000000 at aligned and unaligned
positions, runs of 0x00 / 0xFF, bytes cut out of a block with the header's size table kept
consistent) plus random garbage, an empty file and header-only files. For every one,
``NifFile.from_bytes``:

- returns, or raises ``FormatError`` (any other exception fails);
- when it raises, gives a one-line message naming the file path it was given;
- takes under ``TIME_LIMIT`` seconds (a hang is cut off by a timer and reported);
- allocates at most ``8 * len(data) + 2 MiB`` at its peak (tracemalloc; numpy's buffers are
  traced).

A file that was read must also write (``to_bytes`` returns or raises FormatError, within the
same limits), and what it writes, when not the same bytes, must read again. Truncated files
must all be rejected. ``test_crafted_counts`` adds hand-made files whose counts are legal but
whose items are empty; ``test_harness_catches_problems`` shows each check can fail.

Every problem is reported with the source file and the exact mutation, so a failure can be
reproduced by hand.
"""

import random
import signal
import struct
import time
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from support import CORPUS, unavailable

from precombined_nif.core.errors import FormatError
from precombined_nif.core.materials.mat import MatFile
from precombined_nif.core.nif import NifFile
from precombined_nif.core.starfield.mesh import MeshData
from precombined_nif.core.starfield.morphs import MorphFile

SOURCES = {
    "fo4-static-collision": "pynifly/tests/tests/FO4/AlarmClock.nif",  # bhkNPCollisionObject + packfile
    "fo4-skinned-body": "pynifly/tests/tests/FO4/MaleBody.nif",  # BSSubIndexTriShape, BSSkin::*
    "fnv-strips": "pynifly/tests/tests/FONV/9mmscp.nif",  # NiTriStrips(Data), bs 34
    "fnv-skinned": "pynifly/tests/tests/FONV/outfitf_simple.nif",  # NiSkinData, NiSkinPartition
    "sse": "pynifly/tests/tests/FO4/VaaMaleScarR04.nif",  # bs 100, BSDynamicTriShape
    "nifly-golden": "nifly/tests/input/TestNifFile_Static_FO4_139.nif",  # bs 139 header
    "sf-body": "pynifly/tests/tests/SF/naked_f.nif",  # bs 173: BSGeometry, SkinAttach
    "sf-skeleton": "pynifly/tests/tests/SF/skeleton.nif",  # NiCamera, Havok tagfiles
}
# variants per source and kind of damage
COUNTS = {"truncate": 250, "cut": 250, "flip": 400, "int32": 500, "run": 150}
FEWER = {"sf-skeleton": 5}  # sources of many blocks, slow to read under tracemalloc: a fifth as many variants
VALUES = (0x7FFFFFFF, 0xFFFFFFFF, 0x80000000)
PATH = "damaged.nif"
TIME_LIMIT = 2.0  # seconds per case
HANG_LIMIT = 10.0  # a case still running after this is stopped and reported as a hang
MiB = 1 << 20


def memory_limit(size):
    return 8 * size + 2 * MiB


# -- running one case ---------------------------------------------------------------------
class Hang(BaseException):
    """Raised by the timer; a BaseException, so the codec's own ``except Exception`` cannot
    turn it into a FormatError."""


class Timer:
    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = hasattr(signal, "setitimer")

    def __enter__(self):
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)

    @staticmethod
    def _fire(signum, frame):
        raise Hang()


def check_message(error, step):
    text = str(error)
    if "\n" in text or "\r" in text:
        return f"{step}: FormatError message spans several lines: {text!r}"
    if PATH not in text:
        return f"{step}: FormatError message does not name the file: {text!r}"
    return None


def measured(step, call, size, time_limit, hang_limit):
    """Run ``call()`` and judge it. Returns (result, rejected, problem)."""
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.process_time()
    result, rejected, problem = None, False, None
    try:
        with Timer(hang_limit):
            result = call()
    except Hang:
        problem = f"{step}: still running after {hang_limit} s (hang)"
    except FormatError as error:
        rejected, problem = True, check_message(error, step)
    except Exception as error:  # noqa: BLE001 - that is the point
        problem = f"{step}: {type(error).__name__} instead of FormatError: {error}"
    elapsed = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1] - base
    if problem is None and elapsed > time_limit:
        problem = f"{step}: took {elapsed:.2f} s"
    if problem is None and peak > memory_limit(size):
        problem = f"{step}: peak allocation {peak} bytes for a {size}-byte file (limit {memory_limit(size)})"
    return result, rejected, problem


def run_case(data, parse=NifFile.from_bytes, time_limit=TIME_LIMIT, hang_limit=HANG_LIMIT):
    """'accepted' or 'rejected', and a problem description or None."""
    data = bytes(data)
    nif, rejected, problem = measured("read", lambda: parse(data, path=PATH), len(data), time_limit, hang_limit)
    if problem or rejected:
        return ("rejected" if rejected else "broken"), problem
    out, rejected, problem = measured("write", nif.to_bytes, len(data), time_limit, hang_limit)
    if problem or rejected:
        return "accepted", problem
    if not isinstance(out, bytes):
        return "accepted", f"write: to_bytes returned {type(out).__name__}"
    if out == data:  # written back unchanged: reading it again proves nothing new
        return "accepted", None
    _, rejected, problem = measured("re-read", lambda: parse(out, path=PATH), len(out), time_limit, hang_limit)
    if rejected and not problem:
        problem = "re-read: what was read and written cannot be read again"
    return "accepted", problem


@pytest.fixture(scope="module")
def traced():
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    yield
    if started:
        tracemalloc.stop()


def run_all(variants, **limits):
    """Run every (description, data); returns the outcome counts and the problems."""
    outcomes, problems = Counter(), []
    for description, data in variants:
        outcome, problem = run_case(data, **limits)
        outcomes[outcome] += 1
        if problem:
            problems.append(f"{description}: {problem}")
    return outcomes, problems


def report(problems, limit=15):
    lines = problems[:limit] + ([f"... and {len(problems) - limit} more"] if len(problems) > limit else [])
    return f"{len(problems)} damaged inputs mishandled:\n" + "\n".join(lines)


# -- where things are in a file (FORMAT-NOTES section 1) -------------------------------------
class Layout:
    def __init__(self, data):
        pos = data.index(b"\n") + 1
        _version, endian, _user, num_blocks, bs = struct.unpack_from("<IBIII", data, pos)
        pos += 17

        def short_string(pos):
            return pos + 1 + data[pos]

        pos = short_string(pos)  # author
        pos = pos + 4 if bs > 130 else short_string(pos)  # u32 / process script
        pos = short_string(pos)  # export script
        if bs >= 103:
            pos = short_string(pos)  # max filepath
        order = self.order = "<" if endian else ">"

        def u32(pos):
            return struct.unpack_from(order + "I", data, pos)[0]

        (num_types,) = struct.unpack_from(order + "H", data, pos)
        pos += 2
        for _ in range(num_types):
            pos += 4 + u32(pos)
        pos += 2 * num_blocks  # type indices
        self.sizes_at = pos
        sizes = struct.unpack_from(f"{order}{num_blocks}I", data, pos)
        pos += 4 * num_blocks
        num_strings = u32(pos)
        pos += 8
        for _ in range(num_strings):
            pos += 4 + u32(pos)
        pos += 4 + 4 * u32(pos)  # groups
        self.header_end = pos
        self.blocks = []  # (offset, size)
        for size in sizes:
            self.blocks.append((pos, size))
            pos += size
        self.footer = pos
        assert pos + 4 <= len(data), "layout does not match the file"

    def position(self, rng, size):
        """A random position to damage: a third in the header, the rest in blocks, half of
        those in a block's first 64 bytes (counts and references live there)."""
        roll = rng.random()
        if roll < 0.3:
            return rng.randrange(0, self.header_end - size + 1)
        offset, length = rng.choice([b for b in self.blocks if b[1] >= size])
        span = min(length, 64) if roll < 0.65 else length
        return offset + rng.randrange(0, span - size + 1)


# -- damage -------------------------------------------------------------------------------
def truncations(data, layout, rng, count):
    points = set(range(0, min(layout.header_end, 96)))  # header line and fixed fields
    for offset, size in layout.blocks[:40]:
        points.update((offset - 1, offset, offset + 1, offset + size // 2))
    points.update(range(len(data) - 8, len(data)))  # inside the footer
    points.update(rng.randrange(0, layout.header_end) for _ in range(count // 5))
    points = {p for p in points if 0 <= p < len(data)}
    while len(points) < count:
        points.add(rng.randrange(0, len(data)))
    points = sorted(rng.sample(sorted(points), count))
    for point in points:
        yield f"truncated to {point} bytes", data[:point]


def cuts(data, layout, rng, count):
    """Bytes removed inside one block (its end, or a slice), size table patched to match:
    the block's own decoder meets the shortage."""
    blocks = [(i, offset, size) for i, (offset, size) in enumerate(layout.blocks) if size]
    for _ in range(count):
        index, offset, size = rng.choice(blocks)
        length = rng.randint(1, min(size, 8)) if rng.random() < 0.5 else rng.randint(1, size)
        start = offset + size - length if rng.random() < 0.5 else offset + rng.randrange(0, size - length + 1)
        out = bytearray(data[:start] + data[start + length :])
        struct.pack_into(layout.order + "I", out, layout.sizes_at + 4 * index, size - length)
        yield f"block {index}: {length} bytes cut at {start}", out


def flips(data, layout, rng, count):
    for _ in range(count):
        out = bytearray(data)
        changes = []
        for _ in range(rng.randint(1, 3)):
            at, mask = layout.position(rng, 1), rng.randint(1, 255)
            out[at] ^= mask
            changes.append(f"{at}^0x{mask:02X}")
        yield "flipped " + ",".join(changes), out


def int32s(data, layout, rng, count):
    for i in range(count):
        out = bytearray(data)
        at = layout.position(rng, 4)
        if i % 2 == 0:
            at &= ~3
        value = VALUES[i % 3]
        struct.pack_into(layout.order + "I", out, at, value)
        yield f"0x{value:08X} written at {at}", out


def runs(data, layout, rng, count):
    for i in range(count):
        out = bytearray(data)
        length = rng.randint(4, 256)
        at = layout.position(rng, 1)
        length = min(length, len(data) - at)
        fill = (0x00, 0xFF)[i % 2]
        out[at : at + length] = bytes([fill]) * length
        yield f"{length} bytes of 0x{fill:02X} written at {at}", out


DAMAGE = {"truncate": truncations, "cut": cuts, "flip": flips, "int32": int32s, "run": runs}


def source(name):
    path = CORPUS / SOURCES[name]
    if not path.is_file():
        unavailable(f"fuzz source {path} not found: the corpus is needed")
    return path.read_bytes()


def count_of(name, kind):
    return COUNTS[kind] // FEWER.get(name, 1)


def variants(name, kind):
    data = source(name)
    rng = random.Random(f"{name}/{kind}")  # str seeds are deterministic
    yield from DAMAGE[kind](data, Layout(data), rng, count_of(name, kind))


# -- tests --------------------------------------------------------------------------------
def test_sources_are_sound(traced):
    """The undamaged sources pass the same checks and write back byte-identical: otherwise
    the damaged variants prove nothing."""
    for name in SOURCES:
        data = source(name)
        assert run_case(data) == ("accepted", None), name
        assert NifFile.from_bytes(data).to_bytes() == data, name
        layout = Layout(data)
        (num_roots,) = struct.unpack_from(layout.order + "I", data, layout.footer)
        assert layout.footer + 4 + 4 * num_roots == len(data), f"{name}: bytes after the footer"


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("name", list(SOURCES))
def test_damaged(traced, name, kind):
    outcomes, problems = run_all(variants(name, kind))
    assert not problems, report([f"{SOURCES[name]}: {p}" for p in problems])
    assert sum(outcomes.values()) == count_of(name, kind)
    if kind == "truncate":
        # Every truncation loses at least part of the footer: nothing may pass as a whole file.
        assert outcomes["accepted"] == 0, outcomes
    else:
        assert outcomes["rejected"] > 0, f"no {kind} variant was rejected: the damage misses ({outcomes})"
    if kind == "flip":
        assert outcomes["accepted"] > 0, f"no flipped variant read: suspiciously strict ({outcomes})"


def garbage():
    rng = random.Random("garbage")
    line = b"Gamebryo File Format, Version 20.2.0.7\n"
    headers = {name: source(name)[: Layout(source(name)).header_end] for name in SOURCES}
    yield "empty file", b""
    yield "header line only", line
    yield "NetImmerse header line only", b"NetImmerse File Format, Version 20.2.0.7\n"
    for name, header in headers.items():
        yield f"{name}: header only", header
        yield f"{name}: header + empty footer", header + bytes(4)
        yield f"{name}: header + random tail", header + rng.randbytes(256)
        no_blocks = bytearray(header)
        struct.pack_into("<I", no_blocks, len(line) + 9, 0)  # num blocks 0, types and sizes kept
        yield f"{name}: header with num blocks 0", no_blocks
    for i in range(300):
        size = rng.choice((1, 7, 40, 57, 200, 1000, 4096, 65536))
        body = rng.randbytes(size)
        if i % 3 == 0:
            yield f"random {size} bytes (seed garbage #{i})", body
        elif i % 3 == 1:
            yield f"header line + random {size} bytes (#{i})", line + body
        else:  # the fixed fields of a real FO4 header, then garbage from the counts on
            fixed = line + struct.pack("<IBIII", 0x14020007, 1, 12, rng.choice((1, 5, 0xFFFF, 0xFFFFFFFF)), 130)
            yield f"FO4 fixed header + random {size} bytes (#{i})", fixed + body


def test_garbage(traced):
    outcomes, problems = run_all(garbage())
    assert not problems, report(problems)
    assert outcomes["rejected"] > 300 and outcomes["broken"] == 0, outcomes
    assert run_case(b"") == ("rejected", None)
    for name in SOURCES:
        data = source(name)
        assert run_case(data[: Layout(data).header_end]) == ("rejected", None), f"{name}: header only"


def test_harness_catches_problems(traced):
    """The checks above can fail: each kind of misbehaviour is caught."""
    data = source("nifly-golden")

    def raises(error):
        def parse(data, path=None):
            raise error

        return parse

    def located(message):
        return raises(FormatError(message, path=PATH))

    assert run_case(data, parse=raises(ValueError("x")))[1].startswith("read: ValueError instead of FormatError")
    assert run_case(data, parse=raises(IndexError()))[0] == "broken"
    assert "does not name the file" in run_case(data, parse=raises(FormatError("no path")))[1]
    assert "several lines" in run_case(data, parse=located("two\nlines"))[1]
    assert run_case(data, parse=located("fine")) == ("rejected", None)

    def greedy(data, path=None):
        return np.ones(memory_limit(len(data)) + 1, np.uint8)

    assert "peak allocation" in run_case(data, parse=greedy)[1]

    def slow(data, path=None):
        until = time.process_time() + 0.05  # busy: the limit counts CPU time, not a loaded machine's waits
        while time.process_time() < until:
            pass
        return NifFile.from_bytes(data, path=path)

    assert "took" in run_case(data, parse=slow, time_limit=0.01)[1]

    def forever(data, path=None):
        while True:
            pass

    assert "hang" in run_case(data, parse=forever, hang_limit=0.2)[1]

    class Unwritable:
        def to_bytes(self):
            raise KeyError("oops")

    assert "write: KeyError" in run_case(data, parse=lambda data, path=None: Unwritable())[1]

    class WritesJunk:
        def to_bytes(self):
            return b"junk"

    def once(data, path=None):
        return WritesJunk() if data != b"junk" else NifFile.from_bytes(data, path=path)

    assert "re-read" in run_case(data, parse=once)[1]
    assert run_case(data) == ("accepted", None)


# -- crafted: absurd but affordable counts ------------------------------------------------
# Each count below passes the reader's "do the items fit in the bytes left?" check, because
# the items are empty (zero-length strips, partitions with nothing in them, blocks of size 0).
# Built naively, one Python object per few bytes of file would go far beyond the memory limit.
# The reader charges each structure it builds against a budget proportional to the file size
# (core.stream.Budget), so these must be refused within the memory limit.
def nif_file(bs, types, blocks, strings=(), user_version=11):
    """A whole file from (type index, block bytes) pairs, written from FORMAT-NOTES section 1."""
    out = bytearray(b"Gamebryo File Format, Version 20.2.0.7\n")
    out += struct.pack("<IBIII", 0x14020007, 1, user_version, len(blocks), bs)
    out += b"\x01\x00" * (4 if bs >= 103 else 3)
    out += struct.pack("<H", len(types))
    for name in types:
        out += struct.pack("<I", len(name)) + name.encode()
    out += b"".join(struct.pack("<H", t) for t, _ in blocks)
    out += b"".join(struct.pack("<I", len(b)) for _, b in blocks)
    out += struct.pack("<II", len(strings), max(map(len, strings), default=0))
    out += b"".join(struct.pack("<I", len(t)) + t for t in strings)
    out += struct.pack("<I", 0)  # groups
    out += b"".join(b for _, b in blocks)
    return bytes(out + struct.pack("<Ii", 1, 0))


def geometry_data(tail):
    """NiGeometryData (bs 34) with no vertices, then the subclass's own fields."""
    head = struct.pack("<iHBBBHB4fBHi", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1)
    return head + tail


def zero_size_blocks():
    return nif_file(34, ["Unknown"], [(0, b"")] * 60_000)


def empty_strips():
    strips = struct.pack("<HH", 0, 0xFFFF) + bytes(2 * 0xFFFF) + b"\x01"
    return nif_file(34, ["NiTriStripsData"], [(0, geometry_data(strips))])


def empty_match_groups():
    tail = struct.pack("<HIB", 0, 0, 0) + struct.pack("<H", 0xFFFF) + bytes(2 * 0xFFFF)
    return nif_file(34, ["NiTriShapeData"], [(0, geometry_data(tail))])


def empty_skin_partitions():
    count = 20_000  # 14 bytes each at bs 34: five u16 counts, four bools
    return nif_file(34, ["NiSkinPartition"], [(0, struct.pack("<I", count) + bytes(14 * count))])


def unweighted_skin_bones():
    count = 8_000
    transform = struct.pack("<9f3ff", 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1)
    bone = transform + struct.pack("<4fH", 0, 0, 0, 0, 0)  # 70 bytes, no weights
    return nif_file(34, ["NiSkinData"], [(0, transform + struct.pack("<IB", count, 1) + bone * count)])


def empty_strings():
    """Control: 50 000 empty strings in the header cost a list slot each, well in limits."""
    return nif_file(34, ["Unknown"], [(0, b"")], strings=[b""] * 50_000)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(empty_strings, id="empty-strings"),
        pytest.param(
            zero_size_blocks,
            id="zero-size-blocks",
        ),
        pytest.param(
            empty_strips,
            id="empty-strips",
        ),
        pytest.param(
            empty_match_groups,
            id="empty-match-groups",
        ),
        pytest.param(
            empty_skin_partitions,
            id="empty-skin-partitions",
        ),
        pytest.param(
            unweighted_skin_bones,
            id="unweighted-skin-bones",
        ),
    ],
)
def test_crafted_counts(traced, build):
    data = build()
    outcome, problem = run_case(data)
    assert problem is None, f"{build.__name__} ({len(data)} bytes): {problem}"


# -- Starfield's files beside its NIFs: .mesh, morph.dat, .mat ------------------------------------
OTHER_SOURCES = {
    "sf-mesh": ("pynifly/tests/tests/SF/geometries/022faa031bcfca93c813/0b3a78e1d720af51f83d.mesh", MeshData.from_bytes),
    "sf-morphs": ("pynifly/tests/tests/SF/morphs/female_chargen_body_morph.dat", MorphFile.from_bytes),
    "sf-material": ("pynifly/tests/tests/SF/materials/Actors/Human/Faces/Teeth/Mouth.mat", MatFile.from_bytes),
}


def other_variants(name):
    """Truncations, every u32 the struct reader calls a count set to each hostile value, flips
    and runs anywhere."""
    from raw_starfield import count_offsets

    path = CORPUS / OTHER_SOURCES[name][0]
    if not path.is_file():
        unavailable(f"fuzz source {path} not found: the corpus is needed")
    data = path.read_bytes()
    rng = random.Random(name)
    counts = count_offsets(name, data)
    points = sorted({*counts, *(c + 2 for c in counts), *(rng.randrange(len(data)) for _ in range(150))})
    for point in points:
        yield f"truncated to {point} bytes", data[:point]
    for at in counts:
        for value in VALUES:
            out = bytearray(data)
            struct.pack_into("<I", out, at, value)
            yield f"0x{value:08X} written at {at}", out
    for _ in range(250):
        out = bytearray(data)
        at, mask = rng.randrange(len(data)), rng.randint(1, 255)
        out[at] ^= mask
        yield f"flipped {at}^0x{mask:02X}", out
    for i in range(100):
        out = bytearray(data)
        at, length = rng.randrange(len(data)), rng.randint(4, 256)
        out[at:at + length] = bytes([(0x00, 0xFF)[i % 2]]) * min(length, len(data) - at)
        yield f"{length} bytes of {(0x00, 0xFF)[i % 2]:#04x} written at {at}", out


@pytest.mark.parametrize("name", list(OTHER_SOURCES))
def test_damaged_starfield_files(traced, name):
    parse = OTHER_SOURCES[name][1]
    data = (CORPUS / OTHER_SOURCES[name][0]).read_bytes()
    assert run_case(data, parse=parse) == ("accepted", None)
    outcomes, problems = run_all(other_variants(name), parse=parse)
    assert not problems, report([f"{name}: {p}" for p in problems])
    assert outcomes["rejected"] > 100 and outcomes["accepted"] > 0, outcomes
