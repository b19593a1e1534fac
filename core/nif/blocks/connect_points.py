"""Fallout 4 connect points: where weapon mods and workshop pieces attach.

BSConnectPoint::Parents lists the points a part offers (``P-Mag``, ``P-Scope``...), each placed
in the space of the node it names as its parent (the root when that is
``WorkshopConnectPoints``): a rotation quaternion (w, x, y, z), a translation in game units and
a scale. BSConnectPoint::Children names the parent points a part snaps onto (``C-Receiver``
snaps onto a receiver's points of that name).
"""

from ..block import block_class
from .extra_data import NiExtraData


class ConnectPoint:
    """One point: ``parent`` (the node name it hangs from), ``name``, ``rotation`` (w, x, y, z),
    ``translation`` and ``scale``."""

    def __init__(self, parent="WorkshopConnectPoints", name="", rotation=(1.0, 0.0, 0.0, 0.0),
                 translation=(0.0, 0.0, 0.0), scale=1.0):
        self.parent = parent
        self.name = name
        self.rotation = rotation
        self.translation = translation
        self.scale = scale

    def sync(self, s):
        self.parent = s.sized_string(self.parent)
        self.name = s.sized_string(self.name)
        self.rotation = s.vec4(self.rotation)
        self.translation = s.vec3(self.translation)
        self.scale = s.f32(self.scale)

    def __repr__(self):
        return f"<ConnectPoint {self.name!r} on {self.parent!r}>"


@block_class("BSConnectPoint::Parents")
class BSConnectPointParents(NiExtraData):
    points = ()

    def sync(self, s):
        super().sync(s)
        # a point takes at least 40 bytes: two empty strings' lengths and eight floats
        count = s.count(len(self.points), item_size=40, what="connect points")
        self.points = s.items(self.points, ConnectPoint, count, min_size=40)


@block_class("BSConnectPoint::Children")
class BSConnectPointChildren(NiExtraData):
    skinned = 0
    point_names = ()

    def sync(self, s):
        super().sync(s)
        self.skinned = s.bool8(self.skinned)
        count = s.count(len(self.point_names), item_size=4, what="connect point names")
        self.point_names = s.repeat(self.point_names, count, s.sized_string)
