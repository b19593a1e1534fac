"""Havok packfiles: the container (hk_2014 and hk_2010), Fallout 4 physics systems and shapes."""

from . import classes, shapes  # noqa: F401  (registers the typed classes)
from .container import Packfile
from .objects import HavokObject, RawObject

__all__ = ["Packfile", "HavokObject", "RawObject"]
