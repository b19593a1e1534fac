"""Starfield's files beside its NIFs: geometry (.mesh), its meshlets, and chargen morphs (morph.dat)."""
