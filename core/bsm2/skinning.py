"""The file's own skinning: where each vertex goes at each key (FORMAT-NOTES section 9).

Without a hierarchy, key matrices are whole skinning matrices (global * inverse bind, axis
change included). With one, they are local to the parent: chaining them from the root after
a +90 degree rotation about X gives each bone's global matrix (at the bind pose that is the
inverse of the inverse bind), and the skinning matrix is global * inverse bind.
Matrices act on column vectors, p' = M p.
"""

import numpy as np

from ..errors import FormatError

ROOT_TRANSFORM = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], np.float64)


def homogeneous(matrices):
    """(..., 3, 4) -> (..., 4, 4) float64."""
    matrices = np.asarray(matrices, np.float64)
    out = np.zeros(matrices.shape[:-2] + (4, 4))
    out[..., :3, :] = matrices
    out[..., 3, 3] = 1.0
    return out


def bone_order(parents):
    """Bone indices with every parent before its children; FormatError for a parent beyond the
    bones or a loop (a root is its own parent)."""
    parents = np.asarray(parents, np.int64)
    n = len(parents)
    if np.any(parents >= n):
        bone = int(np.flatnonzero(parents >= n)[0])
        raise FormatError(f"bone {bone} has parent {parents[bone]} of {n} bones")
    depth = np.where(parents == np.arange(n), 0, -1)
    for level in range(1, n + 1):
        if np.all(depth >= 0):
            break
        ready = (depth < 0) & (depth[parents] == level - 1)
        depth[ready] = level
    if np.any(depth < 0):
        raise FormatError(f"bone {int(np.flatnonzero(depth < 0)[0])} is in a parent loop, never reaching a root")
    return np.argsort(depth, kind="stable")


def global_matrices(parents, local):
    """(keys, bones, 4, 4) local matrices -> globals: ROOT_TRANSFORM * root ... * bone."""
    out = np.empty_like(local)
    for bone in bone_order(parents):
        parent = parents[bone]
        base = ROOT_TRANSFORM if parent == bone else out[:, parent]
        out[:, bone] = base @ local[:, bone]
    return out


def skinning_matrices(bsm, animation):
    """(keys, bones, 4, 4) float64: the matrix each bone applies to bind-pose vertices."""
    keys = homogeneous(animation.keys)
    if bsm.hierarchy is None:
        return keys
    parents = bsm.hierarchy.parents.astype(np.int64)
    return global_matrices(parents, keys) @ bsm.hierarchy.inverse_bind_matrices


def skin(vertices, matrices):
    """Positions (keys, vertices, 3) float64 after skinning with (keys, bones, 4, 4) matrices.
    Weight slots after the first zero are ignored, as the engine does."""
    weights = vertices["weights"].astype(np.float64) / 255.0
    weights *= np.cumprod(weights > 0, axis=1)
    bones = np.where(weights > 0, vertices["bones"], 0).astype(np.int64)
    position = np.asarray(vertices["position"], np.float64)
    out = np.zeros((len(matrices), len(vertices), 3))
    for slot in range(bones.shape[1]):
        m = matrices[:, bones[:, slot]]  # (keys, vertices, 4, 4)
        moved = np.einsum("kvij,vj->kvi", m[..., :3, :3], position) + m[..., :3, 3]
        out += weights[None, :, slot, None] * moved
    return out
