"""A NIF scene graph as Blender objects: nodes as empties, geometry as meshes, each placed by
its local transform under its parent. Knows core objects and bpy, never file bytes."""

import bpy
import numpy as np
from mathutils import Matrix

from ..core.nif.blocks.geometry import NiTriBasedGeom, NiTriBasedGeomData
from ..core.nif.blocks.nodes import NiNode
from ..core.nif.blocks.tri_shape import BSTriShape
from .mesh_build import build_mesh


def local_matrix(block):
    """world = T + R * s * v with R's rows as stored (FORMAT-NOTES section 2)."""
    r = block.rotation
    s = block.scale
    return Matrix(
        (
            (r[0] * s, r[1] * s, r[2] * s, block.translation[0]),
            (r[3] * s, r[4] * s, r[5] * s, block.translation[1]),
            (r[6] * s, r[7] * s, r[8] * s, block.translation[2]),
            (0.0, 0.0, 0.0, 1.0),
        )
    )


def shape_mesh(nif, block, name):
    """The mesh of a geometry block, or None when it holds no vertices of its own."""
    if isinstance(block, BSTriShape):
        if block.vertex_data is None or block.positions is None:
            return None
        return build_mesh(name, block.positions, block.triangles, uvs=block.uvs, normals=block.normals, colors=block.colors)
    data = nif.blocks[block.data] if 0 <= block.data < len(nif.blocks) else None
    if not isinstance(data, NiTriBasedGeomData) or data.vertices is None:
        return None
    uvs = data.uv_sets[0] if len(data.uv_sets) else None
    return build_mesh(name, data.vertices, data.triangles, uvs=uvs, normals=data.normals, colors=data.vertex_colors)


class SceneBuilder:
    """Builds the objects of one file into a collection; ``created`` lists every datablock made,
    so a failure can remove them all and leave the scene as it was."""

    def __init__(self, nif, collection, scale=1.0):
        self.nif = nif
        self.collection = collection
        self.scale = scale
        self.created = []
        self.objects = {}

    def build(self):
        for root in self.nif.roots:
            self._visit(root, None, set())
        return self.objects

    def _new_object(self, index, block, data):
        name = block.name or f"{block.type_name}:{index}"
        obj = bpy.data.objects.new(name, data)
        self.created.append(obj)
        self.collection.objects.link(obj)
        obj["nif_block"] = index
        obj["nif_type"] = block.type_name
        obj["nif_flags"] = block.flags
        if data is None:
            obj.empty_display_size = 8.0
        return obj

    def _visit(self, index, parent, path):
        if not 0 <= index < len(self.nif.blocks) or index in path:
            return  # null refs, dangling refs and cycles in a damaged graph
        block = self.nif.blocks[index]
        if isinstance(block, NiNode):
            obj = self._new_object(index, block, None)
        elif isinstance(block, (BSTriShape, NiTriBasedGeom)):
            mesh = shape_mesh(self.nif, block, block.name or f"{block.type_name}:{index}")
            if mesh is not None:
                self.created.append(mesh)
            obj = self._new_object(index, block, mesh)
        else:
            return
        self.objects[index] = obj
        matrix = local_matrix(block)
        if parent is None:
            matrix = Matrix.Scale(self.scale, 4) @ matrix
        obj.parent = parent
        obj.matrix_basis = matrix
        if isinstance(block, NiNode):
            for child in np.asarray(block.children).tolist():
                self._visit(child, obj, path | {index})

    def warnings(self):
        return []

    def remove_created(self):
        for datablock in reversed(self.created):
            if isinstance(datablock, bpy.types.Object):
                bpy.data.objects.remove(datablock)
            elif isinstance(datablock, bpy.types.Mesh):
                bpy.data.meshes.remove(datablock)
            elif isinstance(datablock, bpy.types.NodeTree):
                bpy.data.node_groups.remove(datablock)
        self.created.clear()
