"""Havok tagfiles (``TAG0``): the binary format of Havok 2016 and later, which Starfield's NIFs
hold in their bhkPhysicsSystem and bhkRagdollSystem blocks (SDK 20190200) where Fallout 4's hold
binary packfiles. They are not decoded: the NIF carries their bytes unchanged, and this module
reads only their section tree to say what a blob is.

A section is a u32 header, big-endian (bits 30-31: 0 a container of sections, 1 a leaf; bits
0-29: the section's size, header included), a four-letter tag, then its contents. The file is
one ``TAG0`` container: ``SDKV`` (the SDK version text), ``DATA`` (the objects), ``TYPE`` (the
type descriptions; its ``TST1`` leaf lists the type names, NUL-terminated) and ``INDX``."""

from typing import NamedTuple

from ..errors import FormatError

MAGIC = b"TAG0"
CONTAINER, LEAF = 0, 1  # a section header's top two bits
MAX_DEPTH = 8


def is_tagfile(data):
    return bytes(data[4:8]) == MAGIC


class Tagfile:
    """What a tagfile's sections say: ``sdk`` (e.g. "20190200"), ``types`` (the type names, the
    root object's first in Starfield's), ``sections`` (the tags of the top level)."""

    def __init__(self, sdk, types, sections):
        self.sdk = sdk
        self.types = types
        self.sections = sections

    @property
    def description(self):
        holding = f", holding {self.types[0]}" if self.types else ""
        return f"a Havok tagfile (SDK {self.sdk}{holding}): kept in the file unchanged, not decoded"


class Section(NamedTuple):
    tag: str
    start: int  # of its contents
    end: int
    children: list  # a container's sections; None for a leaf


def _sections(data, start, end, depth=0):
    """The sections between ``start`` and ``end``, a container's with their own."""
    if depth > MAX_DEPTH:
        raise FormatError("tagfile: sections nest too deep", offset=start)
    found = []
    at = start
    while at < end:
        if at + 8 > end:
            raise FormatError("tagfile: truncated section header", offset=at)
        word = int.from_bytes(data[at:at + 4], "big")
        kind, size = word >> 30, word & 0x3FFFFFFF
        if kind not in (CONTAINER, LEAF) or size < 8 or at + size > end:
            raise FormatError(f"tagfile: section of {size} bytes (kind {kind}) does not fit", offset=at)
        children = _sections(data, at + 8, at + size, depth + 1) if kind == CONTAINER else None
        found.append(Section(bytes(data[at + 4:at + 8]).decode("latin-1"), at + 8, at + size, children))
        at += size
    return found


def _leaves(sections):
    for section in sections:
        if section.children is None:
            yield section
        else:
            yield from _leaves(section.children)


def read_tagfile(data):
    """The Tagfile of ``data``; FormatError when its sections are damaged."""
    sections = _sections(data, 0, len(data))
    if len(sections) != 1 or sections[0].tag != "TAG0" or sections[0].children is None:
        raise FormatError("tagfile: the file is not one TAG0 section", offset=0)
    leaves = {leaf.tag: bytes(data[leaf.start:leaf.end]) for leaf in _leaves(sections)}
    sdk = leaves.get("SDKV", b"").decode("latin-1", "replace")
    types = [name.decode("latin-1") for name in leaves.get("TST1", b"").split(b"\0") if name]
    return Tagfile(sdk, types, [section.tag for section in sections[0].children])


def describe(data):
    """One line saying what a tagfile blob is (or why it cannot be told)."""
    try:
        return read_tagfile(data).description
    except FormatError as error:
        return f"a damaged Havok tagfile ({error}): kept in the file unchanged"
