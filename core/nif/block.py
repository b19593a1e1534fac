"""Block base class and the registry mapping block type names to classes."""

from numbers import Integral

from ..errors import FormatError
from ..registry import Registry

BLOCK_TYPES = Registry("block type")


def block_class(*type_names, fallback_raw=False):
    """Class decorator: the class reads and writes blocks of these type names. ``fallback_raw``:
    its layout comes from nif.xml with no corpus file (or too few) to prove it in every game, and
    it is decoded only so its references are known: bytes that do not fit it are kept as a raw
    block, as they were before it was decoded, rather than refusing the file."""

    def register(cls):
        cls.type_names = type_names
        cls.fallback_raw = fallback_raw
        return BLOCK_TYPES.add(cls, type_names)

    return register


def registered_types():
    return dict(BLOCK_TYPES.classes)


def class_for(type_name):
    return BLOCK_TYPES.get(type_name, RawBlock)


def block_at(blocks, index, *classes):
    """The block a reference names, if it is one of ``classes``, else None: a damaged file's
    reference may point anywhere, so it resolves only to what it must name."""
    block = blocks[index] if isinstance(index, Integral) and 0 <= index < len(blocks) else None
    return block if isinstance(block, classes) else None


class Block:
    """One block of a NIF file.

    Subclasses describe their fields once in ``sync(s)``. Class attributes give the defaults of
    a block made in code (immutable values only, so instances never share mutable state).
    """

    type_name = None
    trailing = b""  # bytes after the decoded fields within the declared block size
    fallback_raw = False  # see block_class

    def __init__(self, type_name=None, **fields):
        self.type_name = type_name or self.type_names[0]
        for key, value in fields.items():
            if not hasattr(type(self), key):
                raise AttributeError(f"{type(self).__name__} has no field {key!r}")
            setattr(self, key, value)

    def sync(self, s):
        raise NotImplementedError

    def __repr__(self):
        name = getattr(self, "name", None)
        return f"<{self.type_name}{' ' + repr(name) if name else ''}>"


class RawBlock(Block):
    """A block type without a typed class: carried through as its bytes, which can only be
    written in the byte order they were read in."""

    type_names = ()
    data = b""
    big_endian = False

    def __init__(self, type_name, data=b"", big_endian=False):
        self.type_name = type_name
        self.data = data
        self.big_endian = big_endian

    def sync(self, s):
        if s.reading:
            self.big_endian = s.big_endian
        elif s.big_endian != self.big_endian:
            raise FormatError(
                f"cannot change the byte order of a {self.type_name} block: its fields are not known"
            )
        self.data = s.raw(self.data, len(self.data) if not s.reading else s.remaining)
