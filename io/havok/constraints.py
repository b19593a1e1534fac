"""Constraints of Fallout 4 physics and ragdoll systems as empties (see core.havok.constraints).

Each constraint is an arrows empty at its pivot, its axes the constraint's frame in body A (the
X axis is the twist or hinge axis), hung under the node whose collision object selects body A.
Its properties: ``havok_constraint`` (ragdoll, limited_hinge, hinge, ball_and_socket),
``havok_body_a`` and ``havok_body_b`` (the nodes owning the two bodies, ``body N`` for a body no
node selects), the limits (``havok_twist_min``... radians, ``havok_max_friction_torque``), and
where it lives: ``nif_extra`` (the system block) and ``nif_extra_item`` (its number there), as
the extra data empties of io.nif.extra_empties, whose export writes it. Bodies are placed by their stored position and rotation (the owners' places in the
file, Havok units x 69.99125), so the pivot shows where the game puts the joint.

On export a constraint whose empty and limits are as imported leaves its system untouched (byte
for byte); edited limits are written into the constraint's atoms; a moved or turned empty moves
the constraint's frames in both bodies by the same motion. The bodies themselves are not
changed.
"""

import numpy as np
from mathutils import Matrix

from ...core.errors import FormatError
from ...core.havok import GAME_UNITS, Packfile, RawObject
from ...core.havok.constraints import ConstraintData
from ...core.havok.shapes.base import rotation_of
from ...core.nif.blocks.collision import bhkNPCollisionObject, bhkSystem
from ...core.nif.scene_graph import world_matrix
from ..nif.extra_empties import kept, new_empty, node_space, place
from .collision_import import decoded_system
from .. import schema

KIND = "constraint"


def _body_owners(nif):
    """{system block index: {body id: node index}} from the nodes' collision objects."""
    owners = {}
    for index, block in enumerate(nif.blocks):
        ref = getattr(block, "collision_object", -1)
        collision = nif.blocks[ref] if 0 <= ref < len(nif.blocks) else None
        if isinstance(collision, bhkNPCollisionObject) and 0 <= collision.data < len(nif.blocks):
            if isinstance(nif.blocks[collision.data], bhkSystem):
                owners.setdefault(collision.data, {}).setdefault(collision.body_id, index)
    return owners


def body_matrix(body):
    """A body's placement in the file (game units)."""
    matrix = np.eye(4)
    matrix[:3, :3] = rotation_of(body.orientation)
    matrix[:3, 3] = np.asarray(body.position[:3], np.float64) * GAME_UNITS
    return matrix


def in_game_units(frame):
    frame = frame.copy()
    frame[:3, 3] *= GAME_UNITS
    return frame


def build_constraints(builder):
    nif = builder.nif
    for system_index, bodies in _body_owners(nif).items():
        try:
            system = decoded_system(nif.blocks[system_index].packfile)
            constraints = list(system.constraints)
        except (FormatError, AttributeError) as error:
            if nif.blocks[system_index].kind == "ragdoll":  # a physics system's failure is the collision's warning
                builder.warn(f"ragdoll system {system_index}: constraints not shown ({error})")
            continue
        for number, cinfo in enumerate(constraints):
            try:
                _constraint(builder, system_index, system, bodies, number, cinfo)
            except FormatError as error:
                builder.warn(f"physics system {system_index} constraint {number} not shown: {error.message}")


def _name_of(nif, bodies, body):
    index = bodies.get(body)
    return nif.blocks[index].name if index is not None and nif.blocks[index].name else f"body {body}"


def _constraint(builder, system_index, system, bodies, number, cinfo):
    obj = cinfo.constraint_data
    if not isinstance(obj, RawObject):
        raise FormatError(f"constraint data of class {getattr(obj, 'class_name', None)} cannot be read")
    data = ConstraintData.from_object(obj)
    for body in (cinfo.body_a, cinfo.body_b):
        if body >= len(system.bodies):
            raise FormatError(f"body {body} of {len(system.bodies)}")
    owner_index = bodies.get(cinfo.body_a)
    owner = builder.objects.get(owner_index)
    if owner is None:
        raise FormatError("no node shown in Blender selects its body A")
    nif = builder.nif
    name_a, name_b = _name_of(nif, bodies, cinfo.body_a), _name_of(nif, bodies, cinfo.body_b)
    frame_a, _ = data.frames()
    world = body_matrix(system.bodies[cinfo.body_a]) @ in_game_units(frame_a)
    try:
        local = np.linalg.inv(world_matrix(nif, owner_index)) @ world
    except np.linalg.LinAlgError:
        raise FormatError(f"node {name_a!r} is scaled to nothing: nothing can hang under it") from None
    empty = new_empty(builder, f"{name_a} {data.kind} {name_b}", KIND, system_index, number, size=3.0)
    empty[schema.HAVOK_CONSTRAINT] = data.kind
    empty[schema.HAVOK_BODY_A], empty[schema.HAVOK_BODY_B] = name_a, name_b
    for limit, value in data.limits.items():
        empty[schema.constraint_limit(limit)] = value
        if limit != "max_friction_torque":  # radians, shown in degrees
            empty.id_properties_ui(schema.constraint_limit(limit)).update(subtype="ANGLE")
    place(builder, empty, owner, owner_index, Matrix(local.tolist()))


# -- export ---------------------------------------------------------------------------------
def write_constraints(exporter, empties):
    """Write edited constraints back into their systems (see the module's description)."""
    if exporter.keep_collision or not exporter.template:
        return
    edits = {}
    for obj in empties:
        system_index, number = obj.get(schema.NIF_EXTRA), obj.get(schema.NIF_EXTRA_ITEM)
        blocks = exporter.nif.blocks
        if not isinstance(system_index, int) or not 0 <= system_index < len(blocks) or not isinstance(blocks[system_index], bhkSystem):
            exporter.warn(f"{obj.name!r}: its physics system is gone; the constraint is not written")
            continue
        edits.setdefault(system_index, []).append((number, obj))
    for system_index, objs in edits.items():
        block = exporter.nif.blocks[system_index]
        packfile = Packfile.from_bytes(block.packfile)
        system = packfile.root
        changed = False
        for number, obj in objs:
            if not isinstance(number, int) or not 0 <= number < len(system.constraints):
                exporter.warn(f"{obj.name!r}: constraint {number} is not in its system; not written")
                continue
            changed |= _write_one(exporter, system, system.constraints[number], obj)
        if changed:
            block.packfile = packfile.to_bytes()


def _write_one(exporter, system, cinfo, obj):
    raw = cinfo.constraint_data
    data = ConstraintData.from_object(raw)
    edited = False
    for limit, stored in data.limits.items():
        value = obj.get(schema.constraint_limit(limit), stored)
        if not isinstance(value, (int, float)):
            raise FormatError(f"constraint {obj.name!r}: {schema.constraint_limit(limit)} {value!r} is not a number")
        if float(value) != stored:
            data.set_limit(limit, value)
            edited = True
    owner_index, local = node_space(exporter, obj)
    if owner_index is not None and not kept(obj, owner_index):
        _move(data, system, cinfo, world_matrix(exporter.nif, owner_index) @ np.array(local, np.float64))
        edited = True
    if edited:
        raw.data = data.to_bytes()
    return edited


def _move(data, system, cinfo, new_world):
    """Move both frames by the motion that takes frame A where the empty now is."""
    body_a = body_matrix(system.bodies[cinfo.body_a])
    body_b = body_matrix(system.bodies[cinfo.body_b])
    frame_a, frame_b = (in_game_units(frame) for frame in data.frames())
    new_world = _rigid(new_world)
    motion = new_world @ np.linalg.inv(body_a @ frame_a)
    new_a = np.linalg.inv(body_a) @ new_world
    new_b = np.linalg.inv(body_b) @ motion @ body_b @ frame_b
    data.set_frames(*(_havok_units(frame) for frame in (new_a, new_b)))


def _rigid(matrix):
    """The rotation and translation of a matrix (the empty's scale is only its display)."""
    rigid = np.eye(4)
    u, _, vt = np.linalg.svd(matrix[:3, :3])
    rigid[:3, :3] = u @ vt
    rigid[:3, 3] = matrix[:3, 3]
    return rigid


def _havok_units(frame):
    frame = frame.copy()
    frame[:3, 3] /= GAME_UNITS
    return frame


WRITERS = {KIND: write_constraints}
