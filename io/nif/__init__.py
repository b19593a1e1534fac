"""NIF scenes: nodes, shapes, skinning, materials, and the file kept for export."""
