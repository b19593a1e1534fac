"""Blender objects back into a NIF (FO4, FO76, FO3/FNV, Skyrim LE or SE). Objects an import made keep pointing at
their blocks (``nif_block``) in the source file the import kept on its collection: that file is
the template, edited in place, so what Blender does not show (extra data, controllers, unknown
blocks) is written back unchanged and an untouched import writes back byte for byte. Anything
new is appended as new blocks; blocks only deleted objects used are dropped. Knows bpy and core
objects, never file bytes."""

import bpy
import numpy as np
from mathutils import Matrix

from ...core.errors import FormatError
from ...core.files import write_all
from ...core.mesh_split import split_triangles
from ...core.nif import NifFile, skinning, sse_skin
from ...core.nif import versions
from ...core.nif.blocks.bs_geometry import BSGeometry
from ...core.nif.blocks.extra_data import BSX_ARTICULATED, BSX_HAVOK, NiIntegerExtraData
from ...core.nif.blocks.geometry import NiTriBasedGeom
from ...core.nif.blocks.legacy_havok import uses_bhk_bodies
from ...core.nif.blocks.nodes import NiNode
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.nif.header import Header
from ...core.nif.refs import reachable, remove_blocks
from ...core.precombined.ck_rules.meshes import export_warnings
from ...core.transforms import similarity
from ..havok import collision_export, legacy_collision_export
from ..starfield import geometry_export as starfield_export
from ..starfield.lod_objects import is_lod
from ..collection_objects import objects_in
from ..integers import to_uint32
from . import animation_export, animation_import, bsx_flags, extra_empties, material_export, shape_export, skin_export, triangle_groups
from ..mesh_read import export_vertices, geometry_fingerprint
from ..names import unsuffixed
from ..tri.exporter import morph_files
from .extras import write_extras
from .source import import_scale, source_of, template_collection
from .. import schema

SHAPE_TYPES = (BSTriShape, NiTriBasedGeom, BSGeometry)
MAX_NAME_BYTES = 63  # Blender's limit for datablock names
NEW_FLAGS = {"SSE": 0x8000E, "SKYRIM": 0x8000E}  # node and shape flags of new blocks (vanilla Skyrim's), else 0xE
SKYRIM_GAMES = ("SSE", "SKYRIM")
# BSXFlags of vanilla Skyrim statics with collision (bHavok, bArticulated: dockstepsdownend01,
# farmhouse01, farmbench01, noblecrate01...)
STATIC_COLLISION_BSX = BSX_HAVOK | BSX_ARTICULATED


def empty_nif(game):
    user_version, bs_version = versions.WRITTEN[game]
    return NifFile(Header(user_version=user_version, bs_version=bs_version), blocks=[], roots=[])


def plain_name(obj_name, block, index):
    """The block's own name when Blender only added a '.001' suffix to make it unique, or the
    object still has the name the importer gave an unnamed block."""
    base = unsuffixed(obj_name)
    if block is None:
        return obj_name
    if base in (block.name, f"{block.type_name}:{index}"):
        return block.name
    if block.name and len(base.encode()) >= MAX_NAME_BYTES - 4 and block.name.startswith(base):
        return block.name  # Blender cut a long name short
    return obj_name


def transform_fields(matrix, name):
    """(translation, rotation rows, scale) of a 4x4 local matrix; uneven scale or shear cannot
    be stored on a node, so it is refused with the object's name."""
    m = np.array(matrix, np.float64)
    rotation, size = similarity(m[:3, :3], name, "a NIF node", " (apply the scale first)")
    rotation = rotation.ravel()
    return tuple(float(v) for v in m[:3, 3]), tuple(float(v) for v in rotation), size


def moved(obj):
    """Whether the object's transform changed since the import made it."""
    stored = obj.get(schema.NIF_BASIS)
    if stored is None or len(stored) != 16:
        return True
    return not np.allclose(np.array(obj.matrix_basis, np.float64).ravel(), np.array(stored, np.float64), atol=1e-6)


class NifExporter:
    """The file being written and what the parts writing into it share.

    ``nif``: the NifFile (the template when there is one). ``game``: a versions.WRITTEN key.
    ``scale``: Blender units per game unit. ``template``: True when ``nif`` came from an import.
    ``full_precision``: FO4 and FO76 vertices as 32-bit floats instead of halves.
    """

    def __init__(self, game="FO4", scale=1.0, nif=None, full_precision=False):
        if game not in versions.WRITTEN and nif is None:
            raise FormatError(f"cannot export for {game!r}: only {', '.join(versions.WRITTEN)}")
        self.game = game
        self.scale = scale
        self.full_precision = full_precision
        self.template = nif is not None
        self.nif = nif if nif is not None else empty_nif(game)
        self.messages = []
        self.bone_nodes = {}  # (armature name, bone name) -> NiNode index
        self.block_of = {}  # object -> the block index it was written to
        self.shapes_of = {}  # mesh object -> [shape block indices]
        self.file_vertices = {}  # mesh object -> [(shape block index, the Blender vertex of each of its vertices)]
        self.children_of = {}  # node index (None: a new root) -> object blocks Blender puts under it
        self.bound = {}  # object -> the template block it still stands for
        self.parent_block = {}  # object -> the block it was written under (-1: a root)
        self.pass_through = {}  # further armature -> its placement under the node it hangs from
        self.scene_blocks = set()  # the template's nodes and shapes an import shows
        self.skin_placements = skin_export.skin_placements(self.nif) if self.template else {}
        # The import did not build collision / skinning: the template's is kept as stored.
        self.keep_collision = False
        self.keep_skin = False
        self.sse_layouts = {}  # Skyrim SE shape index -> sse_skin.layout_of its template block
        self.encoded = set()  # shape indices whose geometry was encoded anew
        self.new_flags = NEW_FLAGS.get(game, 0xE)
        self.skinned_meshes = False  # whether an exported mesh is skinned (Skyrim's root type)
        self.collision = False  # whether an exported object has collision objects (Skyrim's BSXFlags)
        self.starfield = versions.starfield(self.nif.header.bs_version)  # shapes by io/starfield, no bone nodes
        self.side_files = {}  # Data-relative path -> bytes (or where a kept file was read): files the NIF names
        self.beside_files = set()  # those of side_files written beside the NIF (they were found beside it)

    # -- what the parts share --------------------------------------------------------------
    def add(self, block):
        """Append a block; returns its index."""
        self.nif.blocks.append(block)
        return len(self.nif.blocks) - 1

    def require_writable(self, what):
        """Files of games the exporter cannot encode for (Starfield) go back only as the import
        made them: anything that must be encoded anew stops the export here."""
        if self.game not in versions.WRITTEN:
            raise FormatError(f"{what} cannot be written in a {self.game} file")

    def warn(self, message):
        if message not in self.messages:
            self.messages.append(message)

    def bone_index(self, armature, bone_name):
        """The NiNode block of an armature's bone (written by skin_export.write_armature)."""
        return self.bone_nodes[(armature.name, bone_name)]

    # -- the whole export ------------------------------------------------------------------
    def export(self, objects):
        objects = [obj for obj in objects if not collision_export.is_collision(obj)]
        extras = [obj for obj in objects if extra_empties.is_extra(obj)]
        # Starfield LODs are written with their shape's object.
        objects = [obj for obj in objects if not extra_empties.is_extra(obj) and not is_lod(obj)]
        unsupported = sorted({obj.type for obj in objects} - {"EMPTY", "MESH", "ARMATURE"})
        if unsupported:
            self.warn(f"objects of type {', '.join(unsupported)} are not written (only empties, meshes and armatures)")
        exported = [obj for obj in objects if obj.type in ("EMPTY", "MESH", "ARMATURE")]
        if not any(obj.type == "MESH" for obj in exported) and not self.template:
            raise FormatError("nothing to export: no mesh objects")
        self.skinned_meshes = any(obj.type == "MESH" and skin_export.skin_source(obj) for obj in exported)
        self.collision = any(collision_export.collision_children(obj) for obj in exported)
        before = reachable(self.nif) if self.template else set()
        had_collision = self.template and bsx_flags.has_collision(self.nif)
        self.scene_blocks = self._scene_blocks()
        self._bind(exported)
        chosen = set(exported)
        kids = {}
        for obj in sorted(exported, key=lambda o: (o.get(schema.NIF_BLOCK, 1 << 30), o.name)):
            kids.setdefault(self._parent_of(obj, chosen), []).append(obj)
        roots = kids.get(None, [])
        main_root = self._main_root(roots)
        for obj in roots:
            # The template's own roots stay roots; anything else hangs under the main root.
            is_file_root = self.template and self.bound.get(obj) in self.nif.roots
            self._write_tree(obj, None, None if is_file_root else main_root, kids)
        self._rebuild_children()
        if not self.keep_collision:
            # bhk blocks (FO3 to Skyrim SE), not packfiles
            writer = legacy_collision_export if uses_bhk_bodies(self.nif.header.bs_version) else collision_export
            for index, owner in self._collision_owners().items():
                writer.write_collision(self, owner, index)
        write_extras(self, extras)
        if self.template:
            animation_export.write_animations(self, exported)
            self._drop_unreachable(before)
            bsx_flags.follow_collision(self, had_collision)
        return self.nif

    def _collision_owners(self):
        """{node index: its object, or (armature, bone name)}. A node shared by several armatures'
        bones is owned by the bone holding collision objects (the import puts them under one)."""
        owners = {}
        for (armature_name, bone_name), index in self.bone_nodes.items():
            owner = (bpy.data.objects[armature_name], bone_name)
            if index not in owners or collision_export.collision_children(owner):
                owners[index] = owner
        owners.update((index, obj) for obj, index in self.block_of.items())
        return owners

    # -- binding objects to template blocks ------------------------------------------------
    def _bind(self, objects):
        """Objects that still stand for a block of the template (a copy of an object carries the
        same ``nif_block``: only the first keeps it, the others become new blocks)."""
        self.bound = {}
        taken = set()
        if not self.template:
            return
        for obj in objects:
            index = obj.get(schema.NIF_BLOCK)
            if not isinstance(index, int) or not 0 <= index < len(self.nif.blocks) or index in taken:
                continue
            block = self.nif.blocks[index]
            if block.type_name != obj.get(schema.NIF_TYPE) or not self._fits(obj, block):
                continue
            self.bound[obj] = index
            taken.add(index)

    @staticmethod
    def _fits(obj, block):
        if obj.type == "MESH":
            return isinstance(block, SHAPE_TYPES)
        if obj.type == "EMPTY" and isinstance(block, SHAPE_TYPES):
            return True  # a shape without vertex data of its own (particles, SSE skins): kept as stored
        return isinstance(block, NiNode) and obj.type in ("EMPTY", "ARMATURE")

    def _parent_of(self, obj, chosen):
        parent = obj.parent
        while parent is not None and parent not in chosen:
            parent = parent.parent
        return parent

    # -- nodes -----------------------------------------------------------------------------
    def _main_root(self, roots):
        """The node top-level objects hang under: the template's first root, or for a new file
        a new root node, unless one empty holds everything (it becomes the root)."""
        if self.template:
            return self.nif.roots[0] if self.nif.roots else None
        if len(roots) == 1 and roots[0].type == "EMPTY":
            return None
        index = self.add(NiNode("NiNode", name="Scene Root", flags=self.new_flags))
        self._dress_root(index)
        self.nif.roots = [index]
        return index

    def _dress_root(self, index):
        """A new file's root as the game's own files have it: Skyrim statics hang from a
        BSFadeNode telling the game of their collision in BSXFlags (its armour from a NiNode)."""
        if self.game not in SKYRIM_GAMES or self.skinned_meshes:
            return
        root = self.nif.blocks[index]
        root.type_name = "BSFadeNode"
        if self.collision:
            flags = self.add(NiIntegerExtraData("BSXFlags", name="BSX", integer_data=STATIC_COLLISION_BSX))
            root.extra_data = np.array([*np.asarray(root.extra_data).tolist(), flags], np.int32)

    def _write_tree(self, obj, parent_obj, parent_index, kids):
        """Write ``obj`` under ``parent_index`` (None: it is the new file's root), then the
        objects under it (children of objects left out of the export follow their ancestor)."""
        if obj.parent is parent_obj and obj.parent_type == "OBJECT":
            # Under a further armature (no node of its own) the armature's placement joins in.
            matrix = self.pass_through.get(parent_obj, Matrix.Identity(4)) @ obj.matrix_parent_inverse @ obj.matrix_basis
        elif obj.parent is parent_obj and obj.parent_type == "BONE" and parent_obj.type == "ARMATURE":
            parent_index = self.bone_index(parent_obj, obj.parent_bone)
            bone_world = parent_obj.matrix_world @ skin_export.bone_node_world(parent_obj, obj.parent_bone)
            matrix = bone_world.inverted() @ obj.matrix_world
        else:  # parented to something not exported (or not at all): placed in the world
            matrix = obj.matrix_world.copy() if parent_obj is None else parent_obj.matrix_world.inverted() @ obj.matrix_world
        if parent_obj is None:
            matrix = Matrix.Scale(1.0 / self.scale, 4) @ matrix
        if obj.type == "ARMATURE" and obj not in self.bound and schema.NIF_ROOT in obj:
            # A further armature of one skeleton (another bind pose): no node of its own, its
            # bones are the first armature's nodes and its meshes hang where it hangs.
            if not self.starfield:
                skin_export.write_armature(self, obj, parent_index)
            self.pass_through[obj] = matrix
            for child in kids.get(obj, []):
                self._write_tree(child, obj, parent_index, kids)
            return
        if obj.type == "MESH":
            indices = self._write_shape(obj, matrix)
        else:
            indices = [self._write_node(obj, matrix)]
        self.children_of.setdefault(parent_index, []).extend(indices)
        self.parent_block[obj] = -1 if parent_index is None else parent_index
        if parent_index is None and not self.template:  # the one empty holding everything
            self.nif.roots = indices[:1]
            self._dress_root(indices[0])
        if obj.type == "ARMATURE" and not self.starfield:  # Starfield skins name bones no node stands for
            skin_export.write_armature(self, obj, indices[0])
        for child in kids.get(obj, []):
            self._write_tree(child, obj, indices[0], kids)

    def _write_node(self, obj, matrix):
        index = self.bound.get(obj)
        if index is None:
            index = self.add(NiNode("NiNode", flags=to_uint32(obj.get(schema.NIF_FLAGS, self.new_flags))))
        self._place(index, obj, matrix)
        self.block_of[obj] = index
        return index

    def _place(self, index, obj, matrix):
        """Name and transform; a template block keeps its stored values when they still hold."""
        block = self.nif.blocks[index]
        kept = self.bound.get(obj) == index
        name = plain_name(obj.name, block if kept else None, index)
        if name != block.name:
            block.name = name
        # An object its imported sequence moves shows the current frame: the node keeps its own.
        if not kept or moved(obj) and not animation_export.drives_transform(obj):
            block.translation, block.rotation, block.scale = transform_fields(matrix, obj.name)

    def _rebuild_children(self):
        """Each node's children: what Blender puts under it, in the template's order where the
        template had them, new ones after. A child stays where it was when Blender does not show
        it, or when its object still has the parent it was imported under (a block with two
        parents is one object under the first)."""
        shown = set(self.block_of.values()) | self.scene_blocks
        staying = {
            index
            for obj, index in self.block_of.items()
            if obj.get(schema.NIF_PARENT) == self.parent_block.get(obj)
        }
        # Bones of the template stay under their nodes (several armatures may share them).
        staying |= {index for index in self.bone_nodes.values() if index in self.scene_blocks}
        for parent_index in self.scene_blocks | set(self.children_of):
            if parent_index is None or not isinstance(self.nif.blocks[parent_index], NiNode):
                continue
            wanted = self.children_of.get(parent_index, [])
            node = self.nif.blocks[parent_index]
            old = [int(c) for c in np.asarray(node.children).tolist()]
            keep = [c for c in old if c not in shown or c in wanted or c in staying]
            new = [c for c in wanted if c not in keep]
            if keep + new != old:
                node.children = np.array(keep + new, np.int32)

    def _scene_blocks(self):
        """The template's nodes and shapes an import shows as objects or bones: those reachable
        from the roots through children."""
        found, stack = set(), list(self.nif.roots) if self.template else []
        while stack:
            index = stack.pop()
            if not 0 <= index < len(self.nif.blocks) or index in found:
                continue
            block = self.nif.blocks[index]
            if isinstance(block, (NiNode, *SHAPE_TYPES)):
                found.add(index)
                if isinstance(block, NiNode):
                    stack.extend(int(c) for c in np.asarray(block.children).tolist())
        return found

    # -- shapes ----------------------------------------------------------------------------
    def _write_shape(self, obj, matrix):
        if self.starfield:
            index = starfield_export.write_shape(self, obj, self.bound.get(obj))
            self._place(index, obj, matrix)
            self.shapes_of[obj] = [index]
            self.block_of[obj] = index
            return [index]
        mesh = obj.data
        index = self.bound.get(obj)
        skin = skin_export.skin_source(obj)
        in_partition = index is not None and skinning.partition_geometry(self.nif, self.nif.blocks[index]) is not None
        if in_partition and (self.keep_skin or self._unchanged(mesh) and skin_export.skin_unchanged(self, index, skin, mesh)):
            return self._keep_partition_shape(obj, index, matrix)
        if index is not None and versions.sse(self.nif.header.bs_version) and isinstance(self.nif.blocks[index], BSTriShape):
            self.sse_layouts[index] = sse_skin.layout_of(self.nif.blocks[index])  # before it is encoded anew
        if index is not None and not in_partition and self._unchanged(mesh):
            block = self.nif.blocks[index]
            shape_export.keep_geometry(self, block)
            self._place(index, obj, matrix)
            triangles = np.asarray(self._file_triangles(block), np.int64).reshape(-1, 3)
            # The import made a face of each triangle but the degenerate ones (-1: no face).
            real = (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])
            face_ids = np.full(len(triangles), -1, np.int32)
            face_ids[real] = np.arange(int(real.sum()), dtype=np.int32)
            triangle_groups.write_groups(self, index, mesh, face_ids)
            vertex_ids = np.arange(len(mesh.vertices))
            pieces = [(index, vertex_ids, triangles, face_ids, mesh.materials[0] if len(mesh.materials) else None)]
        else:
            skinned = skin is not None or self.keep_skin and index is not None and self.nif.blocks[index].skinned
            if skin is None and skinned:
                self.warn(
                    f"{obj.name}: its geometry changed but its skin is kept as stored (imported without Skin): "
                    f"re-import with Skin to edit skinned meshes"
                )
            pieces = self._encode_pieces(obj, index, matrix, skinned)
        self.shapes_of[obj] = [piece[0] for piece in pieces]
        self.file_vertices[obj] = [(piece[0], piece[1]) for piece in pieces]
        self.block_of[obj] = pieces[0][0]
        skin_first = self.game != "FO3"  # vanilla order: the skin's blocks, then the shader's (FO3/FNV: the other way)
        for shape_index, vertex_ids, triangles, face_ids, material in pieces:
            if skin_first and not self.keep_skin:
                skin_export.write_skin(self, shape_index, skin, mesh, vertex_ids, triangles, face_ids)
            material_export.write_material(self, shape_index, material)
            if not skin_first and not self.keep_skin:
                skin_export.write_skin(self, shape_index, skin, mesh, vertex_ids, triangles, face_ids)
        return [piece[0] for piece in pieces]

    def _keep_partition_shape(self, obj, index, matrix):
        """A Skyrim SE skinned shape whose geometry (in its NiSkinPartition) and skin still hold,
        or one imported without its skin (its weights unknown to Blender): the shape, its skin and
        partition stay as stored (its placement, name and material are written); a geometry edit
        of the latter is reported, never half written."""
        mesh = obj.data
        self._place(index, obj, matrix)
        self.shapes_of[obj] = [index]
        self.file_vertices[obj] = [(index, np.arange(len(mesh.vertices)))]
        self.block_of[obj] = index
        if not self._unchanged(mesh):
            self.warn(
                f"{obj.name}: its geometry changed but its skin is kept as stored (imported without Skin), and a "
                f"Skyrim SE skinned shape keeps its geometry with its skin: the stored shape is kept"
            )
        material_export.write_material(self, index, mesh.materials[0] if len(mesh.materials) else None)
        return [index]

    def _file_triangles(self, block):
        if isinstance(block, BSTriShape):
            return block.triangles
        return self.nif.blocks[block.data].triangles

    @staticmethod
    def _unchanged(mesh):
        """Whether the mesh still holds what the import made of its block (then the block is
        kept as stored)."""
        stored = mesh.get(schema.NIF_GEOMETRY)
        return stored is not None and len(mesh.materials) <= 1 and stored == geometry_fingerprint(mesh)

    def _encode_pieces(self, obj, index, matrix, skinned):
        """New geometry for an edited or new mesh: one shape per material slot used, each cut at
        65535 vertices. The first piece reuses the object's block; the others are new siblings."""
        self.require_writable(f"the geometry of {obj.name!r}")
        mesh = obj.data
        arrays = export_vertices(mesh)
        if not len(arrays["triangles"]):
            self.warn(f"mesh {obj.name!r} has no faces: written without geometry")
        pieces = []
        slots = np.unique(arrays["materials"]) if len(arrays["materials"]) else np.zeros(1, np.int32)
        for slot in slots.tolist():
            chosen = arrays["materials"] == slot
            face_ids = arrays["face_ids"][chosen]
            material = mesh.materials[slot] if slot < len(mesh.materials) else None
            for used, local in split_triangles(arrays["triangles"][chosen]):
                piece_index = index if not pieces and index is not None else None
                block_index = shape_export.shape_block(self, obj, piece_index, len(pieces), index)
                shape_export.encode_geometry(self, block_index, arrays, used, local, skinned)
                triangle_groups.write_groups(self, block_index, mesh, face_ids[: len(local)], index)
                self._place(block_index, obj, matrix)
                pieces.append((block_index, arrays["vertex_ids"][used], local, face_ids, material))
                face_ids = face_ids[len(local) :]
        return pieces

    # -- dropping what deleted objects used ---------------------------------------------------
    def _drop_unreachable(self, before):
        doomed = before - reachable(self.nif)
        if not doomed:
            return
        try:
            remove_blocks(self.nif, doomed)
        except FormatError:
            self.warn(
                f"{len(doomed)} blocks that deleted or replaced objects used are kept unattached: this file has "
                f"blocks the exporter cannot renumber"
            )


def export_nif(path, objects, *, game=None, scale=None, full_precision=False, morphs=True, written=None):
    """Write ``objects`` to ``path``; the imported file they came from is the template when the
    game matches. A file of a game the exporter cannot encode for is written back as
    itself while nothing needs encoding anew, else written anew as FO4. ``scale``: Blender units
    per game unit, by default the import's. ``morphs``: the meshes' shape keys go to their .tri
    files too (io.tri.exporter), all encoded before any file is written; their paths are added to
    the list ``written`` when given. Files the NIF names (Starfield's .mesh files) are written
    under its Data folder first. Returns (NifFile, messages): what did not go as asked, and for a
    static Fallout 4 model why the Creation Kit would crash on it or leave it uncombined."""
    if scale is None:
        scale = import_scale(objects)
    collection = template_collection(objects)
    template = source_of(collection) if collection is not None else None
    messages = []
    if template is not None and game not in (None, template.header.game):
        messages.append(f"writing {game} from a {template.header.game} import: blocks Blender does not show are not carried over")
        template = None
    bpy.context.view_layer.update()  # world matrices of objects just made or moved by a script
    if template is not None and template.header.game not in versions.WRITTEN:
        try:
            exporter = _export(objects, collection, template, template.header.game, scale, full_precision)
        except FormatError as error:
            messages.append(f"{error.message}: written anew as FO4")
            exporter = _export(objects, None, None, "FO4", scale, full_precision)
    else:
        exporter = _export(objects, collection, template, game or (template.header.game if template else "FO4"), scale, full_precision)
    tri_files, tri_messages = morph_files(path, exporter) if morphs else ([], [])
    # The files it names first (named by their bytes, so never a wrong one), then the NIF.
    _, side_messages = starfield_export.write_side_files(exporter.side_files, path, exporter.beside_files)
    # the NIF and its .tri files written together: all of them, or none when one fails
    write_all([(path, exporter.nif.to_bytes()), *((tri_path, tri.to_bytes()) for tri_path, tri in tri_files)])
    if written is not None:
        written.extend(tri_path for tri_path, _ in tri_files)
    return exporter.nif, messages + exporter.messages + tri_messages + side_messages + export_warnings(exporter.nif)


def _export(objects, collection, template, game, scale, full_precision):
    """The exporter, its ``nif`` written from ``objects``."""
    exporter = NifExporter(game, scale, template, full_precision)
    if template is not None and animation_import.is_kf(template):
        exporter.nif = animation_export.export_kf(exporter, collection)
        return exporter
    if template is not None:
        exporter.keep_collision = not collection.get(schema.NIF_BUILT_COLLISION, True)
        exporter.keep_skin = not collection.get(schema.NIF_BUILT_SKIN, True)
    exporter.export(objects)
    return exporter


def exported_objects(context, selected_only):
    """Selected objects, or those of the active collection (the whole scene when it is the
    scene's own collection)."""
    if selected_only:
        return list(context.selected_objects)
    collection = context.view_layer.active_layer_collection.collection
    return objects_in(collection) if collection != context.scene.collection else list(context.scene.objects)

