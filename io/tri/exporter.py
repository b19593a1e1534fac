"""Shape keys back into .tri files: each key to the .tri kind its morph came from, keys no .tri
gave to the role the object names (``schema.TRI_NEW_MORPHS``). The file a role's morphs were
read from is the template: a key still holding what was read keeps its stored bytes, so an
untouched import writes back byte for byte; an edited key is encoded anew.

Vertices follow the shape the NIF export writes: while the mesh keeps its import's vertices the
.tri keeps its own base mesh and vertex order; after an edit that adds or removes vertices the
NIF's vertices are renumbered (UV seams, material slots), and the .tri is written anew for the
shape as written (its vertices, triangles and texture coordinates), each file vertex taking the
offset of the Blender vertex it came from. A FaceGen .tri morphs one shape, so a mesh the NIF
export cuts into several shapes cannot have one: refused by name. Knows core objects and bpy,
never file bytes."""

import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.errors import FormatError
from ...core.nif import skinning
from ...core.nif.blocks.extra_data import NiStringExtraData
from ...core.nif.blocks.tri_shape import BSTriShape
from ...core.tri import BodyShape, BodySlideTri, DifferenceMorph, FaceGenTri, ModifierMorph, SliderMorph, naming
from ...core.tri.bodyslide import OFFSETS
from ...core.tri.facegen import TEXTURES, WIDE_LABELS
from ...core.tri.quantize import quantize
from ..mesh_read import geometry_fingerprint
from .. import schema
from . import shape_keys
from .importer import bodytri_values, shape_name
from .roles import BY_NAME, NEW_BODYTRI, bodyslide_link, new_role, records, sources


@dataclass
class Morph:
    """A shape key to write: the name it is written under, its offsets per Blender vertex, and
    what the import recorded of it (None for a key no .tri gave)."""

    name: str
    values: np.ndarray
    record: dict | None

    def stored(self, morphs):
        """The morph of ``morphs`` (its file's, as read) this key still is, or None."""
        record = self.record
        if record is None or record["digest"] != shape_keys.digest(self.values) or record["index"] >= len(morphs):
            return None
        morph = morphs[record["index"]]
        if morph.name != record["name"]:
            return None
        morph.name = self.name if self.name != record["name"] else morph.name  # a renamed key renames it
        return morph


def template(source, cls):
    if source is None:
        return None
    return cls.from_bytes(zlib.decompress(bytes(source["data"])), path=source["path"])


def morphs_by_role(obj):
    """{role: [Morph]} of the object's morph keys in key order. A key renamed since its import
    keeps its morph's role and kind while its offsets are untouched."""
    schema.check_version(obj)
    stored = records(obj)
    keys = shape_keys.morph_keys(obj)
    names = {key.name for key in keys}
    orphans = {record["digest"]: record for name, record in stored.items() if name not in names and record["digest"]}
    out = {}
    basis = shape_keys.coordinates(keys[0].id_data.reference_key, len(obj.data.vertices)) if keys else None
    for key in keys:
        values = shape_keys.offsets(obj, key, basis)
        record = stored.get(key.name)
        name = record["name"] if record is not None else key.name
        if record is None:
            record = orphans.pop(shape_keys.digest(values), None)
        role = record["role"] if record is not None else new_role(obj)
        if role is not None:
            out.setdefault(role, []).append(Morph(name, values, record))
    return out


# -- FaceGen -----------------------------------------------------------------------------------------
def facegen_tri(obj, role, morphs, base=None, vertex_ids=None):
    """A FaceGenTri of ``morphs``. ``base`` None: the template's base mesh and vertex order stay
    (the mesh is the one it was read for); else (positions, triangles, uvs) of the shape the
    mesh is written as, ``vertex_ids`` the Blender vertex of each of its vertices. Returns
    (tri, messages)."""
    source = sources(obj).get(role)
    tri = template(source, FaceGenTri)
    messages = []
    if base is None and tri is not None:
        size = len(tri.vertices)
        mapping = np.arange(size)
        kept = tri.morphs + tri.modifiers
        past = [m.name for m in morphs if np.any(m.values[size:])]
        if past:
            messages.append(f"{obj.name}: {', '.join(past)} move vertices past the {size} its .tri covers: those offsets "
                            f"are not written")
    else:
        tri = tri or FaceGenTri()
        messages += _new_base(tri, obj, base)
        mapping, kept = vertex_ids, []
    wide = bool(tri.flags & WIDE_LABELS)
    differences, modifiers = [], []
    for morph in morphs:
        values = morph.values[mapping]
        kind = morph.record["kind"] if morph.record is not None else "difference"
        stored = morph.stored(kept)
        if stored is None and kind == "modifier":
            moved = np.flatnonzero(np.any(values != 0, axis=1))
            stored = ModifierMorph(morph.name, moved.astype(np.uint32), tri.vertices[moved] + values[moved], wide=wide)
        elif stored is None:
            scale, quantized = quantize(values, f"{obj.name}: shape key {morph.name!r}")
            stored = DifferenceMorph(morph.name, scale, quantized, wide=wide)
        (modifiers if stored.kind == "modifier" else differences).append(stored)
    tri.morphs, tri.modifiers = differences, modifiers
    return tri, messages


def _new_base(tri, obj, base):
    """The base mesh of ``tri`` replaced by the shape as written; what named the old vertices goes."""
    positions, triangles, uvs = base
    messages = []
    if tri.labelled_vertices or tri.surface_points:
        messages.append(f"{obj.name}: its vertices changed: the .tri's labelled vertices and surface points are not written")
    tri.vertices = np.asarray(positions, np.float32).reshape(-1, 3)
    tri.triangles = np.asarray(triangles, np.uint32).reshape(-1, 3)
    tri.quads = np.zeros((0, 4), np.uint32)
    tri.labelled_vertices, tri.surface_points = [], []
    tri.unused_modifier_vertices = np.zeros((0, 3), np.float32)
    if uvs is None:
        tri.uvs = tri.uv_triangles = tri.uv_quads = None
    else:  # as the games' files hold them: one coordinate per vertex, indexed per corner
        tri.uvs = np.asarray(uvs, np.float32).reshape(-1, 2)
        tri.uv_triangles = tri.triangles.copy()
        tri.uv_quads = np.zeros((0, 4), np.uint32)
        tri.flags |= TEXTURES
    return messages


def shape_base(nif, index):
    """(positions, triangles, uvs) of a written shape block, as the game reads them."""
    block = nif.blocks[index]
    if isinstance(block, BSTriShape):
        if block.vertex_data is None:  # Skyrim SE skinned: the partition holds them
            found = skinning.partition_geometry(nif, block)
            return found.positions, found.triangles, found.uvs
        return block.positions, block.triangles, block.uvs
    data = nif.blocks[block.data]
    return data.vertices, data.triangles, data.uv_sets[0] if len(data.uv_sets) else None


# -- BodySlide ----------------------------------------------------------------------------------------
def bodyslide_tri(parts):
    """One BodySlideTri of ``parts``: [(object, [Morph], [(shape name, vertex_ids or None: the
    import's vertices)])]. The first object's BodySlide file is the template; its shapes no
    object writes stay as stored. Returns (tri, messages)."""
    tri = None
    for obj, _, _ in parts:
        tri = template(sources(obj).get(naming.BODYSLIDE), BodySlideTri)
        if tri is not None:
            break
    if tri is None:
        tri = BodySlideTri()
        tri.uv_shapes = []  # as BodySlide writes a file: its (empty) texture-coordinate section too
    messages = []
    for obj, morphs, pieces in parts:
        stored_name = (sources(obj).get(naming.BODYSLIDE) or {}).get("shape")
        for name, vertex_ids in pieces:
            shape = tri.shape(stored_name) if vertex_ids is None and stored_name else None
            kept = shape.morphs if shape is not None else []
            written = []
            for morph in morphs:
                values = morph.values if vertex_ids is None else morph.values[vertex_ids]
                stored = morph.stored(kept)
                if stored is not None:
                    written.append(stored)
                elif np.any(values):
                    written.append(_slider(morph.name, values, obj))
            if shape is None:
                shape = tri.shape(name) or BodyShape(name)
                if shape not in tri.shapes:
                    tri.shapes.append(shape)
                if tri.uv_shapes and any(s.name == name for s in tri.uv_shapes):
                    tri.uv_shapes = [s for s in tri.uv_shapes if s.name != name]
                    messages.append(f"{obj.name}: its vertices changed: the texture-coordinate morphs of {name!r} are not written")
            shape.name, shape.morphs = name, written
    return tri, messages


def _slider(name, values, obj):
    moved = np.flatnonzero(np.any(values != 0, axis=1))
    scale, quantized = quantize(values[moved], f"{obj.name}: shape key {name!r}")
    offsets = np.zeros(len(moved), OFFSETS)
    offsets["index"], offsets["values"] = moved, quantized
    return SliderMorph(name, scale, offsets)


# -- with a NIF ---------------------------------------------------------------------------------------
def morph_files(nif_path, exporter):
    """The .tri files of the meshes a NIF export wrote ({object: [(shape block, vertex_ids)]} in
    ``exporter.file_vertices``), beside ``nif_path`` by the games' naming; a BODYTRI string extra
    data is added to the NIF's root when it names no BodySlide file and the file is new (one
    found under the NIF's name is written back there, the NIF left as it was). Returns ([(path, tri)],
    messages); raises FormatError for morphs that cannot be written."""
    planned, messages, bodyslide = {}, [], []
    for obj, pieces in exporter.file_vertices.items():
        by_role = morphs_by_role(obj)
        for role in sources(obj):  # a file read stays written, even when its morphs are gone
            by_role.setdefault(role, [])
        count = len(obj.data.vertices)
        untouched = len(pieces) == 1 and np.array_equal(pieces[0][1], np.arange(count))
        for role in naming.FACEGEN_ROLES:
            if role not in by_role:
                continue
            if len(pieces) > 1:
                raise FormatError(
                    f"{obj.name}: written as {len(pieces)} shapes (material slots, or more than 65535 vertices), but its "
                    f"{naming.ROLE_NAMES[role]} morphs go to a FaceGen .tri, which morphs one shape"
                )
            same = untouched and sources(obj).get(role, {}).get("vertices") == count
            index, vertex_ids = pieces[0]
            tri, more = facegen_tri(obj, role, by_role[role], None if same else shape_base(exporter.nif, index), vertex_ids)
            _plan(planned, naming.facegen_path(nif_path, role), tri, f"{obj.name}'s {naming.ROLE_NAMES[role]} morphs")
            messages += more
        if naming.BODYSLIDE in by_role:
            shapes = [(exporter.nif.blocks[index].name, None if untouched else vertex_ids) for index, vertex_ids in pieces]
            bodyslide.append((obj, by_role[naming.BODYSLIDE], shapes))
    if bodyslide:
        tri, more = bodyslide_tri(bodyslide)
        messages += more
        _plan(planned, _bodyslide_path(nif_path, exporter.nif, [obj for obj, _, _ in bodyslide]), tri, "the BodySlide morphs")
    return [(path, tri) for path, (tri, _) in planned.items()], messages


def _plan(planned, path, tri, what):
    if path in planned:
        raise FormatError(f"{path.name} would hold both {planned[path][1]} and {what}: a .tri holds one of them")
    planned[path] = (tri, what)


def _bodyslide_path(nif_path, nif, objects):
    values = bodytri_values(nif)
    if values:
        return naming.bodyslide_output(nif_path, values[0])
    path = Path(nif_path).with_suffix(".tri")
    if bodyslide_link(objects) == BY_NAME:
        return path
    root = nif.blocks[nif.roots[0]] if nif.roots else None
    if root is not None and hasattr(root, "extra_data"):
        nif.blocks.append(NiStringExtraData("NiStringExtraData", name=naming.BODYTRI, string_data=naming.bodytri_value(path)))
        root.extra_data = np.append(np.asarray(root.extra_data, np.int32), np.int32(len(nif.blocks) - 1))
    return path


def morph_links(objects, nif_name):
    """What an export with morphs writes for these objects' keys and how the NIF names it, as
    the export dialog says it: one line per .tri kind (FaceGen files by the NIF's name; the
    BodySlide file through the NIF's BODYTRI, by the NIF's name, or with a BODYTRI added)."""
    roles, bodyslide = set(), []
    for obj in objects:
        if getattr(obj, "type", None) != "MESH":
            continue
        found, stored = set(sources(obj)), records(obj)
        keys = obj.data.shape_keys
        named = {record["role"] for record in stored.values()}
        if keys is not None and any(key.name not in stored for key in keys.key_blocks if key != keys.reference_key):
            named.add(new_role(obj))
        mine = (found | named) - {None}
        roles |= mine
        if naming.BODYSLIDE in mine:
            bodyslide.append(obj)
    lines = [f"{naming.ROLE_NAMES[role].capitalize()} morphs: {nif_name}{naming.WRITTEN_ENDINGS[role]}.tri"
             for role in naming.FACEGEN_ROLES if role in roles]
    if bodyslide:
        link = bodyslide_link(bodyslide)
        lines.append(f"BodySlide morphs: {nif_name}.tri, " + (
            "a BODYTRI naming it is added to the NIF" if link == NEW_BODYTRI else
            "found by the NIF's name: no BODYTRI is added" if link == BY_NAME else
            "or where the NIF's BODYTRI names it"))
    return lines


# -- alone ---------------------------------------------------------------------------------------------
def export_tri(path, obj, role):
    """``obj``'s morphs of ``role`` as a .tri at ``path``. The mesh keeps the vertices the .tri
    (or its NIF) was read with, or never came from a NIF (its Blender vertices are the .tri's):
    a NIF mesh whose geometry changed is refused, its vertex order is the NIF export's to make.
    Returns (tri, messages)."""
    morphs = morphs_by_role(obj).get(role, [])
    source = sources(obj).get(role)
    if not morphs and source is None:
        raise FormatError(f"{obj.name} has no {naming.ROLE_NAMES[role]} morphs to write")
    mesh = obj.data
    fingerprint = geometry_fingerprint(mesh)
    same = source is not None and source["geometry"] == fingerprint
    if not same and mesh.get(schema.NIF_GEOMETRY) not in (None, fingerprint):
        raise FormatError(
            f"{obj.name}: its geometry changed since its NIF was imported: export the NIF (File > Export > NIF), which "
            f"writes its .tri files in the NIF's new vertex order"
        )
    if role == naming.BODYSLIDE:
        stored = (source or {}).get("shape")
        return bodyslide_tri([(obj, morphs, [(stored or shape_name(obj), None)])])
    if same:
        return facegen_tri(obj, role, morphs)
    return facegen_tri(obj, role, morphs, mesh_base(mesh), np.arange(len(mesh.vertices)))


def mesh_base(mesh):
    """(positions, triangles, uvs) of a mesh no NIF gave: its vertices in Blender's order, one
    texture coordinate per vertex (the first corner's: the game reads a vertex's from the NIF)."""
    count = len(mesh.vertices)
    co = np.empty(3 * count, np.float32)
    mesh.vertices.foreach_get("co", co)
    mesh.calc_loop_triangles()
    triangles = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    uvs = None
    if mesh.uv_layers.active is not None:
        loops = np.empty(3 * len(mesh.loop_triangles), np.int32)
        mesh.loop_triangles.foreach_get("loops", loops)
        corner = np.empty(2 * len(mesh.loops), np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", corner)
        uvs = np.zeros((count, 2), np.float32)
        used, first = np.unique(triangles, return_index=True)
        uvs[used] = corner.reshape(-1, 2)[loops[first]]
        uvs[:, 1] = 1.0 - uvs[:, 1]
    return co.reshape(-1, 3), triangles.reshape(-1, 3), uvs
