"""Blender side of plugins: precombined copies named after the references that placed them."""
