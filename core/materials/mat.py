"""Starfield material files (``.mat``): JSON naming objects (``ID``, ``Parent``, ``Components`` of
``Type``, ``Index`` and ``Data``), a NIF's BSLightingShaderProperty naming the file. The game's
own files are laid out as Python's ``json.dumps(indent=2)`` with CRLF line ends and no final
newline; others (hand-written) differ.

The text is kept: an unedited file writes back byte for byte, and an edited one keeps the text
of every value the edit left alone, its changed values written in the file's own layout
(indent and line ends taken from the file). Textures are the ``BSMaterial::MRTextureFile``
components' ``FileName`` values (``Data\\Textures\\...``), found like any texture path."""

import json
import re
import zlib
from json.decoder import scanstring

from ..data_paths import data_relative
from ..errors import FormatError
from ..files import read_bytes, write_replacing

TEXTURE_COMPONENT = "BSMaterial::MRTextureFile"
BOM = "\ufeff"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_SPACE = re.compile(r"[ \t\r\n]*")
MAX_DEPTH = 200


class _Node:
    """A parsed JSON value and where its text lies; ``children``: an object's [(key, where the
    key starts, node)] or an array's [node]."""

    __slots__ = ("value", "start", "end", "children")

    def __init__(self, value, start, end, children=None):
        self.value, self.start, self.end, self.children = value, start, end, children


class _Parser:
    def __init__(self, text):
        self.text = text

    def error(self, message, at):
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return FormatError(f"not JSON: {message} at line {line}, column {column}")

    def space(self, at):
        return _SPACE.match(self.text, at).end()

    def value(self, at, depth=0):
        if depth > MAX_DEPTH:
            raise self.error("values nest too deep", at)
        at = self.space(at)
        char = self.text[at:at + 1]
        if char == "{":
            return self.container(at, depth, "}", keyed=True)
        if char == "[":
            return self.container(at, depth, "]", keyed=False)
        if char == '"':
            text, end = self.string(at)
            return _Node(text, at, end)
        for word, value in _LITERALS.items():
            if self.text.startswith(word, at):
                return _Node(value, at, at + len(word))
        match = _NUMBER.match(self.text, at)
        if match is None:
            raise self.error("a value was expected", at)
        return _Node(json.loads(match.group()), at, match.end())

    def string(self, at):
        try:
            return scanstring(self.text, at + 1)
        except json.JSONDecodeError as error:
            raise self.error(error.msg, error.pos) from None

    def container(self, start, depth, closing, keyed):
        children, at = [], self.space(start + 1)
        if self.text[at:at + 1] != closing:
            while True:
                at = self.space(at)
                if keyed:
                    if self.text[at:at + 1] != '"':
                        raise self.error("a member name was expected", at)
                    key_start = at
                    key, at = self.string(at)
                    at = self.space(at)
                    if self.text[at:at + 1] != ":":
                        raise self.error("':' was expected", at)
                    node = self.value(at + 1, depth + 1)
                    children.append((key, key_start, node))
                else:
                    node = self.value(at, depth + 1)
                    children.append(node)
                at = self.space(node.end)
                if self.text[at:at + 1] == ",":
                    at += 1
                    continue
                if self.text[at:at + 1] != closing:
                    raise self.error(f"',' or '{closing}' was expected", at)
                break
        value = {key: node.value for key, _, node in children} if keyed else [node.value for node in children]
        return _Node(value, start, at + 1, children)


def _same(a, b):
    """Equal as JSON values (1, 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


class MatFile:
    """``data``: the parsed JSON (edit it, then ``to_bytes``); ``path``: where it was read."""

    def __init__(self, text, path=None):
        self.path = path
        self.bom = text.startswith(BOM)
        self._text = text[1:] if self.bom else text
        parser = _Parser(self._text)
        try:
            self._root = parser.value(0)
            if parser.space(self._root.end) != len(self._text):
                raise parser.error("text after the JSON value", parser.space(self._root.end))
        except FormatError as error:
            raise error.located(path=path) from None
        self.data = json.loads(json.dumps(self._root.value))  # a copy the caller may edit
        self.newline = "\r\n" if "\r\n" in self._text else "\n"
        indents = re.findall(r"\n( +)\S", self._text)
        self.indent = min((len(i) for i in indents), default=2)

    @classmethod
    def from_bytes(cls, data, path=None):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"not UTF-8 text (byte {error.start})", path=path) from None
        return cls(text, path)

    @classmethod
    def read(cls, path):
        return cls.from_bytes(read_bytes(path), path)

    # -- writing -------------------------------------------------------------------------------
    def to_bytes(self):
        text = self._write(self.data, self._root)
        return ((BOM if self.bom else "") + text).encode("utf-8")

    def write(self, path):
        write_replacing(path, self.to_bytes())

    def _write(self, value, node):
        """The text of ``value``, reusing ``node``'s text where they agree: equal values keep
        their text; a container keeping its first members (an object its first keys, in order)
        keeps their text and its own, members added after them laid out like the last one."""
        if _same(value, node.value):
            return self._text[node.start:node.end]
        if not node.children or type(value) is not type(node.value) or not isinstance(value, (dict, list)):
            return self._fresh(value, self._indent_at(node.start))
        keyed = isinstance(value, dict)
        new = list(value.items()) if keyed else list(enumerate(value))
        old = node.children
        kept = min(len(new), len(old))
        if not new or (keyed and [key for key, _ in new[:kept]] != [child[0] for child in old[:kept]]):
            return self._fresh(value, self._indent_at(node.start))
        starts = [child[1] if keyed else child.start for child in old]
        nodes = [child[2] if keyed else child for child in old]
        parts, at = [], node.start
        for (_, item), start, child in zip(new[:kept], starts, nodes):
            parts.append(self._text[at:child.start])
            parts.append(self._write(item, child))
            at = child.end
        if len(new) > kept:
            separator = self._text[nodes[-2].end:starts[-1]] if len(old) > 1 else "," + self.newline + self._indent_at(starts[-1])
            base = self._indent_at(starts[-1])
            for key, item in new[kept:]:
                member = f"{json.dumps(key, ensure_ascii=False)}: " if keyed else ""
                parts.append(separator + member + self._fresh(item, base))
        parts.append(self._text[nodes[-1].end:node.end])
        return "".join(parts)

    def _indent_at(self, at):
        """The spaces starting the line holding offset ``at``."""
        line_start = self._text.rfind("\n", 0, at) + 1
        return re.match(r" *", self._text[line_start:at]).group()

    def _fresh(self, value, base):
        """``value`` laid out as the file lays out its values, its lines after the first indented by ``base``."""
        text = json.dumps(value, indent=self.indent, ensure_ascii=False)
        return text.replace("\n", "\n" + base).replace("\n", self.newline)

    # -- what a material names ----------------------------------------------------------------
    def components(self, kind=None):
        """(object, component) of every component (of ``Type`` ``kind`` if given)."""
        objects = self.data.get("Objects", []) if isinstance(self.data, dict) else []
        return [
            (obj, component)
            for obj in objects if isinstance(obj, dict)
            for component in obj.get("Components", []) if isinstance(component, dict)
            if kind is None or component.get("Type") == kind
        ]

    @property
    def textures(self):
        """The texture file names, in file order, as stored (``Data\\Textures\\...``)."""
        names = []
        for _, component in self.components(TEXTURE_COMPONENT):
            name = (component.get("Data") or {}).get("FileName")
            if isinstance(name, str) and name:
                names.append(name)
        return names

    def found_textures(self, data_files):
        """{stored name: where a ``core.archives.data.DataFiles`` finds it, or None}."""
        return {name: data_files.locate(texture_path(name), "textures") for name in self.textures}


def texture_path(name):
    """A .mat texture name as a Data-relative path (``Data\\`` dropped)."""
    return data_relative(name)


def material_id(path):
    """The value of the ``MaterialID`` NiIntegerExtraData Starfield shapes hold: the reflected
    CRC-32 (polynomial 0xEDB88320, initial value 0, no final XOR) of the material path as the
    shader stores it, lower-cased, backslashes (PyNifly's docs/starfield.md; checked on the
    corpus NIFs)."""
    # zlib's CRC-32 starts from and ends with an XOR by 0xFFFFFFFF: starting it from that value
    # and undoing the last XOR leaves the plain one.
    return zlib.crc32(str(path).replace("/", "\\").lower().encode("utf-8"), 0xFFFFFFFF) ^ 0xFFFFFFFF
