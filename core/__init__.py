"""The codec: pure Python + numpy. Never imports bpy or mathutils."""
