"""Shape properties: hkRefCountedProperties and the objects its entries point to.

hkRefCountedProperties (0x10): an hkArray of entries (0x10: object pointer, u16 key, u16 flags,
4 padding bytes). Fallout 4 shapes carry one entry: key 0xF100 for hknpShapeMassProperties
(convex shapes), 0xF601 for hknpBSMaterialProperties (compressed meshes).
"""

import numpy as np

from ..objects import HavokObject, havok_class

MASS_PROPERTIES_KEY = 0xF100
BS_MATERIAL_KEY = 0xF601


class PropertyEntry:
    size = 0x10

    def __init__(self, obj=None, key=0):
        self.object = obj
        self.key = key
        self.flags = 0
        self.padding = bytes(4)

    def sync(self, s):
        self.object = s.pointer(self.object)
        self.key = s.u16(self.key)
        self.flags = s.u16(self.flags)
        self.padding = s.raw(self.padding, 4)


@havok_class("hkRefCountedProperties")
class RefCountedProperties(HavokObject):
    def __init__(self, entries=()):
        self.entries = list(entries)

    def find(self, key):
        return next((entry.object for entry in self.entries if entry.key == key), None)

    def sync(self, s):
        self.entries = s.hk_array(self.entries, PropertyEntry, what="property entries")


@havok_class("hknpShapeMassProperties")
class ShapeMassProperties(HavokObject):
    """hkCompressedMassProperties after the hkReferencedObject: centre of mass and inertia as
    packed vectors (three i16 and the float exponent's upper 16 bits), the principal axes as a
    packed quaternion, then mass and volume."""

    def __init__(self):
        self.reference = bytes(16)
        self.center_of_mass = np.zeros(4, "<i2")
        self.inertia = np.zeros(4, "<i2")
        self.major_axis_space = np.zeros(4, "<i2")
        self.mass = 0.0
        self.volume = 0.0

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.center_of_mass = s.array(self.center_of_mass, "i2", 4)
        self.inertia = s.array(self.inertia, "i2", 4)
        self.major_axis_space = s.array(self.major_axis_space, "i2", 4)
        self.mass = s.f32(self.mass)
        self.volume = s.f32(self.volume)


# One Bethesda material of a compressed mesh; the mesh's data runs index these.
BS_MATERIAL = np.dtype([("unknown", "V16"), ("flags", "<u4"), ("material", "<u4")])


@havok_class("hknpBSMaterialProperties")
class BSMaterialProperties(HavokObject):
    def __init__(self, materials=None):
        self.reference = bytes(16)
        self.materials = np.zeros(0, BS_MATERIAL) if materials is None else materials

    def sync(self, s):
        self.reference = s.raw(self.reference, 16)
        self.materials = s.hk_array(self.materials, BS_MATERIAL, what="Bethesda materials")
