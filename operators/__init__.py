"""Operators and file handlers (Blender side)."""
