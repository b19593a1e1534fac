"""LZ4 decoding in pure Python: frames for Skyrim SE BSAs, raw blocks for Starfield BA2s.

The add-on ships no compiled code (one zip for every OS Blender runs on), and the maintained
``lz4`` package is a C extension: bundling it would need a wheel per platform and Python
version in the manifest. Decoding is simple and the copies below are slices, so this is fast
enough for game files. Checksums are skipped: the frame's sizes are checked instead."""

from ..errors import FormatError

MAGIC = 0x184D2204
SKIPPABLE_MASK, SKIPPABLE_MAGIC = 0xFFFFFFF0, 0x184D2A50
MIN_MATCH = 4
_BLOCK_MAX = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}


def decompress_frame(data, size):
    """The ``size`` bytes held by the LZ4 frame(s) in ``data``; FormatError when damaged."""
    data = memoryview(data)
    out = bytearray()
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise FormatError(f"LZ4: truncated frame header at {at}")
        magic = int.from_bytes(data[at:at + 4], "little")
        if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC:
            at += 8 + int.from_bytes(data[at + 4:at + 8], "little")
            continue
        if magic != MAGIC:
            raise FormatError(f"LZ4: bad frame magic 0x{magic:08X} at {at}")
        at = _frame(data, at + 4, out, size)
    if len(out) != size:
        raise FormatError(f"LZ4: {len(out)} bytes decoded, {size} expected")
    return bytes(out)


def _frame(data, at, out, size):
    if at + 3 > len(data):
        raise FormatError("LZ4: truncated frame descriptor")
    flags, block_descriptor = data[at], data[at + 1]
    if flags >> 6 != 1:
        raise FormatError(f"LZ4: frame version {flags >> 6} is not 1")
    block_max = _BLOCK_MAX.get((block_descriptor >> 4) & 7)
    if block_max is None:
        raise FormatError(f"LZ4: bad block maximum size code {(block_descriptor >> 4) & 7}")
    block_checksum, content_size, content_checksum, dictionary = flags & 0x10, flags & 0x08, flags & 0x04, flags & 0x01
    at += 2 + (8 if content_size else 0) + (4 if dictionary else 0) + 1  # the last byte: header checksum
    if dictionary:
        raise FormatError("LZ4: frames with a dictionary are not supported")
    while True:
        if at + 4 > len(data):
            raise FormatError("LZ4: truncated block size")
        word = int.from_bytes(data[at:at + 4], "little")
        at += 4
        if word == 0:
            break
        length = word & 0x7FFFFFFF
        if length > block_max or at + length > len(data):
            raise FormatError(f"LZ4: block of {length} bytes does not fit")
        if word & 0x80000000:  # stored block
            out += data[at:at + length]
        else:
            decompress_block(data[at:at + length], out, len(out) + block_max)
        if len(out) > size:
            raise FormatError(f"LZ4: more than the {size} bytes expected")
        at += length + (4 if block_checksum else 0)
    return at + (4 if content_checksum else 0)


def decompress_raw(data, size, error, what):
    """The ``size`` bytes of one LZ4 block without a frame (Starfield's BA2 pieces); ``error``
    makes the FormatError of a damaged block, naming ``what``."""
    out = bytearray()
    try:
        decompress_block(memoryview(data), out, size)
    except FormatError as damage:
        raise error(f"{what}: damaged LZ4 data ({damage.message})") from None
    if len(out) != size:
        raise error(f"{what}: LZ4 data unpacks to {len(out)} bytes, the archive says {size}")
    return bytes(out)


def _length(block, at, value):
    """An LZ4 length: a nibble of 15 continues in bytes until one is not 255."""
    if value == 15:
        while True:
            if at >= len(block):
                raise FormatError("LZ4: truncated length")
            byte = block[at]
            at += 1
            value += byte
            if byte != 255:
                break
    return value, at


def decompress_block(block, out, limit):
    """Append one LZ4 block's output to ``out`` (earlier output is the match history)."""
    at, end = 0, len(block)
    while at < end:
        token = block[at]
        at += 1
        literals, at = _length(block, at, token >> 4)
        if at + literals > end:
            raise FormatError("LZ4: literals run past the block")
        out += block[at:at + literals]
        at += literals
        if at == end:  # the last sequence has literals only
            break
        if at + 2 > end:
            raise FormatError("LZ4: truncated match offset")
        offset = block[at] | block[at + 1] << 8
        at += 2
        match, at = _length(block, at, token & 15)
        match += MIN_MATCH
        if offset == 0 or offset > len(out):
            raise FormatError(f"LZ4: match offset {offset} points before the start of the data")
        if len(out) + match > limit:
            raise FormatError("LZ4: block decodes past its maximum size")
        start = len(out) - offset
        if match <= offset:
            out += out[start:start + match]
        else:  # overlapping copy: the last ``offset`` bytes repeat
            pattern = out[start:]
            out += (pattern * (match // offset + 1))[:match]
