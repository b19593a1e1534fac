"""A Blender mesh object (with the armature deforming it) as a core ``Bsm2File``.

The file holds one vertex per distinct (vertex, UV, normal) corner, so UV seams and sharp edges
split vertices, and a mesh imported unedited writes back vertex for vertex. Keys are sampled
from the actions' F-curves at the animation's own interval (constraints and drivers are not
baked: bake the action first for that). Bones that inherit rotation and scale fully are
assumed, as .bsm2 local keys need.
"""

import numpy as np

from ...core.bsm2 import MAX_BONES, MAX_VERTICES, VERTEX_DTYPE, SUBSET_DTYPE, Animation, Bsm2File, Hierarchy
from ...core.bsm2 import packing
from ...core.bsm2.skinning import ROOT_TRANSFORM
from ...core.errors import FormatError
from ...core.tangents import vertex_tangents
from . import kept_values, mapping
from .. import compat, pose_channels, schema

# An unedited normal is written back as the file had it. Blender stores custom normals with up to
# about 0.7 degrees of error, so "unedited" means within 1 degree.
UNEDITED_NORMAL_COS = np.cos(np.radians(1.0))
STATIC_ANIMATION = "static"


def find_mesh(context):
    """The mesh object to export: the active object when it is a mesh, else the one mesh the active
    armature deforms, else the one selected mesh, else the one mesh there is."""
    active = context.view_layer.objects.active
    if active is not None and active.type == "MESH":
        return active
    meshes = [obj for obj in context.view_layer.objects if obj.type == "MESH"]
    if active is not None and active.type == "ARMATURE":
        candidates = [obj for obj in meshes if obj.find_armature() == active]
    else:
        candidates = [obj for obj in meshes if obj.select_get()] or meshes
    if len(candidates) != 1:
        listed = f": {', '.join(sorted(obj.name for obj in candidates))}" if candidates else ""
        raise FormatError(f"select the mesh to export ({len(candidates)} candidates{listed})")
    return candidates[0]


def build(context, mesh_object):
    """The .bsm2 data of ``mesh_object``; returns (Bsm2File, warnings)."""
    warnings = []
    armature_object = mesh_object.find_armature()
    for obj in (mesh_object, armature_object):
        if obj is not None:
            schema.check_version(obj)
    bones = _Bones(armature_object, mesh_object)
    if len(bones) > MAX_BONES:
        raise FormatError(f"{len(bones)} bones: a .bsm2 holds at most {MAX_BONES}")
    to_space = np.array(mesh_object.matrix_world, np.float64)
    if armature_object is not None:
        to_space = np.linalg.inv(np.array(armature_object.matrix_world, np.float64)) @ to_space

    bsm = Bsm2File()
    geometry = _Geometry(mesh_object.data, to_space)
    bsm.vertices, triangles, face_materials, sources = geometry.vertices()
    if len(bsm.vertices) > MAX_VERTICES:
        raise FormatError(
            f"{len(bsm.vertices)} vertices once UV seams and sharp edges are split: "
            f"a .bsm2 holds at most {MAX_VERTICES}"
        )
    bsm.vertices["bones"], bsm.vertices["weights"] = _weights(mesh_object, bones, sources, warnings)
    bsm.indices, bsm.subsets, bsm.materials = _subsets(mesh_object, triangles, face_materials)
    bsm.num_bones = len(bones)
    bsm.animations = [bones.animation(context.scene, action, slot) for action, slot in bones.actions()]
    if not bsm.animations:
        bsm.animations = [bones.static_animation(context.scene)]
    bsm.hierarchy = bones.hierarchy()
    bsm.check()
    return bsm, warnings + bsm.warnings


def export_file(context, path, mesh_object=None):
    """Write ``mesh_object`` (by default the one ``find_mesh`` picks) to ``path``;
    returns (Bsm2File, warnings). Raises FormatError or OSError; a failed write leaves no file."""
    mesh_object = mesh_object or find_mesh(context)
    if mesh_object.mode == "EDIT":
        mesh_object.update_from_editmode()
    try:
        bsm, warnings = build(context, mesh_object)
        bsm.write(path)
    except FormatError as error:
        raise error.located(path=f"{path} ({mesh_object.name})") from None
    return bsm, warnings


# -- geometry -----------------------------------------------------------------------------------
def _foreach(collection, field, dtype, width=1):
    values = np.empty(len(collection) * width, dtype)
    collection.foreach_get(field, values)
    return values.reshape(-1, width) if width > 1 else values


class _Geometry:
    """The mesh's vertices, corners and triangles in armature space."""

    def __init__(self, mesh, to_space):
        self.mesh = mesh
        self.moved = not np.array_equal(to_space, np.eye(4))
        self.to_space = to_space
        mesh.calc_loop_triangles()

    def _point_attribute(self, name, kind, width):
        attribute = self.mesh.attributes.get(name)
        if attribute is None or attribute.domain != "POINT" or attribute.data_type != kind:
            return None
        return _foreach(attribute.data, "vector" if width == 3 else "value", np.float32, width).astype(np.float64)

    def _directions(self, vectors):
        """Blender-space directions in armature space (inverse transpose for a moved object), unit length."""
        if self.moved:
            vectors = vectors @ np.linalg.inv(self.to_space[:3, :3])
        length = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(length > 0, length, 1.0)

    def _normals(self, corner_vert, corner_normals):
        """Packed normal per corner: the file's own where Blender's still points the same way."""
        directions = self._directions(corner_normals)
        computed = packing.snorm_encode(mapping.vectors_from_blender(directions))
        stored = self._point_attribute(schema.BSM2_NORMAL, "FLOAT_VECTOR", 3)
        if stored is None or self.moved:
            return packing.pack_1010102(computed, 0)
        stored = stored[corner_vert]
        stored_directions = self._directions(np.maximum(stored, -1.0))
        unedited = np.any(stored != 0, axis=1) & (
            np.einsum("ij,ij->i", stored_directions, directions) >= UNEDITED_NORMAL_COS
        )
        kept = packing.snorm_encode(mapping.vectors_from_blender(stored))
        return packing.pack_1010102(np.where(unedited[:, None], kept, computed), 0)

    def vertices(self):
        """(vertex array, triangles in output indices, material slot per triangle, the Blender vertex of
        each output vertex)."""
        mesh = self.mesh
        positions = _foreach(mesh.vertices, "co", np.float32, 3).astype(np.float64)
        if self.moved:
            positions = positions @ self.to_space[:3, :3].T + self.to_space[:3, 3]
        corner_vert = _foreach(mesh.loops, "vertex_index", np.int32)
        corner_normals = _foreach(mesh.corner_normals, "vector", np.float32, 3).astype(np.float64)
        uv_layer = mesh.uv_layers.active
        if uv_layer is not None:
            uvs = _foreach(uv_layer.data, "uv", np.float32, 2).astype(np.float64)
        else:
            uvs = np.zeros((len(corner_vert), 2))
        # Loose vertices are kept too, as corners of their own.
        loose = np.setdiff1d(np.arange(len(positions)), corner_vert)
        vertex_normals = _foreach(mesh.vertex_normals, "vector", np.float32, 3).astype(np.float64)
        corner_vert = np.concatenate([corner_vert, loose])
        corner_normals = np.concatenate([corner_normals, vertex_normals[loose]])
        uvs = np.concatenate([uvs, np.zeros((len(loose), 2))])

        key = np.zeros(len(corner_vert), [("vertex", "<u4"), ("u", "<u2"), ("v", "<u2"), ("normal", "<u4")])
        key["vertex"] = corner_vert
        key["u"] = packing.uv_encode(uvs[:, 0])
        key["v"] = packing.uv_encode(1.0 - uvs[:, 1])
        key["normal"] = self._normals(corner_vert, corner_normals)
        unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)

        out = np.zeros(len(unique), VERTEX_DTYPE)
        sources = unique["vertex"].astype(np.int64)
        out["position"] = mapping.vectors_from_blender(positions[sources])
        out["normal"] = unique["normal"]
        out["uv"] = np.stack([unique["u"], unique["v"]], axis=1)

        corners = _foreach(mesh.loop_triangles, "loops", np.int32, 3)
        triangles = inverse.reshape(-1)[corners]
        out["tangent"] = self._tangents(sources, out, uvs[first], triangles)
        return out, triangles, _foreach(mesh.loop_triangles, "material_index", np.int32), sources

    def _tangents(self, sources, out, uvs, triangles):
        """The file's own tangents where they are kept, computed ones elsewhere."""
        stored = self._point_attribute(schema.BSM2_TANGENT, "FLOAT_VECTOR", 3)
        signs = self._point_attribute(schema.BSM2_TANGENT_SIGN, "FLOAT", 1)
        have = np.zeros(len(sources), bool)
        xyz = np.zeros((len(sources), 3), np.int16)
        w = np.ones(len(sources), np.int8)
        if stored is not None and signs is not None:
            stored, signs = stored[sources], signs[sources]
            have = np.any(stored != 0, axis=1)
            if self.moved:
                moved = stored @ self.to_space[:3, :3].T
                stored = moved / np.where(have, np.linalg.norm(moved, axis=1), 1.0)[:, None]
            xyz = packing.snorm_encode(mapping.vectors_from_blender(stored))
            w = np.clip(np.round(signs), -2, 1).astype(np.int8)
        if not have.all():
            normals = np.maximum(packing.snorm_decode(packing.unpack_1010102(out["normal"])[0]), -1.0)
            normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
            tangents, computed_w = vertex_tangents(out["position"], normals, uvs, triangles)
            xyz = np.where(have[:, None], xyz, packing.snorm_encode(tangents))
            w = np.where(have, w, computed_w)
        return packing.pack_1010102(xyz, w)


def _weights(mesh_object, bones, sources, warnings):
    """Packed bone indices and weights per output vertex."""
    if not bones.deforming:
        return packing.pack_weights(np.zeros((len(sources), 1), np.int64), np.ones((len(sources), 1)))
    group_bone = np.full(len(mesh_object.vertex_groups), -1, np.int64)
    for group in mesh_object.vertex_groups:
        group_bone[group.index] = bones.index.get(group.name, -1)
    vertices = mesh_object.data.vertices
    # bpy has no bulk read of vertex-group weights: one pass over the vertices is the only way.
    counts = np.array([len(vertex.groups) for vertex in vertices], np.int64)
    flat = np.array([(g.group, g.weight) for vertex in vertices for g in vertex.groups], np.float64).reshape(-1, 2)
    rows = np.repeat(np.arange(len(vertices)), counts)
    columns = np.arange(len(flat)) - np.repeat(np.cumsum(counts) - counts, counts)
    bone = np.full((len(vertices), max(int(counts.max(initial=0)), 1)), -1, np.int64)
    weights = np.zeros(bone.shape)
    bone[rows, columns] = group_bone[flat[:, 0].astype(np.int64)]
    weights[rows, columns] = np.where(bone[rows, columns] >= 0, flat[:, 1], 0.0)
    over = np.count_nonzero((weights > 0).sum(axis=1) > packing.INFLUENCES)
    if over:
        warnings.append(f"{over} vertices have more than {packing.INFLUENCES} bone weights: the smallest were dropped")
    # Packed per Blender vertex, so an error names the vertex a user can find.
    packed_bones, packed_weights = packing.pack_weights(np.maximum(bone, 0), weights)
    return packed_bones[sources], packed_weights[sources]


def _subsets(mesh_object, triangles, face_materials):
    """Indices sorted by material slot, one subset per used slot, material names in first use."""
    order = np.argsort(face_materials, kind="stable")
    indices = triangles[order].astype(np.uint16).ravel()
    slots, firsts, counts = np.unique(face_materials[order], return_index=True, return_counts=True)
    names = []
    subsets = np.zeros(len(slots), SUBSET_DTYPE)
    for row, slot in enumerate(slots):
        material = mesh_object.material_slots[slot].material if slot < len(mesh_object.material_slots) else None
        name = mapping.file_name(material) if material is not None else ""
        if name not in names:
            names.append(name)
        subsets[row] = (3 * firsts[row], 3 * counts[row], names.index(name))
    return indices, subsets, names


# -- bones and animations -----------------------------------------------------------------------
class _Bones:
    """The armature's bones in file order: those the mesh's vertex groups name, in group order
    (an imported file keeps its own order), then the others in armature order. Without an
    armature, one bone that does not move."""

    def __init__(self, armature_object, mesh_object):
        self.object = armature_object
        if armature_object is None:
            self.names, self.rests, self.parents = ["root"], np.eye(4)[None], np.zeros(1, np.int64)
            self.residuals = self.rests
            self.deforming = False
        else:
            armature_bones = armature_object.data.bones
            names = [g.name for g in mesh_object.vertex_groups if g.name in armature_bones]
            names += [bone.name for bone in armature_bones if bone.name not in names]
            self.names = names
            bones = [armature_bones[name] for name in names]
            self.rests = np.array([np.array(bone.matrix_local, np.float64) for bone in bones]).reshape(-1, 4, 4)
            self.residuals = np.array(
                [np.reshape(bone.get(schema.BSM2_BIND_RESIDUAL, np.eye(4).ravel()), (4, 4)) for bone in bones]
            ).reshape(-1, 4, 4)
            self.parents = np.array(
                [names.index(bone.parent.name) if bone.parent else i for i, bone in enumerate(bones)], np.int64
            )
            self.deforming = True
            self._check_inheritance(bones)
        self.index = {name: i for i, name in enumerate(self.names)}

    def __len__(self):
        return len(self.names)

    @property
    def parented(self):
        return bool(np.any(self.parents != np.arange(len(self.parents))))

    @staticmethod
    def _check_inheritance(bones):
        for bone in bones:
            inherits = bone.use_inherit_rotation and bone.inherit_scale == "FULL" and bone.use_local_location
            if bone.parent and not inherits:
                raise FormatError(
                    f"bone {bone.name!r} does not inherit its parent's rotation and scale fully (or uses "
                    "global location): .bsm2 keys are plain parent-relative matrices"
                )

    def actions(self):
        return compat.animations(self.object) if self.object is not None else []

    def hierarchy(self):
        """The hierarchy block when bones are parented (local keys need it), else None."""
        if not self.parented:
            return None
        bind = mapping.FROM_BLENDER @ self.rests @ self.residuals
        names = [mapping.file_name(self.object.data.bones[name]) for name in self.names]
        bones = [self.object.data.bones[name] for name in self.names]
        inverse_bind = kept_values.kept_inverse_binds(bones, Hierarchy.stored_inverse_bind(np.linalg.inv(bind)))
        return Hierarchy(self.parents, inverse_bind, names)

    def _keys(self, basis):
        """(keys, bones, 3, 4) file matrices from (keys, bones, 4, 4) basis matrices."""
        pose = mapping.pose_matrices(basis, self.rests, self.parents)
        if not self.parented:
            skin = mapping.FROM_BLENDER @ pose @ np.linalg.inv(self.rests) @ mapping.TO_BLENDER
            return skin[..., :3, :].astype(np.float32)
        engine = mapping.FROM_BLENDER @ pose @ self.residuals
        roots = self.parents == np.arange(len(self.parents))
        parent = np.where(roots[None, :, None, None], ROOT_TRANSFORM, engine[:, self.parents])
        return np.linalg.solve(parent, engine)[..., :3, :].astype(np.float32)

    def static_animation(self, scene):
        """One key of the current pose, as a file with no animation of its own has."""
        if self.object is None:
            basis = np.eye(4)[None, None]
        else:
            pose_bones = self.object.pose.bones
            basis = np.array([np.array(pose_bones[name].matrix_basis, np.float64) for name in self.names])[None]
        return Animation(STATIC_ANIMATION, 0, mapping.scene_interval_ns(scene), self._keys(basis))

    def animation(self, scene, action, slot):
        curves = {(fc.data_path, fc.array_index): fc for fc in compat.fcurves(action, slot) if not fc.mute}
        interval = int(round(action.get(schema.BSM2_INTERVAL_NS, 0))) or mapping.scene_interval_ns(scene)
        frames = _key_frames(curves.values(), mapping.frame_step(scene, interval), scene)
        # The file's own duration while it still gives the key count (it need not be a multiple of
        # the interval: Rabbit's 10 s at 33333333 ns), else the keys' span.
        duration = int(round(action.get(schema.BSM2_DURATION_NS, -1)))
        if duration < 0 or duration // interval + 1 != len(frames):
            duration = (len(frames) - 1) * interval
        pose_bones = self.object.pose.bones
        basis = np.stack([pose_channels.basis(pose_bones[name], curves, frames) for name in self.names], axis=1)
        return Animation(mapping.file_name(action), duration, interval, kept_values.kept_keys(action, slot, self._keys(basis)))


def _key_frames(curves, step, scene):
    """Frames of the keys: from the first keyframe to the last, ``step`` apart."""
    keyed = [_foreach(fc.keyframe_points, "co", np.float32, 2)[:, 0] for fc in curves if len(fc.keyframe_points)]
    if not keyed:
        return np.array([float(scene.frame_current)])
    first = float(min(k.min() for k in keyed))
    last = float(max(k.max() for k in keyed))
    count = int(np.floor((last - first) / step + 1e-3)) + 1
    return first + np.arange(count) * step
