"""What the Blender tests do to a scene as a user does it: import a NIF through the operator, export
a collection through File > Export; and where collision geometry sits in the world.
Call from tests that take the ``addon`` fixture (bpy is imported inside)."""

import numpy as np
from conftest import DATA_KINDS
from support import corpus_nifs

from precombined_nif.core.nif import NifFile


def scene_files(left_out="PackedCombined"):
    """Every corpus NIF the NIF importer and exporter take: all the codec reads, of every game, but
    those holding a block whose type name holds ``left_out`` (by default precombined cells: their
    own importer and exporter)."""
    return [path for path, nif in corpus_nifs() if not any(left_out in block.type_name for block in nif.blocks)]


def imported(path, **options):
    """Import ``path`` through the NIF importer; returns the collection it made."""
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path), **options) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def export_file(collection, path, **options):
    """Export the collection's objects (as File > Export does for the active collection); returns
    the path written."""
    import bpy

    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(path), **options) == {"FINISHED"}
    return path


def export(collection, path, **options):
    """``export_file``, the written file read back."""
    return NifFile.read(export_file(collection, path, **options))


def export_bytes(collection, path, **options):
    """``export_file``, the written file's bytes."""
    return export_file(collection, path, **options).read_bytes()


def export_cell(collection, path, **options):
    """Export the collection's objects as a precombined cell (File > Export, selected); returns
    the operator's result."""
    import bpy

    for obj in bpy.context.scene.objects:
        obj.select_set(obj.name in collection.objects)
    return bpy.ops.export_scene.precombined_cell(filepath=str(path), **options)


def export_objects(objects, path, **options):
    """Export ``objects`` alone (File > Export, selection only); the written file read back."""
    import bpy

    bpy.ops.object.select_all(action="DESELECT")
    for obj in objects:
        obj.select_set(True)
    assert bpy.ops.export_scene.precombined_nif(filepath=str(path), use_selection=True, **options) == {"FINISHED"}
    return NifFile.read(path)


def cube(name="Box", size=2.0):
    """A new cube object named ``name``."""
    import bpy

    bpy.ops.mesh.primitive_cube_add(size=size)
    obj = bpy.context.active_object
    obj.name = name
    return obj


def skinned_column(flat=False):
    """A subdivided box (``flat``: a plane) standing on the origin, 1 wide and 2 high, an
    armature of two stacked bones, and weights blending from the lower bone to the upper one
    along the height."""
    import bpy

    bpy.ops.object.armature_add(location=(0.0, 0.0, 0.0))
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    lower = armature.data.edit_bones[0]
    lower.name, lower.head, lower.tail = "Lower", (0, 0, 0), (0, 0, 1)
    upper = armature.data.edit_bones.new("Upper")
    upper.head, upper.tail, upper.parent = (0, 0, 1), (0, 0, 2), lower
    bpy.ops.object.mode_set(mode="OBJECT")
    if flat:  # upright in the XZ plane
        bpy.ops.mesh.primitive_plane_add(size=1.0, location=(0.0, 0.0, 1.0), rotation=(np.pi / 2, 0.0, 0.0))
    else:
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, 1.0))
    column = bpy.context.active_object
    column.scale = (1.0, 1.0, 2.0) if not flat else (1.0, 2.0, 1.0)  # the plane's local y is up
    bpy.ops.object.transform_apply(rotation=True, scale=True)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=3)
    bpy.ops.object.mode_set(mode="OBJECT")
    groups = [column.vertex_groups.new(name=name) for name in ("Lower", "Upper")]
    for vertex in column.data.vertices:
        height = min(max((column.matrix_world @ vertex.co).z / 2.0, 0.0), 1.0)
        groups[0].add([vertex.index], 1.0 - height, "REPLACE")
        groups[1].add([vertex.index], height, "REPLACE")
    column.parent = armature
    column.modifiers.new("Armature", "ARMATURE").object = armature
    return armature, column


def mesh_arrays(obj):
    """(positions, triangles, per-corner uvs, corner normals) of a triangulated imported mesh."""
    mesh = obj.data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    uv = None
    if mesh.uv_layers:
        uv = np.empty(2 * len(mesh.loops), np.float32)
        mesh.uv_layers[0].data.foreach_get("uv", uv)
        uv = uv.reshape(-1, 2)
    normals = np.array([tuple(n.vector) for n in mesh.corner_normals])
    return co.reshape(-1, 3), corners.reshape(-1, 3), uv, normals


def blender_weights(obj):
    """Dense (vertices, bone nodes) weights of an imported mesh, and the bone nodes."""
    bones = obj.modifiers["Armature"].object.data.bones
    nodes = [bones[group.name]["nif_block"] for group in obj.vertex_groups]
    out = np.zeros((len(obj.data.vertices), len(nodes)))
    for vertex in obj.data.vertices:
        for element in vertex.groups:
            out[vertex.index, element.group] = element.weight
    return out, nodes


def world_points(obj):
    """World positions of a collision object's geometry and its children's: mesh vertices, a
    sphere as the corners of its bounding box."""
    matrix = np.array(obj.matrix_world)
    if obj.type == "MESH":
        co = np.empty(3 * len(obj.data.vertices), np.float32)
        obj.data.vertices.foreach_get("co", co)
        local = co.reshape(-1, 3).astype(np.float64)
    elif obj.get("havok_shape") == "sphere":  # its bounds: the centre +- the radius on the world axes
        radius = obj.empty_display_size * np.linalg.norm(matrix[:3, :3], axis=0).max()
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float64) * radius
        local, matrix = corners, np.array([[1, 0, 0, matrix[0, 3]], [0, 1, 0, matrix[1, 3]], [0, 0, 1, matrix[2, 3]], [0, 0, 0, 1]])
    else:
        local = np.zeros((0, 3))
    points = [local @ matrix[:3, :3].T + matrix[:3, 3]]
    points += [world_points(child) for child in obj.children if "havok_shape" in child]
    return np.concatenate(points)


def bounds(points):
    return points.min(axis=0), points.max(axis=0)


def snapshot():
    """The datablocks Blender holds, by kind: what a failed import must leave as it was."""
    import bpy

    return {kind: {d.as_pointer() for d in getattr(bpy.data, kind)} for kind in DATA_KINDS}


class Layout:
    """Stands in for a panel's layout: records what is drawn, checks each property path."""

    def __init__(self, drawn):
        self.drawn = drawn

    def label(self, text="", icon="NONE"):
        self.drawn.append(("label", text))

    def prop(self, data, path, text=""):
        data.path_resolve(path)  # raises when the panel draws a property that is not there
        self.drawn.append(("prop", text))

    def operator(self, idname, text=""):
        self.drawn.append(("operator", idname))

    def operator_menu_enum(self, idname, prop, text=""):
        self.drawn.append(("menu", idname))

    def box(self):
        return self


def panel_drawn(panel_class, obj):
    """What ``panel_class`` draws for ``obj``: the Layout stand-in's records."""
    drawn = []
    panel_class.draw(type("Panel", (), {"layout": Layout(drawn)})(), type("Context", (), {"object": obj})())
    return drawn
