"""The conversions ``cli.py convert`` makes of a .hkx (document.py has them), and the check that
a converted file reads back to the values of the file it came from."""

import numpy as np

from ...errors import FormatError
from ..animation.hkx import CLASSES, hkx_from_bytes
from ..container import Packfile
from .document import XmlHavokFile, packfile_xml, with_pointer_size
from .reader import is_xml

FORMS = ("xml", "32", "64")


def convert_hkx(data, to=None):
    """(bytes written, what was read, what was written) of a .hkx converted ``to`` "xml" (an XML
    packfile), "32" or "64" (a binary packfile with pointers of that many bits); None: 64 for an
    XML file, XML for a binary one."""
    if to not in (None,) + FORMS:
        raise FormatError(f"unknown form {to!r}: xml, 32 or 64")
    if is_xml(data):
        source = XmlHavokFile.from_bytes(data)
        read = f"an XML {source.form}"
        to = to or "64"
        packfile = source.to_packfile(8 if to == "xml" else int(to) // 8)
    else:
        packfile = Packfile.from_bytes(data, CLASSES)
        read = f"a {8 * packfile.header.pointer_size}-bit packfile"
        to = to or "xml"
        if to != "xml":
            packfile = with_pointer_size(packfile, int(to) // 8)
    written = packfile_xml(packfile) if to == "xml" else packfile.to_bytes()
    return written, read, "an XML packfile" if to == "xml" else f"a {to}-bit packfile"


def same_values(source, written):
    """Whether two .hkx files' skeletons and animations (as read) hold the same values; the first
    difference, else None."""
    a, b = hkx_from_bytes(source), hkx_from_bytes(written)
    if (len(a.skeletons), len(a.animations)) != (len(b.skeletons), len(b.animations)):
        return "the number of skeletons or animations"
    for kind, pairs in (("skeleton", zip(a.skeletons, b.skeletons)), ("animation", zip(a.animations, b.animations))):
        for index, (x, y) in enumerate(pairs):
            for field, value in vars(x).items():
                other = getattr(y, field)
                if not _same(value, other):
                    return f"{kind} {index}: {field}"
    return None


def _same(x, y):
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return np.shape(x) == np.shape(y) and np.array_equal(x, y, equal_nan=np.asarray(x).dtype.kind == "f")
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(map(_same, x, y))
    if hasattr(x, "__dict__") and type(x) is type(y):
        return all(_same(value, getattr(y, key)) for key, value in vars(x).items())
    return x == y
