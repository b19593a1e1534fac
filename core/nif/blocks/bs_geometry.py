"""Starfield's shape block, BSGeometry: bounds, skin, shader and alpha references, then four LOD
slots. A slot holds the LOD's index count, vertex count and flags, then the name of its .mesh
(``<20 hex>\\<20 hex>``, under ``Data\\geometries``, no suffix) or, when the block's flags have
0x200, the .mesh bytes themselves (core.starfield.mesh describes both)."""

import numpy as np

from ...starfield.mesh import MeshData, mesh_name
from ..block import block_class
from .objects import NiAVObject

INTERNAL_GEOMETRY = 0x200  # NiAVObject flag: the slots hold their meshes' data
FLT_MAX = 3.4028234663852886e38
MESH_FLAGS = 64  # every slot of the corpus files


class MeshSlot:
    """One LOD: ``indices_size`` (3 x triangles), ``num_vertices``, ``flags`` and either ``name``
    (external) or ``data`` (a MeshData, internal). ``marker`` is the byte saying the slot is used."""

    def __init__(self, name="", data=None, indices_size=0, num_vertices=0, flags=MESH_FLAGS):
        self.marker = 1
        self.indices_size = indices_size
        self.num_vertices = num_vertices
        self.flags = flags
        self.name = name
        self.data = data

    @property
    def triangle_count(self):
        return self.indices_size // 3

    def sync(self, s, internal):
        self.indices_size = s.u32(self.indices_size)
        self.num_vertices = s.u32(self.num_vertices)
        self.flags = s.u32(self.flags)
        if not s.reading and (self.data is None) == internal:
            raise s.error("a LOD slot's mesh must be inline exactly when the block's flags have 0x200 (internal geometry)")
        if internal:
            if s.reading:
                self.data = MeshData()
            self.data.sync(s)
        else:
            self.name = s.sized_string(self.name)

    def attach(self, mesh_bytes, inline=False):
        """Make this slot the .mesh ``mesh_bytes`` (a MeshData's ``to_bytes()``): its counts and its
        name, the SHA1 one (the file to write is ``core.starfield.mesh.mesh_path(name)``), or with
        ``inline`` the mesh itself (its block's flags then need INTERNAL_GEOMETRY). Returns the name."""
        mesh = MeshData.from_bytes(mesh_bytes)
        self.indices_size, self.num_vertices = 3 * len(mesh.triangles), len(mesh.positions)
        self.name, self.data = (None, mesh) if inline else (mesh_name(mesh_bytes), None)
        return mesh_name(mesh_bytes)


@block_class("BSGeometry")
class BSGeometry(NiAVObject):
    """``meshes``: the four LOD slots, each a MeshSlot or None."""

    flags = 0xE
    bound_center = (0.0, 0.0, 0.0)
    bound_radius = 0.0
    bound_box = (FLT_MAX,) * 6  # centre and half extents
    skin_instance = -1
    shader_property = -1
    alpha_property = -1
    meshes = (None, None, None, None)

    @property
    def internal(self):
        return bool(self.flags & INTERNAL_GEOMETRY)

    @property
    def skinned(self):
        return self.skin_instance != -1

    @property
    def lods(self):
        """(slot number, MeshSlot) of the used slots."""
        return [(number, slot) for number, slot in enumerate(self.meshes) if slot is not None]

    def set_bounds(self, vertices):
        """Bounds for new geometry (``vertices``: LOD 0's, in the shape's space). A skinned
        shape's stay unset, as the game's skinned files have them (sphere zero, box FLT_MAX: its
        BSSkin::BoneData spheres bound it, as NifSkope's fo76utils fork also writes); others get
        the box of the vertices (centre, half extents) and the sphere about its centre."""
        if self.skinned or len(vertices) == 0:
            self.bound_center, self.bound_radius, self.bound_box = (0.0, 0.0, 0.0), 0.0, (FLT_MAX,) * 6
            return
        vertices = np.asarray(vertices, np.float64)
        low, high = vertices.min(axis=0), vertices.max(axis=0)
        center = (low + high) / 2
        self.bound_center = tuple(center.tolist())
        self.bound_radius = float(np.linalg.norm(vertices - center, axis=1).max())
        self.bound_box = (*center.tolist(), *((high - low) / 2).tolist())

    def sync(self, s):
        super().sync(s)
        self.bound_center = s.vec3(self.bound_center)
        self.bound_radius = s.f32(self.bound_radius)
        self.bound_box = s.floats(self.bound_box, 6)
        self.skin_instance = s.ref(self.skin_instance)
        self.shader_property = s.ref(self.shader_property)
        self.alpha_property = s.ref(self.alpha_property)
        if not s.reading and len(self.meshes) != 4:
            raise s.error(f"{len(self.meshes)} LOD slots where 4 are stored")
        self.meshes = s.repeat(self.meshes, 4, lambda slot: self._sync_slot(s, slot))

    def _sync_slot(self, s, slot):
        marker = s.u8(0 if slot is None else slot.marker)
        if not marker:
            return None
        if s.reading:
            slot = MeshSlot()
            slot.marker = marker
        slot.sync(s, self.internal)
        return slot
