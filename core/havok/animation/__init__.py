"""Havok animation packfiles: skeletons, animations, bindings, annotations and root motion
(hk_2010 Skyrim SE and hk_2014 Fallout 4, 64-bit). The API is described in model.py (what a
file means) and hkx.py (reading and writing)."""

from . import classes, interleaved, skeleton, spline  # noqa: F401  (registers the classes)
from .hkx import GAMES, HkxFile, build_hkx, check_skeleton, hkx_from_bytes, read_hkx, track_bone_names, write_hkx
from .spline_encode import Tolerances
from .model import Animation, Annotation, AnnotationTrack, RootMotion, Skeleton

__all__ = [
    "GAMES",
    "Animation",
    "Annotation",
    "AnnotationTrack",
    "HkxFile",
    "RootMotion",
    "Skeleton",
    "Tolerances",
    "build_hkx",
    "check_skeleton",
    "hkx_from_bytes",
    "read_hkx",
    "track_bone_names",
    "write_hkx",
]
