"""Precombined cells built without the Creation Kit: a cell's references in, the game's files out."""
