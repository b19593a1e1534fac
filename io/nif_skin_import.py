"""Skinned NIF shapes in Blender: skeleton bones as armature bones, weights as vertex groups.
(Being written: until then nothing is skinned and bone nodes import as empties.)"""


class SkinImport:
    def __init__(self, builder):
        self.builder = builder

    def prepare(self):
        """Find the skinned shapes and their bones; make the armatures."""

    def bone_of(self, node_index):
        """(armature object, bone name) when the node became an armature bone, else None."""
        return None

    def place_under_bone(self, obj, bone, matrix):
        """Parent ``obj`` to ``bone`` = (armature, bone name) with ``matrix`` relative to the node."""
        raise NotImplementedError

    def bind(self, shape_index, shape_block, obj):
        """Vertex groups and armature modifier for a skinned shape."""
