"""Typed hknp shapes; importing them registers them."""

from . import compound, compressed_mesh, convex  # noqa: F401
