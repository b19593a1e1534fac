"""Morph files (.tri) as shape keys: ``importer`` puts a .tri's morphs on the mesh it belongs to,
``exporter`` writes shape keys back to the .tri kind they came from.

What is kept on a mesh object that took morphs from a .tri (custom properties; these constants
are their only spelling):
"""

SOURCES = "tri_sources"  # {role: {"path", "data": the file zlib-compressed, "shape": BodySlide shape name,
#                          "vertices": the mesh's vertex count, "geometry": its geometry fingerprint when read}}
MORPHS = "tri_morphs"  # {shape key name: {"role", "kind": difference / modifier / bodyslide, "name": the
#                         morph's name in its file, "index": its place there, "digest": the key's offsets as read}}
NEW_MORPHS = "tri_new_morphs"  # str: the role shape keys no .tri gave are written to ("AUTO" or unset: see new_role)
