"""Fallout 4 material files (.bgsm lighting materials, .bgem effect materials)."""
