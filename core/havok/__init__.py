"""Havok packfiles: the container (hk_2014 and hk_2010), Fallout 4 physics systems and their
shapes, decoded and built; animations and skeletons in ``animation``."""

from . import animation, classes, shapes  # noqa: F401  (importing them registers the typed classes)
from .bodies import add_body, replace_body
from .classes.physics_system import PhysicsSystemData, RagdollData
from .container import Packfile
from .objects import HavokObject, RawObject
from .shapes.base import GAME_UNITS
from .shapes.compound import DynamicCompoundShape
from .shapes.compressed_mesh import CompressedMeshShape
from .shapes.compressed_mesh_encode import build_compressed_mesh
from .shapes.convex import CapsuleShape, ConvexPolytopeShape, SphereShape
from .shapes.static_compound import StaticCompoundShape

__all__ = [
    "GAME_UNITS",
    "CapsuleShape",
    "CompressedMeshShape",
    "ConvexPolytopeShape",
    "DynamicCompoundShape",
    "HavokObject",
    "Packfile",
    "PhysicsSystemData",
    "RagdollData",
    "RawObject",
    "SphereShape",
    "StaticCompoundShape",
    "add_body",
    "replace_body",
    "build_compressed_mesh",
]
