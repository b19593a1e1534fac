"""Typed NIF blocks, one module per domain."""
