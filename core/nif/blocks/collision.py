"""Fallout 4 collision: bhkNPCollisionObject and the systems holding Havok packfiles.

The packfile bytes are kept whole here; ``core.havok`` decodes them.
"""

from ..block import Block, block_class


@block_class("bhkNPCollisionObject")
class bhkNPCollisionObject(Block):
    target = -1
    flags = 0x80
    data = -1
    body_id = 0

    def sync(self, s):
        self.target = s.ref(self.target)
        self.flags = s.u16(self.flags)
        self.data = s.ref(self.data)
        self.body_id = s.u32(self.body_id)


@block_class("bhkPhysicsSystem", "bhkRagdollSystem")
class bhkSystem(Block):
    """``packfile``: the Havok hk_2014 packfile (u32 size + bytes in the file)."""

    packfile = b""

    @property
    def kind(self):
        return "ragdoll" if self.type_name == "bhkRagdollSystem" else "physics"

    def sync(self, s):
        size = s.count(len(self.packfile), what="packfile")
        self.packfile = s.raw(self.packfile, size)
