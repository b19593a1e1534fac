"""Morph files (.tri) as shape keys: ``importer`` puts a .tri's morphs on the mesh it belongs to,
``exporter`` writes shape keys back to the .tri kind they came from. What a mesh object keeps of
them is spelled in io/schema.py (``TRI_SOURCES``, ``TRI_MORPHS``, ``TRI_NEW_MORPHS``)."""
