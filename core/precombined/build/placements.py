"""Where a combined reference's shapes stand in the cell: the reference's placement (its DATA
position and rotation, references.rotation_matrix's convention, times its XSCL scale), for a
SCOL each component's placements inside it (DATA after each ONAM: position, rotation, scale per
placement) first, then each shape's own transform in its model (shapes.ShapeRecord.matrix).

An instance is the CK's placement row of a record: its rotation (the matrix without scale), its
translation, its uniform scale, its bound (the shape's bounding sphere placed) and the grayscale
to palette scale of the shape's shader. For a STAT's shape at its model's root the rotation,
translation and scale are the REFR's own (the corpus cell: each instance of the plugin's
references at its REFR's DATA position, its rotation the REFR's, computed as the CK does:
ck_rotation)."""

import struct

import numpy as np

from ...errors import FormatError
from .ck_rotation import ck_rotation

PLACEMENT = struct.Struct("<7f")  # a SCOL component placement: position, rotation (radians), scale


def placement(position, angles, scale):
    """A 4x4 placement, its rotation the CK's float32 one (ck_rotation)."""
    matrix = np.eye(4)
    matrix[:3, :3] = ck_rotation(angles).astype(np.float64) * scale
    matrix[:3, 3] = position
    return matrix


def reference_parts(record):
    """(position, angles, scale) of a REFR record (DATA and XSCL, as stored)."""
    data = record.field("DATA")
    if data is None or len(data) < 24:
        raise FormatError(f"REFR {record.form_id:08X} has no placement (DATA)")
    values = struct.unpack_from("<6f", data)
    scale = record.field("XSCL")
    return values[:3], values[3:], struct.unpack_from("<f", scale)[0] if scale and len(scale) >= 4 else 1.0


def reference_matrix(record):
    """The 4x4 placement of a REFR record (DATA and XSCL)."""
    return placement(*reference_parts(record))


def scol_parts(scol):
    """[(component FormID as stored, 4x4 placement in the SCOL)] of a SCOL record."""
    parts, component = [], None
    for kind, data in scol.fields:
        if kind == "ONAM" and len(data) >= 4:
            component = struct.unpack_from("<I", data)[0]
        elif kind == "DATA" and component is not None:
            for at in range(0, len(data) - PLACEMENT.size + 1, PLACEMENT.size):
                values = PLACEMENT.unpack_from(data, at)
                parts.append((component, placement(values[:3], values[3:6], values[6])))
    return parts


def instance_rows(matrices, bound, grayscale, dtype):
    """The instances (a ``dtype`` array: grayscale, rotation 3x3, translation, scale, bound centre,
    bound radius) of a shape placed by each of ``matrices`` (k, 4, 4), uniform scales."""
    linear = matrices[:, :3, :3]
    # the scale as stored (float32): a float32 rotation's determinant is 1 only to its last digit
    scale = np.cbrt(np.abs(np.linalg.det(linear))).astype(np.float32).astype(np.float64)
    out = np.zeros(len(matrices), dtype)
    out["grayscale_scale"] = grayscale
    out["rotation"] = linear / scale[:, None, None]
    out["translation"] = matrices[:, :3, 3]
    out["scale"] = scale
    out["bound_center"] = linear @ bound[0] + matrices[:, :3, 3]
    out["bound_radius"] = bound[1] * scale
    return out
