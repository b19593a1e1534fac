"""A NIF scene graph as Blender objects: nodes as empties, geometry as meshes, each placed by
its local transform under its parent. Knows core objects and bpy, never file bytes."""

import bpy
import numpy as np
from mathutils import Matrix

from ...core.nif import skinning, versions
from ...core.nif.blocks.bs_geometry import BSGeometry
from ...core.nif.blocks.geometry import NiTriBasedGeom, NiTriBasedGeomData
from ...core.nif.blocks.legacy_havok import uses_bhk_bodies
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.tri_shape import BSTriShape
from ..havok import collision_import, constraints, legacy_collision_import
from ..starfield.geometry_import import StarfieldShapes
from ..starfield.skin_import import StarfieldSkinImport
from . import animation_import, extras, material_import, skin_import, triangle_groups
from ..datablocks import Rollback
from ..integers import to_int32
from ..mesh_build import build_mesh
from ..mesh_read import geometry_fingerprint
from .node_transform import local_matrix
from .. import schema


def shape_mesh(nif, block, name):
    """The mesh of a geometry block, or None when it holds no vertices of its own."""
    if isinstance(block, BSTriShape):
        if block.vertex_data is None:
            # Skyrim SE skinned shapes keep their vertices and triangles in the skin partition.
            found = skinning.partition_geometry(nif, block)
            if found is None:
                return None
            return build_mesh(name, found.positions, found.triangles, uvs=found.uvs, normals=found.normals, colors=found.colors)
        if block.positions is None:
            return None
        return build_mesh(name, block.positions, block.triangles, uvs=block.uvs, normals=block.normals, colors=block.colors)
    data = nif.blocks[block.data] if 0 <= block.data < len(nif.blocks) else None
    if not isinstance(data, NiTriBasedGeomData) or data.vertices is None:
        return None
    uvs = data.uv_sets[0] if len(data.uv_sets) else None
    return build_mesh(name, data.vertices, data.triangles, uvs=uvs, normals=data.normals, colors=data.vertex_colors)


class SceneBuilder:
    """Builds the objects of one file into a collection; every datablock made goes to
    ``rollback`` (io.datablocks.Rollback), so a failure removes them all and leaves the scene as
    it was.

    Skinning, materials and collision live in their own modules and are called from here:
    ``skins`` (skin_import.SkinImport) turns bone nodes into armature bones and binds
    skinned shapes; ``materials`` (material_import.MaterialImport) gives each shape its
    material; collision_import.build_collision (legacy_collision_import's for FO3/FNV) places the
    Havok bodies under their owner. Starfield's shapes (BSGeometry, their .mesh files found in the
    Data folders) are built by io/starfield: ``skeleton`` (a skeleton NIF's path) poses their
    bones, ``starfield_morphs`` (a morph.dat's path) gives a shape its shape keys."""

    def __init__(self, nif, collection, scale=1.0, *, skin=True, collision=True, data_folders=(), cache_folder=None,
                 progress=None, rollback=None, skeleton=None, starfield_morphs=None):
        self.nif = nif
        self.collection = collection
        self.scale = scale
        self.import_collision = collision
        self.data_folders = [folder for folder in data_folders if folder]
        self.cache_folder = cache_folder  # where files from archives are extracted (None: a temporary folder)
        self.rollback = rollback or Rollback()
        self.objects = {}
        # progress(fraction of the file's shapes built), for long imports
        self.progress = progress
        self.shapes_total = max(len(nif.blocks_of(BSTriShape, NiTriBasedGeom, BSGeometry)), 1)
        self.shapes_done = 0
        self._warnings = []
        self.hidden = []  # objects shown hidden once the collection is in the scene (hide)
        self.starfield = StarfieldShapes(self, skeleton, starfield_morphs) if versions.starfield(nif.header.bs_version) else None
        # Starfield looks in the NIF's own Data folder first, as for its meshes.
        self.materials = material_import.MaterialImport(self, self.starfield.source.files if self.starfield else None)
        if not skin:
            self.skins = None
        elif self.starfield is not None:
            self.skins = StarfieldSkinImport(self, self.starfield.skeleton)
        else:
            self.skins = skin_import.SkinImport(self)

    def build(self):
        if self.skins is not None:
            self.skins.prepare()
        for root in self.nif.roots:
            self._visit(root, None, ())
        if self.skins is not None:
            self.skins.pose()
        if self.import_collision:
            for index, obj in list(self.objects.items()):
                block = self.nif.blocks[index]
                if getattr(block, "collision_object", -1) >= 0:
                    legacy = uses_bhk_bodies(self.nif.header.bs_version)  # bhkCollisionObject bodies, not packfiles
                    (legacy_collision_import if legacy else collision_import).build_collision(self, index, block, obj)
            constraints.build_constraints(self)
        extras.build_extras(self)
        animation_import.import_animations(self, bpy.context.scene)
        if self.starfield is not None and self.starfield.unused_morphs() is not None:
            morphs = self.starfield.unused_morphs()
            self.warn(f"morphs {morphs.path}: no shape has their {len(morphs.vertices)} vertices: not imported")
        return self.objects

    keeps_source = True  # the importer keeps the file's bytes as the exporter's template

    def warn(self, message):
        if message not in self._warnings:
            self._warnings.append(message)

    def hide(self, obj):
        """Show ``obj`` hidden (in the viewport once the collection is in the scene, and in renders)."""
        obj.hide_render = True
        self.hidden.append(obj)

    def link(self, datablock):
        """Record a datablock made for this file (removed again if the import fails); objects
        are also linked into the file's collection."""
        self.rollback.add(datablock)
        if isinstance(datablock, bpy.types.Object):
            self.collection.objects.link(datablock)
        return datablock

    def _new_object(self, index, block, data):
        name = block.name or f"{block.type_name}:{index}"
        obj = self.link(bpy.data.objects.new(name, data))
        obj[schema.NIF_BLOCK] = index
        obj[schema.NIF_TYPE] = block.type_name
        obj[schema.NIF_FLAGS] = to_int32(block.flags)
        obj.rotation_mode = "QUATERNION"  # Euler angles lose float32 precision near 90-degree pitches
        if data is None:
            obj.empty_display_size = 8.0
        return obj

    def _place(self, obj, block, parent):
        """Parent ``obj`` and give it the block's local transform. ``parent`` is an object or
        (armature object, bone name) for children of a bone node."""
        matrix = local_matrix(block)
        if parent is None:
            matrix = Matrix.Scale(self.scale, 4) @ matrix
            obj.matrix_basis = matrix
        elif isinstance(parent, tuple):  # (armature, bone name): the node was a skeleton bone
            self.skins.place_under_bone(obj, parent, matrix)
        else:
            obj.parent = parent
            obj.matrix_basis = matrix

    def _visit(self, index, parent, path):
        """``path``: the node indices from the root down to ``parent``'s block."""
        if not 0 <= index < len(self.nif.blocks) or index in path or index in self.objects:
            return  # null and dangling refs, cycles in a damaged graph, a block with two parents
        block = self.nif.blocks[index]
        bone = self.skins.bone_of(index) if self.skins is not None else None
        if bone is not None:
            # A skeleton bone: it is a bone of an armature, not an object; its children follow it.
            obj = bone
        elif isinstance(block, NiNode):
            # A skeleton's root node is the armature object (its bones are the node's children).
            armature = self.skins.armature_data(index) if self.skins is not None else None
            obj = self._new_object(index, block, armature)
            self._place(obj, block, parent)
        elif isinstance(block, (BSTriShape, NiTriBasedGeom, BSGeometry)):
            if isinstance(block, BSGeometry):
                mesh = self.starfield.shape_mesh(index, block)
            else:
                mesh = shape_mesh(self.nif, block, block.name or f"{block.type_name}:{index}")
            if mesh is not None and not isinstance(block, BSGeometry):
                self.rollback.add(mesh)
                mesh[schema.NIF_GEOMETRY] = geometry_fingerprint(mesh)
                triangle_groups.show_groups(self.nif, block, mesh)
                self.materials.assign(index, block, mesh)
            obj = self._new_object(index, block, mesh)
            self._place(obj, block, parent)
            if isinstance(block, BSGeometry):
                self.starfield.finish_shape(index, block, obj)
            elif mesh is not None and self.skins is not None:
                self.skins.bind(index, block, obj)
            self.shapes_done += 1
            if self.progress is not None:
                self.progress(self.shapes_done / self.shapes_total)
        else:
            return
        if bone is None:
            # What Blender made of the block's transform: the exporter keeps the stored one while
            # this still holds (Blender cannot hold every stored matrix exactly, e.g. sheared ones).
            obj[schema.NIF_BASIS] = [value for row in obj.matrix_basis for value in row]
            obj[schema.NIF_PARENT] = path[-1] if path else -1
        self.objects[index] = obj
        if isinstance(block, NiNode):
            for child in np.asarray(block.children).tolist():
                self._visit(child, obj, (*path, index))

    def warnings(self):
        return list(self._warnings)
