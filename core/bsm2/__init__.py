"""Banuba .bsm2 skinned meshes: the file, its packed vertex numbers and its skinning."""

from .file import MAX_BONES, MAX_VERTICES, VERTEX_DTYPE, SUBSET_DTYPE, Animation, Bsm2File, Hierarchy

__all__ = ["MAX_BONES", "MAX_VERTICES", "VERTEX_DTYPE", "SUBSET_DTYPE", "Animation", "Bsm2File", "Hierarchy"]
