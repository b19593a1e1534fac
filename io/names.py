"""Blender's object and datablock names: what it adds to make a name unique."""

import re

_UNIQUE_SUFFIX = re.compile(r"\.\d{3,}$")  # '.001', '.002'... (more digits past '.999')


def unsuffixed(name):
    """``name`` without the '.001' Blender adds to make names unique."""
    return _UNIQUE_SUFFIX.sub("", name)
