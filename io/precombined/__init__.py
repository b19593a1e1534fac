"""Precombined cells: records as shared meshes, instances as linked duplicates or geometry nodes."""

# How an import builds a cell's placed copies: {name: (label, description)}. cli.py spells the
# names lower-case with "-" for "_".
INSTANCING = {
    "OBJECTS": ("Objects", "One object per placed copy, all sharing the record's mesh (linked duplicates)"),
    "GEOMETRY_NODES": ("Geometry Nodes", "Per record one point cloud whose modifier instances the mesh: light for "
                       "very large cells"),
}
