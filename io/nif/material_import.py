"""NIF shader properties as Blender materials: one material per set of material blocks (shapes
sharing their shader share the material), a Principled BSDF node tree showing textures,
emission, alpha, roughness and two-sidedness, and every field of every block kept on the
material (``nif_record``) so the exporter can write the blocks back exactly."""

import json

import bpy

from ...core.archives.archive import archive_key
from ...core.archives.data import DataFiles
from ...core.archives.dds import format_name
from ...core.errors import FormatError
from ...core.data_paths import data_relative
from ...core.materials.bgsm import MaterialFile
from ...core.nif.materials import look, material_blocks, material_key, read_record, record_to_props
from .. import compat, schema

NON_COLOR_ROLES = ("normal", "specular")


# The first material built for each set of texture roles: later ones are copies of it. Renaming a
# node makes Blender fix the animation paths of every action of the file (all their F-curves), so
# naming the texture nodes ("NIF diffuse", ...) of each material anew grows with the scene: a copy
# has them named already.
_NAMED_NODES = {}


def new_material(name, roles):
    """A new material named ``name``: a copy of the first one built for ``roles`` (its texture
    nodes kept; its other nodes, custom properties and animation gone), else an empty one."""
    template = _NAMED_NODES.get(roles)
    try:
        usable = template is not None and template.node_tree is not None
    except ReferenceError:  # removed since (an undone import, a user's deletion)
        usable = False
    if not usable:
        _NAMED_NODES.pop(roles, None)
        return bpy.data.materials.new(name)
    material = template.copy()
    material.name = name
    for key in list(material.keys()):
        del material[key]
    for owner in (material, material.node_tree):
        if owner.animation_data is not None:
            owner.animation_data_clear()
    return material


class MaterialImport:
    """``data``: the DataFiles materials and textures are looked up in (default: the builder's
    Data folders)."""

    def __init__(self, builder, data=None):
        self.builder = builder
        self.nif = builder.nif
        self.bs_version = builder.nif.header.bs_version
        self.data = data or DataFiles(builder.data_folders, builder.cache_folder)
        self.materials = {}  # material key -> material
        self.material_files = {}  # material path key -> MaterialFile (None when missing or unreadable)
        self.images = {}  # texture file -> image (None when it could not be loaded)
        self.undecodable = set()  # pixel formats Blender could not decode, reported once each

    def assign(self, shape_index, shape_block, mesh):
        """Give ``mesh`` the material of the shape's shader (one material per shader block)."""
        found = material_blocks(self.nif, shape_block)
        if not found:
            return
        key = material_key(found)
        material = self.materials.get(key)
        if material is None:
            material = self.materials[key] = self._build(found, shape_block)
        mesh.materials.append(material)

    def _build(self, found, shape_block):
        record = read_record(self.nif, found)
        shader = record.get("shader", {})
        name = str(shader.get("name") or "") or shape_block.name or f"{record[next(iter(found))]['type']}:{min(found.values())}"
        shown = look(record, self.bs_version)
        path = material_file = None
        if name.lower().endswith((".bgsm", ".bgem")):  # FO4 material file named by the shader
            path = data_relative(name)
            # The shader takes its look from the material file, as the game does.
            material_file = self._material_file(path)
            if material_file is not None:
                shown.update(material_file.look())
        roles = tuple(role for role, texture in shown["textures"].items() if texture)
        material = self.builder.link(new_material(name.replace("\\", "/").rsplit("/", 1)[-1], roles))
        material[schema.NIF_RECORD] = record_to_props(record)
        material[schema.NIF_BLOCKS] = dict(found)
        material[schema.NIF_FILE] = str(self.nif.path or "")
        material[schema.NIF_BS_VERSION] = self.bs_version
        if path is not None:
            material[schema.NIF_MATERIAL_PATH] = path
        if material_file is not None:
            material[schema.BGSM_FILE] = str(material_file.path)
            # What the tree was built from: the exporter leaves the NIF's blocks alone unless it changed.
            material[schema.BGSM_LOOK] = json.dumps(shown)
        self._build_tree(material, record, shown)
        _NAMED_NODES.setdefault(roles, material)
        return material

    def _material_file(self, path):
        key = archive_key(path)
        if key not in self.material_files:
            material_file = None
            try:
                found = self.data.read(path, "materials")
                if found is None:
                    self.builder.warn(f"material file {path} not found in {self.where()}")
                else:
                    material_file = MaterialFile.from_bytes(*found)
            except FormatError as error:
                self.builder.warn(str(error))
            self.material_files[key] = material_file
            self._report_archive_problems()
        return self.material_files[key]

    def _report_undecodable(self, found):
        with open(found, "rb") as handle:
            kind = format_name(handle.read(148)) or "an unknown format"
        if kind not in self.undecodable:
            self.undecodable.add(kind)
            self.builder.warn(f"textures in {kind} cannot be decoded by Blender (first: {found})")

    def _report_archive_problems(self):
        for problem in self.data.problems:  # archives that could not be opened (the warning is kept once)
            self.builder.warn(f"archive skipped: {problem}")

    def where(self):
        """Where files are looked up, for messages."""
        return "the Data folders" if self.data.folders else "any Data folder (none set in the preferences)"

    def _build_tree(self, material, record, shown):
        tree = compat.material_node_tree(material)
        nodes, links = tree.nodes, tree.links
        kept = {f"NIF {role}" for role, path in shown["textures"].items() if path}
        for node in [node for node in nodes if node.name not in kept]:  # a copy's texture nodes are kept (new_material)
            nodes.remove(node)
        output = nodes.new("ShaderNodeOutputMaterial")
        output.location = (400, 0)
        bsdf = nodes.new("ShaderNodeBsdfPrincipled")
        links.new(bsdf.outputs["BSDF"], output.inputs["Surface"])
        inputs = bsdf.inputs
        if "emission" in shown:
            inputs["Emission Color"].default_value = (*shown["emission"], 1.0)
            inputs["Emission Strength"].default_value = shown["emission_strength"]
        if "alpha" in shown:
            inputs["Alpha"].default_value = shown["alpha"]
        if "roughness" in shown:
            inputs["Roughness"].default_value = shown["roughness"]
        material.use_backface_culling = not shown["two_sided"]
        material.surface_render_method = "BLENDED" if shown["blend"] else "DITHERED"
        effect = record.get("shader", {}).get("type") == "BSEffectShaderProperty"
        y = 300
        images = {}
        for role, path in shown["textures"].items():
            if path:
                node = nodes.get(f"NIF {role}")
                if node is None:
                    node = nodes.new("ShaderNodeTexImage")
                    node.name = node.label = f"NIF {role}"
                node[schema.NIF_TEXTURE] = path  # as stored, kept even when the file is not found
                node.location = (-700, y)
                y -= 300
                node.image = self.image(path, role in NON_COLOR_ROLES)
                images[role] = node
        alpha_source = None
        if "diffuse" in images:
            links.new(images["diffuse"].outputs["Color"], inputs["Base Color"])
            if effect:
                links.new(images["diffuse"].outputs["Color"], inputs["Emission Color"])
            if shown["blend"] or shown["alpha_test"]:
                alpha_source = images["diffuse"].outputs["Alpha"]
        if shown["alpha_test"]:
            # Alpha testing as the game does it: opaque where alpha > threshold, else cut out.
            test = nodes.new("ShaderNodeMath")
            test.operation = "GREATER_THAN"
            test.label = "NIF alpha test"
            test.location = (-250, -350)
            test.inputs[0].default_value = shown.get("alpha", 1.0)
            test.inputs[1].default_value = shown["threshold"] / 255.0
            if alpha_source is not None:
                links.new(alpha_source, test.inputs[0])
            alpha_source = test.outputs[0]
        if alpha_source is not None:
            links.new(alpha_source, inputs["Alpha"])
        if shown.get("uv_offset", (0.0, 0.0)) != (0.0, 0.0) or shown.get("uv_scale", (1.0, 1.0)) != (1.0, 1.0):
            coordinates = nodes.new("ShaderNodeTexCoord")
            coordinates.location = (-1250, 0)
            mapping = nodes.new("ShaderNodeMapping")
            mapping.label = "NIF UV offset and scale"
            mapping.location = (-1000, 0)
            # The game's uv * scale + offset, with v measured from the top as the file has it
            # (Blender's v = 1 - the file's, see mesh_build).
            (u_offset, v_offset), (u_scale, v_scale) = shown["uv_offset"], shown["uv_scale"]
            mapping.inputs["Location"].default_value[:2] = (u_offset, 1.0 - v_scale - v_offset)
            mapping.inputs["Scale"].default_value[:2] = (u_scale, v_scale)
            links.new(coordinates.outputs["UV"], mapping.inputs["Vector"])
            for node in images.values():
                links.new(mapping.outputs["Vector"], node.inputs["Vector"])
        if "normal" in images:
            normal_map = nodes.new("ShaderNodeNormalMap")
            normal_map.location = (-250, -100)
            links.new(images["normal"].outputs["Color"], normal_map.inputs["Color"])
            links.new(normal_map.outputs["Normal"], inputs["Normal"])
        if "glow" in images:
            links.new(images["glow"].outputs["Color"], inputs["Emission Color"])
        if "specular" in images:
            # Fallout 4 _s maps: red specular, green smoothness (roughness = 1 - smoothness).
            split = nodes.new("ShaderNodeSeparateColor")
            split.location = (-400, 150)
            invert = nodes.new("ShaderNodeMath")
            invert.operation = "SUBTRACT"
            invert.inputs[0].default_value = 1.0
            invert.location = (-250, 150)
            links.new(images["specular"].outputs["Color"], split.inputs["Color"])
            links.new(split.outputs["Red"], inputs["Specular IOR Level"])
            links.new(split.outputs["Green"], invert.inputs[1])
            links.new(invert.outputs[0], inputs["Roughness"])

    def image(self, path, non_color):
        """The Blender image of the texture at the Data-relative ``path`` (extracted from an
        archive when needed, loaded once), or None with a warning."""
        try:
            found = self.data.file(path, "textures")
        except FormatError as error:
            self.builder.warn(str(error))
            return None
        finally:
            self._report_archive_problems()
        if found is None:
            self.builder.warn(f"texture {path} not found in {self.where()}")
            return None
        if found in self.images:
            return self.images[found]
        known = {image.filepath for image in bpy.data.images}
        try:
            image = bpy.data.images.load(str(found), check_existing=True)
        except RuntimeError as error:
            self.builder.warn(f"texture {found} cannot be loaded: {error}")
            image = None
        else:
            if image.filepath not in known:
                self.builder.link(image)
            if tuple(image.size) == (0, 0):  # loaded lazily: the size says whether Blender decoded it
                self._report_undecodable(found)
            if non_color:
                image.colorspace_settings.name = "Non-Color"
        self.images[found] = image
        return image
