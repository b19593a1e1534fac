"""An XML Havok file read (``XmlHavokFile``: written back as read), and the conversions: XML to a
binary packfile of 32- or 64-bit pointers, a binary packfile to XML (the packfile form, as the HCT
and hkxcmd write it: ``classversion`` 8 for hk_2010, 11 for hk_2014) and a binary packfile to the
other pointer size. A conversion needs every object in a class whose layout is known here (the
animation, skeleton and behaviour string classes, members.py); a file holding others (a
skeleton's ragdoll) is refused with their names, never written in part."""

from copy import copy
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ...errors import FormatError
from ..animation.base import INTERLEAVED, SPLINE
from ..animation.interleaved import InterleavedAnimation
from ..animation.spline import SplineAnimation
from ..classnames import BASE_CLASSES, SIGNATURES, TAG, ClassNames
from ..container import Packfile
from ..header import HK_2014, FileHeader
from ..objects import ObjectWriter, RawObject, typed_class
from .members import BY_NAME, QS, REFS, STRINGS, VEC4S, Enum, Struct
from .reader import XmlObject, read_xml

PREDICATES = b"\x14" + bytes(15)  # hk_2014 .hkx files: max predicate 21, this predicate array
PER_LINE = 16


class XmlHavokFile:
    """``form`` ("packfile" or "tagfile"), ``header`` (a FileHeader: the version; the pointer size
    is the one a conversion to binary gives, 64-bit unless asked), ``root``, ``signatures`` (the
    class signatures the file gives), ``source`` (the bytes read)."""

    def __init__(self, form, header, root, signatures, source):
        self.form = form
        self.header = header
        self.root = root
        self.signatures = signatures
        self.source = source

    @classmethod
    def from_bytes(cls, data):
        form, fields, root, _objects, signatures = read_xml(data)
        header = FileHeader()
        header.file_version, header.contents_version = fields["file_version"], fields["contents_version"]
        header.predicates = PREDICATES if header.file_version >= HK_2014 else b""
        return cls(form, header, root, signatures, bytes(data))

    def objects(self):
        """The objects reachable from the root, each with None (no binary encoding)."""
        return [(obj, None) for obj in walk(self.root, self.header.file_version)]

    def to_bytes(self):
        return self.source

    def write(self, path):
        Path(path).write_bytes(self.source)

    def to_packfile(self, pointer_size=8):
        """The binary packfile of these objects, with pointers of ``pointer_size`` bytes."""
        version = self.header.file_version
        objects = [obj for obj, _ in self.objects()]
        _check_layouts(objects, version, pointer_size, "XML")
        for obj in objects:  # the type an animation's class implies (tagfiles number them otherwise)
            if isinstance(obj, SplineAnimation):
                obj.type = SPLINE[version]
            elif isinstance(obj, InterleavedAnimation):
                obj.type = INTERLEAVED
        _resize(objects, version, pointer_size)
        packfile = Packfile(self.root)
        packfile.header = header = copy(self.header)
        header.pointer_size = pointer_size
        header.contents_version = header.contents_version if header.contents_version[:7] in ("hk_2010", "hk_2014") else "hk_2010.2.0-r1"
        names = list(dict.fromkeys(BASE_CLASSES + tuple(obj.class_name for obj in objects)))
        entries = []
        for name in names:
            signature = self.signatures.get(name, SIGNATURES.get(version, {}).get(name))
            if signature is None:
                raise FormatError(f"the signature of class {name} for this Havok version is not known: give the file as an XML packfile, which names it")
            entries.append((signature, TAG, name))
        packfile.classnames = ClassNames(entries)
        return packfile


def walk(root, version):
    """The objects reachable from ``root`` through their references, depth first."""
    order, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        order.append(obj)
        stack += reversed(list(references(obj, version)))
    return order


def references(obj, version):
    if isinstance(obj, XmlObject):
        yield from obj.references
        return
    if isinstance(obj, RawObject):
        yield from (target for _, target, _ in obj.global_fixups)
        return
    yield from _member_references(obj, BY_NAME[obj.class_name][1], version)


def _member_references(obj, members, version):
    for member in members:
        if not member.present(version):
            continue
        value = member.get(obj)
        if member.kind == "ref":
            yield value
        elif member.kind == REFS:
            yield from value
        elif isinstance(member.kind, Struct):
            for item in value:
                yield from _member_references(item, member.kind.members, version)


def _check_layouts(objects, version, pointer_size, source):
    if version >= HK_2014 and pointer_size == 4:
        raise FormatError("Fallout 4 (hk_2014) packfiles are 64-bit only: no 32-bit layout of their classes is known here")
    missing = sorted({obj.class_name for obj in objects if typed_class(obj.class_name, version, pointer_size) is None
                      or isinstance(obj, (RawObject, XmlObject))})
    if missing:
        raise FormatError(
            f"the file holds objects whose {8 * pointer_size}-bit layout is not known here ({', '.join(missing)}): "
            f"only files of animation, skeleton and behaviour string classes convert"
        )


class _Resizing(ObjectWriter):
    """Writes an object with pointers of another size: its reserved fields (the vtable, size and
    count slots, padding: zero in packfiles) made that size's."""

    def raw(self, value, size=None):
        if size is not None and len(value) != size:
            value = bytes(size)
        return super().raw(value, size)


def _resize(objects, version, pointer_size):
    for obj in objects:
        obj.sync(_Resizing(version=version, pointer_size=pointer_size))


# -- binary to binary and to XML ----------------------------------------------------------------
def with_pointer_size(packfile, pointer_size):
    """A new packfile of the same objects with pointers of ``pointer_size`` bytes."""
    objects = [obj for obj, _ in packfile.objects()]
    _check_layouts(objects, packfile.header.file_version, pointer_size, "binary")
    _resize(objects, packfile.header.file_version, pointer_size)
    converted = Packfile(packfile.root)
    converted.header = copy(packfile.header)
    converted.header.pointer_size = pointer_size
    converted.classnames = packfile.classnames.copy()
    converted.contents_class = packfile.contents_class
    return converted


def packfile_xml(packfile):
    """The XML packfile text of a binary packfile's objects (bytes, ASCII)."""
    header = packfile.header
    version = header.file_version
    objects = [obj for obj, _ in packfile.objects()]
    _check_layouts(objects, version, header.pointer_size, "binary")
    signatures = {name: signature for signature, _, name in packfile.classnames.entries}
    names = {id(obj): f"#{index + 1:04d}" for index, obj in enumerate(objects)}
    out = _Writer(version, names)
    out.line(0, '<?xml version="1.0" encoding="ascii"?>')
    out.line(0, f'<hkpackfile classversion="{version}" contentsversion={quoteattr(header.contents_version)} '
                f'toplevelobject="{names[id(packfile.root)]}">')
    out.line(0, "")
    out.line(1, '<hksection name="__data__">')
    out.line(0, "")
    for obj in objects:
        out.line(2, f'<hkobject name="{names[id(obj)]}" class="{obj.class_name}" signature="0x{signatures[obj.class_name]:08x}">')
        out.members(obj, BY_NAME[obj.class_name][1], 3)
        out.line(2, "</hkobject>")
        out.line(0, "")
    out.line(1, "</hksection>")
    out.line(0, "")
    out.line(0, "</hkpackfile>")
    return ("\n".join(out.lines) + "\n").encode("ascii", "xmlcharrefreplace")


def _real(value):
    return np.format_float_positional(np.float32(value), unique=True, trim="-")


def _text(value):
    return escape(value or "")


class _Writer:
    def __init__(self, version, names):
        self.version = version
        self.names = names
        self.lines = []

    def line(self, depth, text):
        self.lines.append("\t" * depth + text)

    def ref(self, obj):
        return "null" if obj is None else self.names[id(obj)]

    def members(self, obj, members, depth):
        for member in members:
            if member.present(self.version):
                self.member(member, member.get(obj), depth)

    def member(self, member, value, depth):
        kind, name = member.kind, member.name
        if isinstance(kind, (Struct, np.dtype)) or kind in (QS, VEC4S, STRINGS, REFS):
            return self.array(kind, name, value, depth)
        if isinstance(kind, Enum):
            names = {number: text for text, number in kind.get(self.version, {}).items()}
            text = names.get(int(value), str(int(value)))
        elif kind == "bool":
            text = "true" if value else "false"
        elif kind == "real":
            text = _real(value)
        elif kind == "vec4":
            text = "(" + " ".join(map(_real, value)) + ")"
        elif kind == "ref":
            text = self.ref(value)
        elif kind == "string":
            text = _text(value)
        else:
            text = str(int(value))
        self.line(depth, f'<hkparam name="{name}">{text}</hkparam>')

    def array(self, kind, name, value, depth):
        count = len(value)
        opening = f'<hkparam name="{name}" numelements="{count}">'
        if not count:
            return self.line(depth, opening + "</hkparam>")
        self.line(depth, opening)
        if isinstance(kind, Struct):
            for item in value:
                self.line(depth + 1, "<hkobject>")
                self.members(item, kind.members, depth + 2)
                self.line(depth + 1, "</hkobject>")
        elif kind == STRINGS:
            for text in value:
                self.line(depth + 1, f"<hkcstring>{_text(text)}</hkcstring>")
        elif kind == QS:
            for row in value:
                parts = (row["translation"][:3], row["rotation"], row["scale"][:3])
                self.line(depth + 1, "".join("(" + " ".join(map(_real, part)) + ")" for part in parts))
        elif kind == VEC4S:
            for row in np.asarray(value).reshape(-1, 4):
                self.line(depth + 1, "(" + " ".join(map(_real, row)) + ")")
        else:
            tokens = [self.ref(obj) for obj in value] if kind == REFS else (
                list(map(_real, value)) if kind.kind == "f" else [str(v) for v in np.asarray(value).tolist()])
            for start in range(0, count, PER_LINE):
                self.line(depth + 1, " ".join(tokens[start : start + PER_LINE]))
        self.line(depth, "</hkparam>")
