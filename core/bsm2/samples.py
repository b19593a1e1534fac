"""A small .bsm2 made from scratch: a strip bent by a chain of three bones, with or without the
hierarchy block. No corpus file has a hierarchy, so this is what tests that path."""

import numpy as np

from . import packing
from .file import SUBSET_DTYPE, VERTEX_DTYPE, Animation, Bsm2File, Hierarchy
from .skinning import ROOT_TRANSFORM, global_matrices

INTERVAL_NS = 33_333_333
BONE_NAMES = ("root", "middle", "tip")
SEGMENT = 20.0  # bone length along engine +Y
TIP_BIND_SCALE = 2.0  # the tip's bind pose is scaled: a rest Blender cannot hold exactly


def _rotation_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    out = np.eye(4)
    out[:2, :2] = [[c, -s], [s, c]]
    return out


def _translation(y):
    out = np.eye(4)
    out[1, 3] = y
    return out


def bind_globals():
    """(3, 4, 4) engine-space bind matrices of the bones, root first."""
    tip = _translation(2 * SEGMENT) @ np.diag([TIP_BIND_SCALE] * 3 + [1.0])
    return np.array([_translation(0.0), _translation(SEGMENT), tip])


def strip_vertices():
    rows = np.arange(7) * SEGMENT / 2  # y = 0, 10, ... 60
    x = np.tile([-10.0, 10.0], len(rows))
    y = np.repeat(rows, 2)
    vertices = np.zeros(len(x), VERTEX_DTYPE)
    vertices["position"] = np.stack([x, y, np.zeros_like(x)], axis=1)
    vertices["normal"] = packing.pack_1010102(np.tile([0, 0, 511], (len(x), 1)), 0)
    vertices["tangent"] = packing.pack_1010102(np.tile([511, 0, 0], (len(x), 1)), 1)
    vertices["uv"] = np.stack([packing.uv_encode(x / 20 + 0.5), packing.uv_encode(1 - y / 60)], axis=1)
    # Each bone holds its own segment; vertices at a joint are shared half and half.
    position = y / SEGMENT
    lower = np.minimum(np.floor(position), 2).astype(np.int64)
    share = position - lower
    at_joint = (share == 0) & (lower > 0)
    bones = np.stack([lower, np.maximum(lower - 1, 0)], axis=1)
    weights = np.stack([np.where(at_joint, 0.5, 1.0), np.where(at_joint, 0.5, 0.0)], axis=1)
    vertices["bones"], vertices["weights"] = packing.pack_weights(bones, weights)
    return vertices


def strip_triangles():
    quads = np.arange(6)[:, None] * 2 + np.array([0, 1, 3, 0, 3, 2])
    return quads.reshape(-1).astype(np.uint16)


def bend_locals(num_keys=5):
    """(keys, 3, 4, 4) parent-relative bone matrices: each joint bends a little more every key."""
    bind = bind_globals()
    parent = [ROOT_TRANSFORM, bind[0], bind[1]]
    rest_locals = [np.linalg.inv(parent[bone]) @ bind[bone] for bone in range(3)]
    keys = np.empty((num_keys, 3, 4, 4))
    for key in range(num_keys):
        for bone in range(3):
            keys[key, bone] = rest_locals[bone] @ _rotation_z(0.2 * key * (bone + 1) / 3)
    return keys


def skinned_strip(hierarchy=True):
    """The strip, keyed as local matrices with a hierarchy, or as whole skinning matrices without:
    both deform the same way."""
    bsm = Bsm2File()
    bsm.vertices = strip_vertices()
    bsm.indices = strip_triangles()
    half = len(bsm.indices) // 2
    bsm.subsets = np.array([(0, half, 0), (half, half, 1)], SUBSET_DTYPE)
    bsm.materials = ["skin", "nail"]
    bsm.num_bones = 3
    parents = np.array([0, 0, 1])
    inverse_bind = np.linalg.inv(bind_globals())
    animations = []
    for name, local in (("bend", bend_locals()), ("static", bend_locals(1))):
        keys = local if hierarchy else global_matrices(parents, local) @ inverse_bind
        duration = (len(keys) - 1) * INTERVAL_NS
        animations.append(Animation(name, duration, INTERVAL_NS, keys[..., :3, :].astype(np.float32)))
    bsm.animations = animations
    if hierarchy:
        bsm.hierarchy = Hierarchy(parents, Hierarchy.stored_inverse_bind(inverse_bind), BONE_NAMES)
    bsm.check()
    return bsm
