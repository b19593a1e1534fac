"""A .tri's morphs as shape keys on the mesh it belongs to, vertices matched as the games match
them: a FaceGen morph moves the mesh's vertex i by its offset i (the mesh may have more
vertices than the .tri: those do not move; fewer is refused), a BodySlide shape is the mesh of
its name and its indices are that mesh's vertices. A FaceGen .tri with no mesh becomes a mesh of
its own (a FaceGen file holds its base mesh). Knows core objects and bpy, never file bytes."""

import os
import zlib
from pathlib import Path

import bpy
import numpy as np

from ...core.archives.data import read_path
from ...core.errors import FormatError, failure_text
from ...core.nif.blocks.extra_data import NiStringExtraData
from ...core.tri import FaceGenTri, naming, tri_from_bytes
from ..mesh_build import build_mesh, proper_triangles
from ..datablocks import rolled_back
from ..mesh_read import geometry_fingerprint
from ..names import unsuffixed
from .. import schema
from . import shape_keys


def keep_source(obj, role, path, data, shape=None, linked=True):
    """Remember the file a role's morphs came from on the object (the export's template).
    ``linked`` False: a BodySlide file found by its NIF's name, which no BODYTRI names."""
    sources = obj.get(schema.TRI_SOURCES)
    sources = {} if sources is None else sources.to_dict()
    sources[role] = {
        "path": str(path),
        "data": zlib.compress(bytes(data), 1),
        "shape": shape or "",
        "vertices": len(obj.data.vertices),
        "geometry": geometry_fingerprint(obj.data),
        "linked": linked,
    }
    obj[schema.TRI_SOURCES] = sources
    schema.stamp(obj)


def _add_morphs(obj, role, morphs):
    """A shape key per (kind, name, offsets) of ``morphs``, each recorded with its place in its
    file (in its shape, for BodySlide)."""
    records = obj.get(schema.TRI_MORPHS)
    records = {} if records is None else records.to_dict()
    base = shape_keys.coordinates(shape_keys.reference(obj), len(obj.data.vertices))
    for index, (kind, name, values) in enumerate(morphs):
        key, held = shape_keys.add_key(obj, name, values, base)
        digest = shape_keys.digest(held)  # the key as Blender holds it is what the export compares
        records[key.name] = {"role": role, "kind": kind, "name": name, "index": index, "digest": digest}
    obj[schema.TRI_MORPHS] = records


def apply_facegen(obj, tri, role, path, data):
    """The morphs of a FaceGen .tri as shape keys of ``obj``; returns warnings."""
    count = len(obj.data.vertices)
    size = len(tri.vertices)
    if size > count:
        raise FormatError(
            f"its {size} vertices are more than the {count} of mesh {obj.name!r}: the game moves a mesh's vertices in "
            f"the .tri's order, so this .tri is not this mesh's",
            path=path,
        )
    warnings = []
    if size < count:
        warnings.append(
            f"{Path(path).name}: {size} vertices for the {count} of {obj.name!r}: its morphs move the first {size}, as "
            f"the game applies them"
        )
    morphs = []
    for morph in tri.morphs + tri.modifiers:
        values = np.zeros((count, 3), np.float32)
        values[:size] = tri.offsets(morph)
        morphs.append((morph.kind, morph.name, values))
    _add_morphs(obj, role, morphs)
    keep_source(obj, role, path, data)
    return warnings


def apply_bodyslide(obj, tri, shape_name, path, data, linked=True):
    """The morphs of one shape of a BodySlide .tri as shape keys of ``obj``; returns warnings."""
    count = len(obj.data.vertices)
    tri.check_shape(shape_name, count)
    morphs = []
    for morph in tri.shape(shape_name).morphs:
        values = np.zeros((count, 3), np.float32)
        values[morph.indices] = morph.values
        morphs.append(("bodyslide", morph.name, values))
    _add_morphs(obj, naming.BODYSLIDE, morphs)
    keep_source(obj, naming.BODYSLIDE, path, data, shape_name, linked)
    uv_shapes = [s for s in tri.uv_shapes or [] if s.name == shape_name and s.morphs]
    if uv_shapes:
        return [f"{Path(path).name}: the texture-coordinate morphs of {shape_name!r} are kept as stored (Blender shows none)"]
    return []


def facegen_object(context, tri, path, role, data, rollback):
    """A new mesh object from a FaceGen .tri's own base mesh, its morphs as shape keys."""
    mesh = rollback.add(build_mesh(Path(path).stem, tri.vertices, _faces(tri),
                                   uvs=tri.uvs if tri.uv_triangles is None else None))
    if tri.uv_triangles is not None:
        _corner_uvs(mesh, tri)
    obj = rollback.add(bpy.data.objects.new(mesh.name, mesh))
    context.collection.objects.link(obj)
    return obj, apply_facegen(obj, tri, role, path, data)


def _triangulated(triangles, quads):
    """Triangles, then each quad as two."""
    quads = np.asarray(quads, np.int64).reshape(-1, 4)
    return np.concatenate([np.asarray(triangles, np.int64).reshape(-1, 3), quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])


def _faces(tri):
    return _triangulated(tri.triangles, tri.quads)


def _corner_uvs(mesh, tri):
    """Texture coordinates given per face corner (X differs from V), as build_mesh made the faces."""
    corners = _triangulated(tri.uv_triangles, tri.uv_quads)[proper_triangles(_faces(tri))].ravel()
    if len(corners) and corners.max() >= len(tri.uvs):
        raise FormatError(f"a face corner uses texture coordinate {int(corners.max())} of only {len(tri.uvs)}")
    uv = np.asarray(tri.uvs, np.float32)[corners]
    uv[:, 1] = 1.0 - uv[:, 1]
    mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", uv.ravel())


# -- which mesh a .tri belongs to ----------------------------------------------------------------
def shape_name(obj):
    """The NIF shape name an object stands for: its block's name, kept in the object's name."""
    return unsuffixed(obj.name)


def facegen_target(meshes, tri):
    """The mesh a FaceGen .tri belongs to among ``meshes``: the one with exactly its vertex count,
    else the only mesh (which may have more vertices); None when none fits."""
    exact = [obj for obj in meshes if len(obj.data.vertices) == len(tri.vertices)]
    if len(exact) == 1:
        return exact[0]
    return meshes[0] if len(meshes) == 1 else None


def bodyslide_targets(meshes, tri):
    """{shape name: mesh} of the shapes a BodySlide .tri names: the meshes of those names; a file
    of one shape given one mesh goes onto it whatever its name."""
    by_name = {}
    for obj in meshes:
        by_name.setdefault(shape_name(obj), obj)
    found = {shape.name: by_name[shape.name] for shape in tri.shapes if shape.name in by_name}
    if not found and len(tri.shapes) == 1 and len(meshes) == 1:
        found[tri.shapes[0].name] = meshes[0]
    return found


@rolled_back
def apply_file(context, path, meshes, role=None, *, rollback):
    """A .tri (loose, or ``ARCHIVE.ba2:inner/path``) onto the meshes it belongs to among
    ``meshes`` (a FaceGen .tri with none: a new mesh of its own, added to ``rollback``).
    ``role``: a FaceGen file's role, by default by its name. Returns (objects given morphs,
    warnings). Every check comes before any shape key is added: a refused file changes nothing."""
    data = read_path(path)
    return apply_tri(context, tri_from_bytes(data, path=path), path, data, meshes, role, rollback=rollback)


def same_file(first, second):
    """Whether two paths (loose, or ``ARCHIVE.ba2:inner/path``) name one file, as the games
    compare names: case-insensitively."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.normcase(os.path.abspath(str(first))).lower() == os.path.normcase(os.path.abspath(str(second))).lower()


def loaded_from(obj, role, path):
    """Whether ``obj`` holds ``role``'s morphs of the file ``path`` already (its NIF's import
    loaded it): the file named again is not loaded twice."""
    source = (obj.get(schema.TRI_SOURCES) or {}).get(role)
    return source is not None and same_file(source["path"], path)


def apply_tri(context, tri, path, data, meshes, role=None, *, rollback, own_mesh=True, linked=True):
    """``apply_file`` of a read .tri; ``own_mesh`` False: a FaceGen .tri fitting no mesh is refused;
    ``linked`` False: a BodySlide file found by the NIF's name (its export adds no BODYTRI).
    Meshes holding this file's morphs already are left as they are."""
    if isinstance(tri, FaceGenTri):
        role = role if role in naming.FACEGEN_ROLES else naming.facegen_role(path)
        target = facegen_target(meshes, tri)
        if target is not None and loaded_from(target, role, path):
            return [target], []
        if target is not None:
            return [target], apply_facegen(target, tri, role, path, data)
        if not own_mesh:
            raise FormatError(f"no mesh has its {len(tri.vertices)} vertices", path=path)
        obj, warnings = facegen_object(context, tri, path, role, data, rollback)
        if meshes:
            warnings.insert(0, f"{Path(path).name}: no selected mesh has its {len(tri.vertices)} vertices: imported as a "
                               f"mesh of its own")
        return [obj], warnings
    targets = bodyslide_targets(meshes, tri)
    if not targets:
        names = ", ".join(repr(shape.name) for shape in tri.shapes)
        raise FormatError(f"its shapes ({names}) name none of the meshes it was given", path=path)
    given = list(targets.values())
    warnings = [f"{Path(path).name}: shape {shape.name!r} names no mesh: its morphs are kept as stored"
                for shape in tri.shapes if shape.name not in targets]
    targets = {name: obj for name, obj in targets.items() if not loaded_from(obj, naming.BODYSLIDE, path)}
    for name, obj in targets.items():  # all checked before any is given morphs
        tri.check_shape(name, len(obj.data.vertices))
    for name, obj in targets.items():
        warnings += apply_bodyslide(obj, tri, name, path, data, linked)
    return given, warnings


# -- with a NIF ----------------------------------------------------------------------------------
def bodytri_values(nif):
    return [block.string_data for block in nif.blocks
            if isinstance(block, NiStringExtraData) and block.name == naming.BODYTRI and block.string_data]


def load_companions(context, nif, path, objects, rollback):
    """The .tri files a NIF's games read with it (core.tri.naming.companion_files: FaceGen files
    named after it, the BodySlide file its BODYTRI names; an archived NIF's from its Data folder)
    onto the meshes ``objects`` built; returns warnings. A file that cannot be read or does not
    fit is a warning: the NIF's import stands."""
    meshes = [obj for obj in objects if isinstance(obj, bpy.types.Object) and obj.type == "MESH" and len(obj.data.vertices)]
    warnings = []
    for role, tri_path in naming.companion_files(path, bodytri_values(nif)):
        try:
            data = read_path(tri_path)
            tri = tri_from_bytes(data, path=tri_path)
            linked = role == naming.BODYSLIDE  # else found by the NIF's name, as FaceGen files are
            warnings += apply_tri(context, tri, tri_path, data, meshes, role, rollback=rollback, own_mesh=False,
                                  linked=linked)[1]
        except (FormatError, OSError) as error:
            warnings.append(f"morphs not loaded: {failure_text(tri_path, error)}")
    return warnings
