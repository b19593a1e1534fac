"""Skinned NIF shapes in Blender: skeleton bones as armature bones, weights as vertex groups.

Bone orientation (the one place this is decided): a bone's rest matrix is its node's bind pose
exactly as the skin stores it, ``shape placement @ inv(bind)``, with the node's own axes (the
bone points along the node's +Y); nothing is rotated to suit Blender. Its pose is where the
file puts the node, which may be far from the bind pose (a body whose global-to-skin transform
is not identity). So Blender's armature deformation (pose @ inv(rest) @ v) is the file's
skinning math (node @ bind @ v): the mesh shows where the game draws it, and posing a bone
moves vertices as the game does. The armature object IS the skeleton's root node (the
node above the bones, usually the file root): its bones are that node's bone children, its
space is the node's local space. Skins whose binds disagree about a shared bone (different bind
poses in one file) get further armatures of their own, children of the root with no transform
of their own and obj["nif_root"] naming the root node, so every mesh deforms correctly.
Non-bone nodes between bones stay empties.

What export needs is stored on the data: bone["nif_block"] (node index), bone["nif_rest"] (the
exact bind-pose matrix, 16 floats, row major) and bone["nif_matrix"] (matrix_local as Blender
made it, to tell later edits from float noise); armature object["nif_root"] (root node index);
shape faces get "nif_body_part" (FO3 BSDismemberSkinInstance) or "nif_segment" /
"nif_subsegment" (BSSubIndexTriShape, -1: none; sub-segments numbered within their segment)
INT face attributes, with obj["nif_body_parts"] (body part, flags in file order) and
obj["nif_segments"] (JSON, segments.segment_layout: what the face numbers cannot say; export
writes the segments it describes, so editing it changes them).
"""

import json

import bmesh
import bpy
import numpy as np
from mathutils import Matrix

from ...core import transforms
from ...core.errors import FormatError
from ...core.nif import segments, skinning
from ...core.nif.blocks.geometry import NiTriBasedGeom
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.skin import BSDismemberSkinInstance
from ...core.nif.blocks.tri_shape import BSSubIndexTriShape, BSTriShape
from .. import armature_edit, schema
from ..mesh_build import face_attribute
from .node_transform import local_matrix

AGREE = 1e-3  # game units: binds closer than this are the same bind pose


def _matrix(array):
    return Matrix([tuple(float(v) for v in row) for row in array])


def _array(matrix):
    return np.array([list(row) for row in matrix], np.float64)


def node_parents(nif):
    parents = {}
    for index, block in enumerate(nif.blocks):
        if isinstance(block, NiNode):
            for child in np.asarray(block.children).tolist():
                if 0 <= child < len(nif.blocks):
                    parents.setdefault(child, index)
    return parents


def placement(blocks, parents, index):
    """(root node index, blocks[index]'s placement in the root's space): the root is the topmost
    node above it, whose space a skeleton's armature is."""
    matrix = np.eye(4)
    seen = set()
    while index in parents and index not in seen:
        seen.add(index)
        matrix = _array(local_matrix(blocks[index])) @ matrix
        index = parents[index]
    return index, matrix


def _uniformly_scaled_rotation(matrix, tolerance=0.01):
    """Whether a 3x3 matrix is a rotation times a (non-zero) uniform scale, as every bind pose
    is: anything else (damage) has no bone rest that reproduces it."""
    if not np.isfinite(matrix).all():
        return False
    stretch = np.linalg.svd(matrix, compute_uv=False)
    return stretch[-1] > 1e-6 * max(stretch[0], 1.0) and stretch[0] <= stretch[-1] * (1 + tolerance)


def make_bones(data, rests, names, parents, dropped):
    """The bones of the armature ``data``: one per key of ``rests`` ({key: bind-pose placement in
    armature space}), named ``names[key]``, under the bone of ``parents[key]`` (a key, or None),
    pointing along the node's +Y; each keeps its exact rest (nif_rest) and the matrix_local
    Blender made of it (nif_matrix). Returns {key: bone name}; a bone Blender drops (a degenerate
    rest) raises ``dropped(key)``."""
    heads = np.array([rest[:3, 3] for rest in rests.values()])
    length = max(float(np.ptp(heads, axis=0).max()) * 0.05, 0.1) if len(heads) else 0.1
    with armature_edit.edit_bones(data):
        edit_bones = {}
        for key, rest in rests.items():
            bone = data.edit_bones.new(names[key])
            bone.tail = (0.0, length, 0.0)
            rotation, translation, _scale = transforms.transform_parts(rest)
            bone.matrix = _matrix(transforms.transform_matrix(rotation, translation, 1.0))
            edit_bones[key] = bone
        for key, bone in edit_bones.items():
            if parents.get(key) is not None:
                bone.parent = edit_bones[parents[key]]
        made = {key: bone.name for key, bone in edit_bones.items()}
    for key, bone_name in made.items():
        bone = data.bones.get(bone_name)
        if bone is None:  # Blender drops a bone it cannot place (a degenerate rest)
            raise dropped(key)
        bone[schema.NIF_REST] = [float(v) for v in rests[key].ravel()]
        bone[schema.NIF_MATRIX] = [float(v) for row in bone.matrix_local for v in row]
    return made


def pose_bones(obj, placements):
    """Pose the armature object ``obj``'s bones where ``placements`` ({bone name: its node's
    placement in armature space}) puts their nodes: a pose bone's matrix is ``parent pose @
    inv(parent rest) @ rest @ basis`` in Blender's terms, and its deformation ``pose @ inv(rest)``
    must be ``node @ inv(bind rest)``. Returns the name of a bone no pose can put there (its node
    singular: the armature stays in its bind pose), else None."""
    if obj.pose is None:
        _build_pose(obj)
    bones = obj.data.bones
    targets = {
        name: placement @ np.linalg.inv(np.asarray(bones[name][schema.NIF_REST]).reshape(4, 4)) @ _array(bones[name].matrix_local)
        for name, placement in placements.items()
    }
    linear = np.array([target[:3, :3] for target in targets.values()]).reshape(-1, 3, 3)
    singular = [name for name, good in zip(targets, transforms.invertible(linear)) if not good]
    if singular:
        return singular[0]
    for bone_name, target in targets.items():
        bone = bones[bone_name]
        relative = _array(bone.matrix_local)
        if bone.parent is not None:
            relative = np.linalg.inv(_array(bone.parent.matrix_local)) @ relative
            target = np.linalg.inv(targets[bone.parent.name]) @ target
        obj.pose.bones[bone_name].matrix_basis = _matrix(np.linalg.inv(relative) @ target)
    return None


class _Skin:
    """One skinned shape: its blocks, weights and the armature it joins."""

    def __init__(self, nif, index, block, placement):
        self.index = index
        instance_index = block.skin if isinstance(block, BSTriShape) else block.skin_instance
        self.instance, self.data, self.partition = skinning.skin_blocks(nif, instance_index)
        self.bones = [int(b) for b in np.asarray(self.instance.bones).tolist()]
        for bone in self.bones:
            if not (0 <= bone < len(nif.blocks) and isinstance(nif.blocks[bone], NiNode)):
                raise FormatError(f"skin instance {instance_index}: bone {bone} is not a node")
        self.rests = []
        for bone, bind in zip(self.bones, skinning.bind_matrices(self.instance, self.data)):
            if not _uniformly_scaled_rotation(bind[:3, :3]):
                name = nif.blocks[bone].name or f"NiNode:{bone}"
                raise FormatError(f"skin instance {instance_index}: the bind pose of bone {name!r} is not a rotation and scale")
            self.rests.append(placement @ np.linalg.inv(bind))
        self.armature = None


class _Armature:
    def __init__(self, root):
        self.root = root
        self.rests = {}  # node index -> bind-pose matrix in root space
        self.object = None
        self.data = None
        self.names = {}  # node index -> bone name

    def agrees(self, skin):
        return all(
            np.abs(self.rests[bone] - rest).max() <= AGREE for bone, rest in zip(skin.bones, skin.rests) if bone in self.rests
        )


class SkinImport:
    """Skins of the NIF's shapes (``skinned_shapes``), each a ``skin_class`` joining an armature."""

    skin_class = _Skin

    def __init__(self, builder):
        self.builder = builder
        self.skins = {}  # shape index -> _Skin
        self.armatures = []
        self.bones = {}  # node index -> (_Armature, bone name)
        self.root_armatures = {}  # root node index -> its _Armature

    # -- before the scene is built ----------------------------------------------------------
    def prepare(self):
        """Find the skinned shapes and their bones; make the armatures."""
        nif = self.builder.nif
        self.parents = node_parents(nif)
        for index, block in self.skinned_shapes():
            root, where = self._placement(index)
            try:
                skin = self.skin_class(nif, index, block, where)
            except FormatError as error:
                self.builder.warn(f"{block.name or index}: skin not imported ({error})")
                continue
            skin.armature = next((a for a in self.armatures if a.root == root and a.agrees(skin)), None)
            if skin.armature is None:
                skin.armature = _Armature(root)
                self.armatures.append(skin.armature)
            for bone, rest in zip(skin.bones, skin.rests):
                skin.armature.rests.setdefault(bone, rest)
            self.skins[index] = skin
        for number, armature in enumerate(self.armatures):
            self._make_armature(armature, number)

    def skinned_shapes(self):
        """(index, block) of the shapes with a skin."""
        return [(i, b) for i, b in self.builder.nif.blocks_of(BSTriShape, NiTriBasedGeom) if b.skinned]

    def _placement(self, index):
        return placement(self.builder.nif.blocks, self.parents, index)

    def _bone_parent(self, armature, node):
        seen = set()
        while node in self.parents and node not in seen:
            seen.add(node)
            node = self.parents[node]
            if node in armature.rests:
                return node
        return None

    def _make_armature(self, armature, number):
        builder = self.builder
        blocks = builder.nif.blocks
        root_name = blocks[armature.root].name or f"{blocks[armature.root].type_name}:{armature.root}"
        name = f"{root_name} skeleton" + (f" {number}" if number else "")
        data = bpy.data.armatures.new(name)
        builder.rollback.add(data)
        if any(a.root == armature.root for a in self.armatures[:number]):
            obj = builder.link(bpy.data.objects.new(name, data))
            obj[schema.NIF_ROOT] = armature.root
            armature.object = obj
        else:  # the root node's object, made by the SceneBuilder (armature_data)
            self.root_armatures[armature.root] = armature
        armature.data = data
        armature.names = make_bones(
            data, armature.rests, {node: blocks[node].name or f"NiNode:{node}" for node in armature.rests},
            {node: self._bone_parent(armature, node) for node in armature.rests},
            lambda node: FormatError(f"bone {blocks[node].name!r}: its bind pose cannot be shown as a Blender bone",
                                     block=node, block_type=blocks[node].type_name))
        for node, bone_name in armature.names.items():
            data.bones[bone_name][schema.NIF_BLOCK] = node
            self.bones.setdefault(node, (armature, bone_name))

    def pose(self):
        """Pose every bone where the file puts its node (after the scene is built: the root
        armature object exists then)."""
        for armature in self.armatures:
            obj = self._object(armature)
            if obj is None:
                continue
            placements = {bone_name: self._placement(node)[1] for node, bone_name in armature.names.items()}
            singular = pose_bones(obj, placements)
            if singular:  # a node scaled to nothing (or damaged): no pose reproduces it
                self.builder.warn(f"{armature.data.name}: shown in its bind pose; where the file puts bone "
                                  f"{singular!r} cannot be posed (its node's transform is singular)")

    # -- while the scene is built -----------------------------------------------------------
    def armature_data(self, node_index):
        """The Armature a skeleton's root node shows as, or None for other nodes."""
        armature = self.root_armatures.get(node_index)
        return None if armature is None else armature.data

    def bone_of(self, node_index):
        """(armature object, bone name) when the node became an armature bone, else None."""
        found = self.bones.get(node_index)
        if found is None:
            return None
        armature, bone_name = found
        return self._object(armature), bone_name

    def _object(self, armature):
        if armature.object is None:
            armature.object = self.builder.objects.get(armature.root)
        return armature.object

    def place_under_bone(self, obj, bone, matrix):
        """Parent ``obj`` to ``bone`` = (armature, bone name) with ``matrix`` relative to the node,
        so it sits where the node's bind pose puts it."""
        armature, bone_name = bone
        data_bone = armature.data.bones[bone_name]
        rest = np.array(data_bone[schema.NIF_REST]).reshape(4, 4)
        obj.parent = armature
        obj.parent_type = "BONE"
        obj.parent_bone = bone_name
        # A bone-parented object hangs from the bone's tail; undo that offset.
        obj.matrix_parent_inverse = Matrix.Translation((0.0, -data_bone.length, 0.0))
        obj.matrix_basis = data_bone.matrix_local.inverted() @ _matrix(rest) @ matrix

    def bind(self, shape_index, shape_block, obj):
        """Vertex groups and armature modifier for a skinned shape; partitions or segments (which
        a shape may have without a skin) as face attributes."""
        mesh = obj.data
        if isinstance(shape_block, BSSubIndexTriShape) and shape_block.segments and shape_block.triangles is not None:
            _segments(shape_block, obj, _faces(mesh))
        skin = self.skins.get(shape_index)
        if skin is None:
            return
        armature = skin.armature
        self._parent_armature(armature)
        count = len(mesh.vertices)
        packed = (shape_block.bone_indices, shape_block.bone_weights) if isinstance(shape_block, BSTriShape) else None
        try:
            weights = skinning.shape_weights(skin.instance, skin.data, skin.partition, count, packed)
        except FormatError as error:
            self.builder.warn(f"{shape_block.name or shape_index}: skin not imported ({error.message})")
            return
        groups = [obj.vertex_groups.get(armature.names[node]) or obj.vertex_groups.new(name=armature.names[node]) for node in skin.bones]
        _set_weights(mesh, [group.index for group in groups], weights)
        modifier = obj.modifiers.new("Armature", "ARMATURE")
        modifier.object = self._object(armature)
        if isinstance(skin.instance, BSDismemberSkinInstance) and skin.partition is not None:
            self._body_parts(skin, obj, _faces(mesh))

    def _parent_armature(self, armature):
        """A further armature of a root hangs under the root's object with no transform."""
        obj = armature.object
        root = self.builder.objects.get(armature.root)
        if obj is not None and obj is not root and obj.parent is None and root is not None:
            obj.parent = root

    def _body_parts(self, skin, obj, faces):
        parts = np.asarray(skin.instance.partitions)
        numbers = skinning.face_partitions(faces, skin.partition)
        if len(parts) != len(skin.partition.partitions):
            self.builder.warn(f"{obj.name}: {len(parts)} body parts for {len(skin.partition.partitions)} partitions")
            return
        body = np.where(numbers >= 0, parts["body_part"][np.maximum(numbers, 0)].astype(np.int64), -1)
        face_attribute(obj.data, schema.NIF_BODY_PART, body)
        obj[schema.NIF_BODY_PARTS] = [[int(p["body_part"]), int(p["part_flag"])] for p in parts]


def _segments(shape, obj, faces):
    """Each face's segment and sub-segment. Faces are the file's triangles in order when none
    was dropped (exact even for the duplicate triangles some outfits have); otherwise each face
    is matched to a triangle with its corners."""
    segment, sub = segments.face_segments(shape)
    triangles = np.asarray(shape.triangles, np.int64)
    if faces.shape == triangles.shape and np.array_equal(faces, triangles):
        source = np.arange(len(faces))
    else:
        source = skinning.triangle_lookup(triangles, faces)
    found = source >= 0
    face_attribute(obj.data, schema.NIF_SEGMENT, np.where(found, segment[np.maximum(source, 0)], segments.NO_SEGMENT))
    face_attribute(obj.data, schema.NIF_SUBSEGMENT, np.where(found, sub[np.maximum(source, 0)], segments.NO_SEGMENT))
    obj[schema.NIF_SEGMENTS] = json.dumps(segments.segment_layout(shape))


def _faces(mesh):
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    if len(sizes) and (sizes != 3).any():
        raise FormatError("a skinned mesh was built with faces that are not triangles")
    return corners.reshape(-1, 3)


def _set_weights(mesh, group_indices, weights):
    """Every non-zero weight into its vertex group. Blender has no bulk weight setter; a BMesh
    deform layer takes one assignment per weight at about twice the speed of VertexGroup.add
    calls (one per distinct weight: as many as the weights on real bodies), measured by
    benchmarks/vertex_weights.py."""
    rows, columns = np.nonzero(weights > 0)
    if not len(rows):
        return
    values = weights[rows, columns].tolist()
    columns = np.asarray(group_indices, np.int64)[columns].tolist()
    bm = bmesh.new()
    try:
        bm.from_mesh(mesh)
        layer = bm.verts.layers.deform.verify()
        bm.verts.ensure_lookup_table()
        verts = bm.verts
        for row, column, value in zip(rows.tolist(), columns, values):
            verts[row][layer][column] = value
        bm.to_mesh(mesh)
    finally:
        bm.free()


def _build_pose(obj):
    """Blender makes an object's pose when it evaluates the object in a scene; the importer's
    collection is not in the scene yet, so the object visits it once."""
    scene = bpy.context.scene
    scene.collection.objects.link(obj)
    try:
        bpy.context.view_layer.update()
    finally:
        scene.collection.objects.unlink(obj)
