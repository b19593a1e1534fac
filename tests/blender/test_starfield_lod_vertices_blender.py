"""Starfield meshes whose triangle lists share one vertex buffer (a .mesh's LOD 0 and its mesh
LODs, imported as objects under the slot's): an edit that keeps the topology keeps the vertex
count and order the skin's weights and the morphs index. Moving a vertex the mesh LODs use
once wrote it twice (nifly's TestNifFile_SF: 6,616 vertices became 6,622): the LOD objects
still held it at its old place, and the neighbours whose normals Blender turned with the move
no longer matched the LODs' by value. A mesh LOD still as imported now uses the slot's
vertices it came from. Checked against the .mesh bytes read by struct (tests/raw_starfield.py),
on every corpus Starfield mesh and on a mesh built here."""

import importlib
import shutil

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_starfield import SF, beside_file, geometry_slots, mesh_file, name_first_slot, read_mesh, shared_lod_mesh
from support import CORPUS, corpus_files

NIFLY = "nifly/tests/input/TestNifFile_SF.nif"  # its .mesh beside it, named TestNifFile_SF
NIFS = [path.relative_to(CORPUS).as_posix() for path in corpus_files(f"{SF}/**/*.nif") if path.name != "skeleton.nif"]
BODY = f"{SF}/naked_f.nif"
MOVE = np.array((0.0, 0.01, 0.03))


def module(addon, name):
    return importlib.import_module(f"{addon.__name__}.{name}")


def data_folder(corpus, folder, nif):
    """(the NIF copied under ``folder``/meshes, the stored .mesh bytes): a Data folder holding the
    NIF and the .mesh its LOD 0 names, or for nifly's the NIF with its .mesh beside it."""
    (folder / "meshes").mkdir(parents=True)
    target = folder / "meshes" / (corpus / nif).name
    shutil.copy(corpus / nif, target)
    if nif == NIFLY:
        shutil.copy((corpus / nif).with_suffix(".mesh"), target.with_suffix(".mesh"))
        return target, target.with_suffix(".mesh").read_bytes()
    raw = RawNif.read(target)
    name = geometry_slots(raw, raw.indices_of("BSGeometry")[0])[0][3]
    mesh_file(folder, name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(mesh_file(corpus / SF, name), mesh_file(folder, name))
    return target, mesh_file(folder, name).read_bytes()


def built_file(corpus, folder):
    """(NIF path, .mesh bytes): the corpus body's NIF naming the mesh built by shared_lod_mesh."""
    data, _ = shared_lod_mesh()
    mesh = read_mesh(data)
    raw = RawNif.read(corpus / BODY)
    index = raw.indices_of("BSGeometry")[0]
    name_first_slot(raw, index, "test\\shared", len(mesh["triangles"]), len(mesh["positions"]))
    (folder / "meshes").mkdir(parents=True)
    target = folder / "meshes" / "shared.nif"
    target.write_bytes(raw.to_bytes())
    mesh_file(folder, "test\\shared").parent.mkdir(parents=True)
    mesh_file(folder, "test\\shared").write_bytes(data)
    return target, data


def imported_shape(addon, path):
    import bpy

    collection, _ = module(addon, "io.file_import").import_nif(bpy.context, str(path))
    bpy.context.view_layer.update()
    (obj,) = [o for o in collection.objects if o.get("nif_type") == "BSGeometry"]
    return collection, obj


def exported_mesh(addon, collection, out):
    out.parent.mkdir(parents=True, exist_ok=True)
    objects = module(addon, "io.collection_objects").objects_in(collection)
    module(addon, "io.nif.exporter").export_nif(str(out), objects)
    raw = RawNif.read(out)
    name = geometry_slots(raw, raw.indices_of("BSGeometry")[0])[0][3]
    # under the Data folder, or beside the NIF when the import found it beside (nifly's): one of them
    places = [mesh_file(out.parent.parent, name), beside_file(out, name)]
    (found,) = [place for place in places if place.is_file()]
    return read_mesh(found.read_bytes())


def dense_weights(mesh):
    """(vertices, bones) weights of a struct-read .mesh."""
    pairs = np.array(mesh["weights"], np.int64).reshape(len(mesh["positions"]), -1, 2)
    out = np.zeros((len(pairs), int(pairs[..., 0].max(initial=0)) + 1))
    np.add.at(out, (np.arange(len(pairs))[:, None].repeat(pairs.shape[1], 1), pairs[..., 0]), pairs[..., 1] / 65535)
    return out


def shared_vertex(stored):
    """A vertex every triangle list of the mesh uses (any vertex without mesh LODs)."""
    used = set(range(len(stored["positions"])))
    for triangles in stored["lods"]:
        used &= set(np.asarray(triangles).ravel().tolist())
    return sorted(used)[len(used) // 2]


def check_moved_keeps_the_buffer(addon, path, stored_bytes, out):
    """Move one vertex of LOD 0: the written .mesh holds the stored vertices in their order, the
    moved one at its new place (to a position step), every triangle list, UV and weight as stored."""
    from mathutils import Vector

    stored = read_mesh(stored_bytes)
    collection, obj = imported_shape(addon, path)
    vertex = shared_vertex(stored)
    obj.data.vertices[vertex].co += obj.matrix_world.inverted().to_3x3() @ Vector(MOVE)
    written = exported_mesh(addon, collection, out)
    assert len(written["positions"]) == len(stored["positions"])
    before, after = np.array(stored["positions"]), np.array(written["positions"])
    others = np.setdiff1d(np.arange(len(before)), [vertex])
    np.testing.assert_array_equal(np.array(written["raw_positions"])[others], np.array(stored["raw_positions"])[others])
    world = np.array(obj.matrix_world)[:3, :3]
    step = written["scale"] / 32767
    assert np.abs(world @ (after[vertex] - before[vertex]) - MOVE).max() <= 2 * step * np.abs(world).sum(axis=1).max()
    # (arrays: pytest's diff of long lists takes minutes)
    for key in ("triangles", "uvs"):
        assert np.array_equal(written[key], stored[key]), key
    np.testing.assert_allclose(dense_weights(written), dense_weights(stored), atol=1.5 / 65535)  # re-encoded: to a unit
    assert len(written["lods"]) == len(stored["lods"]) and all(map(np.array_equal, written["lods"], stored["lods"]))
    return stored, written, collection, obj, vertex


@pytest.mark.parametrize("name", [*NIFS, NIFLY])
def test_a_moved_vertex_keeps_every_corpus_starfield_mesh_s_vertices(clean_scene, addon, corpus, tmp_path, name):
    path, stored = data_folder(corpus, tmp_path, name)
    check_moved_keeps_the_buffer(addon, path, stored, tmp_path / "out" / "meshes" / "out.nif")


def test_a_moved_vertex_keeps_a_built_mesh_s_vertices(clean_scene, addon, corpus, tmp_path):
    """The built mesh: vertex 3 (in LOD 0 and both mesh LODs) moved, 16 vertices written in
    their order; the mesh LODs' triangles name the moved vertex."""
    path, data = built_file(corpus, tmp_path)
    _, values = shared_lod_mesh()
    stored, written, _, _, vertex = check_moved_keeps_the_buffer(addon, path, data, tmp_path / "out" / "meshes" / "out.nif")
    assert vertex == 3 and len(written["positions"]) == 16
    assert [list(map(tuple, lod)) for lod in written["lods"]] == values["lods"]


def test_an_edited_mesh_lod_gets_its_own_vertex(clean_scene, addon, corpus, tmp_path):
    """A vertex moved in a mesh LOD's object alone is that LOD's own: added after LOD 0's, which
    stay as stored, and only that LOD's triangles name it."""
    path, data = built_file(corpus, tmp_path)
    stored = read_mesh(data)
    collection, obj = imported_shape(addon, path)
    lod = next(o for o in obj.children if o.get("sf_mesh_lod") == 2)
    corner = [tuple(np.round(v.co, 5)) for v in lod.data.vertices].index(tuple(np.round(obj.data.vertices[15].co, 5)))
    lod.data.vertices[corner].co.z += 0.05
    written = exported_mesh(addon, collection, tmp_path / "out" / "meshes" / "out.nif")
    assert len(written["positions"]) == 17
    np.testing.assert_array_equal(np.array(written["raw_positions"])[:16], np.array(stored["raw_positions"]))
    assert np.array_equal(written["triangles"], stored["triangles"]) and np.array_equal(written["lods"][0], stored["lods"][0])
    assert sorted(np.asarray(written["lods"][1]).ravel().tolist()) == [0, 3, 16]
    assert written["positions"][16][2] == pytest.approx(stored["positions"][15][2] + 0.05, abs=2 / 32767)
