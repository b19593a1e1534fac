"""Volume, centre of mass and inertia of any shape at unit density (Havok units), for the
motion of a dynamic body."""

import numpy as np

from ...errors import FormatError
from .base import GAME_UNITS
from .compound import DynamicCompoundShape
from .convex import CapsuleShape, ConvexPolytopeShape, SphereShape
from .mass import solid_properties


def shape_mass(shape, within=()):
    """(volume, centre of mass, inertia tensor about it) of a shape at unit density, Havok
    units: exact for polytopes, spheres and capsules and compounds of them; the bounding box of
    other shapes (a compressed mesh need not be closed)."""
    if any(shape is outer for outer in within):
        raise FormatError(f"a {shape.class_name} contains itself")
    if isinstance(shape, CapsuleShape):
        return _capsule(*shape.segment / GAME_UNITS, shape.convex_radius)
    if isinstance(shape, ConvexPolytopeShape):
        return solid_properties(shape.surface_vertices(), shape.face_triangles())
    if isinstance(shape, SphereShape):
        radius = float(shape.convex_radius)
        volume = 4 / 3 * np.pi * radius**3
        return volume, shape.center / GAME_UNITS, np.eye(3) * 0.4 * volume * radius**2
    if isinstance(shape, DynamicCompoundShape):
        parts = []
        for instance in shape.instances:
            volume, centre, inertia = shape_mass(instance.shape, (*within, shape))
            matrix = instance.matrix
            linear = matrix[:3, :3]
            scale = abs(np.linalg.det(linear))
            rotation = linear / np.cbrt(scale)  # uniform scale assumed here
            placed = linear @ centre + matrix[:3, 3] / GAME_UNITS
            parts.append((volume * scale, placed, rotation @ inertia @ rotation.T * scale ** (5 / 3)))
        return combine_parts(parts)
    vertices = shape.mesh()[0] / GAME_UNITS if hasattr(shape, "mesh") else np.zeros((1, 3))
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    size = np.maximum(high - low, 1e-6)
    volume = float(np.prod(size))
    return volume, (low + high) / 2, np.diag(volume / 12 * (size[[1, 0, 0]] ** 2 + size[[2, 2, 1]] ** 2))


def _capsule(a, b, radius):
    """A cylinder and two half spheres."""
    axis = b - a
    length = float(np.linalg.norm(axis))
    cylinder = np.pi * radius**2 * length
    ball = 4 / 3 * np.pi * radius**3
    volume = cylinder + ball
    along = cylinder * radius**2 / 2 + ball * 0.4 * radius**2
    across = cylinder * (3 * radius**2 + length**2) / 12
    across += ball * (0.4 * radius**2 + length**2 / 4 + 3 * length * radius / 8)
    direction = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    inertia = across * np.eye(3) + (along - across) * np.outer(direction, direction)
    return volume, (a + b) / 2, inertia


def combine_parts(parts):
    """Volume, centre and inertia of several bodies together (parallel axis theorem)."""
    volume = sum(part[0] for part in parts)
    if volume <= 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    centre = sum(part[0] * part[1] for part in parts) / volume
    inertia = np.zeros((3, 3))
    for part_volume, part_centre, part_inertia in parts:
        offset = part_centre - centre
        inertia += part_inertia + part_volume * (offset @ offset * np.eye(3) - np.outer(offset, offset))
    return volume, centre, inertia
