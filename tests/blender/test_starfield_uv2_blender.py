"""A Starfield mesh with a second UV set (the corpus body's LOD 0 .mesh rewritten here with
raw_starfield, its second set a lopsided function of the first): imported, the second UV layer
holds at every corner the file's (u, 1 - v); a vertex moved and the NIF exported, the new .mesh
holds the file's second set at every vertex, as half floats, unflipped."""

import struct

import numpy as np
from nif_rewriter import RawNif
from raw_starfield import geometry_slots, mesh_file, read_mesh, write_mesh
from test_starfield_blender import data_folder, export, faces, import_nif, shape_object


def second_uvs(uvs):
    """Per vertex, in [0.25, 0.75] x [0.1, 0.4], rounded to half floats as the file stores them."""
    uvs = np.asarray(uvs, np.float64)
    raw = np.stack([0.25 + 0.5 * uvs[:, 0], 0.1 + 0.3 * np.clip(uvs[:, 1], 0.0, 1.0)], axis=1)
    return [struct.unpack("<2e", struct.pack("<2e", *row)) for row in raw]


def with_second_uvs(corpus, folder):
    """The Data folder's NIF and its LOD 0 .mesh, given a second UV set: (NIF path, that set)."""
    nif = data_folder(corpus, folder)
    slot = geometry_slots(RawNif.read(nif), RawNif.read(nif).indices_of("BSGeometry")[0])[0]
    path = mesh_file(folder, slot[3])
    mesh = read_mesh(path.read_bytes())
    assert not mesh["uvs2"]  # the corpus has none: the layout this test builds
    uvs2 = second_uvs(mesh["uvs"])
    path.write_bytes(write_mesh(mesh["version"], mesh["triangles"], mesh["scale"], mesh["raw_positions"],
                                mesh["raw_normals"], mesh["raw_tangents"], mesh["uvs"], mesh["weights"],
                                mesh["per_vertex"], mesh["lods"], mesh["meshlets"] or (), mesh["culling"] or (),
                                mesh["colors"], uvs2, tail=mesh["meshlets"] is not None))
    assert read_mesh(path.read_bytes())["uvs2"] == uvs2
    return nif, np.array(uvs2, np.float64)


def test_a_second_uv_set_imports_and_exports_unflipped(clean_scene, addon, corpus, tmp_path):
    nif, uvs2 = with_second_uvs(corpus, tmp_path / "Data")
    collection, _ = import_nif(addon, nif)
    body = shape_object(collection)
    mesh = body.data
    assert len(mesh.uv_layers) == 2 and mesh.uv_layers.active_index == 0
    second = next(layer for layer in mesh.uv_layers if layer.name != mesh.uv_layers[0].name)
    corners = np.empty(2 * len(mesh.loops), np.float32)
    second.data.foreach_get("uv", corners)
    vertex_of = faces(mesh).ravel()
    expected = np.stack([uvs2[vertex_of, 0], 1.0 - uvs2[vertex_of, 1]], axis=1)
    np.testing.assert_allclose(corners.reshape(-1, 2), expected, atol=1e-6)

    body.data.vertices[100].co.z += 0.05
    out = tmp_path / "out" / "meshes" / "naked_f.nif"
    out.parent.mkdir(parents=True)
    export(addon, collection, out)
    slot = geometry_slots(RawNif.read(out), RawNif.read(out).indices_of("BSGeometry")[0])[0]
    written = read_mesh(mesh_file(tmp_path / "out", slot[3]).read_bytes())
    assert len(written["positions"]) == len(uvs2)
    np.testing.assert_array_equal(np.array(written["uvs2"], np.float64), uvs2)
