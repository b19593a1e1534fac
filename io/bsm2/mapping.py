"""How .bsm2 data maps onto Blender's, shared by the importer and the exporter: axes, time,
names, and where the values Blender has no place for are kept."""

import numpy as np
from .. import schema

# Engine space is Y up, +Z towards the camera; Blender's is Z up:
# (x, y, z)_blender = (x, -z, y)_engine (FORMAT-NOTES section 9).
TO_BLENDER = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], np.float64)
FROM_BLENDER = TO_BLENDER.T

# Blender keeps one normal per corner and no tangents, and cannot hold a zero or
# over-long normal: the file's own are kept per vertex so unedited ones write back exactly.
# Animation timing Blender's frames cannot carry exactly.
# A hierarchy bone's inverse bind matrix = (FROM_BLENDER @ rest @ residual)^-1: the scale or
# shear a bone's rest cannot hold.
# The file's own name where Blender's (at most 63 bytes, valid UTF-8) differs.

NANOSECONDS = 1_000_000_000


def vectors_to_blender(vectors):
    return np.asarray(vectors, np.float64) @ TO_BLENDER[:3, :3].T


def vectors_from_blender(vectors):
    return np.asarray(vectors, np.float64) @ FROM_BLENDER[:3, :3].T


def frames_per_second(scene):
    return scene.render.fps / scene.render.fps_base


def frame_step(scene, interval_ns):
    """Frames between keys ``interval_ns`` apart at the scene's frame rate."""
    return interval_ns * frames_per_second(scene) / NANOSECONDS


def scene_interval_ns(scene):
    """The key interval of one frame at the scene's frame rate."""
    return round(NANOSECONDS / frames_per_second(scene))


def generated_bone_name(index):
    """Files without a hierarchy have no bone names."""
    return f"Bone_{index:03d}"


def blender_name(name):
    """``name`` as Blender can hold it (invalid UTF-8 from the file replaced)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def remember_file_name(holder, name):
    """``holder`` (an ID or a bone) was created as ``blender_name(name)``: keep the file's ``name``
    when Blender shortened, changed or numbered it."""
    if holder.name != name:
        holder[schema.BSM2_NAME] = {"file": name.encode("utf-8", "surrogateescape"), "blender": holder.name}


def file_name(holder):
    """The name to write for ``holder``: the file's own while the holder keeps the name Blender gave
    it at import, else Blender's (a user's rename wins)."""
    kept = holder.get(schema.BSM2_NAME)
    if kept is not None and kept.get("blender") == holder.name:
        return bytes(kept["file"]).decode("utf-8", "surrogateescape")
    return holder.name


# -- Blender's bone model: armature-space pose P from the rests R and the channels' basis matrices,
# for bones that inherit rotation and scale fully: P_b = P_parent @ R_parent^-1 @ R_b @ basis_b.
def _parent_relative_rests(rests, parents):
    roots = parents == np.arange(len(parents))
    return np.where(roots[:, None, None], rests, np.linalg.inv(rests)[parents] @ rests)


def pose_matrices(basis, rests, parents):
    """(keys, bones, 4, 4) armature-space pose matrices from basis matrices."""
    from ...core.bsm2.skinning import bone_order

    local = _parent_relative_rests(rests, parents) @ basis
    out = np.empty_like(local)
    for bone in bone_order(parents):
        parent = parents[bone]
        out[:, bone] = local[:, bone] if parent == bone else out[:, parent] @ local[:, bone]
    return out


def basis_matrices(pose, rests, parents):
    """The inverse of ``pose_matrices``."""
    roots = parents == np.arange(len(parents))
    parent_pose = np.where(roots[None, :, None, None], np.eye(4), pose[:, parents])
    return np.linalg.inv(_parent_relative_rests(rests, parents)) @ np.linalg.solve(parent_pose, pose)
