"""Building a physics system: bodies with their shape, motion, material and collision layer.

A body gets its own material (as in the game's files). A dynamic or keyframed body also gets a
motion (hknpMotionCinfo) and motion properties, with the fields the game's files hold; its mass
distribution comes from the shape at uniform density, the inertia scaled by 1.5 as the game's
files have it. Positions are in game units, rotations quaternions (x, y, z, w).
"""

import numpy as np

from ..errors import FormatError
from .classes.physics_system import MOTION_CINFO, MOTION_PROPERTIES, BodyCinfo, Material
from .shapes.base import GAME_UNITS, quaternion_of, rotation_of
from .shapes.inertia import shape_mass
from .shapes.mass import INERTIA_FACTOR, principal_axes

MOVING_BODY_FLAGS = 0x80  # set on the dynamic bodies of the game's files, clear on static ones
UNLIMITED = 1.8446726e19  # the per-step motion limits the game's files hold

# motion properties of the game's dynamic bodies: gravity and time factors, speed limits,
# damping, solver stabilisation, deactivation thresholds
DYNAMIC_PROPERTIES = (
    *(0, 0, 1.0, 1.0, 104.375, 31.570312, 0.1001, 0.05005, 0.17, 0.4905, 0.0025, 0.0025, 1.0),
    *(26623, -26213, (4, 115, 117, 6, 115), b"\0" * 3),
)


def add_body(
    system,
    shape,
    *,
    motion="static",
    mass=0.0,
    layer=1,
    friction=0.5,
    restitution=0.4,
    position=(0.0, 0.0, 0.0),
    rotation=(0.0, 0.0, 0.0, 1.0),
):
    """Append a body to ``system``; returns its index (the body id a bhkNPCollisionObject
    selects). ``motion``: "static", "dynamic" (with ``mass`` in kg) or "keyframed"."""
    if motion not in ("static", "dynamic", "keyframed"):
        raise FormatError(f"motion must be static, dynamic or keyframed, not {motion!r}")
    if motion == "dynamic" and not mass > 0:
        raise FormatError("a dynamic body needs a positive mass")
    if not 0 <= layer <= 0xFF:
        raise FormatError(f"collision layer {layer} is not 0 to 255")
    material = Material()
    material.friction = friction
    material.bounciness = restitution
    system.materials.append(material)
    body = BodyCinfo()
    body.shape = shape
    body.material_id = len(system.materials) - 1
    body.collision_filter_info = layer
    body.position = (*(np.asarray(position, np.float64) / GAME_UNITS), 0.0)
    body.orientation = tuple(quaternion_of(rotation_of(rotation)))  # normalised, w >= 0
    if motion != "static":
        body.motion_id = _add_motion(system, shape, motion, mass, body)
        body.flags = MOVING_BODY_FLAGS
    system.bodies.append(body)
    if not any(shape is known for known in system.referenced_objects):
        system.referenced_objects.append(shape)
    return len(system.bodies) - 1


def _add_motion(system, shape, motion, mass, body):
    properties = np.array([DYNAMIC_PROPERTIES], MOTION_PROPERTIES)
    system.motion_properties = np.concatenate([system.motion_properties, properties])
    cinfo = np.zeros(1, MOTION_CINFO)
    cinfo["motion_properties_id"] = len(system.motion_properties) - 1
    cinfo["enable_deactivation"] = 1
    cinfo["mass_factor"] = 1.0
    cinfo["max_linear_acceleration_distance_per_step"] = UNLIMITED
    cinfo["max_rotation_to_prevent_tunneling"] = UNLIMITED
    volume, centre, inertia = shape_mass(shape)
    body_rotation = rotation_of(body.orientation)
    moments, axes = principal_axes(inertia)
    if motion == "dynamic":
        moments = moments * INERTIA_FACTOR * mass / max(volume, 1e-12)
        cinfo["inverse_mass"] = 1.0 / mass
        cinfo["inverse_inertia_local"][0, :3] = 1.0 / np.maximum(moments, 1e-12)
    cinfo["inverse_inertia_local"][0, 3] = 1.0
    cinfo["center_of_mass_world"][0, :3] = np.asarray(body.position[:3]) + body_rotation @ centre
    cinfo["orientation"][0] = quaternion_of(body_rotation @ axes)
    system.motion_cinfos = np.concatenate([system.motion_cinfos, cinfo])
    return len(system.motion_cinfos) - 1
