"""A NIF node's local transform as a Blender matrix."""

from mathutils import Matrix


def local_matrix(block):
    """world = T + R * s * v with R's rows as stored (FORMAT-NOTES section 2)."""
    r = block.rotation
    s = block.scale
    return Matrix(
        (
            (r[0] * s, r[1] * s, r[2] * s, block.translation[0]),
            (r[3] * s, r[4] * s, r[5] * s, block.translation[1]),
            (r[6] * s, r[7] * s, r[8] * s, block.translation[2]),
            (0.0, 0.0, 0.0, 1.0),
        )
    )
