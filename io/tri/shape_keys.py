"""Shape keys as numpy offsets from the mesh's reference key, through foreach_get/foreach_set."""

import hashlib

import numpy as np


def coordinates(key, count):
    co = np.empty(3 * count, np.float32)
    key.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def reference(obj):
    """The reference (basis) key, made first when the mesh has no shape keys."""
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    return obj.data.shape_keys.reference_key


def offsets(obj, key, basis=None):
    """(vertices, 3) float32: the key's positions less the reference key's (``basis``, when read already)."""
    count = len(obj.data.vertices)
    if basis is None:
        basis = coordinates(obj.data.shape_keys.reference_key, count)
    return coordinates(key, count) - basis


def add_key(obj, name, values, base):
    """A new shape key ``name`` at the reference positions ``base`` plus ``values`` ((vertices, 3));
    returns it and its offsets as Blender holds them (the float32 sums less ``base``, what
    ``offsets`` reads back)."""
    key = obj.shape_key_add(name=name, from_mix=False)
    key.value = 0.0
    co = np.asarray(base + values, np.float32)
    key.data.foreach_set("co", co.ravel())
    return key, co - base


def digest(values):
    """What a key's offsets were when read: an equal digest at export means the key is untouched."""
    return hashlib.sha1(np.ascontiguousarray(values, np.float32).tobytes()).hexdigest()


def morph_keys(obj):
    """The shape keys that are morphs: all but the reference key."""
    keys = obj.data.shape_keys
    if keys is None:
        return []
    return [key for key in keys.key_blocks if key != keys.reference_key]
