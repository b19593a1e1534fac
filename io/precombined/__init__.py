"""Precombined cells: records as shared meshes, instances as linked duplicates or geometry nodes."""
