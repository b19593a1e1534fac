"""BA2 and BSA archives: the corpus BA2 against an independent reader, archives built by
tests/archive_writer.py extracted byte for byte, damaged and huge archives."""

import struct
import zlib

import lz4.frame
import numpy as np
import pytest
from archive_writer import DX10_ONLY, LEGACY_PIXEL_FORMATS, make_dds, write_ba2_dx10, write_ba2_gnrl, write_bsa

from precombined_nif.core.archives import Ba2Archive, BsaArchive, archive_key, extract, open_archive
from precombined_nif.core.archives.data import DataFiles
from precombined_nif.core.archives.archive import Archive
from precombined_nif.core.errors import FormatError

CORPUS_BA2 = "ck-precombined/ColterFix-Main-scripts.ba2"
CORPUS_BSA_103 = "realmods/bethesda-structs/tests/static/bsa/JIP Companions Command & Control - Assets.bsa"


def independent_gnrl(data):
    """{path: bytes} of a GNRL BA2, read with struct and zlib only."""
    magic, version, kind, count, names_at = struct.unpack_from("<4sI4sIQ", data, 0)
    assert (magic, kind) == (b"BTDX", b"GNRL")
    files, at = {}, names_at
    for index in range(count):
        _, _, _, flags, offset, packed, size, sentinel = struct.unpack_from("<I4sIIQIII", data, 24 + 36 * index)
        length = struct.unpack_from("<H", data, at)[0]
        name = data[at + 2:at + 2 + length].decode()
        at += 2 + length
        body = zlib.decompress(data[offset:offset + packed]) if packed else data[offset:offset + size]
        assert len(body) == size and sentinel == 0xBAADF00D and flags == 0x00100100
        files[name] = body
    return files


def test_corpus_ba2_extracts_what_an_independent_reader_gets(corpus):
    path = corpus / CORPUS_BA2
    expected = independent_gnrl(path.read_bytes())
    archive = open_archive(path)
    assert isinstance(archive, Ba2Archive) and archive.type == "GNRL" and archive.version == 1
    assert archive.names() == [name.replace("\\", "/") for name in expected]
    for name, body in expected.items():
        assert archive.read(name) == body
        assert archive.read(name.upper().replace("\\", "/")) == body
    # The corpus entries are zlib-packed: make sure packed entries were exercised.
    assert all(entry.location[1] > 0 for entry in archive.entries.values())


def independent_bsa(data):
    """{folder\\name: bytes} of a version 103 or 104 BSA, read with struct and zlib only, walking
    the tables in order (folder records, each folder's name and file records, the file names).
    Version 103's flag 0x100 embeds no names."""
    magic, version, folder_offset, flags, folders, files, _, names_length = struct.unpack_from("<4sIIIIIII", data, 0)
    assert magic == b"BSA\0" and version in (103, 104) and flags & 0x3 == 0x3
    counts = [struct.unpack_from("<QII", data, folder_offset + 16 * i)[1] for i in range(folders)]
    at, records = folder_offset + 16 * folders, []
    for count in counts:
        folder = data[at + 1 : at + data[at]].rstrip(b"\0").decode("cp1252")
        at += 1 + data[at]
        for _ in range(count):
            records.append((folder, *struct.unpack_from("<QII", data, at)[1:]))
            at += 16
    names = data[at : at + names_length].split(b"\0")[:files]
    embedded = version >= 104 and flags & 0x100
    out = {}
    for (folder, size, offset), name in zip(records, names):
        packed = bool(flags & 0x4) != bool(size & 0x40000000)
        blob = data[offset : offset + (size & 0x3FFFFFFF)]
        if embedded:
            blob = blob[1 + blob[0] :]
        if packed:
            body = zlib.decompress(blob[4:])
            assert len(body) == struct.unpack_from("<I", blob)[0]
        else:
            body = blob
        out[f"{folder}\\{name.decode('cp1252')}"] = body
    return out


def test_corpus_bsa_103_lists_and_extracts_what_an_independent_reader_gets(corpus, tmp_path):
    """A New Vegas mod's archive in the Oblivion-era version 103: flag 0x100 set, no names
    embedded in the data, zlib-packed entries."""
    path = corpus / CORPUS_BSA_103
    data = path.read_bytes()
    expected = independent_bsa(data)
    assert len(expected) == 215 and struct.unpack_from("<I", data, 12)[0] & 0x104 == 0x104
    archive = open_archive(path)
    assert isinstance(archive, BsaArchive) and archive.version == 103
    assert sorted(map(archive_key, archive.names())) == sorted(map(archive_key, expected))
    for name, body in expected.items():
        assert archive.read(name) == body
    extracted = extract(archive, "*", tmp_path / "out")
    assert len(extracted) == len(expected)
    for name, body in expected.items():
        assert (tmp_path / "out" / name.replace("\\", "/")).read_bytes() == body


def test_corpus_bsa_103_is_searched_in_a_data_folder(corpus, tmp_path):
    data_folder = tmp_path / "Data"
    data_folder.mkdir()
    (data_folder / "JIP CCC - Assets.bsa").symlink_to(corpus / CORPUS_BSA_103)
    files = DataFiles([data_folder])
    meshes = files.archive_paths("meshes/*.nif")
    assert [name.split(":", 1)[1] for name in meshes] == [
        "meshes/jazzisparis/ccc/locationmarker.nif", "meshes/jazzisparis/ccc/screwdriver.nif"
    ]
    archive, inner = files.locate("jazzisparis\\ccc\\BGTile.dds", "textures")
    assert inner == "textures/jazzisparis/ccc/bgtile.dds"
    assert archive.read(inner) == independent_bsa((corpus / CORPUS_BSA_103).read_bytes())["textures\\jazzisparis\\ccc\\bgtile.dds"]
    assert not files.problems


def test_patterns_are_case_and_slash_insensitive(corpus):
    archive = open_archive(corpus / CORPUS_BA2)
    assert archive.names("SCRIPTS\\*.PSC") == ["Scripts/Source/User/DLC04/DLC04MQ01GauntletQuestScript.psc"]
    assert archive.names("*.pex") == ["Scripts/DLC04/DLC04MQ01GauntletQuestScript.pex"]
    assert archive_key("\\Meshes\\A.NIF") == "meshes/a.nif"


def sample_files(seed=1):
    rng = np.random.default_rng(seed)
    return {
        "meshes/Precombined/0000F3A1_1A2B3C4D_OC.nif": rng.integers(0, 4, 5000, dtype=np.uint8).tobytes(),
        "Materials/Test/Metal.BGSM": b"BGSM" + bytes(200),
        "materials/test/random.bgem": rng.bytes(3000),
        "empty.txt": b"",
    }


@pytest.mark.parametrize("version", [1, 7, 8])
@pytest.mark.parametrize("packed", [True, False])
def test_built_gnrl_extracts_exactly(tmp_path, version, packed):
    files = sample_files()
    files["meshes/" + "long folder name/" * 18 + "x.nif"] = b"a name over 255 bytes: its length's high byte counts"
    path = tmp_path / "test.ba2"
    write_ba2_gnrl(path, files, version=version, packed=packed)
    archive = open_archive(path)
    assert archive.names() == list(files)
    for name, body in files.items():
        assert archive.read(name.upper()) == body


@pytest.mark.parametrize("dxgi", sorted(LEGACY_PIXEL_FORMATS) + DX10_ONLY)
def test_built_dx10_textures_extract_to_the_packed_dds(tmp_path, dxgi):
    check_dx10_archive(tmp_path, dxgi, version=1)


@pytest.mark.parametrize("version", [7, 8])
@pytest.mark.parametrize("dxgi", [71, 28, 98])
def test_built_dx10_archives_of_the_later_versions(tmp_path, dxgi, version):
    """Versions 7 and 8 (Fallout 4's next-gen update) keep version 1's DX10 layout."""
    check_dx10_archive(tmp_path, dxgi, version=version)


@pytest.mark.parametrize("version, compression", [(2, "zlib"), (3, "zlib"), (3, "lz4")])
@pytest.mark.parametrize("dxgi", [71, 28, 98])
def test_built_starfield_dx10_archives(tmp_path, dxgi, version, compression):
    """Starfield's versions: a longer header (version 3 naming the packing), LZ4 blocks."""
    check_dx10_archive(tmp_path, dxgi, version=version, compression=compression)


@pytest.mark.parametrize("version, compression", [(2, "zlib"), (3, "zlib"), (3, "lz4")])
@pytest.mark.parametrize("packed", [True, False])
def test_built_starfield_gnrl_archives(tmp_path, version, compression, packed):
    files = {**sample_files(), "geometries/0123456789abcdef0123/456789abcdef01234567.mesh": bytes(range(256)) * 40}
    path = tmp_path / "Starfield - Meshes01.ba2"
    write_ba2_gnrl(path, files, version=version, packed=packed, compression=compression)
    archive = open_archive(path)
    assert (archive.version, archive.compression) == (version, compression)
    assert archive.names() == list(files)
    for name, body in files.items():
        assert archive.read(name) == body


def test_starfield_archive_of_an_unknown_packing_is_refused(tmp_path):
    path = tmp_path / "odd.ba2"
    write_ba2_gnrl(path, sample_files(), version=3)
    data = bytearray(path.read_bytes())
    data[32:36] = struct.pack("<I", 2)
    path.write_bytes(data)
    with pytest.raises(FormatError, match="compression method 2 is not supported"):
        open_archive(path)


def test_damaged_lz4_piece_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "lz4.ba2"
    write_ba2_gnrl(path, {"a/x.mesh": bytes(range(200)) * 20}, version=3, compression="lz4")
    data = bytearray(path.read_bytes())
    data[36 + 36:36 + 36 + 8] = b"\xff" * 8  # the packed piece's first bytes
    path.write_bytes(data)
    with pytest.raises(FormatError, match=r"a/x.mesh: (damaged LZ4 data|LZ4 data unpacks to)"):
        open_archive(path).read("a/x.mesh")


def check_dx10_archive(tmp_path, dxgi, version, compression="zlib"):
    textures = {
        "textures/a/square_d.dds": make_dds(dxgi, 64, 64, 7, seed=1),
        "textures/a/wide_n.dds": make_dds(dxgi, 32, 8, 6, seed=2),
        "textures/a/single.dds": make_dds(dxgi, 4, 4, 1, seed=3),
        "textures/sky/cube_e.dds": make_dds(dxgi, 16, 16, 5, cube=True, seed=4),
    }
    path = tmp_path / "tex.ba2"
    write_ba2_dx10(path, textures, version=version, packed=dxgi % 2 == 0 or compression == "lz4", compression=compression)
    archive = open_archive(path)
    assert archive.type == "DX10"
    for name, dds in textures.items():
        assert archive.find(name).size == len(dds)
        assert archive.read(name) == dds


@pytest.mark.parametrize("compressed", [True, False])
def test_built_bsa_103_with_flag_0x100_embeds_no_names(tmp_path, compressed):
    files = sample_files(103)
    path = tmp_path / "oblivion-era.bsa"
    write_bsa(path, files, version=103, compressed=compressed, more_flags=0x100, toggled={"materials/test/random.bgem"})
    archive = open_archive(path)
    assert archive.version == 103 and archive.flags & 0x100
    for name, body in files.items():
        assert archive.read(name) == body


@pytest.mark.parametrize("version, embed_names", [(103, False), (104, False), (104, True), (105, False), (105, True)])
@pytest.mark.parametrize("compressed", [True, False])
def test_built_bsa_extracts_exactly(tmp_path, version, compressed, embed_names):
    files = sample_files(version)
    files["textures/big/noise_d.dds"] = make_dds(77, 256, 256, 9)
    files["meshes/deep/er/path/x.nif"] = bytes(range(256)) * 300
    path = tmp_path / "test.bsa"
    write_bsa(path, files, version=version, compressed=compressed, embed_names=embed_names,
              toggled={"materials/test/random.bgem"})
    archive = open_archive(path)
    assert isinstance(archive, BsaArchive) and archive.version == version
    assert sorted(map(archive_key, archive.names())) == sorted(map(archive_key, files))
    for name, body in files.items():
        assert archive.read(name.replace("/", "\\").upper()) == body


def damaged_cases(tmp_path):
    files = sample_files()
    builders = {
        "gnrl.ba2": lambda p: write_ba2_gnrl(p, files),
        "dx10.ba2": lambda p: write_ba2_dx10(p, {"textures/x.dds": make_dds(71, 32, 32, 6)}),
        "fnv.bsa": lambda p: write_bsa(p, files, version=104),
        "sse.bsa": lambda p: write_bsa(p, files, version=105),
    }
    for name, build in builders.items():
        path = tmp_path / name
        build(path)
        yield path, path.read_bytes()


def read_everything(path):
    archive = open_archive(path)
    for name in archive.names():
        archive.read(name)


def test_truncated_archives_fail_cleanly(tmp_path):
    for path, data in damaged_cases(tmp_path):
        for cut in sorted({0, 3, 10, 30, 40, 60, 100, len(data) // 2, len(data) - 20, len(data) - 1}):
            path.write_bytes(data[:cut])
            with pytest.raises(FormatError) as error:
                read_everything(path)
            assert str(path) in str(error.value)


def test_byte_flips_never_escape_as_other_errors(tmp_path):
    rng = np.random.default_rng(7)
    for path, data in damaged_cases(tmp_path):
        for _ in range(150):
            damaged = bytearray(data)
            for at in rng.integers(0, len(data), 3):
                damaged[at] ^= int(rng.integers(1, 256))
            path.write_bytes(bytes(damaged))
            try:
                read_everything(path)
            except FormatError:
                pass


def test_hostile_counts_fail_before_allocating(tmp_path):
    for path, data in damaged_cases(tmp_path):
        damaged = bytearray(data)
        at = 16 if path.suffix == ".bsa" else 12  # file count
        damaged[at:at + 4] = struct.pack("<I", 0xFFFFFFF0)
        path.write_bytes(bytes(damaged))
        with pytest.raises(FormatError, match="do not fit"):
            open_archive(path)
        # The last guard of every read: one past the end is refused before Python allocates its size.
        path.write_bytes(data)
        with open_archive(path) as archive, pytest.raises(FormatError, match="runs past the end"):
            archive.read_at(len(data) - 8, 1 << 40, "a hostile size")


@pytest.mark.parametrize("offset", [1 << 40, (1 << 64) - 4])  # far past the end; wrapping to 0 when added to
@pytest.mark.parametrize("kind", ["GNRL", "DX10"])
def test_data_outside_the_file_is_refused_on_opening(tmp_path, offset, kind):
    path = tmp_path / "x.ba2"
    if kind == "GNRL":
        write_ba2_gnrl(path, sample_files())
        at = 24 + 36 + 16  # the second record's data offset
    else:
        write_ba2_dx10(path, {"textures/a.dds": make_dds(71, 64, 64, 7), "textures/b.dds": make_dds(71, 64, 64, 7)})
        at = 24 + 24 + 3 * 24 + 24 + 24  # the second texture's second chunk (after the first's 3)
    data = bytearray(path.read_bytes())
    data[at:at + 8] = struct.pack("<Q", offset)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=f"file 1: its \\d+ bytes at {offset} run past the end"):
        open_archive(path)


@pytest.mark.parametrize("version", [104, 105])
def test_bsa_data_outside_the_file_is_refused_on_opening(tmp_path, version):
    path = tmp_path / "x.bsa"
    write_bsa(path, {"a/x.nif": b"1" * 10, "a/y.nif": b"2" * 10}, version=version, compressed=False)
    data = bytearray(path.read_bytes())
    at = 36 + (16 if version == 104 else 24) + 3 + 16 + 12  # the second file record's offset
    data[at:at + 4] = struct.pack("<I", 0xFFFFFFF0)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=f"file 1 \\(a/y.nif\\): its 10 bytes at {0xFFFFFFF0} run past the end"):
        open_archive(path)


def test_bsa_folder_names_running_past_the_table_fail_cleanly(tmp_path):
    """Two folders of no files: the first name's length byte leads exactly to the table's end."""
    path = tmp_path / "x.bsa"
    path.write_bytes(struct.pack("<4sIIIIIIIHH", b"BSA\0", 105, 36, 0x3, 2, 0, 0, 0, 0, 0) + bytes(48) + b"\x01\x00")
    with pytest.raises(FormatError, match="folder 1: its name runs past the table"):
        open_archive(path)


def test_empty_archives_list_nothing(tmp_path):
    for name, write in (("gnrl.ba2", write_ba2_gnrl), ("dx10.ba2", write_ba2_dx10)):
        write(tmp_path / name, {})
        assert open_archive(tmp_path / name).names() == []


def test_a_texture_table_longer_than_the_first_read(tmp_path):
    """12001 textures: 1.4 MB of records and chunks, read in growing pieces; the first single-
    mip texture shifts the others so that a record's chunks straddle the first piece's end."""
    textures = {"textures/first.dds": make_dds(71, 4, 4, 1, seed=1)}
    textures.update({f"textures/set/t{n:05d}.dds": make_dds(71, 16, 16, 5, seed=n) for n in range(12000)})
    path = tmp_path / "many.ba2"
    write_ba2_dx10(path, textures, packed=False)
    archive = open_archive(path)
    assert archive.names() == list(textures)
    for name in list(textures)[::97] + ["textures/set/t08736.dds", "textures/set/t08737.dds", "textures/set/t08738.dds"]:
        assert archive.read(name) == textures[name]


@pytest.fixture
def reads(monkeypatch):
    """(offset, size) of every piece the archive readers read from their files."""
    pieces = []
    original = Archive.read_at

    def counting(self, offset, size, what):
        pieces.append((offset, size))
        return original(self, offset, size, what)

    monkeypatch.setattr(Archive, "read_at", counting)
    return pieces


def test_a_damaged_texture_count_stops_at_the_texture_data(tmp_path, reads):
    """A count that still fits in the file: the walk over the records stops where the data
    starts instead of reading the archive (several GB for the game's) as records."""
    path = tmp_path / "tex.ba2"
    write_ba2_dx10(path, {"textures/a.dds": make_dds(77, 1024, 1024, 11, seed=1)}, packed=False)
    data = bytearray(path.read_bytes())
    data[12:16] = struct.pack("<I", 40000)  # 40000 records of 24 bytes fit in its 1.4 MB
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="texture 1's record and chunks run into texture data at 120"):
        open_archive(path)
    assert sum(size for _, size in reads) <= 24 + (1 << 20)  # the header and the first piece of the table


def test_a_damaged_file_count_stops_at_the_files_data(tmp_path, reads):
    """A GNRL count that still fits in the file is refused once the first records show where
    the data starts; at most the first MiB of records is read."""
    path = tmp_path / "big.ba2"
    write_ba2_gnrl(path, {"a.bin": np.random.default_rng(1).bytes(3 << 20), "b.txt": b"b"}, packed=False)
    data = bytearray(path.read_bytes())
    data[12:16] = struct.pack("<I", 80000)  # 80000 records of 36 bytes fit in its 3 MB
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="80000 GNRL records run into the files' data at 96"):
        open_archive(path)
    assert sum(size for _, size in reads) <= 24 + (1 << 20)
    # An empty file's offset says nothing of where the data starts (writers may leave it 0).
    files = sample_files()
    write_ba2_gnrl(path, files, packed=False)
    data = bytearray(path.read_bytes())
    assert list(files)[3] == "empty.txt"
    data[24 + 3 * 36 + 16:24 + 3 * 36 + 24] = bytes(8)
    path.write_bytes(bytes(data))
    assert open_archive(path).read("empty.txt") == b""


@pytest.mark.parametrize("version", [104, 105])
def test_a_large_bsa_table_and_damaged_counts(tmp_path, reads, version):
    """45000 files: a table over 1 MiB, read after its first file record shows it ends before
    the data. A file count damaged to 100000 (still fitting in the file) is refused having
    read the header and the start of the table only."""
    files = {f"meshes/set{n // 1000}/f{n:05d}.nif": bytes([n % 251]) for n in range(45000)}
    files["textures/big.dds"] = np.random.default_rng(1).bytes(3 << 20)
    path = tmp_path / "big.bsa"
    write_bsa(path, files, version=version, compressed=False)
    archive = open_archive(path)
    assert len(archive.names()) == 45001 and archive.read("meshes/set44/f44999.nif") == bytes([44999 % 251])
    data = bytearray(path.read_bytes())
    data[20:24] = struct.pack("<I", 100000)
    path.write_bytes(bytes(data))
    reads.clear()  # what opening the damaged file reads
    with pytest.raises(FormatError, match="tables \\(\\d+ bytes\\) run into the files' data at \\d+"):
        open_archive(path)
    assert sum(size for _, size in reads) < 2000


def test_not_an_archive(tmp_path):
    path = tmp_path / "x.ba2"
    path.write_bytes(b"NOPE" + bytes(40))
    with pytest.raises(FormatError, match="not a BA2 or BSA"):
        open_archive(path)
    with pytest.raises(FormatError, match="cannot be opened"):
        open_archive(tmp_path / "missing.ba2")


def sparse_ba2(path, name, body, far):
    with open(path, "wb") as handle:
        handle.write(struct.pack("<4sI4sIQ", b"BTDX", 1, b"GNRL", 1, far + len(body)))
        handle.write(struct.pack("<I4sIIQIII", 0, b"nif\0", 0, 0x00100100, far, 0, len(body), 0xBAADF00D))
        handle.seek(far)
        handle.write(body + struct.pack("<H", len(name)) + name.encode())


def sparse_bsa(path, name, body, far):
    """A Skyrim SE BSA of one LZ4-packed file whose data starts ``far`` into the file."""
    folder, _, file = name.replace("/", "\\").rpartition("\\")
    packed = struct.pack("<I", len(body)) + lz4.frame.compress(body)
    tables = (struct.pack("<QIIQ", 0, 1, 0, 0) + bytes([len(folder) + 1]) + folder.encode() + b"\0"
              + struct.pack("<QII", 0, len(packed), far) + file.encode() + b"\0")
    with open(path, "wb") as handle:
        handle.write(struct.pack("<4sIIIIIIIHH", b"BSA\0", 105, 36, 0x1 | 0x2 | 0x4, 1, 1, len(folder) + 1,
                                 len(file) + 1, 0, 0) + tables)
        handle.seek(far)
        handle.write(packed)


def sparse_dx10(path, name, body, far):
    """A DX10 BA2 of one BC1 texture (body: its single mip) whose data starts ``far`` in."""
    width = int((len(body) * 2) ** 0.5)  # BC1: half a byte per pixel
    with open(path, "wb") as handle:
        handle.write(struct.pack("<4sI4sIQ", b"BTDX", 1, b"DX10", 1, far + len(body)))
        handle.write(struct.pack("<I4sIBBHHHBBBB", 0, b"dds\0", 0, 0, 1, 24, width, width, 1, 71, 0, 0))
        handle.write(struct.pack("<QIIHHI", far, 0, len(body), 0, 0, 0xBAADF00D))
        handle.seek(far)
        handle.write(body + struct.pack("<H", len(name)) + name.encode())


@pytest.mark.parametrize("build", [sparse_ba2, sparse_bsa, sparse_dx10])
def test_two_gigabyte_sparse_archive_is_listed_without_reading_it(tmp_path, reads, build):
    path = tmp_path / "huge.archive"
    body = np.random.default_rng(2).bytes(64 << 10)
    far = 2 << 30
    build(path, "meshes/far/away.nif", body, far)
    assert path.stat().st_blocks * 512 < 1 << 20  # sparse: the 2 GB are not on the disk
    archive = open_archive(path)
    assert archive.file_size > far
    assert archive.names() == ["meshes/far/away.nif"]
    # Listing reads the header and the tables only, none of the file's data.
    assert sum(size for _, size in reads) < 200 and all(offset + size <= 200 or offset > far + len(body) - 1
                                                        for offset, size in reads)
    extracted = archive.read("MESHES\\FAR\\AWAY.NIF")
    if build is sparse_dx10:  # BC1 gets the 128-byte legacy .dds header in front of its data
        assert extracted[:4] == b"DDS " and extracted[128:] == body
    else:
        assert extracted == body


def run_cli(*args):
    import subprocess
    import sys

    from support import ROOT

    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_cli_ls_and_extract(corpus, tmp_path):
    path = corpus / CORPUS_BA2
    expected = independent_gnrl(path.read_bytes())
    result = run_cli("ls", path, "*.PEX")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split() == ["25095", "Scripts/DLC04/DLC04MQ01GauntletQuestScript.pex"]
    assert "1 of 2 file(s)" in result.stdout
    result = run_cli("extract", path, "scripts\\*", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    for name, body in expected.items():
        assert (tmp_path / "out" / name.replace("\\", "/")).read_bytes() == body
    result = run_cli("extract", path, "nothing*", tmp_path / "out")
    assert result.returncode == 2 and "no file matches" in result.stderr


def test_cli_refuses_paths_leaving_the_output_folder(tmp_path):
    path = tmp_path / "evil.ba2"
    write_ba2_gnrl(path, {"../escape.txt": b"x"})
    result = run_cli("extract", path, "*", tmp_path / "out")
    assert result.returncode == 2 and "would leave the output folder" in result.stderr
    assert not (tmp_path / "escape.txt").exists()


def test_cli_names_a_damaged_archive_in_one_line(corpus, tmp_path):
    data = (corpus / CORPUS_BA2).read_bytes()
    truncated, damaged = tmp_path / "truncated.ba2", tmp_path / "damaged.ba2"
    truncated.write_bytes(data[:100])
    damaged.write_bytes(data[:200] + b"\xff" * 10 + data[210:])  # inside the first file's zlib data
    for args, path in ((("ls", truncated), truncated), (("extract", truncated, "*", tmp_path / "out"), truncated),
                       (("extract", damaged, "*", tmp_path / "out"), damaged)):
        result = run_cli(*args)
        assert result.returncode == 2 and result.stderr.startswith(f"error: {path}: ")
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert "damaged zlib data" in result.stderr
