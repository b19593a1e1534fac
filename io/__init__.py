"""Blender data from core objects and back (Blender side)."""
