"""Furniture markers, BSBound boxes and the inventory marker as empties (see
core.nif.blocks.markers), under the node holding their block.

- Each furniture position: an arrows empty named ``FRN:0``, ``FRN:1``... at its offset, turned
  about Z by its heading (later games); ``nif_animation_type`` and ``nif_entry_points`` (FO3/FNV:
  ``nif_orientation``, ``nif_position_ref_1``, ``nif_position_ref_2``) as properties.
- BSBound (``BBX``): a cube empty at the centre, scaled by the half extents (a cube empty spans
  -1..1).
- BSInvMarker (``INV``): an arrows empty turned by the three stored angles (thousandths of a
  radian, XYZ Euler), the zoom in ``nif_zoom``.

On export the position, heading, centre, extents or angles of an untouched empty stay as
stored; a moved one is written from its local matrix (a furniture marker keeps only its turn
about Z). Properties are written as they are.
"""

import copy
import math

from mathutils import Euler, Matrix

from ...core.errors import FormatError
from ...core.nif import versions
from ...core.nif.blocks.extra_data import BSBound
from ...core.nif.blocks.markers import BSFurnitureMarker, BSInvMarker, FurniturePosition
from .extra_empties import kept, new_empty, node_space, place, template_block
from .. import schema

LATER_FIELDS = {schema.NIF_ANIMATION_TYPE: "animation_type", schema.NIF_ENTRY_POINTS: "entry_points"}
FO3_FIELDS = {schema.NIF_ORIENTATION: "orientation", schema.NIF_POSITION_REF_1: "position_ref_1",
              schema.NIF_POSITION_REF_2: "position_ref_2"}
MILLIRADIANS = 1000.0


def _fields(builder):
    return FO3_FIELDS if versions.up_to_fo3(builder.nif.header.bs_version) else LATER_FIELDS


def build_furniture(builder, owner, owner_index, block_index, block):
    for item, position in enumerate(block.positions):
        empty = new_empty(builder, f"{block.name or 'FRN'}:{item}", "furniture", block_index, item, size=16.0)
        for key, field in _fields(builder).items():
            empty[key] = getattr(position, field)
        matrix = Matrix.Translation(position.offset) @ Matrix.Rotation(position.heading, 4, "Z")
        place(builder, empty, owner, owner_index, matrix)


def build_bound(builder, owner, owner_index, block_index, block):
    empty = new_empty(builder, block.name or "BBX", "bound", block_index, None, "CUBE", 1.0)
    matrix = Matrix.Translation(block.center) @ Matrix.Diagonal((*block.dimensions, 1.0))
    place(builder, empty, owner, owner_index, matrix)


def build_inventory(builder, owner, owner_index, block_index, block):
    empty = new_empty(builder, block.name or "INV", "inventory_marker", block_index, None, size=16.0)
    empty[schema.NIF_ZOOM] = block.zoom
    angles = [value / MILLIRADIANS for value in (block.rotation_x, block.rotation_y, block.rotation_z)]
    place(builder, empty, owner, owner_index, Euler(angles, "XYZ").to_matrix().to_4x4())


BUILDERS = {BSFurnitureMarker: build_furniture, BSBound: build_bound, BSInvMarker: build_inventory}


def _int_property(obj, key, default, limit):
    value = obj.get(key, default)
    if not isinstance(value, int) or not 0 <= value <= limit:
        raise FormatError(f"{obj.name!r}: {key} {value!r} is not a whole number from 0 to {limit}")
    return value


def _from_template(exporter, empties, cls, what):
    """(empty, block index) of the empties that show a ``cls`` block of the imported file; new
    ones are not written (warned, naming ``what``)."""
    for obj in empties:
        index = template_block(exporter, obj, cls)
        if index is None:
            exporter.warn(f"{obj.name!r}: new {what} are not written (only the imported file's)")
            continue
        yield obj, index


def write_furniture(exporter, empties):
    fields = FO3_FIELDS if versions.up_to_fo3(exporter.nif.header.bs_version) else LATER_FIELDS
    groups = {}
    for obj, index in _from_template(exporter, empties, BSFurnitureMarker, "furniture markers"):
        groups.setdefault(index, []).append(obj)
    for index, objs in groups.items():
        block = exporter.nif.blocks[index]
        positions = []
        for obj in objs:
            item = obj.get(schema.NIF_EXTRA_ITEM)
            stored = block.positions[item] if isinstance(item, int) and 0 <= item < len(block.positions) else None
            owner_index, matrix = node_space(exporter, obj)
            position = copy.copy(stored) if stored is not None else FurniturePosition()
            if stored is None or not kept(obj, owner_index):
                location, rotation, _ = matrix.decompose()
                axis = rotation.to_matrix() @ Matrix.Identity(3)[0]
                if abs(axis.z) > 1e-3 or abs((rotation.to_matrix() @ Matrix.Identity(3)[2]).z - 1) > 1e-3:
                    exporter.warn(f"{obj.name!r}: a furniture marker turns only about Z; its tilt is not written")
                position.offset = tuple(location)
                position.heading = math.atan2(axis.y, axis.x)
            for key, field in fields.items():
                setattr(position, field, _int_property(obj, key, getattr(position, field), 0xFF if "ref" in key else 0xFFFF))
            positions.append(position)
        block.positions = positions


def write_bound(exporter, empties):
    for obj, index in _from_template(exporter, empties, BSBound, "BSBound boxes"):
        block = exporter.nif.blocks[index]
        owner_index, matrix = node_space(exporter, obj)
        if not kept(obj, owner_index):
            location, _, scale = matrix.decompose()
            block.center = tuple(location)
            block.dimensions = tuple(abs(value) for value in scale)


def write_inventory(exporter, empties):
    for obj, index in _from_template(exporter, empties, BSInvMarker, "inventory markers"):
        block = exporter.nif.blocks[index]
        owner_index, matrix = node_space(exporter, obj)
        if not kept(obj, owner_index):
            angles = matrix.to_euler("XYZ")
            block.rotation_x, block.rotation_y, block.rotation_z = (
                round((angle % (2 * math.pi)) * MILLIRADIANS) % 0x10000 for angle in angles
            )
        zoom = obj.get(schema.NIF_ZOOM, block.zoom)
        if not isinstance(zoom, (int, float)):
            raise FormatError(f"{obj.name!r}: {schema.NIF_ZOOM} {zoom!r} is not a number")
        if float(zoom) != block.zoom:
            block.zoom = float(zoom)


WRITERS = {"furniture": write_furniture, "bound": write_bound, "inventory_marker": write_inventory}
