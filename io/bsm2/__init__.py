"""Banuba .bsm2 meshes, armatures and actions."""
