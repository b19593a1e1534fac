"""Havok XML files (packfile and tagfile forms): read into the typed objects the binary reader
gives, and conversions between XML and binary packfiles and between 32- and 64-bit pointers."""

from .document import XmlHavokFile, packfile_xml, with_pointer_size
from .reader import XmlObject, is_xml

__all__ = ["XmlHavokFile", "XmlObject", "is_xml", "packfile_xml", "with_pointer_size"]
