"""Starfield shapes (BSGeometry) as Blender objects: every used LOD slot's .mesh, inline or found
beside the NIF or in the Data folders (loose, then archived), and every triangle list inside each .mesh, laid out
as io/starfield/lod_objects describes; skinning (io/starfield/skin_import), the .mat material
(io/starfield/material_import) and morph.dat morphs as shape keys. A LOD whose mesh cannot be
read is reported and left out (kept as stored on export); the NIF's other shapes import."""

import bpy
import numpy as np

from ...core.errors import FormatError
from ...core.nif.blocks.bs_geometry import BSGeometry
from ...core.starfield.lods import MeshSource, lod_mesh
from ...core.starfield.morphs import MorphFile
from ...core.starfield.skeleton import Skeleton, find_skeleton
from ..mesh_build import build_mesh, drop_degenerate, vertex_attribute
from ..mesh_read import geometry_fingerprint
from .lod_objects import lod_fingerprint, slot_fingerprint
from .material_import import StarfieldMaterials
from .. import schema


class StarfieldShapes:
    """Builds the objects of a Starfield NIF's BSGeometry blocks for a SceneBuilder.
    ``skeleton``: the path of the skeleton NIF posing the skins' bones (None: the human skeleton
    when the Data folders hold it and the NIF is skinned); ``morphs``: the path of a morph.dat
    whose morphs become shape keys of the first shape with as many vertices. Either file given
    and unreadable fails the import, naming it."""

    def __init__(self, builder, skeleton=None, morphs=None):
        self.builder = builder
        self.source = MeshSource(builder.nif.path, builder.data_folders, builder.cache_folder)
        self.materials = StarfieldMaterials(builder)
        self.morphs = MorphFile.read(morphs) if morphs else None
        self.pending = {}  # shape index -> {slot: MeshData} read for its objects
        self.skeleton = None
        if skeleton:
            self.skeleton = Skeleton.read(skeleton)
        elif any(shape.skinned for _, shape in builder.nif.blocks_of(BSGeometry)):
            try:
                self.skeleton = find_skeleton(self.source.files)
            except FormatError as error:
                builder.warn(f"{error}: the bones are shown in their bind pose")

    def _read(self, index, number):
        try:
            return lod_mesh(self.builder.nif, index, number, self.source)
        except FormatError as error:
            self.builder.warn(f"{error}: that LOD is not imported (the export keeps it as stored)")
            return None

    def shape_mesh(self, index, shape):
        """The mesh of the shape's LOD 0 (None when it has none or it cannot be read); every
        slot's .mesh is read here, reported once when it fails."""
        found = {number: self._read(index, number) for number, _ in shape.lods}
        self.pending[index] = found
        mesh_data = found.get(0)
        if mesh_data is None:
            return None
        mesh = self._mesh(shape.name or f"BSGeometry:{index}", mesh_data, mesh_data.triangles)
        self.materials.assign(shape, mesh)
        return mesh

    def _mesh(self, name, mesh_data, triangles, used=None):
        """A Blender mesh of ``triangles`` of ``mesh_data`` (``used``: the vertices it keeps, in
        order; the triangles already renumbered to them), fingerprinted for the export."""
        def kept(values):
            return None if len(values) == 0 else values if used is None else values[used]

        mesh = self.builder.rollback.add(build_mesh(
            name, kept(mesh_data.vertices), triangles, uvs=kept(mesh_data.uv), normals=kept(mesh_data.vertex_normals),
            colors=kept(mesh_data.rgba)))
        if len(mesh_data.uvs2):
            corners = drop_degenerate(triangles).ravel()
            uv = kept(mesh_data.uvs2).astype(np.float32)[corners]
            uv[:, 1] = 1.0 - uv[:, 1]
            mesh.uv_layers.new(name="UVMap2").data.foreach_set("uv", uv.ravel())
            mesh.uv_layers.active_index = 0
        mesh[schema.NIF_GEOMETRY] = geometry_fingerprint(mesh)
        vertex_attribute(mesh, schema.SF_VERTEX, np.arange(len(mesh_data.vertices)) if used is None else used)
        return mesh

    def finish_shape(self, index, shape, obj):
        """After the shape's object is made and placed: its LODs under it, skinning, shape keys
        and what the export needs to tell an untouched slot."""
        found = self.pending.pop(index, {})
        kept = sorted(number for number, mesh_data in found.items() if mesh_data is None)
        if kept:
            obj[schema.SF_LODS_KEPT] = kept
        if obj.type != "MESH":
            return
        for number, mesh_data in sorted(found.items()):
            if mesh_data is None:
                continue
            slot = obj if number == 0 else self._lod_object(f"{obj.name} LOD{number}", obj, mesh_data, mesh_data.triangles)
            if number:
                slot[schema.SF_LOD_SLOT] = number
                _share_material(obj, slot)
            self._bind(index, slot, mesh_data, None)
            for lod_number, triangles in enumerate(mesh_data.lods, 1):
                used, local = np.unique(np.asarray(triangles, np.int64), return_inverse=True)
                lod = self._lod_object(f"{slot.name} mesh LOD{lod_number}", slot, mesh_data, local.reshape(-1, 3), used)
                lod[schema.SF_MESH_LOD] = lod_number
                _share_material(slot, lod)
                self._bind(index, lod, mesh_data, used)
                lod[schema.SF_LOD_SOURCE] = lod_fingerprint(lod)
            slot[schema.SF_MESH_FILE] = "" if mesh_data.path is None else str(mesh_data.path)
            if slot[schema.SF_MESH_FILE] in self.source.found_beside:
                slot[schema.SF_MESH_BESIDE] = True
            slot[schema.SF_SOURCE] = slot_fingerprint(slot)
        if self.morphs is not None and found.get(0) is not None:
            self._shape_keys(obj, found[0])

    def _lod_object(self, name, parent, mesh_data, triangles, used=None):
        obj = self.builder.link(bpy.data.objects.new(name, self._mesh(name, mesh_data, triangles, used)))
        obj.parent = parent
        self.builder.hide(obj)
        return obj

    def _bind(self, index, obj, mesh_data, used):
        if self.builder.skins is None or not mesh_data.weights_per_vertex:
            return
        bones, weights = mesh_data.bone_weights
        if used is not None:
            bones, weights = bones[used], weights[used]
        self.builder.skins.bind_weights(index, obj, bones, weights)

    def _shape_keys(self, obj, mesh_data):
        """The morphs as shape keys of ``obj`` when they move as many vertices as it has (the
        first such shape takes them)."""
        morphs, self.morphs = self.morphs, None
        if len(morphs.vertices) != len(mesh_data.positions):
            self.morphs = morphs  # for a later shape
            return
        basis = mesh_data.vertices.astype(np.float32)
        obj.shape_key_add(name="Basis", from_mix=False)
        for name, deltas in zip(morphs.names, morphs.deltas):
            key = obj.shape_key_add(name=name, from_mix=False)
            key.data.foreach_set("co", (basis + deltas).ravel())

    def unused_morphs(self):
        """The morph file when no shape took its morphs, else None."""
        return self.morphs


def _share_material(shape, lod):
    if len(shape.data.materials):
        lod.data.materials.append(shape.data.materials[0])
