"""Skinning math shared by the importer and the exporter: bind transforms, per-vertex weights in
one dense form for both FO4 (vertex buffer) and FO3/FNV (NiSkinData / NiSkinPartition),
pruning to four weights, bone bounding spheres, FO3 hardware partitions and the per-triangle
partition map (FO4's segments: segments.py). Pure numpy; no bpy.

Conventions: a transform is a 4x4 float64 matrix ``T @ R @ s`` with R's rows as stored
(FORMAT-NOTES section 2). A skin's *bind* transform of a bone maps the shape's vertex space to
the bone's space, so a bone's bind-pose placement in the shape's space is ``inv(bind)``.
Weights are a dense (vertices, bones) float32 matrix indexed by the skin instance's bone list.
"""

import numpy as np

from ..errors import FormatError
from ..transforms import transform_matrix
from . import versions
from .blocks.skin import BSSkinBoneData, BSSkinInstance, NiSkinData, NiSkinInstance, NiSkinPartition, SkinPartition
from .blocks.tri_shape import BSDynamicTriShape, BSTriShape

MAX_WEIGHTS = 4


def skin_blocks(nif, instance_index):
    """(instance, data, partition or None) of a skin instance, checked."""
    blocks = nif.blocks

    def block(index, kind, what):
        item = blocks[index] if 0 <= index < len(blocks) else None
        if not isinstance(item, kind):
            raise FormatError(f"skin instance {instance_index}: its {what} ({index}) is not a {kind.__name__}")
        return item

    instance = blocks[instance_index] if 0 <= instance_index < len(blocks) else None
    if isinstance(instance, BSSkinInstance):
        data = block(instance.data, BSSkinBoneData, "bone data")
        if len(data.bones) != len(instance.bones):
            raise FormatError(f"skin instance {instance_index}: bone data does not match its {len(instance.bones)} bones")
        return instance, data, None
    if not isinstance(instance, NiSkinInstance):
        kind = "no block" if instance is None else f"a {instance.type_name}"
        raise FormatError(f"the skin reference {instance_index} names {kind}, not a skin instance")
    data = block(instance.data, NiSkinData, "skin data")
    if len(data.bones) != len(instance.bones):
        raise FormatError(f"skin instance {instance_index}: {len(data.bones)} bone records for {len(instance.bones)} bones")
    partition = None
    if instance.skin_partition >= 0:
        partition = block(instance.skin_partition, NiSkinPartition, "skin partition")
    return instance, data, partition


def bind_matrices(instance, data):
    """Per bone: shape space -> bone space. FO3 composes the overall skin transform first."""
    if isinstance(instance, BSSkinInstance):
        bones = data.bones
        return [transform_matrix(b["rotation"], b["translation"], b["scale"]) for b in bones]
    skin = transform_matrix(*data.skin_transform)
    return [transform_matrix(*bone.transform) @ skin for bone in data.bones]


def shape_weights(instance, data, partition, vertex_count, packed=None):
    """Dense (vertex_count, bones) weights. FO4 reads the shape's packed vertex buffer
    (``packed``: its bone_indices / bone_weights); FO3 reads NiSkinData's per-bone lists, or
    the partitions when the data holds none. Skyrim SE draws with its partitions' four weights
    per vertex (its NiSkinData may hold more): a partition with a vertex buffer is read."""
    bone_count = len(instance.bones)
    weights = np.zeros((vertex_count, bone_count), np.float32)
    if isinstance(instance, BSSkinInstance):
        indices, values = packed
        if indices is None:
            return weights
        used = values != 0  # empty slots name bone 0 with weight 0; NaN weights count as used
        named = indices[used]
        if named.size and int(named.max()) >= bone_count:
            raise FormatError(f"a vertex names bone {int(named.max())} of only {bone_count}")
        rows = np.broadcast_to(np.arange(vertex_count)[:, None], indices.shape)
        np.add.at(weights, (rows[used], named.astype(np.intp)), values[used])
        return weights
    if data.has_vertex_weights and (partition is None or partition.vertex_data is None):
        for bone, record in enumerate(data.bones):
            w = record.weights
            if len(w) and int(w["index"].max()) >= vertex_count:
                raise FormatError(f"bone {bone} weights vertex {int(w['index'].max())} of only {vertex_count}")
            weights[w["index"].astype(np.intp), bone] = w["weight"]
        return weights
    for part in partition.partitions if partition is not None else ():
        if part.vertex_map is None or part.vertex_weights is None or part.bone_indices is None:
            continue
        bones = np.asarray(part.bones, np.intp)
        local = part.bone_indices.astype(np.intp)
        if len(local) and (local.max() >= len(bones) or (len(bones) and bones.max() >= bone_count)):
            raise FormatError("a skin partition names a bone it does not have")
        if len(part.vertex_map) and int(part.vertex_map.max()) >= vertex_count:
            raise FormatError(f"a skin partition maps vertex {int(part.vertex_map.max())} of only {vertex_count}")
        rows = np.broadcast_to(part.vertex_map.astype(np.intp)[:, None], local.shape)
        held = part.vertex_weights > 0  # empty slots name bone 0 with weight 0
        weights[rows[held], bones[local[held]]] = part.vertex_weights[held]
    return weights


def limit_weights(weights, limit=MAX_WEIGHTS):
    """The ``limit`` largest weights of each vertex, normalised to sum 1, as (bone indices,
    weights) of shape (n, limit), heaviest first; unused slots are bone 0 with weight 0.
    Vertices with no weight stay all zero."""
    weights = np.asarray(weights, np.float32)
    n, bones = weights.shape
    if bones == 0:
        return np.zeros((n, limit), np.intp), np.zeros((n, limit), np.float32)
    order = np.argsort(-weights, axis=1, kind="stable")[:, :limit]
    kept = np.take_along_axis(weights, order, axis=1)
    kept = np.where(kept > 0, kept, 0).astype(np.float32)
    if bones < limit:
        pad = limit - bones
        order = np.pad(order, ((0, 0), (0, pad)))
        kept = np.pad(kept, ((0, 0), (0, pad)))
    total = kept.sum(axis=1, keepdims=True)
    kept = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
    order = np.where(kept > 0, order, 0)
    return order, kept


def dense_weights(indices, values, bone_count):
    """The dense matrix of (indices, values) as limit_weights returns them."""
    weights = np.zeros((len(indices), bone_count), np.float32)
    rows = np.broadcast_to(np.arange(len(indices))[:, None], indices.shape)
    np.add.at(weights, (rows, np.asarray(indices, np.intp)), values)
    return weights


def bone_bounds(positions, weights, binds):
    """Per bone (centre, radius) in the bone's space: the sphere around the vertices it
    weights (centre of their box, farthest vertex), as the game's culling expects."""
    positions = np.asarray(positions, np.float64)
    out = []
    for bone, bind in enumerate(binds):
        used = positions[weights[:, bone] > 0]
        if not len(used):
            out.append(((0.0, 0.0, 0.0), 0.0))
            continue
        local = used @ bind[:3, :3].T + bind[:3, 3]
        center = (local.min(axis=0) + local.max(axis=0)) / 2.0
        radius = float(np.sqrt(((local - center) ** 2).sum(axis=1).max()))
        out.append((tuple(float(c) for c in center), radius))
    return out


def _triangle_keys(triangles):
    """One integer per triangle that ignores its winding and starting corner."""
    t = np.sort(np.asarray(triangles, np.int64).reshape(-1, 3), axis=1)
    return (t[:, 0] << 32) | (t[:, 1] << 16) | t[:, 2]


def partition_triangles(part):
    """A partition's triangles in the shape's vertex numbering. Before Skyrim SE they are numbered
    within the partition, through its vertex map. Skyrim SE partitions (those with a "triangles
    copy") share the shape's vertex buffer: in every corpus file the triangles equal their copy and
    name shape vertices beyond the map (nifly reads them so too); a file numbering them within the
    partition holds their mapping in the copy. Either way the copy is in shape numbering."""
    local = np.asarray(part.faces, np.int64).reshape(-1, 3)
    copy = part.triangles_copy
    if copy is not None:
        copy = np.asarray(copy, np.int64).reshape(-1, 3)
        if not np.array_equal(local, copy) and not np.array_equal(_mapped(part, local), copy):
            raise FormatError("a skin partition's triangles are neither its triangles copy nor their mapping")
        return copy
    return _mapped(part, local)


def _mapped(part, local):
    """Partition-local triangles through the partition's vertex map (None when they do not fit it)."""
    sse = part.triangles_copy is not None
    if not len(local) or part.vertex_map is None:  # no map: which vertices it covers is unknown
        return None if sse and len(local) else np.zeros((0, 3), np.int64)
    if local.max() >= len(part.vertex_map):
        if sse:
            return None
        raise FormatError("a skin partition triangle names a vertex outside its vertex map")
    return part.vertex_map.astype(np.int64)[local]


class PartitionGeometry:
    """A Skyrim SE skinned shape's vertex arrays (one row per shape vertex) and triangles (shape
    vertex numbers), as partition_geometry finds them."""

    def __init__(self, positions, triangles, uvs=None, normals=None, colors=None):
        self.positions = positions
        self.triangles = triangles
        self.uvs = uvs
        self.normals = normals
        self.colors = colors


def partition_geometry(nif, block):
    """Skyrim SE (bs 100) skinned BSTriShape / BSDynamicTriShape store no vertices of their own
    (data size 0; their vertex and triangle counts are either 0 or the partition's): the
    NiSkinPartition holds the shape's vertex buffer (its own vertex desc) and, per partition, the
    triangles (partition_triangles). A BSDynamicTriShape's positions are its float4 dynamic
    vertices (w: the bitangent's x). Returns a PartitionGeometry, or None for any other shape, or
    one without a partition or positions to show. Damage raises FormatError naming the shape."""
    if not isinstance(block, BSTriShape) or block.vertex_data is not None or not block.skinned:
        return None
    if not versions.sse(nif.header.bs_version):
        return None
    instance = nif.block_at(block.skin, NiSkinInstance)
    partition = nif.block_at(instance.skin_partition, NiSkinPartition) if instance is not None else None
    if partition is None:
        return None
    dynamic = block.dynamic_vertices if isinstance(block, BSDynamicTriShape) else None
    if dynamic is not None and len(dynamic):
        positions = np.asarray(dynamic, np.float32)[:, :3]
    else:
        positions = partition.positions
    if positions is None:
        return None
    name = block.name
    count = len(positions)
    if block.num_vertices not in (0, count):
        raise FormatError(f"shape {name!r}: it counts {block.num_vertices} vertices, its skin partition holds {count}")
    if partition.vertex_data is not None and len(partition.vertex_data) != count:
        raise FormatError(f"shape {name!r}: its skin partition holds {len(partition.vertex_data)} vertices "
                          f"for its {count}")
    parts = []
    for number, part in enumerate(partition.partitions):
        if part.vertex_map is not None and len(part.vertex_map) and int(part.vertex_map.max()) >= count:
            raise FormatError(f"shape {name!r}: skin partition {number} maps vertex {int(part.vertex_map.max())} "
                              f"of only {count}")
        try:
            parts.append(partition_triangles(part))
        except FormatError as error:
            raise FormatError(f"shape {name!r}: skin partition {number}: {error.message}") from None
    triangles = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
    if block.num_triangles not in (0, len(triangles)):
        raise FormatError(f"shape {name!r}: it counts {block.num_triangles} triangles, its skin partitions hold "
                          f"{len(triangles)}")
    if len(triangles) and int(triangles.max()) >= count:
        raise FormatError(f"shape {name!r}: a skin partition triangle uses vertex {int(triangles.max())} of only {count}")
    return PartitionGeometry(positions, triangles, uvs=partition.uvs, normals=partition.normals, colors=partition.colors)


def triangle_lookup(faces, triangles):
    """For each of ``triangles``, the index of the face in ``faces`` with the same corners
    (any winding or starting corner), -1 when there is none."""
    keys = _triangle_keys(faces)
    found = _triangle_keys(triangles)
    out = np.full(len(found), -1, np.int64)
    if not len(keys) or not len(found):
        return out
    order = np.argsort(keys, kind="stable")
    at = np.clip(np.searchsorted(keys[order], found), 0, len(keys) - 1)
    hit = keys[order][at] == found
    out[hit] = order[at[hit]]
    return out


def face_partitions(faces, partition):
    """For each face (a shape triangle), the number of the partition holding it, -1 if none."""
    out = np.full(len(faces), -1, np.int32)
    for number, part in enumerate(partition.partitions):
        at = triangle_lookup(faces, partition_triangles(part))
        out[at[at >= 0]] = number
    return out


def build_partitions(indices, values, triangles, groups, bone_limit):
    """FO3 hardware partitions. ``indices``/``values``: limit_weights output; ``groups``: a
    key per triangle (the body part). Triangles of one group fill partitions in order until
    one more triangle would bring more than ``bone_limit`` bones. Returns a list of dicts:
    group, bones, vertex_map, vertex_weights, bone_indices (into ``bones``), triangles (into
    ``vertex_map``)."""
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    groups = np.asarray(groups)
    used = values > 0
    out = []
    for group in dict.fromkeys(groups.tolist()):
        members = np.flatnonzero(groups == group)
        if len(np.unique(indices[np.unique(triangles[members])][used[np.unique(triangles[members])]])) <= bone_limit:
            chunks = [members]
        else:
            chunks = _split_by_bones(members, triangles, indices, used, bone_limit)
        for chunk in chunks:
            out.append(_partition(group, triangles[chunk], indices, values))
    return out


def _split_by_bones(members, triangles, indices, used, bone_limit):
    """Greedy split; sequential by nature (each triangle depends on the bones taken so far)."""
    chunks, current, bones = [], [], set()
    for t in members.tolist():
        corners = triangles[t]
        need = set(indices[corners][used[corners]].tolist())
        if len(need) > bone_limit:
            raise FormatError(f"a triangle uses {len(need)} bones, more than the partition limit {bone_limit}")
        if len(bones | need) > bone_limit:
            chunks.append(np.array(current))
            current, bones = [], set()
        current.append(t)
        bones |= need
    if current:
        chunks.append(np.array(current))
    return chunks


def _partition(group, triangles, indices, values):
    vertex_map = np.unique(triangles)
    local_indices = indices[vertex_map]
    local_values = values[vertex_map]
    bones = np.unique(local_indices[local_values > 0])
    if not len(bones):
        bones = np.zeros(1, np.intp)
    bone_slots = np.searchsorted(bones, local_indices)
    bone_slots = np.where(local_values > 0, bone_slots, 0)
    return {
        "group": group,
        "bones": bones.astype(np.uint16),
        "vertex_map": vertex_map.astype(np.uint16),
        "vertex_weights": local_values.astype(np.float32),
        "bone_indices": bone_slots.astype(np.uint8),
        "triangles": np.searchsorted(vertex_map, triangles).astype(np.uint16),
    }


def partition_record(built, min_bones=0):
    """A SkinPartition record of one build_partitions partition (FO3 / Skyrim LE numbering), its
    bone list filled up to ``min_bones`` with bone 0, which no vertex of it weights (Skyrim LE's
    heads and eyes list four bones for their one or two)."""
    part = SkinPartition()
    part.num_vertices = len(built["vertex_map"])
    part.num_triangles = len(built["triangles"])
    part.weights_per_vertex = MAX_WEIGHTS
    part.bones = np.pad(built["bones"], (0, max(0, min_bones - len(built["bones"]))))
    part.vertex_map = built["vertex_map"]
    part.vertex_weights = built["vertex_weights"]
    part.strips = ()
    part.has_faces = 1
    part.triangles = built["triangles"]
    part.bone_indices = built["bone_indices"]
    return part
