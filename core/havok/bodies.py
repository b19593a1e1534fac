"""Building a physics system: bodies with their shape, motion, material and collision layer.

A body gets its own material (as in the game's files). A dynamic body also gets a motion
(hknpMotionCinfo) and motion properties, with the fields the game's files hold; its mass
distribution comes from the shape at uniform density, the inertia scaled by 1.5 as the game's
files have it. A keyframed body gets a motion of infinite mass and inertia and no motion
properties (id 0xFFFF), as in the game's files. Positions are in game units, rotations
quaternions (x, y, z, w).

``replace_body`` rebuilds one body of an existing system (an edited collision) and keeps
everything the other bodies hold.
"""

import copy

import numpy as np

from ..errors import FormatError
from .classes.physics_system import MOTION_CINFO, MOTION_PROPERTIES, BodyCinfo, Material
from .shapes.base import GAME_UNITS, quaternion_of, rotation_of
from .shapes.inertia import shape_mass
from .shapes.mass import INERTIA_FACTOR, principal_axes

MOVING_BODY_FLAGS = 0x80  # set on the dynamic bodies of the game's files, clear on static ones
UNLIMITED = 1.8446726e19  # the per-step motion limits the game's files hold
NO_PROPERTIES = 0xFFFF  # motion properties id of a keyframed body
# what an edited body keeps of the body it replaces: fields the Blender side does not show
KEPT_BODY_FIELDS = ("reserved_body_id", "quality_id", "collision_look_ahead_distance", "name", "user_data", "spu_flags")

# motion properties of the game's dynamic bodies (gravity and time factors, speed limits,
# damping, solver stabilisation, deactivation): the same bytes in every file, so written as bytes
DYNAMIC_PROPERTIES = np.frombuffer(
    bytes.fromhex(
        "00000000000000000000803f0000803f00c0d0420090fc410000cd3d00004d3d"
        "7b142e3ed222fb3e0bd7233b0bd7233b0000803fff679b990473750673000000"
    ),
    MOTION_PROPERTIES,
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
        body.flags = MOVING_BODY_FLAGS if motion == "dynamic" else 0
    system.bodies.append(body)
    if not any(shape is known for known in system.referenced_objects):
        system.referenced_objects.append(shape)
    return len(system.bodies) - 1


def _add_motion(system, shape, motion, mass, body):
    cinfo = np.zeros(1, MOTION_CINFO)
    cinfo["enable_deactivation"] = 1
    cinfo["mass_factor"] = 1.0
    cinfo["max_linear_acceleration_distance_per_step"] = UNLIMITED
    cinfo["max_rotation_to_prevent_tunneling"] = UNLIMITED
    if motion == "keyframed":
        cinfo["motion_properties_id"] = NO_PROPERTIES
        cinfo["center_of_mass_world"][0, :3] = body.position[:3]
        cinfo["orientation"][0] = body.orientation
    else:
        properties = DYNAMIC_PROPERTIES.copy()
        system.motion_properties = np.concatenate([system.motion_properties, properties])
        cinfo["motion_properties_id"] = len(system.motion_properties) - 1
        volume, centre, inertia = shape_mass(shape)
        body_rotation = rotation_of(body.orientation)
        moments, axes = principal_axes(inertia)
        moments = moments * INERTIA_FACTOR * mass / max(volume, 1e-12)
        cinfo["inverse_mass"] = 1.0 / mass
        cinfo["inverse_inertia_local"][0, :3] = 1.0 / np.maximum(moments, 1e-12)
        cinfo["inverse_inertia_local"][0, 3] = 1.0
        cinfo["center_of_mass_world"][0, :3] = np.asarray(body.position[:3]) + body_rotation @ centre
        cinfo["orientation"][0] = quaternion_of(body_rotation @ axes)
    system.motion_cinfos = np.concatenate([system.motion_cinfos, cinfo])
    return len(system.motion_cinfos) - 1


def replace_body(system, index, shape, **options):
    """A copy of ``system`` whose body ``index`` is built anew by ``add_body(shape, **options)``.
    The other bodies keep their shapes, materials and motions; the new body keeps what the old
    one held beyond the options (material fields other than friction and restitution, motion
    properties when it stays dynamic, the collision filter bits above the layer, body flags other
    than the moving flag, the body fields of ``KEPT_BODY_FIELDS``, the position's w, the orientation's sign). Bodies stay in order, so constraints and body ids stay valid."""
    if not 0 <= index < len(system.bodies):
        raise FormatError(f"body {index} of a system of {len(system.bodies)} bodies")
    old = system.bodies[index]
    rebuilt = copy.copy(system)  # keeps the class, name, constraints and ragdoll fields
    rebuilt.materials, rebuilt.bodies = [], []
    rebuilt.motion_properties = system.motion_properties[:0]
    rebuilt.motion_cinfos = system.motion_cinfos[:0]
    rebuilt.referenced_objects = []
    properties_of = {}  # old motion properties id -> new
    for number, body in enumerate(system.bodies):
        if number == index:
            add_body(rebuilt, shape, **options)
            _keep_old_fields(system, old, rebuilt, rebuilt.bodies[-1])
        else:
            rebuilt.bodies.append(_copy_body(system, body, rebuilt, properties_of))
    used = [body.shape for body in rebuilt.bodies]
    rebuilt.referenced_objects = [
        shape if obj is old.shape and not any(obj is other for other in used) else obj
        for obj in system.referenced_objects
    ]
    if not any(shape is obj for obj in rebuilt.referenced_objects):
        rebuilt.referenced_objects.append(shape)
    return rebuilt


def _copy_body(system, body, rebuilt, properties_of):
    copied = copy.copy(body)
    rebuilt.materials.append(system.material_of(body))
    copied.material_id = len(rebuilt.materials) - 1
    if system.motion_of(body) is not None:
        cinfo = system.motion_cinfos[body.motion_id : body.motion_id + 1].copy()
        old_id = int(cinfo["motion_properties_id"][0])
        if old_id < len(system.motion_properties):
            if old_id not in properties_of:
                kept = system.motion_properties[old_id : old_id + 1]
                rebuilt.motion_properties = np.concatenate([rebuilt.motion_properties, kept])
                properties_of[old_id] = len(rebuilt.motion_properties) - 1
            cinfo["motion_properties_id"] = properties_of[old_id]
        rebuilt.motion_cinfos = np.concatenate([rebuilt.motion_cinfos, cinfo])
        copied.motion_id = len(rebuilt.motion_cinfos) - 1
    return copied


def _keep_old_fields(system, old, rebuilt, body):
    material = copy.copy(system.material_of(old))
    new_material = rebuilt.materials[body.material_id]
    material.dynamic_friction = new_material.dynamic_friction
    material.static_friction = new_material.static_friction
    material.restitution = new_material.restitution
    rebuilt.materials[body.material_id] = material
    for field in KEPT_BODY_FIELDS:
        setattr(body, field, getattr(old, field))
    body.collision_filter_info = (old.collision_filter_info & ~0xFF) | body.layer
    # the position's w is no option: files hold what their tool's transform left there (-6.9e-10)
    body.position = (*body.position[:3], old.position[3])
    # q and -q turn alike: keep the sign the file has (the CK writes w < 0 too)
    if np.dot(body.orientation, old.orientation) < 0:
        body.orientation = tuple(-np.asarray(body.orientation))
        if rebuilt.motion_type(body) == "keyframed":  # its motion holds the body's orientation
            rebuilt.motion_cinfos["orientation"][body.motion_id] = body.orientation
    body.flags |= old.flags & ~MOVING_BODY_FLAGS
    if system.motion_type(old) == "dynamic" and rebuilt.motion_type(body) == "dynamic":
        old_id = int(system.motion_of(old)["motion_properties_id"])
        new_id = int(rebuilt.motion_cinfos[body.motion_id]["motion_properties_id"])
        if old_id < len(system.motion_properties):
            rebuilt.motion_properties[new_id] = system.motion_properties[old_id]
