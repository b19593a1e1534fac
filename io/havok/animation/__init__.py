"""Havok skeletons and animations (Fallout 4, Skyrim SE .hkx) as armatures and actions, and
back: armature.py (skeletons), action_import.py / action_export.py (animations), codec.py (the
core codec's objects as what those need), importer.py (files into the scene)."""
