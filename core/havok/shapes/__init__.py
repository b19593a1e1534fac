"""Typed hknp shapes; importing them registers them."""

from . import compound, compressed_mesh, convex, static_compound  # noqa: F401
