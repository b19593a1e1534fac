"""Decoded, editable views of a packed Bethesda vertex buffer (BSTriShape family, SSE skin
partitions).

A class using this mixin keeps ``vertex_desc`` (u64), ``vertex_data`` (a structured array of
:func:`vertex_format.vertex_dtype`) and ``full_precision``. Getters return new float arrays
(None when the layout lacks the attribute); setters encode into the buffer. Setting an
attribute with a different number of vertices starts a new, zeroed buffer of that size, so
new geometry is given attribute by attribute.
"""

import numpy as np

from ..errors import FormatError
from . import vertex_format as vf

HALF_MAX = 65504.0


class PackedVertices:
    vertex_desc = 0
    vertex_data = None
    full_precision = False
    bounds_dirty = False

    # -- layout ---------------------------------------------------------------------------
    @property
    def vertex_flags(self):
        return vf.flags_of(self.vertex_desc)

    @property
    def vertex_count(self):
        return 0 if self.vertex_data is None else len(self.vertex_data)

    def _field(self, name):
        data = self.vertex_data
        if data is None or name not in data.dtype.names:
            return None
        return data[name]

    def _writable(self, name, values, flag):
        values = np.asarray(values)
        if self.vertex_data is None or len(values) != len(self.vertex_data):
            self._new_buffer(len(values))
        if name not in self.vertex_data.dtype.names:
            raise FormatError(
                f"the vertex layout 0x{self.vertex_desc:016X} has no {vf.FLAG_NAMES[flag]} data: "
                f"call set_vertex_flags() to add it"
            )
        return self.vertex_data[name]

    def _new_buffer(self, count):
        if count > 0xFFFF:
            raise FormatError(f"{count} vertices: a Bethesda shape holds at most 65535")
        self.vertex_data = np.zeros(count, vf.vertex_dtype(self.vertex_desc, self.full_precision))
        self.bounds_dirty = True

    def set_vertex_flags(self, flags, full_precision=None):
        """Re-lay the buffer for these attribute flags (the standard layout), keeping every
        attribute both layouts have."""
        full = self.full_precision if full_precision is None else full_precision
        old = self.vertex_data
        self.vertex_desc = vf.build_desc(flags, full)
        self.full_precision = full
        self.vertex_data = None if old is None else np.zeros(len(old), vf.vertex_dtype(self.vertex_desc, full))
        if old is not None:
            for name in set(old.dtype.names) & set(self.vertex_data.dtype.names):
                self.vertex_data[name] = old[name]
        self.bounds_dirty = True

    # -- attributes ----------------------------------------------------------------------
    @property
    def positions(self):
        field = self._field("position")
        return None if field is None else field[:, :3].astype(np.float32)

    @positions.setter
    def positions(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 3)
        if not self.full_precision and len(values) and np.abs(values).max() > HALF_MAX:
            raise FormatError(
                f"a position is beyond ±{HALF_MAX:g}, which half precision cannot hold: use full precision"
            )
        self._writable("position", values, vf.VERTEX)[:, :3] = values
        self.bounds_dirty = True

    @property
    def uvs(self):
        field = self._field("uv")
        return None if field is None else field.astype(np.float32)

    @uvs.setter
    def uvs(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 2)
        self._writable("uv", values, vf.UV)[:] = values

    @property
    def normals(self):
        field = self._field("normal")
        return None if field is None else vf.unorm8_to_signed(field[:, :3])

    @normals.setter
    def normals(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 3)
        self._writable("normal", values, vf.NORMAL)[:, :3] = vf.signed_to_unorm8(values)

    @property
    def tangents(self):
        field = self._field("tangent")
        return None if field is None else vf.unorm8_to_signed(field[:, :3])

    @tangents.setter
    def tangents(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 3)
        self._writable("tangent", values, vf.TANGENT)[:, :3] = vf.signed_to_unorm8(values)

    @property
    def bitangents(self):
        """x is kept in the position block's fourth value, y and z in the normal's and the
        tangent's fourth bytes."""
        position, normal, tangent = self._field("position"), self._field("normal"), self._field("tangent")
        if position is None or normal is None or tangent is None:
            return None
        out = np.empty((len(position), 3), np.float32)
        out[:, 0] = position[:, 3]
        out[:, 1] = vf.unorm8_to_signed(normal[:, 3])
        out[:, 2] = vf.unorm8_to_signed(tangent[:, 3])
        return out

    @bitangents.setter
    def bitangents(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 3)
        self._writable("tangent", values, vf.TANGENT)[:, 3] = vf.signed_to_unorm8(values[:, 2])
        self.vertex_data["normal"][:, 3] = vf.signed_to_unorm8(values[:, 1])
        self.vertex_data["position"][:, 3] = values[:, 0]

    @property
    def colors(self):
        """RGBA in 0..1."""
        field = self._field("color")
        return None if field is None else field.astype(np.float32) / np.float32(255.0)

    @colors.setter
    def colors(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 4)
        encoded = np.rint(np.clip(values, 0.0, 1.0) * 255.0).astype(np.uint8)
        self._writable("color", values, vf.COLORS)[:] = encoded

    @property
    def bone_weights(self):
        field = self._field("bone_weights")
        return None if field is None else field.astype(np.float32)

    @bone_weights.setter
    def bone_weights(self, values):
        values = np.asarray(values, np.float32).reshape(-1, 4)
        self._writable("bone_weights", values, vf.SKINNED)[:] = values

    @property
    def bone_indices(self):
        field = self._field("bone_indices")
        return None if field is None else field.copy()

    @bone_indices.setter
    def bone_indices(self, values):
        values = np.asarray(values).reshape(-1, 4)
        if len(values) and (values.min() < 0 or values.max() > 255):
            raise FormatError("bone indices must be 0..255")
        self._writable("bone_indices", values, vf.SKINNED)[:] = values

    @property
    def eye_data(self):
        field = self._field("eye")
        return None if field is None else field.astype(np.float32)

    @eye_data.setter
    def eye_data(self, values):
        values = np.asarray(values, np.float32).reshape(-1)
        self._writable("eye", values, vf.EYE)[:] = values


def bounding_sphere(positions):
    """Centre of the bounding box and the distance to the farthest vertex."""
    if positions is None or not len(positions):
        return (0.0, 0.0, 0.0), 0.0
    positions = np.asarray(positions, np.float64)
    center = (positions.min(axis=0) + positions.max(axis=0)) / 2.0
    radius = float(np.sqrt(((positions - center) ** 2).sum(axis=1).max()))
    return tuple(float(c) for c in center), radius
