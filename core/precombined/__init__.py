"""Fallout 4 precombined geometry outside the NIF: .csg/.psg files and their names."""
