"""Mass properties of a convex mesh at unit density, packed as hkCompressedMassProperties.

The game's files store the principal inertia 1.5 times the solid body's, in the shape's
properties as in a body's motion (checked on boxes and hulls of the corpus), the principal axes
as a packed quaternion, and mass = volume in the shape's properties.

hkPackedVector3: three i16 and the upper 16 bits of a float32 scale; a component is
``i16 * 65536 * scale``. The scale is a power of two chosen so the largest component fits.
Packed quaternion: u16 ``32768 + round(component * 30000)`` per component.
"""

import numpy as np

from ..classes.properties import MASS_PROPERTIES_KEY, PropertyEntry, RefCountedProperties, ShapeMassProperties
from .base import quaternion_of

INERTIA_FACTOR = 1.5
ZERO_EXPONENT = 0x1980  # what the game stores with an all-zero vector


def solid_properties(vertices, triangles):
    """(volume, centre of mass, inertia tensor about it) of a closed outward-facing mesh."""
    corners = vertices[triangles]
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    volumes = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    volume = volumes.sum()
    if volume <= 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    centre = (volumes[:, None] * (a + b + c) / 4.0).sum(axis=0) / volume
    # second moments of each tetrahedron (origin, a, b, c): covariance from its corners
    summed = a + b + c
    covariance = (np.einsum("i,ij,ik->jk", volumes, summed, summed)
                  + np.einsum("i,ij,ik->jk", volumes, a, a)
                  + np.einsum("i,ij,ik->jk", volumes, b, b)
                  + np.einsum("i,ij,ik->jk", volumes, c, c)) / 20.0
    covariance -= volume * np.outer(centre, centre)
    inertia = np.trace(covariance) * np.eye(3) - covariance
    return float(volume), centre, inertia


def pack_vector(vector):
    vector = np.asarray(vector, np.float64)
    largest = np.abs(vector).max()
    if largest == 0:
        return np.array([0, 0, 0, ZERO_EXPONENT], np.uint16).view(np.int16)
    exponent = int(np.ceil(np.log2(largest)))
    scale = 2.0 ** (exponent - 15)
    values = np.clip(np.round(vector / scale), -32768, 32767).astype(np.int64)
    if np.abs(values).max() > 32767:  # a component of exactly 2**exponent
        exponent += 1
        scale *= 2
        values = np.round(vector / scale).astype(np.int64)
    return np.array([*values, (exponent - 31 + 127) << 7], np.int64).astype(np.uint16).view(np.int16)


def unpack_vector(packed):
    packed = np.asarray(packed, np.int16)
    scale = np.array(int(packed[3].view(np.uint16)) << 16, np.uint32).view(np.float32) * 65536.0
    return packed[:3].astype(np.float64) * float(scale)


def pack_quaternion(rotation):
    """A rotation matrix as the packed unit quaternion (x, y, z, w), w >= 0."""
    return (32768 + np.round(quaternion_of(rotation) * 30000)).astype(np.int64).astype(np.uint16).view(np.int16)


def principal_axes(inertia):
    """Principal moments and axes, the axes ordered and signed to stay nearest the identity
    (an axis-aligned box keeps the identity rotation, as in the game's files)."""
    moments, axes = np.linalg.eigh(inertia)
    order = []
    for axis in range(3):
        weights = np.abs(axes[axis]).copy()
        weights[order] = -1
        order.append(int(weights.argmax()))
    moments, axes = moments[order], axes[:, order]
    axes *= np.where(np.diag(axes) < 0, -1.0, 1.0)
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


def mass_properties(vertices, triangles):
    """hkRefCountedProperties holding the hknpShapeMassProperties of a convex mesh (Havok units)."""
    volume, centre, inertia = solid_properties(np.asarray(vertices, np.float64), np.asarray(triangles))
    moments, axes = principal_axes(inertia)
    properties = ShapeMassProperties()
    properties.center_of_mass = pack_vector(centre)
    properties.inertia = pack_vector(moments * INERTIA_FACTOR)
    properties.major_axis_space = pack_quaternion(axes)
    properties.mass = volume
    properties.volume = volume
    return RefCountedProperties([PropertyEntry(properties, MASS_PROPERTIES_KEY)])
