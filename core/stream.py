"""Reversible binary streams: one ``sync`` description per structure reads and writes it.

A structure's ``sync(s)`` calls ``value = s.u32(value)`` and the like for each field in file
order. A ReadStream ignores the value passed in and returns what it decodes; a WriteStream
encodes the value it is given and returns it unchanged. Readers and writers therefore
cannot drift apart.

Every read is bounds-checked, and counts are checked against the bytes left before
anything is allocated, so hostile counts cost nothing.
"""

import struct

import numpy as np

from .errors import FormatError

TEXT_ENCODING = "cp1252"

# The games store names as bytes and show them as Windows-1252. Five bytes (0x81, 0x8D, 0x8F,
# 0x90, 0x9D) are undefined there: they read as the C1 control character of the same number (as
# WHATWG's windows-1252 does), so every byte is a character any string store takes (Blender
# refuses surrogates) and every text read writes back as the same bytes. Through Latin-1, which
# maps byte n to character n, only 0x80-0x9F differ from Windows-1252.
_C1 = range(0x80, 0xA0)
_FROM_LATIN1 = {n: bytes((n,)).decode(TEXT_ENCODING, "ignore") or chr(n) for n in _C1}
_TO_LATIN1 = {ord(text): n for n, text in _FROM_LATIN1.items()}
# C1 characters Windows-1252 puts a letter in place of cannot be written (they would read back as the letter).
_TO_LATIN1.update({n: "\ufffd" for n in _C1 if _FROM_LATIN1[n] != chr(n)})


def decode_text(raw, encoding=TEXT_ENCODING):
    if encoding == TEXT_ENCODING:
        try:
            return raw.decode(encoding)  # the common case, twice as fast as the translation
        except UnicodeDecodeError:
            return raw.decode("latin-1").translate(_FROM_LATIN1)
    # surrogateescape keeps bytes the encoding leaves undefined, so any string round-trips exactly.
    return raw.decode(encoding, "surrogateescape")


def encode_text(text, encoding=TEXT_ENCODING):
    try:
        if encoding == TEXT_ENCODING:
            try:
                return text.encode(encoding)
            except UnicodeEncodeError:
                return text.translate(_TO_LATIN1).encode("latin-1")
        return text.encode(encoding, "surrogateescape")
    except UnicodeEncodeError as error:
        raise FormatError(f"text {text!r} cannot be stored: only {encoding} characters fit") from error


_SCALARS = {
    "u8": "B",
    "i8": "b",
    "u16": "H",
    "i16": "h",
    "u32": "I",
    "i32": "i",
    "u64": "Q",
    "f32": "f",
}


class _Structs:
    """Precompiled struct formats for one byte order."""

    def __init__(self, order):
        self.order = order
        for name, code in _SCALARS.items():
            setattr(self, name, struct.Struct(order + code))
        self.vec3 = struct.Struct(order + "3f")
        self.vec4 = struct.Struct(order + "4f")
        self.mat33 = struct.Struct(order + "9f")

        self._dtypes = {}

    def dtype(self, code):
        dtype = self._dtypes.get(code)
        if dtype is None:
            dtype = self._dtypes[code] = np.dtype(code).newbyteorder(self.order)
        return dtype


_LITTLE = _Structs("<")
_BIG = _Structs(">")


class Stream:
    """What both directions share: the byte order and the file context."""

    reading = False

    def __init__(self, context, big_endian=False):
        self.context = context
        self.set_big_endian(big_endian)

    def set_big_endian(self, big_endian):
        self.big_endian = big_endian
        self.structs = _BIG if big_endian else _LITTLE

    def dtype(self, code):
        """A numpy dtype in this stream's byte order ('f4', 'u2', ...)."""
        return self.structs.dtype(code)

    def ref(self, value=-1):
        """An i32 block reference (-1 for none). Kept apart from plain integers so references
        can be found and renumbered (core.nif.refs)."""
        return self.i32(value)

    def ref_list(self, value):
        """u32 count + i32 block references."""
        n = self.count(len(value), item_size=4, what="references")
        return self.array(value, "i4", n)

    def repeat(self, value, count, sync_one):
        """``count`` values each synced by ``sync_one(value)`` (strings, arrays of a list)."""
        if self.reading:
            self.charge(count)
            value = [None] * count
        return [sync_one(v) for v in value]

    def counted_array(self, value, code, *, kind="u32", what="array"):
        """A count of type ``kind`` followed by that many items of numpy type ``code``."""
        itemsize = self.dtype(code).itemsize if isinstance(code, str) else code.itemsize
        n = self.count(len(value), kind=kind, item_size=itemsize, what=what)
        return self.array(value, code, n)


class Budget:
    """Caps the Python objects a damaged file can make a reader build. Counts are checked
    against the bytes left, but an empty structure costs far more memory than the few bytes
    that describe it, so each one is charged here against a multiple of the file size."""

    OBJECT_COST = 512

    def __init__(self, file_size):
        self.left = 4 * file_size + (1 << 20)

    def charge(self, count, stream):
        self.left -= count * self.OBJECT_COST
        if self.left < 0:
            raise stream.error(f"{count} more structures are more than a file of this size can describe")


class ReadStream(Stream):
    reading = True

    def __init__(self, data, context=None, *, big_endian=False, base=0, budget=None):
        super().__init__(context, big_endian)
        self.data = data
        self.pos = 0
        self.base = base  # offset of data[0] in the file, for error messages
        self.budget = budget or Budget(len(data))

    def charge(self, count):
        """Account for ``count`` structures about to be built (see Budget)."""
        self.budget.charge(count, self)

    # -- bounds ------------------------------------------------------------------------
    @property
    def remaining(self):
        return len(self.data) - self.pos

    def error(self, message, at=None):
        return FormatError(message, offset=self.base + (self.pos if at is None else at))

    def need(self, size, what="data"):
        if size > len(self.data) - self.pos:
            raise self.error(f"{what} needs {size} bytes but only {len(self.data) - self.pos} remain")

    def _unpack(self, packer):
        pos = self.pos
        if pos + packer.size > len(self.data):
            raise self.error(f"truncated: {packer.size} bytes needed, {len(self.data) - pos} remain")
        self.pos = pos + packer.size
        return packer.unpack_from(self.data, pos)

    # -- scalars -----------------------------------------------------------------------
    def u8(self, value=None):
        return self._unpack(self.structs.u8)[0]

    def i8(self, value=None):
        return self._unpack(self.structs.i8)[0]

    def u16(self, value=None):
        return self._unpack(self.structs.u16)[0]

    def i16(self, value=None):
        return self._unpack(self.structs.i16)[0]

    def u32(self, value=None):
        return self._unpack(self.structs.u32)[0]

    def i32(self, value=None):
        return self._unpack(self.structs.i32)[0]

    def u64(self, value=None):
        return self._unpack(self.structs.u64)[0]

    def f32(self, value=None):
        return self._unpack(self.structs.f32)[0]

    def bool8(self, value=None):
        """A one-byte boolean, kept as its byte value so odd values (e.g. 255) survive."""
        return self._unpack(self.structs.u8)[0]

    def vec3(self, value=None):
        return self._unpack(self.structs.vec3)

    def vec4(self, value=None):
        return self._unpack(self.structs.vec4)

    def mat33(self, value=None):
        """Nine floats in file order: the rows of the rotation."""
        return self._unpack(self.structs.mat33)

    def floats(self, value=None, count=0):
        """A short fixed run of f32 as a tuple."""
        return self._unpack(struct.Struct(self.structs.order + f"{count}f"))

    def raw(self, value=None, size=0):
        self.need(size)
        pos = self.pos
        self.pos += size
        return bytes(self.data[pos : pos + size])

    # -- counts and arrays -------------------------------------------------------------
    def count(self, value=None, *, kind="u32", item_size=1, what="items"):
        """A count field, refused when its items cannot fit in the bytes left."""
        at = self.pos
        n = getattr(self, kind)()
        if n * item_size > len(self.data) - self.pos:
            raise self.error(
                f"{what}: count {n} needs {n * item_size} bytes but only {len(self.data) - self.pos} remain",
                at,
            )
        return n

    def array(self, value, code, count):
        """``count`` items of numpy type ``code`` (or a full dtype) as a writable array view."""
        dtype = code if isinstance(code, np.dtype) else self.structs.dtype(code)
        size = dtype.itemsize * count
        pos = self.pos
        if size > len(self.data) - pos:
            raise self.error(
                f"truncated: {count} items of {dtype.itemsize} bytes need {size} bytes but only {len(self.data) - pos} remain"
            )
        self.pos = pos + size
        return np.frombuffer(self.data, dtype, count, pos)

    def items(self, value, factory, count, min_size=1):
        """``count`` structures built by ``factory()`` and synced in turn."""
        if count * min_size > len(self.data) - self.pos:
            raise self.error(f"{count} structures cannot fit in {len(self.data) - self.pos} bytes")
        self.charge(count)
        out = []
        for _ in range(count):
            item = factory()
            item.sync(self)
            out.append(item)
        return out

    # -- strings -----------------------------------------------------------------------
    def sized_string(self, value=None, encoding=TEXT_ENCODING):
        """u32 length + bytes."""
        n = self.count(what="string")
        return decode_text(self.raw(size=n), encoding)

    def short_string(self, value=None):
        """u8 length (including a NUL) + bytes; returned without the NUL."""
        raw = self.raw(size=self.u8())
        terminated = raw.endswith(b"\0")
        return ShortString(decode_text(raw[:-1] if terminated else raw), terminated)

    def sized_string16(self, value=None):
        """u16 length + bytes."""
        n = self.count(kind="u16", what="string")
        return decode_text(self.raw(size=n))

    def string(self, value=None):
        """A string-table index (i32), resolved to the string; None for -1."""
        at = self.pos
        index = self.i32()
        if index == -1:
            return None
        strings = self.context.strings
        if not 0 <= index < len(strings):
            raise self.error(f"string index {index} outside the string table of {len(strings)}", at)
        return TableString(strings[index], index)


class ShortString(str):
    """A short string with a length byte of 0 (no NUL), so it writes back the same way."""

    def __new__(cls, text, terminated=True):
        obj = super().__new__(cls, text)
        obj.terminated = terminated
        return obj


class TableString(str):
    """A string read from the string table, remembering its index so tables with duplicate
    entries still write back byte-identical."""

    def __new__(cls, text, index):
        obj = super().__new__(cls, text)
        obj.index = index
        return obj


class WriteStream(Stream):
    reading = False

    def __init__(self, context=None, *, big_endian=False):
        super().__init__(context, big_endian)
        self.out = bytearray()

    @property
    def pos(self):
        return len(self.out)

    def charge(self, count):
        pass

    def error(self, message, at=None):
        return FormatError(message)

    def _pack(self, packer, *values):
        try:
            self.out += packer.pack(*values)
        except struct.error as error:
            raise FormatError(f"value {values if len(values) > 1 else values[0]!r} does not fit: {error}") from None

    def u8(self, value):
        self._pack(self.structs.u8, value)
        return value

    def i8(self, value):
        self._pack(self.structs.i8, value)
        return value

    def u16(self, value):
        self._pack(self.structs.u16, value)
        return value

    def i16(self, value):
        self._pack(self.structs.i16, value)
        return value

    def u32(self, value):
        self._pack(self.structs.u32, value)
        return value

    def i32(self, value):
        self._pack(self.structs.i32, value)
        return value

    def u64(self, value):
        self._pack(self.structs.u64, value)
        return value

    def f32(self, value):
        self._pack(self.structs.f32, value)
        return value

    def bool8(self, value):
        self._pack(self.structs.u8, int(value))
        return value

    def vec3(self, value):
        self._pack(self.structs.vec3, *value)
        return value

    def vec4(self, value):
        self._pack(self.structs.vec4, *value)
        return value

    def mat33(self, value):
        self._pack(self.structs.mat33, *value)
        return value

    def floats(self, value, count=0):
        if len(value) != count:
            raise FormatError(f"{len(value)} values where {count} are stored")
        self._pack(struct.Struct(self.structs.order + f"{count}f"), *value)
        return value

    def raw(self, value, size=None):
        if size is not None and len(value) != size:
            raise FormatError(f"expected {size} bytes, got {len(value)}")
        self.out += value
        return value

    def count(self, value, *, kind="u32", item_size=1, what="items"):
        return getattr(self, kind)(value)

    def array(self, value, code, count):
        dtype = code if isinstance(code, np.dtype) else self.dtype(code)
        if dtype.subdtype is not None:  # e.g. triangles: (count, 3) items of the base type
            base, shape = dtype.subdtype
            array = np.asarray(value).reshape(-1, *shape)
            dtype = base
        else:
            array = np.asarray(value)
        if len(array) != count:
            raise FormatError(f"array holds {len(array)} items where its count says {count}")
        if array.dtype != dtype:
            array = array.astype(dtype)
        self.out += array.tobytes()
        return value

    def items(self, value, factory, count, min_size=1):
        if len(value) != count:
            raise FormatError(f"list holds {len(value)} structures where its count says {count}")
        for item in value:
            item.sync(self)
        return value

    def sized_string(self, value, encoding=TEXT_ENCODING):
        raw = encode_text(value or "", encoding)
        self.u32(len(raw))
        self.out += raw
        return value

    def short_string(self, value):
        value = value or ""
        raw = encode_text(value)
        if getattr(value, "terminated", True):
            raw += b"\0"
        if len(raw) > 255:
            raise FormatError(f"short string {value!r} is longer than 254 bytes")
        self.u8(len(raw))
        self.out += raw
        return value

    def sized_string16(self, value):
        raw = encode_text(value or "")
        if len(raw) > 0xFFFF:
            raise FormatError(f"string {value[:40]!r}... is longer than 65535 bytes")
        self.u16(len(raw))
        self.out += raw
        return value

    def string(self, value):
        self.i32(-1 if value is None else self.context.string_index(value))
        return value
