"""Markers the game reads from extra data: furniture positions and the inventory view.

BSFurnitureMarker (FO3/FNV, name ``FRN``) and BSFurnitureMarkerNode (Skyrim and Fallout 4)
list the places an actor sits, sleeps or leans: an offset in the owner's space (game units),
then either (FO3/FNV) an orientation and two marker model numbers, or (later games) a heading
about Z in radians, an animation type (1 sit, 2 sleep, 4 lean) and entry points (bits: front,
behind, right, left, up). BSInvMarker (name ``INV``) is how the inventory shows the model:
rotations about X, Y and Z in thousandths of a radian and a zoom.
"""

from .. import versions
from ..block import block_class
from .extra_data import NiExtraData


class FurniturePosition:
    def __init__(self):
        self.offset = (0.0, 0.0, 0.0)
        self.orientation = 0  # FO3/FNV
        self.position_ref_1 = 0
        self.position_ref_2 = 0
        self.heading = 0.0  # later games
        self.animation_type = 1
        self.entry_points = 0

    def sync(self, s):
        self.offset = s.vec3(self.offset)
        if versions.up_to_fo3(s.context.bs_version):
            self.orientation = s.u16(self.orientation)
            self.position_ref_1 = s.u8(self.position_ref_1)
            self.position_ref_2 = s.u8(self.position_ref_2)
        else:
            self.heading = s.f32(self.heading)
            self.animation_type = s.u16(self.animation_type)
            self.entry_points = s.u16(self.entry_points)


@block_class("BSFurnitureMarker", "BSFurnitureMarkerNode")
class BSFurnitureMarker(NiExtraData):
    positions = ()

    def sync(self, s):
        super().sync(s)
        count = s.count(len(self.positions), item_size=16, what="furniture positions")
        self.positions = s.items(self.positions, FurniturePosition, count, min_size=16)


@block_class("BSInvMarker")
class BSInvMarker(NiExtraData):
    rotation_x = 0
    rotation_y = 0
    rotation_z = 0
    zoom = 1.0

    def sync(self, s):
        super().sync(s)
        self.rotation_x = s.u16(self.rotation_x)
        self.rotation_y = s.u16(self.rotation_y)
        self.rotation_z = s.u16(self.rotation_z)
        self.zoom = s.f32(self.zoom)
