"""Armatures and skin weights back into a NIF (the exporter side of skin_import, whose
docstring describes what an import stores). A template skin whose weights and bind pose still
hold, on a shape keeping its geometry, is left exactly as stored; otherwise it is rewritten in
place (same block indices) or new
blocks are appended. BSSubIndexTriShape segments follow the faces' segment attributes (also
without a skin). Knows bpy and core objects, never file bytes."""

import json

import numpy as np
from mathutils import Matrix

from ...core import transforms
from ...core.errors import FormatError
from ...core.nif import body_parts, segments, skinning, sse_skin
from ...core.nif import vertex_format as vf
from ...core.nif import versions
from ...core.nif.blocks.geometry import NiTriBasedGeom
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.skin import (
    BSDismemberSkinInstance,
    BSSkinBoneData,
    BSSkinInstance,
    NiSkinData,
    NiSkinInstance,
    NiSkinPartition,
    SkinBone,
    bone_transform_dtype,
)
from ...core.nif.blocks.tri_shape import BSSubIndexTriShape, BSTriShape
from ...core.stream import WriteStream
from ..mesh_read import face_values
from .skin_import import node_parents, placement
from .. import schema

FO3_BONE_LIMIT = 18  # bones per NiSkinPartition partition (the FNV outfits in the corpus use up to 18)
SKYRIM_MIN_BONES = 4  # bones a Skyrim LE partition lists at least (its vanilla heads and eyes)
REST_NOISE = 1e-5  # matrix_local drift smaller than this is not an edit
WEIGHT_NOISE = 1.5e-3  # half-float weights (FO4) round by up to 1/2048


def _rest_changed(bone):
    stored = bone.get(schema.NIF_MATRIX)
    if stored is None or schema.NIF_REST not in bone:
        return True
    current = np.array([v for row in bone.matrix_local for v in row])
    return np.abs(current - np.asarray(stored)).max() > REST_NOISE


def bone_rest(bone):
    """The bone's node placement in armature space (file units, 4x4 numpy): the exact bind pose
    the import stored while the bone is unedited, else Blender's rest matrix."""
    if not _rest_changed(bone):
        return np.asarray(bone[schema.NIF_REST], np.float64).reshape(4, 4)
    return np.array([list(row) for row in bone.matrix_local], np.float64)


def bone_node_world(armature_obj, bone_name):
    """Where the bone's node is in the armature's space (its pose; see skin_import.pose), as a
    Blender matrix."""
    bone = armature_obj.data.bones[bone_name]
    pose = armature_obj.pose.bones[bone_name].matrix
    return pose @ bone.matrix_local.inverted() @ Matrix(bone_rest(bone).tolist())


def write_armature(exporter, armature_obj, parent_index):
    """Every bone gets its NiNode (the template's when it still has one), placed under its parent
    bone's node or ``parent_index`` (the armature's own node), or left under its template parent
    while Blender still shows the bone parent the import found; registers exporter.bone_nodes."""
    nif = exporter.nif
    bones = sorted(armature_obj.data.bones, key=lambda b: len(b.parent_recursive))
    if all((armature_obj.name, bone.name) in exporter.bone_nodes for bone in bones):
        return  # already written (write_skin writes an armature it meets first)
    file_parents = node_parents(nif) if exporter.template else {}
    bone_blocks = {bone.get(schema.NIF_BLOCK) for bone in bones}
    for bone in bones:
        index = bone.get(schema.NIF_BLOCK)
        # Further armatures of one file (other bind poses) share the nodes of the first.
        reuse = exporter.template and isinstance(index, int) and 0 <= index < len(nif.blocks) and isinstance(nif.blocks[index], NiNode)
        if not reuse:
            index = exporter.add(NiNode("NiNode", name=bone.name, flags=exporter.new_flags))
        parent_bone = exporter.bone_nodes[(armature_obj.name, bone.parent.name)] if bone.parent else None
        if reuse and index in file_parents and _bone_ancestor(index, file_parents, bone_blocks) == parent_bone:
            # Still the bone parent the import found: the node stays under its own parent, which
            # may be a non-bone node between the two.
            parent_node = file_parents[index]
        else:
            parent_node = parent_index if parent_bone is None else parent_bone
        if not reuse or _rest_changed(bone):
            parent_rest = bone_rest(bone.parent) if bone.parent else np.eye(4)
            local = np.linalg.inv(parent_rest) @ bone_rest(bone)
            block = nif.blocks[index]
            block.rotation, block.translation, block.scale = transforms.transform_parts(local)
        if index not in exporter.bone_nodes.values():  # a shared node keeps its first parent
            exporter.children_of.setdefault(parent_node, []).append(index)
        exporter.bone_nodes[(armature_obj.name, bone.name)] = index


def _bone_ancestor(index, parents, bone_blocks):
    """The nearest node above ``index`` that is one of ``bone_blocks`` (what the import made the
    bone's parent), else None."""
    seen = set()
    while index in parents and index not in seen:
        seen.add(index)
        index = parents[index]
        if index in bone_blocks:
            return index
    return None


def skin_source(obj):
    """{"object", "armature", "groups": {vertex group index: bone name}} of a mesh deformed by
    an armature through vertex groups named after its bones, else None."""
    armature = next((m.object for m in obj.modifiers if m.type == "ARMATURE" and m.object is not None), None)
    if armature is None or armature.type != "ARMATURE":
        return None
    groups = {g.index: g.name for g in obj.vertex_groups if g.name in armature.data.bones}
    if not groups:
        return None
    return {"object": obj, "armature": armature, "groups": groups}


def _group_weights(mesh, groups, bone_names):
    """Dense (vertices, bones) weights in ``bone_names`` order. Blender has no bulk read of
    vertex-group weights, so this walks the vertices once."""
    column = {group: bone_names.index(name) for group, name in groups.items()}
    weights = np.zeros((len(mesh.vertices), len(bone_names)), np.float32)
    entries = [(v.index, column[g.group], g.weight) for v in mesh.vertices for g in v.groups if g.group in column]
    if entries:
        rows, cols, values = np.array(entries).T
        weights[rows.astype(np.intp), cols.astype(np.intp)] = values
    return weights


def write_skin(exporter, shape_index, source, mesh, vertex_ids, triangles, face_ids):
    """Make the skin of blocks[shape_index] match ``source`` (skin_source) for the exported
    vertices (``vertex_ids``: Blender vertex of each) and triangles (``face_ids``: Blender face
    of each)."""
    nif = exporter.nif
    block = nif.blocks[shape_index]
    sse = isinstance(block, BSTriShape) and versions.sse(nif.header.bs_version)
    fo4 = isinstance(block, BSTriShape) and not sse
    if isinstance(block, BSSubIndexTriShape) and block.triangles is not None and versions.fo4_or_later(nif.header.bs_version):
        _write_segments(exporter, shape_index, block, mesh, face_ids)
    if source is None:
        if block.skinned:
            if isinstance(block, BSTriShape):
                block.skin = -1
                block.set_vertex_flags(block.vertex_flags & ~vf.SKINNED)
            else:
                block.skin_instance = -1
        return
    armature = source["armature"]
    instance_index, existing, names, indices, values, binds, nodes = _skin_target(exporter, block, source, mesh, vertex_ids)
    if (values.sum(axis=1) == 0).any():
        exporter.warn(f"{source['object'].name}: some vertices have no bone weight (they will not move)")
    # A shape encoded anew numbers its vertices anew (Skyrim SE keeps them in its partition too),
    # so its skin, whose weights and partitions name them, is rewritten.
    rewrite = shape_index in exporter.encoded
    kept = _bind_kept(exporter, shape_index, source, names)
    if (existing and exporter.template and not rewrite and _unchanged(nif, block, instance_index, nodes, kept, indices, values)
            and _body_parts_kept(nif, instance_index, source["object"], mesh)):
        return
    exporter.require_writable(f"the skin of {source['object'].name!r}")
    limited = skinning.dense_weights(indices, values, len(names))
    positions = block.positions if isinstance(block, BSTriShape) else nif.blocks[block.data].vertices
    bounds = skinning.bone_bounds(positions, limited, binds)
    root = exporter.block_of.get(armature, nodes[0] if nodes else -1)
    if existing:  # the file's skeleton root (a FaceGen head's BSFaceGenNiNodeSkinned) while it is written
        stored_root = nif.blocks[instance_index].skeleton_root
        written = set(exporter.block_of.values()) | set(exporter.bone_nodes.values())
        root = stored_root if stored_root in written else root
    if fo4:
        _write_fo4(exporter, block, instance_index if existing else -1, root, nodes, binds, bounds, indices, values)
    else:
        groups = _body_part_groups(exporter, source["object"], face_values(mesh, schema.NIF_BODY_PART, face_ids, -1))
        partition = _write_fo3(exporter, block, source["object"], instance_index if existing else -1, root, nodes, binds, bounds, limited,
                               indices, values, triangles, groups, sse)
        if sse:
            sse_skin.store_in_partition(block, partition, exporter.sse_layouts.get(shape_index, sse_skin.NEW_LAYOUT), indices, values)


def _skin_target(exporter, block, source, mesh, vertex_ids):
    """What ``source`` makes of the skin of ``block`` for the exported vertices: (instance index,
    whether the block has a skin instance, bone names, limited bone indices and weights per
    vertex, binds, bone node indices); writes the armature's nodes when not written yet."""
    nif = exporter.nif
    armature = source["armature"]
    instance_index = block.skin if isinstance(block, BSTriShape) else block.skin_instance
    existing = instance_index >= 0 and isinstance(nif.blocks[instance_index], (BSSkinInstance, NiSkinInstance))
    by_node = {bone.get(schema.NIF_BLOCK): bone.name for bone in armature.data.bones}
    used_names = list(dict.fromkeys(source["groups"].values()))
    names = []
    if existing:  # keep the template's bone order, new bones after
        names = [by_node.get(int(n)) for n in np.asarray(nif.blocks[instance_index].bones).tolist()]
        if None in names:
            names = []
    names = names + [n for n in used_names if n not in names]
    weights = _group_weights(mesh, source["groups"], names)[np.asarray(vertex_ids, np.intp)]
    indices, values = skinning.limit_weights(weights)
    placement = _shape_placement(source)
    binds = [np.linalg.inv(bone_rest(armature.data.bones[name])) @ placement for name in names]
    if any((armature.name, name) not in exporter.bone_nodes for name in names):
        root = armature.get(schema.NIF_ROOT, armature.get(schema.NIF_BLOCK, -1))
        write_armature(exporter, armature, exporter.block_of.get(armature, root))
    nodes = [exporter.bone_index(armature, name) for name in names]
    return instance_index, existing, names, indices, values, binds, nodes


def skin_unchanged(exporter, shape_index, source, mesh):
    """Whether ``source`` (skin_source) still says what the template's skin of blocks[shape_index]
    stores, every vertex of ``mesh`` exported as it is."""
    block = exporter.nif.blocks[shape_index]
    if source is None:
        return not block.skinned
    instance_index, existing, names, indices, values, _binds, nodes = _skin_target(
        exporter, block, source, mesh, np.arange(len(mesh.vertices)))
    kept = _bind_kept(exporter, shape_index, source, names)
    return (existing and _unchanged(exporter.nif, block, instance_index, nodes, kept, indices, values)
            and _body_parts_kept(exporter.nif, instance_index, source["object"], mesh))


def _body_parts_kept(nif, instance_index, obj, mesh):
    """Whether the faces' body parts (and the object's list of them) still say what the stored
    partitions do, read as the import read them: an edit of body parts alone rewrites the skin."""
    instance, _data, partition = skinning.skin_blocks(nif, instance_index)
    if not isinstance(instance, BSDismemberSkinInstance) or partition is None:
        return schema.NIF_BODY_PARTS not in obj
    parts = np.asarray(instance.partitions)
    if schema.NIF_BODY_PARTS not in obj or len(parts) != len(partition.partitions):
        return True  # the import showed no body parts (it warned about the mismatch)
    if [[int(p["body_part"]), int(p["part_flag"])] for p in parts] != [list(pair) for pair in obj[schema.NIF_BODY_PARTS]]:
        return False
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    if (sizes != 3).any():
        return False
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    numbers = skinning.face_partitions(corners.reshape(-1, 3), partition)
    stored = np.where(numbers >= 0, parts["body_part"][np.maximum(numbers, 0)].astype(np.int64), -1)
    return np.array_equal(face_values(mesh, schema.NIF_BODY_PART, np.arange(len(sizes)), -1), stored)


def skin_placements(nif):
    """{skinned shape index: its placement in its skeleton root's space}, as the file stores them
    (read before the export changes any node)."""
    parents = node_parents(nif)
    return {
        index: placement(nif.blocks, parents, index)[1]
        for index, block in enumerate(nif.blocks)
        if isinstance(block, (BSTriShape, NiTriBasedGeom)) and block.skinned
    }


def _shape_placement(source):
    """The skinned mesh's placement in its armature's space (file units)."""
    return np.array(source["armature"].matrix_world.inverted() @ source["object"].matrix_world)


def _bind_kept(exporter, shape_index, source, names):
    """Whether the bind pose Blender gives the skin is still the one the import showed: no bone
    rest edited and the mesh where the file places it. The stored binds are not compared: a skin
    joins an armature whose rests differ from its own binds by up to skin_import.AGREE (a CK
    FaceGen head's hair), so the armature's rests reproduce them only that closely."""
    stored = exporter.skin_placements.get(shape_index)
    bones = source["armature"].data.bones
    if stored is None or any(_rest_changed(bones[name]) for name in names):
        return False
    now = _shape_placement(source)
    return np.abs(now - stored).max() <= 1e-4 * max(1.0, np.abs(stored[:3, 3]).max())


def _unchanged(nif, block, instance_index, nodes, bind_kept, indices, values):
    instance, data, partition = skinning.skin_blocks(nif, instance_index)
    if not bind_kept or [int(n) for n in np.asarray(instance.bones).tolist()] != nodes:
        return False
    fo4 = isinstance(instance, BSSkinInstance)  # weights in the shape's vertices (not SSE's NiSkinInstance)
    count = len(indices)
    packed = (block.bone_indices, block.bone_weights) if fo4 else None
    if fo4 and block.bone_indices is None:
        return False
    old_indices, old_values = skinning.limit_weights(skinning.shape_weights(instance, data, partition, count, packed))
    if old_values.shape != values.shape or np.abs(old_values - values).max(initial=0) > WEIGHT_NOISE:
        return False
    # compared by bone node: a skin may list one node twice (treeaspen03), Blender has one group
    node_of = np.asarray(nodes, np.int64)
    return np.array_equal(np.where(old_values > 0, node_of[old_indices], -1), np.where(values > 0, node_of[indices], -1))


def _write_segments(exporter, shape_index, block, mesh, face_ids):
    """BSSubIndexTriShape segments from the faces' nif_segment / nif_subsegment: tables that
    still say what the faces say are kept byte for byte; otherwise the triangles are reordered
    so each segment's are contiguous and the tables rebuilt. A face with no segment (a mesh
    without the attributes, or -1) goes into the first segment that held triangles in the
    file: which body part a new face belongs to is unknown, and that segment at least renders
    with the rest of the mesh (faces Blender adds by hand get 0, i.e. segment 0). The layout is
    obj["nif_segments"] (the import's, perhaps edited), else the block's own."""
    obj = next((o for o, blocks in exporter.shapes_of.items() if shape_index in blocks), None)
    name = obj.name if obj is not None else block.name
    text = obj.get(schema.NIF_SEGMENTS) if obj is not None else None
    if text is None and not block.segments:
        return  # a shape without segments, and none to give it
    try:
        layout = segments.segment_layout(block) if text is None else json.loads(text)
    except (TypeError, ValueError) as error:
        raise FormatError(f"{name}: nif_segments is not valid JSON ({error})") from None
    segment = face_values(mesh, schema.NIF_SEGMENT, face_ids, segments.NO_SEGMENT)
    sub = face_values(mesh, schema.NIF_SUBSEGMENT, face_ids, segments.NO_SEGMENT)
    if segments.segments_hold(block, layout, segment, sub):
        return
    try:
        segments.check_layout(layout)
    except FormatError as error:
        raise FormatError(f"{name}: {error}") from None
    fallback = segments.first_filled_segment(block)
    unknown = int(((segment < 0) | (segment >= len(layout["segments"]))).sum())
    if unknown:
        exporter.warn(f"{name}: {unknown} faces have no segment; they are written in segment {fallback}")
    segments.write_segments(block, layout, *segments.resolve_segments(layout, segment, sub, fallback))


def _body_part_groups(exporter, obj, groups):
    """Each triangle's body part: a face of none the import listed (a face made in Blender has
    0, a mesh without the attribute -1) goes to the first listed, with a warning; without a list,
    as the faces say (-1: 0)."""
    listed = [int(part) for part, _flag in obj.get(schema.NIF_BODY_PARTS, [])]
    if not listed:
        return np.maximum(groups, 0)
    unknown = ~np.isin(groups, listed)
    if unknown.any():
        exporter.warn(f"{obj.name}: {int(unknown.sum())} faces have no body part of the file's; they are written in body part {listed[0]}")
    return np.where(unknown, listed[0], groups)


def _reuse(exporter, index, kind, type_name):
    """The block at ``index`` when it is a ``kind``, else a new one appended."""
    nif = exporter.nif
    if 0 <= index < len(nif.blocks) and isinstance(nif.blocks[index], kind):
        return index, nif.blocks[index]
    block = kind(type_name)
    return exporter.add(block), block


def _write_fo4(exporter, block, instance_index, root, nodes, binds, bounds, indices, values):
    if not block.vertex_flags & vf.SKINNED:
        block.set_vertex_flags(block.vertex_flags | vf.SKINNED)
    block.bone_weights = values
    block.bone_indices = indices
    block.skin, instance = _reuse(exporter, instance_index, BSSkinInstance, "BSSkin::Instance")
    instance.data, data = _reuse(exporter, instance.data, BSSkinBoneData, "BSSkin::BoneData")
    instance.skeleton_root = root
    instance.bones = np.array(nodes, np.int32)
    records = np.zeros(len(nodes), bone_transform_dtype(WriteStream(exporter.nif.header)))
    for record, bind, (center, radius) in zip(records, binds, bounds):
        rotation, translation, scale = transforms.transform_parts(bind)
        record["rotation"] = np.asarray(rotation).reshape(3, 3)
        record["translation"] = translation
        record["scale"] = scale
        record["bound_center"] = center
        record["bound_radius"] = radius
    data.bones = records


def _write_fo3(exporter, block, obj, instance_index, root, nodes, binds, bounds, limited, indices, values, triangles, groups, sse=False):
    """NiSkinInstance / BSDismemberSkinInstance, NiSkinData and NiSkinPartition (Skyrim SE's
    partitions numbered as sse_skin says); returns the partition block."""
    dismember = BSDismemberSkinInstance if schema.NIF_BODY_PARTS in obj or (groups != 0).any() else NiSkinInstance
    type_name = "BSDismemberSkinInstance" if dismember is BSDismemberSkinInstance else "NiSkinInstance"
    instance_index, instance = _reuse(exporter, instance_index, dismember, type_name)
    if isinstance(block, BSTriShape):
        block.skin = instance_index
    else:
        block.skin_instance = instance_index
    instance.skeleton_root = root
    instance.bones = np.array(nodes, np.int32)
    instance.data, data = _reuse(exporter, instance.data, NiSkinData, "NiSkinData")
    data.skin_transform = ((1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 1.0)
    data.has_vertex_weights = 1
    weight_dtype = np.dtype([("index", "<u2"), ("weight", "<f4")])
    records = []
    for column, (bind, (center, radius)) in enumerate(zip(binds, bounds)):
        record = SkinBone()
        rotation, translation, scale = transforms.transform_parts(bind)
        record.transform = (rotation, translation, scale)
        record.bound_center, record.bound_radius = center, radius
        used = np.flatnonzero(limited[:, column] > 0)
        record.weights = np.zeros(len(used), weight_dtype)
        record.weights["index"], record.weights["weight"] = used, limited[used, column]
        records.append(record)
    data.bones = records
    instance.skin_partition, partition = _reuse(exporter, instance.skin_partition, NiSkinPartition, "NiSkinPartition")
    limit = sse_skin.BONE_LIMIT if exporter.game in ("SSE", "SKYRIM") else FO3_BONE_LIMIT
    built = skinning.build_partitions(indices, values, triangles, groups, limit)
    min_bones = SKYRIM_MIN_BONES if exporter.game == "SKYRIM" else 0
    partition.partitions = [sse_skin.sse_partition(p) if sse else skinning.partition_record(p, min_bones) for p in built]
    if dismember is BSDismemberSkinInstance:
        parts = np.zeros(len(built), np.dtype([("part_flag", "<u2"), ("body_part", "<u2")]))
        for record, p in zip(parts, built):
            if not 0 <= p["group"] <= 0xFFFF:
                raise FormatError(f"{obj.name}: body part {p['group']} is not a 16-bit number")
            record["body_part"] = p["group"]
        parts["part_flag"] = body_parts.partition_flags(parts["body_part"].tolist(), obj.get(schema.NIF_BODY_PARTS, []))
        instance.partitions = parts
    return partition
