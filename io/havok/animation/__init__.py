"""Havok skeletons and animations (Fallout 4, Skyrim SE .hkx) as armatures and actions, and
back, on the codec of core/havok/animation: armature.py (skeletons), action_import.py /
action_export.py (animations), importer.py (files into the scene)."""
