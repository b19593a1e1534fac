"""Typed Havok classes other than shapes; importing them registers them."""

from . import physics_system, properties  # noqa: F401
