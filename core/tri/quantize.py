"""Morph offsets as both .tri kinds store them: one float scale per morph and signed 16-bit
integers, an offset being integer x scale (computed in float32, as the games do)."""

import numpy as np

from ..errors import FormatError

STEPS = 32767  # the largest integer written: the largest offset of a morph maps to it


def dequantize(scale, values):
    """The float32 offsets ``values * scale``."""
    return np.asarray(values, np.float32) * np.float32(scale)


def quantize(offsets, what="morph"):
    """(scale, int16 values) for float offsets: the largest offset becomes +-32767. An offset-free
    morph is stored with scale 0, as FaceGen tools write it."""
    offsets = np.asarray(offsets, np.float64)
    largest = float(np.abs(offsets).max()) if offsets.size else 0.0
    if not np.isfinite(largest) or largest > 1e30:
        raise FormatError(f"{what}: an offset is not a usable number")
    if largest == 0.0:
        return 0.0, np.zeros(offsets.shape, np.int16)
    scale = np.float32(largest / STEPS)
    if scale == 0:  # offsets below float32's smallest step: nothing a game would show
        return 0.0, np.zeros(offsets.shape, np.int16)
    values = np.clip(np.rint(offsets / np.float64(scale)), -STEPS, STEPS).astype(np.int16)
    return float(scale), values
