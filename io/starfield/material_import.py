"""Starfield materials in Blender: the ``.mat`` file a shape's BSLightingShaderProperty names, as
a Principled BSDF node material with the .mat's textures.

A .mat is a graph of layers, blenders, materials and texture sets; the BSDF shows its first
texture set (the base layer's, in the game's files), each texture by its slot: colour, normal,
opacity, roughness, metal, emissive (``ROLES``). Every other texture the .mat names (further
layers, blender masks, ambient occlusion...) is an image node of its own, unlinked, so all of
them can be seen and swapped. Each image node keeps the texture name as stored and the .mat
object and component naming it: the export writes a swapped image's path there when asked to
write material files."""

from typing import NamedTuple

import bpy

from ...core.errors import FormatError
from ...core.materials.mat import TEXTURE_COMPONENT, MatFile, texture_path
from ...core.nif.blocks.shaders import BSLightingShaderProperty
from .. import compat, schema

# MRTextureFile indices of a texture set: (role, Principled input, colour data)
ROLES = {
    0: ("color", "Base Color", True),
    1: ("normal", None, False),
    2: ("opacity", "Alpha", False),
    3: ("rough", "Roughness", False),
    4: ("metal", "Metallic", False),
    5: ("ao", None, False),
    6: ("height", None, False),
    7: ("emissive", "Emission Color", True),
}
TEXTURE_SET = "texturesets.mat"  # the Parent of the game's texture set objects


def material_path(nif, shape):
    """The .mat path a BSGeometry's shader names, as stored, or None."""
    shader = nif.block_at(shape.shader_property, BSLightingShaderProperty)
    return shader.name if shader is not None and shader.name else None


class Texture(NamedTuple):
    object: int  # the .mat object naming it
    component: int  # its MRTextureFile component in that object
    texture_set: int  # 0: the first texture set, 1 the next...; -1: another kind of object's (a mask)
    index: int  # its slot in the set (ROLES)
    name: str  # the file name as stored
    owner: str  # the object's name (its CTName), for labels


def _object_name(obj, number):
    for component in obj.get("Components", []):
        if isinstance(component, dict) and component.get("Type") == "BSComponentDB::CTName":
            return str((component.get("Data") or {}).get("Name") or number)
    return str(number)


def textures(mat):
    """The Textures the .mat names, in file order."""
    objects = mat.data.get("Objects", []) if isinstance(mat.data, dict) else []
    found, sets = [], 0
    for number, obj in enumerate(objects):
        if not isinstance(obj, dict):
            continue
        components = obj.get("Components", [])
        held = [(at, c) for at, c in enumerate(components) if isinstance(c, dict) and c.get("Type") == TEXTURE_COMPONENT]
        if not held:
            continue
        parent = str(obj.get("Parent") or "")
        texture_set = parent.lower().endswith(TEXTURE_SET) or not parent  # hand-written files name no parent
        for at, component in held:
            name = (component.get("Data") or {}).get("FileName")
            if isinstance(name, str) and name:
                found.append(Texture(number, at, sets if texture_set else -1, component.get("Index", 0), name,
                                     _object_name(obj, number)))
        sets += texture_set
    return found


class StarfieldMaterials:
    """One Blender material per .mat path (shapes naming the same file share it); images come
    from the builder's MaterialImport (Data folders, archives, the cache)."""

    def __init__(self, builder):
        self.builder = builder
        self.materials = {}  # lower-cased .mat path -> material

    @property
    def images(self):
        """The builder's io.nif.material_import.MaterialImport: its file and image lookups."""
        return self.builder.materials

    def assign(self, shape, mesh):
        path = material_path(self.builder.nif, shape)
        if path is None:
            return
        key = path.lower()
        if key not in self.materials:
            self.materials[key] = self._build(path)
        mesh.materials.append(self.materials[key])

    def _build(self, path):
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        material = self.builder.link(bpy.data.materials.new(name[:-4] if name.lower().endswith(".mat") else name))
        material[schema.NIF_MATERIAL_PATH] = path
        mat = self._read(path)
        tree = compat.material_node_tree(material)
        tree.nodes.clear()
        output = tree.nodes.new("ShaderNodeOutputMaterial")
        output.location = (400, 0)
        bsdf = tree.nodes.new("ShaderNodeBsdfPrincipled")
        tree.links.new(bsdf.outputs["BSDF"], output.inputs["Surface"])
        if mat is None:
            return material
        material[schema.SF_MAT_FILE] = str(mat.path)
        linked = set()
        for row, texture in enumerate(textures(mat)):
            role, socket, color = ROLES.get(texture.index, (f"slot {texture.index}", None, False))
            node = tree.nodes.new("ShaderNodeTexImage")
            node.label = f"{texture.owner} {role}"
            node[schema.NIF_TEXTURE] = texture.name
            node[schema.SF_MAT_TEXTURE] = [texture.object, texture.component]
            node.location = (-700 - 300 * (texture.texture_set != 0), 300 - 280 * row)
            node.image = self.images.image(texture_path(texture.name), not color)
            if texture.texture_set != 0 or texture.index in linked:
                continue
            linked.add(texture.index)
            if role == "normal":
                normal_map = tree.nodes.new("ShaderNodeNormalMap")
                normal_map.location = (-250, -100)
                tree.links.new(node.outputs["Color"], normal_map.inputs["Color"])
                tree.links.new(normal_map.outputs["Normal"], bsdf.inputs["Normal"])
            elif socket is not None:
                tree.links.new(node.outputs["Color"], bsdf.inputs[socket])
        return material

    def _read(self, path):
        try:
            found = self.images.data.read(texture_path(path), "materials")
        except FormatError as error:
            self.builder.warn(str(error))
            return None
        if found is None:
            self.builder.warn(f"material file {texture_path(path)} not found in {self.images.where()}")
            return None
        try:
            return MatFile.from_bytes(*found)
        except FormatError as error:
            self.builder.warn(str(error))
            return None
