"""Havok collision bodies under the Blender object of the node owning them. (Being written.)"""


def build_collision(builder, owner_index, owner_block, owner):
    """``owner`` is the owner's object, or (armature, bone name) when the owner is a bone."""
