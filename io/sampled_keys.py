"""Sampled animation (a value per frame) as F-curve keys, shared by the importers of formats
that store samples (.bsm2, Havok animations)."""

import bpy
import numpy as np

LINEAR = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items["LINEAR"].value


def continuous(quaternions):
    """(keys, bones, 4) with signs flipped so that neighbouring keys interpolate the short way."""
    if len(quaternions) < 2:
        return quaternions
    dots = np.einsum("kbi,kbi->kb", quaternions[1:], quaternions[:-1])
    flips = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
    return np.concatenate([quaternions[:1], quaternions[1:] * flips[..., None]])


def set_keys(fcurve, frames, values):
    """One key per frame on an empty F-curve."""
    points = fcurve.keyframe_points
    points.add(len(frames))
    points.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
    # Keys are samples: straight lines between them, no Bezier overshoot.
    points.foreach_set("interpolation", np.full(len(frames), LINEAR, np.int32))
    fcurve.update()
