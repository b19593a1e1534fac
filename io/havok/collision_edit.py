"""What the collision operators (operators/collision.py) change on Blender data: a mesh marked
as collision of its parent, and the Bethesda materials of a triangle mesh's faces (which the
panel reads as the exporter does)."""

import numpy as np

from ..integers import to_int32
from .collision_import import parse_material, set_ranges
from .. import schema

DEFAULTS = {
    schema.HAVOK_MOTION: "static",
    schema.HAVOK_MASS: 0.0,
    schema.HAVOK_FRICTION: 0.5,
    schema.HAVOK_RESTITUTION: 0.4,
    schema.HAVOK_LAYER: 1,
    schema.HAVOK_MATERIAL: "0x00000000",
}


def mark_collision(obj, shape):
    """Collision properties on ``obj`` (kept where it already has them); shown as a wire."""
    obj[schema.HAVOK_SHAPE] = shape
    for name, value in DEFAULTS.items():
        if name not in obj:
            obj[name] = value
    if shape == "convex" and schema.HAVOK_RADIUS not in obj:
        obj[schema.HAVOK_RADIUS] = 0.0
    set_ranges(obj)
    obj.display_type = "WIRE"
    obj.hide_render = True


def assign_face_material(obj, value):
    """Set the selected faces' ``havok_material`` to ``value``; returns how many."""
    mesh = obj.data
    selected = np.empty(len(mesh.polygons), bool)
    mesh.polygons.foreach_get("select", selected)
    values = face_materials(obj)
    values[selected] = to_int32(value)
    attribute = mesh.attributes.get(schema.HAVOK_MATERIAL) or mesh.attributes.new(schema.HAVOK_MATERIAL, "INT", "FACE")
    attribute.data.foreach_set("value", values)
    return int(selected.sum())


def face_materials(obj):
    """The faces' ``havok_material`` values (int32 bit patterns); the object's material when
    the mesh has none, as the exporter reads it."""
    mesh = obj.data
    values = np.full(len(mesh.polygons), to_int32(parse_material(obj.get(schema.HAVOK_MATERIAL, 0)) or 0), np.int32)
    attribute = mesh.attributes.get(schema.HAVOK_MATERIAL)
    if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT":
        attribute.data.foreach_get("value", values)
    return values
