"""Fallout 3 / New Vegas and Skyrim Havok phantoms: non-physical world objects that report what
enters them (a skeleton's bhkSPCollisionObject holds one). Import does not show them; decoded for
their shape reference (core.nif.refs) and written back as they were."""

from ..block import block_class
from .legacy_havok import bhkWorldObject


class bhkPhantom(bhkWorldObject):
    """bhkWorldObject's fields, then eight unused bytes (kept)."""

    unused_phantom = b"\0" * 8

    def sync(self, s):
        super().sync(s)
        self.unused_phantom = s.raw(self.unused_phantom, 8)


@block_class("bhkSimpleShapePhantom", fallback_raw=True)
class bhkSimpleShapePhantom(bhkPhantom):
    """Its shape, placed by a 4x4 matrix (16 floats as stored)."""

    transform = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)

    def sync(self, s):
        super().sync(s)
        self.transform = s.floats(self.transform, 16)


@block_class("bhkAabbPhantom", fallback_raw=True)
class bhkAabbPhantom(bhkPhantom):
    """A box (hkAabb: min and max as four floats each)."""

    aabb = (0.0,) * 8

    def sync(self, s):
        super().sync(s)
        self.aabb = s.floats(self.aabb, 8)
