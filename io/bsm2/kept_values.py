"""The float32 values of a .bsm2 Blender holds only to its rounding, kept as the file had them:
an animation's keys (Blender's location, quaternion and scale channels give back each 3x4 key
matrix to about 1e-5, not to the bit) and the hierarchy's inverse bind matrices (a bone's rest
in double precision, inverted). The action keeps the file's keys and a digest of its F-curves as
the import made them; a bone its inverse bind. An export writes a kept value where what Blender
holds now is still it to that rounding and, for keys, the F-curves still have the digest (an
edit of a key, of a bone's rest or of the armature writes what Blender holds)."""

import hashlib
import zlib

import numpy as np

from .. import compat, schema

ROUNDING = 1e-4  # of the keys' size: far above Blender's channel rounding, far below any edit


def curves_digest(action, slot):
    """What the action's F-curves hold: each curve's path, mute flag, keys and interpolations."""
    digest = hashlib.sha1()
    for fcurve in sorted(compat.fcurves(action, slot), key=lambda c: (c.data_path, c.array_index)):
        points = fcurve.keyframe_points
        co = np.empty(2 * len(points), np.float32)
        points.foreach_get("co", co)
        interpolation = np.empty(len(points), np.int32)
        points.foreach_get("interpolation", interpolation)
        digest.update(f"{fcurve.data_path}[{fcurve.array_index}]{fcurve.mute}".encode())
        digest.update(co.tobytes() + interpolation.tobytes())
    return digest.hexdigest()


def keep_keys(action, slot, keys):
    """Remember the file's ``keys`` ((keys, bones, 3, 4) float32) on ``action``, whose F-curves
    the import has made."""
    keys = np.ascontiguousarray(keys, "<f4")
    action[schema.BSM2_KEYS] = {
        "keys": zlib.compress(keys.tobytes(), 1),
        "shape": list(keys.shape),
        "curves": curves_digest(action, slot),
    }


def kept_keys(action, slot, sampled):
    """The kept keys when ``action`` is untouched and ``sampled`` (the keys read from its
    F-curves) are them to Blender's rounding, else ``sampled``."""
    stored = action.get(schema.BSM2_KEYS)
    if stored is None or tuple(stored["shape"]) != sampled.shape or stored["curves"] != curves_digest(action, slot):
        return sampled
    keys = np.frombuffer(zlib.decompress(bytes(stored["keys"])), "<f4").reshape(sampled.shape)
    size = max(1.0, float(np.abs(keys).max(initial=0.0)))
    return keys.copy() if np.abs(keys - sampled).max(initial=0.0) <= ROUNDING * size else sampled


def keep_inverse_bind(bone, inverse_bind):
    """Remember a bone's 16 stored inverse bind floats (column-major, as the file has them)."""
    bone[schema.BSM2_INVERSE_BIND] = np.asarray(inverse_bind, np.float32).astype(np.float64).tolist()


def kept_inverse_binds(bones, computed):
    """(bones, 16) float32: per bone its kept inverse bind where ``computed`` (the floats of the
    rest it has now) is still it to Blender's rounding, else the computed one."""
    out = np.array(computed, np.float32)
    for index, bone in enumerate(bones):
        stored = bone.get(schema.BSM2_INVERSE_BIND)
        if stored is None or len(stored) != 16:
            continue
        stored = np.asarray(stored, np.float32)
        if np.abs(stored - out[index]).max() <= ROUNDING * max(1.0, float(np.abs(stored).max())):
            out[index] = stored
    return out
