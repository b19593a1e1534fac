"""NIF (Gamebryo / Bethesda) files: container, block registry and typed blocks."""

from .block import Block, RawBlock, block_class, registered_types
from .file import NifFile
from .header import Header

# Importing the block modules registers their classes.
from .blocks import animation, bs_geometry, camera, collision, compressed_mesh, connect_points, controllers, extra_data, geometry, interpolators, legacy_constraints, legacy_havok, legacy_phantoms, markers, nodes, packed_geometry, precombined, properties, sequences, shaders, skin, tri_shape  # noqa: F401,E402,E501

__all__ = ["Block", "RawBlock", "NifFile", "Header", "block_class", "registered_types"]
