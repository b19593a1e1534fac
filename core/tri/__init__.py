"""Morph files (.tri): FaceGen's (``FRTRI003``, head expressions and character-creation morphs)
and BodySlide's (``PIRT``, body sliders by shape name). ``read_tri`` tells them apart by magic."""

from pathlib import Path

from ..errors import FormatError
from .bodyslide import BodyShape, BodySlideTri, SliderMorph
from .facegen import DifferenceMorph, FaceGenTri, ModifierMorph

SUFFIX = ".tri"
KINDS = {b"FRTRI003": FaceGenTri, b"PIRT": BodySlideTri}


def is_tri(path):
    return Path(str(path)).suffix.lower() == SUFFIX


def tri_from_bytes(data, path=None):
    """A FaceGenTri or a BodySlideTri, by the file's first bytes."""
    for magic, cls in KINDS.items():
        if bytes(data[: len(magic)]) == magic:
            return cls.from_bytes(data, path=path)
    raise FormatError(f"not a .tri file: it starts with {bytes(data[:8])!r}, not FRTRI003 (FaceGen) or PIRT (BodySlide)",
                      path=path, offset=0)


def read_tri(path):
    return tri_from_bytes(Path(path).read_bytes(), path=path)


__all__ = ["BodyShape", "BodySlideTri", "DifferenceMorph", "FaceGenTri", "ModifierMorph", "SliderMorph", "read_tri",
           "tri_from_bytes", "is_tri", "SUFFIX"]
