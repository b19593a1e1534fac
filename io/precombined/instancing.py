"""Geometry-nodes instancing for very large cells: per record one point per placed copy
(position = translation, ``rotation`` quaternion and ``scale`` attributes) and a modifier that
instances the record's mesh on them, instead of thousands of objects."""

import bpy
import numpy as np
from mathutils import Matrix

NODE_GROUP = "Precombined Instances"
SOURCE_INPUT = "Source"


def instance_node_group():
    """The shared node group: Instance on Points with the source object's geometry."""
    tree = bpy.data.node_groups.get(NODE_GROUP)
    if tree is not None and tree.bl_idname == "GeometryNodeTree":
        return tree
    tree = bpy.data.node_groups.new(NODE_GROUP, "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket(SOURCE_INPUT, in_out="INPUT", socket_type="NodeSocketObject")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = tree.nodes, tree.links
    group_in, group_out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    on_points = nodes.new("GeometryNodeInstanceOnPoints")
    source = nodes.new("GeometryNodeObjectInfo")
    source.transform_space = "ORIGINAL"
    rotation = nodes.new("GeometryNodeInputNamedAttribute")
    rotation.data_type = "QUATERNION"
    rotation.inputs["Name"].default_value = "rotation"
    scale = nodes.new("GeometryNodeInputNamedAttribute")
    scale.data_type = "FLOAT"
    scale.inputs["Name"].default_value = "scale"
    links.new(group_in.outputs[0], on_points.inputs["Points"])
    links.new(group_in.outputs[1], source.inputs["Object"])
    links.new(source.outputs["Geometry"], on_points.inputs["Instance"])
    links.new(rotation.outputs["Attribute"], on_points.inputs["Rotation"])
    links.new(scale.outputs["Attribute"], on_points.inputs["Scale"])
    links.new(on_points.outputs["Instances"], group_out.inputs[0])
    return tree


def rotation_quaternions(rotations):
    """(n, 3, 3) rotation matrices to (n, 4) wxyz quaternions."""
    return np.array([Matrix(r.tolist()).to_quaternion()[:] for r in rotations], np.float32).reshape(-1, 4)


def points_mesh(name, translations, rotations, scales):
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(translations))
    mesh.vertices.foreach_set("co", np.asarray(translations, np.float32).ravel())
    mesh.attributes.new("rotation", "QUATERNION", "POINT").data.foreach_set(
        "value", rotation_quaternions(rotations).ravel()
    )
    mesh.attributes.new("scale", "FLOAT", "POINT").data.foreach_set("value", np.asarray(scales, np.float32))
    return mesh


def attach_instancer(obj, source):
    modifier = obj.modifiers.new("Precombined Instances", "NODES")
    modifier.node_group = instance_node_group()
    modifier[modifier.node_group.interface.items_tree[SOURCE_INPUT].identifier] = source
    return modifier


def instancer_source(obj):
    """The source object an instancer's modifier places, or None for other objects."""
    for modifier in obj.modifiers:
        if modifier.type == "NODES" and modifier.node_group is not None and modifier.node_group.name.startswith(NODE_GROUP):
            return modifier.get(modifier.node_group.interface.items_tree[SOURCE_INPUT].identifier)
    return None


def instancer_matrices(obj):
    """World matrices (n, 4, 4) of the copies an instancer places, from its point attributes."""
    mesh = obj.data
    count = len(mesh.vertices)
    positions = np.empty(3 * count, np.float32)
    mesh.vertices.foreach_get("co", positions)
    quaternions = np.empty(4 * count, np.float32)
    mesh.attributes["rotation"].data.foreach_get("value", quaternions)
    scales = np.empty(count, np.float32)
    mesh.attributes["scale"].data.foreach_get("value", scales)
    from mathutils import Quaternion

    base = np.array(obj.matrix_world, np.float64)
    matrices = np.zeros((count, 4, 4), np.float64)
    for i, (q, s) in enumerate(zip(quaternions.reshape(-1, 4), scales)):
        matrices[i, :3, :3] = np.array(Quaternion(q).to_matrix(), np.float64) * s
    matrices[:, :3, 3] = positions.reshape(-1, 3)
    matrices[:, 3, 3] = 1.0
    return base @ matrices
