"""Colour attribute values as the files store them (sRGB, 0..1) in and out of Blender. A byte
attribute gives its bytes exactly through ``color_srgb``; a float one keeps linear values and
converts with an approximation (1.0 comes back as 0.99997), so its values are converted here,
in float64, with the sRGB curve itself: float colours written back are the ones imported."""

import numpy as np


def _to_linear(srgb):
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _to_srgb(linear):
    linear = np.maximum(linear, 0.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)


def set_srgb(attribute, values):
    """Store (n, 4) sRGB RGBA ``values`` in a colour attribute."""
    values = np.asarray(values, np.float64).reshape(-1, 4)
    if attribute.data_type == "BYTE_COLOR":
        attribute.data.foreach_set("color_srgb", values.astype(np.float32).ravel())
        return
    linear = np.c_[_to_linear(values[:, :3]), values[:, 3]]  # alpha is not a colour
    attribute.data.foreach_set("color", linear.astype(np.float32).ravel())


def get_srgb(attribute):
    """A colour attribute's values as (n, 4) float32 sRGB RGBA."""
    values = np.empty(4 * len(attribute.data), np.float32)
    if attribute.data_type == "BYTE_COLOR":
        attribute.data.foreach_get("color_srgb", values)
        return values.reshape(-1, 4)
    attribute.data.foreach_get("color", values)
    values = values.reshape(-1, 4).astype(np.float64)
    return np.c_[_to_srgb(values[:, :3]), values[:, 3]].astype(np.float32)
