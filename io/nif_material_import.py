"""NIF shader properties as Blender materials. (Being written.)"""


class MaterialImport:
    def __init__(self, builder):
        self.builder = builder

    def assign(self, shape_index, shape_block, mesh):
        """Give ``mesh`` the material of the shape's shader (one material per shader block)."""
