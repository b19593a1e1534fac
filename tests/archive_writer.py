"""Test-only writers of BA2 and BSA archives, written from the format descriptions
(CSG-NOTES.md, UESP's BSA page, Microsoft's DDS reference) without the product's readers, so
extraction tests compare against bytes made independently. SSE BSAs (LZ4 frames) and Starfield
version 3 BA2s (LZ4 blocks) are packed with the ``lz4`` package of the test environment (the
product decodes LZ4 itself)."""

import struct
import zlib

import lz4.block
import lz4.frame
import numpy as np


def _hash(text):
    # The readers ignore name hashes; any stable value fills the field.
    return zlib.crc32(text.lower().encode())


# -- BA2 --------------------------------------------------------------------------------------
# Starfield's versions add a u64 (1) after version 1's header, then (version 3) the packing: 0
# zlib, 3 LZ4 blocks (bsa-rs' fo4 archive reader and writer).
BA2_METHODS = {"zlib": 0, "lz4": 3}


def ba2_header_size(version):
    return {2: 32, 3: 36}.get(version, 24)


def _pack(raw, compression):
    return lz4.block.compress(raw, store_size=False) if compression == "lz4" else zlib.compress(raw, 6)


def _ba2(kind, version, records, blobs, names, compression="zlib"):
    """Header, records, data blobs (their offsets patched into the records by the caller's
    placeholders), then the name table."""
    body = b"".join(records)
    data_start = ba2_header_size(version) + len(body)
    data = b"".join(blobs)
    name_table = b"".join(struct.pack("<H", len(n.encode())) + n.encode() for n in names)
    header = struct.pack("<4sI4sIQ", b"BTDX", version, kind, len(names), data_start + len(data))
    if version in (2, 3):
        header += struct.pack("<Q", 1)
    if version == 3:
        header += struct.pack("<I", BA2_METHODS[compression])
    return header + body, data, name_table


def write_ba2_gnrl(path, files, *, version=1, packed=True, compression="zlib"):
    """``files``: {inner path: bytes}; each is packed (zlib, or LZ4 blocks in version 3) when
    ``packed`` (then stored when packing would not shrink it, as the CK does); the same bytes
    object given for several paths is packed once."""
    names, blobs, fields, packs = list(files), [], [], {}
    for name in names:
        raw = files[name]
        if packed and id(raw) not in packs:
            packs[id(raw)] = _pack(raw, compression)
        blob = packs[id(raw)] if packed else raw
        stored = blob if len(blob) < len(raw) else raw
        blobs.append(stored)
        fields.append((len(stored) if stored is not raw else 0, len(raw)))
    offset = ba2_header_size(version) + 36 * len(names)
    records = []
    for name, blob, (packed_size, size) in zip(names, blobs, fields):
        stem, _, ext = name.replace("/", "\\").rpartition("\\")[2].rpartition(".")
        directory = name.replace("/", "\\").rpartition("\\")[0]
        records.append(struct.pack("<I4sIIQIII", _hash(stem), ext.encode()[:4].ljust(4, b"\0"), _hash(directory),
                                   0x00100100, offset, packed_size, size, 0xBAADF00D))
        offset += len(blob)
    head, data, table = _ba2(b"GNRL", version, records, blobs, names, compression)
    path.write_bytes(head + data + table)


# DXGI formats of the DDS headers tests build: legacy FourCC/masks -> DXGI.
_LEGACY = {b"DXT1": 71, b"DXT3": 74, b"DXT5": 77, b"BC4U": 80, b"BC4S": 81, b"ATI2": 83, b"BC5S": 84}
_MASKS = {(0x40 | 0x1, 32, 0xFF): 28, (0x40 | 0x1, 32, 0xFF0000): 87, (0x40, 32, 0xFF0000): 88,
          (0x20000, 8, 0xFF): 61, (0x2, 8, 0): 65}
BLOCK_BYTES = {71: 8, 72: 8, 80: 8, 81: 8, 74: 16, 75: 16, 77: 16, 78: 16, 83: 16, 84: 16, 95: 16, 96: 16, 98: 16, 99: 16}
PIXEL_BITS = {2: 128, 10: 64, 11: 64, 24: 32, 28: 32, 29: 32, 41: 32, 49: 16, 56: 16, 61: 8, 65: 8, 87: 32, 88: 32, 91: 32}


def mip_size(dxgi, width, height, level):
    w, h = max(1, width >> level), max(1, height >> level)
    if dxgi in BLOCK_BYTES:
        return ((w + 3) // 4) * ((h + 3) // 4) * BLOCK_BYTES[dxgi]
    return w * h * PIXEL_BITS[dxgi] // 8


def parse_dds(dds):
    """(DXGI format, width, height, mip count, cubemap, header length) of a .dds file."""
    height, width = struct.unpack_from("<II", dds, 12)
    mips = struct.unpack_from("<I", dds, 28)[0]
    pf_flags, fourcc, bits, red = struct.unpack_from("<I4sII", dds, 80)
    caps2 = struct.unpack_from("<I", dds, 112)[0]
    if fourcc == b"DX10":
        return struct.unpack_from("<I", dds, 128)[0], width, height, mips, bool(caps2 & 0x200), 148
    dxgi = _LEGACY[fourcc] if pf_flags & 0x4 else _MASKS[(pf_flags, bits, red)]
    return dxgi, width, height, mips, bool(caps2 & 0x200), 128


def write_ba2_dx10(path, textures, *, version=1, packed=True, compression="zlib"):
    """``textures``: {inner path: complete .dds bytes}; each is cut into one chunk per mip for
    the first mips and one chunk for the rest (the layout Archive2 writes), cubemaps into one."""
    names, records, blobs = list(textures), [], []
    parsed = [parse_dds(textures[name]) for name in names]
    table_size = sum(24 + 24 * _chunk_count(p) for p in parsed)
    offset = ba2_header_size(version) + table_size
    for name, (dxgi, width, height, mips, cube, header_length) in zip(names, parsed):
        data = textures[name][header_length:]
        pieces = _chunks(data, dxgi, width, height, mips, cube)
        stem, _, ext = name.replace("/", "\\").rpartition("\\")[2].rpartition(".")
        directory = name.replace("/", "\\").rpartition("\\")[0]
        record = struct.pack("<I4sIBBHHHBBBB", _hash(stem), ext.encode().ljust(4, b"\0"), _hash(directory), 0,
                             len(pieces), 24, height, width, mips, dxgi, 1 if cube else 0, 8)
        for first, last, raw in pieces:
            blob = _pack(raw, compression) if packed else raw
            record += struct.pack("<QIIHHI", offset, len(blob) if packed else 0, len(raw), first, last, 0xBAADF00D)
            blobs.append(blob)
            offset += len(blob)
        records.append(record)
    head, data, table = _ba2(b"DX10", version, records, blobs, names, compression)
    path.write_bytes(head + data + table)


def _chunk_count(parsed):
    dxgi, width, height, mips, cube, _ = parsed
    return 1 if cube or mips == 1 else min(mips, 3)


def _chunks(data, dxgi, width, height, mips, cube):
    if cube or mips == 1:
        return [(0, mips - 1, data)]
    pieces, at = [], 0
    for level in range(min(mips, 3) - 1):
        size = mip_size(dxgi, width, height, level)
        pieces.append((level, level, data[at:at + size]))
        at += size
    pieces.append((min(mips, 3) - 1, mips - 1, data[at:]))
    return pieces


# -- BSA --------------------------------------------------------------------------------------
def write_bsa(path, files, *, version, compressed=True, embed_names=False, toggled=(), more_flags=0):
    """``files``: {inner path: bytes}, version 103 / 104 (zlib) or 105 (LZ4 frames). Files in
    ``toggled`` flip the archive's default compression (the size field's bit 30). ``more_flags``
    are set in the header and change nothing written (Oblivion-era archives set 0x100 without
    embedding names)."""
    folders = {}
    for name in files:
        folder, _, file = name.replace("/", "\\").lower().rpartition("\\")
        folders.setdefault(folder, []).append((file, name))
    folder_order = sorted(folders)
    flags = 0x1 | 0x2 | (0x4 if compressed else 0) | (0x100 if embed_names else 0) | more_flags
    folder_record_size = 24 if version == 105 else 16
    folder_names_length = sum(len(f) + 1 for f in folder_order)
    file_names = b"".join(file.encode() + b"\0" for f in folder_order for file, _ in folders[f])
    file_count = len(files)
    header = struct.pack("<4sIIIIIIIHH", b"BSA\0", version, 36, flags, len(folders), file_count,
                         folder_names_length, len(file_names), 0, 0)
    data_start = (36 + len(folders) * folder_record_size + len(folders) + folder_names_length
                  + 16 * file_count + len(file_names))
    folder_records, blocks, blobs = b"", b"", []
    offset = data_start
    block_at = 36 + len(folders) * folder_record_size
    for folder in folder_order:
        entries = folders[folder]
        # The folder record's offset counts the file names' length too (a quirk of the format).
        if version != 105:
            folder_records += struct.pack("<QII", _hash(folder), len(entries), block_at + len(file_names))
        else:
            folder_records += struct.pack("<QIIQ", _hash(folder), len(entries), 0, block_at + len(file_names))
        block = bytes([len(folder) + 1]) + folder.encode() + b"\0"
        for file, name in entries:
            raw = files[name]
            pack = compressed != (name in toggled)
            blob = b""
            if embed_names:
                full = f"{folder}\\{file}".encode()
                blob += bytes([len(full)]) + full
            if pack:
                body = lz4.frame.compress(raw) if version == 105 else zlib.compress(raw)
                blob += struct.pack("<I", len(raw)) + body
            else:
                blob += raw
            size_field = len(blob) | (0x40000000 if name in toggled else 0)
            block += struct.pack("<QII", _hash(file), size_field, offset)
            blobs.append(blob)
            offset += len(blob)
        blocks += block
        block_at += len(block)
    path.write_bytes(header + folder_records + blocks + file_names + b"".join(blobs))


# -- DDS ---------------------------------------------------------------------------------------
# DDS header fields as Microsoft's DDS reference gives them, per DXGI format: the pixel format
# (flags, FourCC, bits, masks) of the legacy header, or None when only a DX10 header fits.
LEGACY_PIXEL_FORMATS = {
    71: (0x4, b"DXT1", 0, 0, 0, 0, 0), 74: (0x4, b"DXT3", 0, 0, 0, 0, 0), 77: (0x4, b"DXT5", 0, 0, 0, 0, 0),
    80: (0x4, b"BC4U", 0, 0, 0, 0, 0), 81: (0x4, b"BC4S", 0, 0, 0, 0, 0), 83: (0x4, b"ATI2", 0, 0, 0, 0, 0),
    84: (0x4, b"BC5S", 0, 0, 0, 0, 0),
    28: (0x41, b"\0\0\0\0", 32, 0xFF, 0xFF00, 0xFF0000, 0xFF000000),
    87: (0x41, b"\0\0\0\0", 32, 0xFF0000, 0xFF00, 0xFF, 0xFF000000),
    88: (0x40, b"\0\0\0\0", 32, 0xFF0000, 0xFF00, 0xFF, 0),
    61: (0x20000, b"\0\0\0\0", 8, 0xFF, 0, 0, 0),
    65: (0x2, b"\0\0\0\0", 8, 0, 0, 0, 0xFF),
}
DX10_ONLY = [2, 10, 11, 24, 29, 41, 49, 56, 72, 75, 78, 91, 95, 96, 98, 99]


def make_dds(dxgi, width, height, mips, cube=False, seed=0):
    compressed = dxgi in BLOCK_BYTES
    flags = 0x1 | 0x2 | 0x4 | 0x1000 | 0x20000 | (0x80000 if compressed else 0x8)
    top = mip_size(dxgi, width, height, 0) if compressed else (width * PIXEL_BITS[dxgi] + 7) // 8
    caps = 0x1000 | (0x400008 if mips > 1 else 0) | (0x8 if cube else 0)
    legacy = LEGACY_PIXEL_FORMATS.get(dxgi)
    pixel_format = legacy or (0x4, b"DX10", 0, 0, 0, 0, 0)
    header = struct.pack("<4s7I44xII4s5I5I", b"DDS ", 124, flags, height, width, top, 0, mips,
                         32, *pixel_format, caps, 0xFE00 if cube else 0, 0, 0, 0)
    if legacy is None:
        header += struct.pack("<5I", dxgi, 3, 0x4 if cube else 0, 1, 0)
    size = sum(mip_size(dxgi, width, height, level) for level in range(mips)) * (6 if cube else 1)
    return header + np.random.default_rng(seed).bytes(size)


def dds_bytes(width=4, height=4):
    """An uncompressed 32-bit BGRA DDS: header (124 bytes after the magic) and opaque red pixels."""
    header = struct.pack(
        "<4s7I44x8I5I",
        b"DDS ",
        124,
        0x1 | 0x2 | 0x4 | 0x1000 | 0x8,  # caps, height, width, pixel format, pitch
        height,
        width,
        width * 4,
        0,
        0,
        32,
        0x41,  # pixel format: RGB with alpha
        0,
        32,
        0x00FF0000,
        0x0000FF00,
        0x000000FF,
        0xFF000000,
        0x1000,  # caps: texture
        0,
        0,
        0,
        0,
    )
    return header + bytes((0, 0, 255, 255)) * (width * height)
