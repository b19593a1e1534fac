"""Havok XML files into the objects the binary reader gives: the packfile form (``<hkpackfile
classversion=8|11 contentsversion=... toplevelobject=#N>``, what the HCT and hkxcmd write: one
``<hkobject name=#N class=... signature=...>`` per object, its members ``<hkparam name=...>``,
arrays with ``numelements``, structures as nested ``<hkobject>``, strings of arrays as
``<hkcstring>``, numbers as decimal text, vectors as ``(x y z w)``, a transform as three of them,
references ``#N`` or ``null``, enums by value name) and the tagfile form (``<hktagfile
version=1|2 [sdkversion=...]>``: ``<class>`` descriptions, then ``<object id=#N type=...>``
holding one element per member named by its kind, ``<int>``, ``<real>`` (``x`` and the float's
bits in hex, a comment with its value), ``<string>``, ``<ref>``, ``<vec4>``, ``<vec12>``,
``<struct>``, ``<array size=...>``; members at their default are left out; the first object is
the contents).

Objects of the typed classes the XML description covers (members.py) are built as the binary
reader builds them; the others are ``XmlObject``, their element kept. Parsing is bounded: no
DOCTYPE or entity is accepted, elements nest at most MAX_DEPTH deep, and every count is checked
against the items the text holds (nothing is allocated for a count alone)."""

import struct
import xml.etree.ElementTree as ET

import numpy as np

from ...errors import FormatError
from ..header import HK_2010, HK_2014
from ..objects import HavokObject
from .members import BY_NAME, QS, REFS, STRINGS, VEC4S, Enum, Struct

MAX_DEPTH = 64
CHUNK = 1 << 20
VERSIONS = {"hk_2010": HK_2010, "hk_2014": HK_2014}
_REAL = struct.Struct("<I")


class XmlObject(HavokObject):
    """An object of a class the XML description does not cover: its element, and the objects its
    references lead to (for walks over the file)."""

    def __init__(self, class_name, element, form, signature=None):
        self.class_name = class_name
        self.element = element
        self.form = form  # "packfile" or "tagfile"
        self.signature = signature
        self.references = []

    def text(self, name):
        """The text of the member ``name`` (None when absent)."""
        for child in self.element:
            if child.get("name") == name:
                return child.text or ""
        return None

    def encode(self, version=None, pointer_size=None):
        raise FormatError(f"{self.class_name}: read from XML, and its binary layout is not known here")


def is_xml(data):
    return bytes(data[:256]).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<"


def parse(data):
    """The document's root element; FormatError for what a Havok XML file never holds."""
    for declaration in (b"<!DOCTYPE", b"<!ENTITY"):
        at = data.find(declaration)
        if at >= 0:
            raise FormatError(f"XML Havok file with a {declaration[2:].decode()} declaration (Havok writes none)", offset=at)
    parser = ET.XMLPullParser(events=("start", "end"))
    depth, root = 0, None
    try:
        for start in range(0, max(len(data), 1), CHUNK):
            parser.feed(data[start : start + CHUNK])
            for event, element in parser.read_events():
                depth += 1 if event == "start" else -1
                root = element if root is None else root
                if depth > MAX_DEPTH:
                    raise FormatError(f"XML Havok file: elements nest deeper than {MAX_DEPTH}")
        parser.close()
    except ET.ParseError as error:
        line, column = error.position
        raise FormatError(f"XML Havok file damaged or cut off at line {line}, column {column} ({error.msg if hasattr(error, 'msg') else error})") from None
    if root is None:
        raise FormatError("XML Havok file: no element")
    return root


def read_xml(data):
    """(form, header fields {file_version, contents_version}, root object, objects in file order,
    signatures {class: signature}) of an XML Havok file."""
    element = parse(bytes(data))
    if element.tag == "hkpackfile":
        return _Packfile(element).read()
    if element.tag == "hktagfile":
        return _Tagfile(element).read()
    raise FormatError(f"XML file whose root is <{element.tag}>, not <hkpackfile> or <hktagfile>")


# -- values ------------------------------------------------------------------------------------
def _real(token):
    if token[:1] == "x":  # the tagfile's bits in hex
        try:
            return struct.unpack("<f", _REAL.pack(int(token[1:], 16) & 0xFFFFFFFF))[0]
        except ValueError:
            raise FormatError(f"XML Havok file: {token!r} is not a real") from None
    special = {"1.#INF00": "inf", "-1.#INF00": "-inf", "1.#QNAN0": "nan", "-1.#IND00": "nan"}.get(token, token)
    try:
        return float(special)
    except ValueError:
        raise FormatError(f"XML Havok file: {token!r} is not a real") from None


def _reals(text, what):
    tokens = text.replace("(", " ").replace(")", " ").split()
    return np.array([_real(token) for token in tokens], np.float32) if tokens else np.zeros(0, np.float32)


def _int(text, what):
    text = text.strip()
    try:
        value = int(text, 0) if text[:2].lower() == "0x" else int(text)
    except ValueError:
        raise FormatError(f"XML Havok file: {what} {text[:40]!r} is not an integer") from None
    if not -(1 << 31) <= value < 1 << 32:
        raise FormatError(f"XML Havok file: {what} {value} does not fit 32 bits")
    return value


def _numbers(text, dtype, what):
    tokens = text.split()
    if dtype.kind == "f":
        return _reals(text, what).astype(dtype)
    try:
        values = np.array([int(token) for token in tokens], np.int64)
    except (ValueError, OverflowError):
        raise FormatError(f"XML Havok file: {what} holds a value that is not an integer") from None
    info = np.iinfo(dtype)
    if len(values) and (values.min() < info.min or values.max() > info.max):
        raise FormatError(f"XML Havok file: {what} holds a value outside {dtype.name}")
    return values.astype(dtype)


def _count(values, declared, what):
    if declared is not None and declared != len(values):
        raise FormatError(f"XML Havok file: {what} declares {declared} items but holds {len(values)}")
    return values


def _qs(values, per, what):
    if len(values) % per:
        raise FormatError(f"XML Havok file: {what}: {len(values)} numbers are not whole transforms of {per}")
    rows = values.reshape(-1, per)
    out = np.zeros(len(rows), [("translation", "<f4", (4,)), ("rotation", "<f4", (4,)), ("scale", "<f4", (4,))])
    if per == 10:  # (x y z)(x y z w)(x y z)
        out["translation"][:, :3], out["rotation"], out["scale"][:, :3] = rows[:, :3], rows[:, 3:7], rows[:, 7:]
    else:
        out["translation"], out["rotation"], out["scale"] = rows[:, :4], rows[:, 4:8], rows[:, 8:]
    return out


class _Form:
    """What both forms share: objects made first (typed or kept), their members read after, each
    reference resolved through the ids."""

    form = None

    def __init__(self, element):
        self.element = element
        self.ids = {}
        self.elements = {}  # {object id: its element}
        self.version = HK_2010

    def make(self, object_id, class_name, element, signature=None):
        if not object_id or object_id in self.ids:
            raise FormatError(f"XML Havok file: object id {object_id!r} {'repeated' if object_id else 'missing'}")
        typed = BY_NAME.get(class_name)
        obj = typed[0]() if typed else XmlObject(class_name, element, self.form, signature)
        self.ids[object_id] = obj
        self.elements[object_id] = element
        return obj

    def ref(self, text, what):
        text = (text or "").strip()
        if text in ("", "null", "#0000"):
            return None
        if text not in self.ids:
            raise FormatError(f"XML Havok file: {what} names object {text!r}, which the file does not hold")
        return self.ids[text]

    def fill(self, obj, members, values, where):
        """Set ``obj``'s members from ``values`` ({member name: element}); absent ones keep
        their defaults."""
        for member in members:
            if not member.present(self.version) or member.name not in values:
                continue
            member.set(obj, self.value(member.kind, values[member.name], f"{where} member {member.name}"))

    def value(self, kind, element, what):
        text = element.text or ""
        if isinstance(kind, Enum):
            names = kind.get(self.version, {})
            return names[text.strip()] if text.strip() in names else _int(text, what)
        if kind == "int":
            return _int(text, what)
        if kind == "bool":
            flag = text.strip().lower()
            return int(flag == "true") if flag in ("true", "false") else _int(text, what)
        if kind == "real":
            return float(_count(_reals(text, what), 1, what)[0])
        if kind == "string":
            return text
        if kind == "ref":
            return self.ref(text, what)
        if kind == "vec4":
            return tuple(float(v) for v in _count(_reals(text, what), 4, what))
        return self.array(kind, element, what)


class _Packfile(_Form):
    form = "packfile"

    def read(self):
        top = self.element
        contents = top.get("contentsversion", "")
        self.version = VERSIONS.get(contents[:7])
        if self.version is None:
            raise FormatError(f"XML packfile of Havok {contents or 'unknown version'}: hk_2010 and hk_2014 are read")
        sections = [child for child in top if child.tag == "hksection"]
        data = [child for section in sections if section.get("name") == "__data__" for child in section]
        objects, signatures = [], {}
        for element in data:
            if element.tag != "hkobject":
                raise FormatError(f"XML packfile: <{element.tag}> in the data section, not <hkobject>")
            class_name = element.get("class") or ""
            signature = element.get("signature")
            signature = _int(signature, "class signature") if signature else None
            if signature is not None:
                signatures.setdefault(class_name, signature)
            objects.append(self.make(element.get("name"), class_name, element, signature))
        for obj, element in zip(objects, data):
            self.load(obj, element, f"object {element.get('name')} ({obj.class_name})")
        root = self.ref(top.get("toplevelobject"), "toplevelobject")
        if root is None:
            raise FormatError("XML packfile without its top-level object")
        return "packfile", {"file_version": self.version, "contents_version": contents}, root, objects, signatures

    def load(self, obj, element, where):
        params = {child.get("name"): child for child in element if child.tag == "hkparam"}
        if isinstance(obj, XmlObject):  # its members' kinds unknown: a "#N" naming an object is taken as a reference
            obj.references = [self.ids[token] for token in _reference_tokens(element) if token in self.ids]
            return
        self.fill(obj, BY_NAME[obj.class_name][1], params, where)

    def array(self, kind, element, what):
        declared = element.get("numelements")
        declared = _int(declared, f"{what} numelements") if declared is not None else None
        children = list(element)
        text = element.text or ""
        if isinstance(kind, Struct):
            values = []
            for child in children:
                item = kind.factory()
                self.fill(item, kind.members, {p.get("name"): p for p in child if p.tag == "hkparam"}, what)
                values.append(item)
            return _count(values, declared, what)
        if kind == STRINGS:
            return _count([child.text or "" for child in children if child.tag == "hkcstring"], declared, what)
        if kind == REFS:
            return _count([self.ref(token, what) for token in text.split()], declared, what)
        if kind == QS:
            return _count(_qs(_reals(text, what), 10, what), declared, what)
        if kind == VEC4S:
            return _count(_vectors(_reals(text, what), what), declared, what)
        return _count(_numbers(text, kind, what), declared, what)


def _vectors(values, what):
    if len(values) % 4:
        raise FormatError(f"XML Havok file: {what}: {len(values)} numbers are not whole vectors of 4")
    return values.reshape(-1, 4)


def _reference_tokens(element):
    """The ``#N`` words in a kept object's text (any depth)."""
    return [token for inner in element.iter() for token in (inner.text or "").split() if token[:1] == "#" and token[1:].isdigit()]


class _Tagfile(_Form):
    form = "tagfile"

    def read(self):
        top = self.element
        sdk = top.get("sdkversion", "")
        self.version = VERSIONS.get(sdk[:7], HK_2010) if sdk else HK_2010  # version 1 files: Skyrim's hk_2010
        data = [child for child in top if child.tag == "object"]
        objects = [self.make(element.get("id"), element.get("type") or "", element) for element in data]
        for obj, element in zip(objects, data):
            where = f"object {element.get('id')} ({obj.class_name})"
            if isinstance(obj, XmlObject):
                obj.references = [self.ref(inner.text, where) for inner in element.iter("ref")]
                continue
            self.fill(obj, BY_NAME[obj.class_name][1], {child.get("name"): child for child in element}, where)
        if not objects:
            raise FormatError("XML tagfile holding no object")
        return "tagfile", {"file_version": self.version, "contents_version": sdk or "hk_2010.2.0-r1"}, objects[0], objects, {}

    def array(self, kind, element, what):
        declared = element.get("size")
        declared = _int(declared, f"{what} size") if declared is not None else None
        children = list(element)
        if isinstance(kind, Struct):
            values = []
            for child in children:
                if child.tag == "ref":  # some writers give the structures as objects of their own
                    self.ref(child.text, what)
                    child = self.elements[child.text.strip()] if child.text.strip() in self.elements else child
                item = kind.factory()
                self.fill(item, kind.members, {p.get("name"): p for p in child}, what)
                values.append(item)
            return _count(values, declared, what)
        if kind == STRINGS:
            return _count([child.text or "" for child in children], declared, what)
        if kind == REFS:
            return _count([self.ref(child.text, what) for child in children], declared, what)
        text = " ".join([element.text or ""] + [child.text or "" for child in children])
        if kind == QS:
            return _count(_qs(_reals(text, what), 12, what), declared, what)
        if kind == VEC4S:
            return _count(_vectors(_reals(text, what), what), declared, what)
        return _count(_numbers(text, kind, what), declared, what)
