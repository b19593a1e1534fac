"""A FaceGen .tri imported on its own shows its texture coordinates as the file has them: at
every face corner, the file's (u, v) of that corner (its UV triangle's, read here by raw_tri)
as Blender's (u, 1 - v), for the corpus heads (one with more UVs than vertices, so the corners
differ from the vertices) and a file built here with quads and a lopsided UV layout."""

import numpy as np
import pytest
import raw_tri
from test_tri_blender import ALONE, corpus_file, import_alone


def corner_uvs(obj):
    """(polygon vertex tuples, uv per corner) of the object's mesh."""
    mesh = obj.data
    uv = np.empty(2 * len(mesh.loops), np.float32)
    mesh.uv_layers[0].data.foreach_get("uv", uv)
    faces = [tuple(p.vertices) for p in mesh.polygons]
    return faces, uv.reshape(-1, 2)


def expected_corners(raw):
    """{triangle's vertices: its corners' (u, 1 - v)}, quads split (0, 1, 2), (0, 2, 3)."""
    uvs = raw["uvs"].astype(np.float64)
    out = {}
    faces = [(f, g) for f, g in zip(raw["triangles"], raw["uv_triangles"])]
    for f, g in zip(raw["quads"], raw["uv_quads"]):
        faces += [(f[[0, 1, 2]], g[[0, 1, 2]]), (f[[0, 2, 3]], g[[0, 2, 3]])]
    for face, corners in faces:
        out.setdefault(tuple(int(i) for i in face), [(uvs[c, 0], 1.0 - uvs[c, 1]) for c in corners])
    return out


def check(obj, raw):
    faces, uv = corner_uvs(obj)
    expected = expected_corners(raw)
    at = 0
    for face in faces:
        want = expected.get(face)
        if want is None:  # the same triangle started at another corner
            turn = next(k for k in range(1, len(face)) if face[k:] + face[:k] in expected)
            want = np.roll(expected[face[turn:] + face[:turn]], turn, axis=0)
        np.testing.assert_allclose(uv[at : at + len(face)], want, atol=1e-6, err_msg=str(face))
        at += len(face)
    assert at == len(uv) and len(faces) > 0


@pytest.mark.parametrize("name", ALONE)
def test_a_corpus_tri_alone_shows_its_uvs(clean_scene, name):
    path = corpus_file(name)
    raw = raw_tri.facegen(path.read_bytes())
    assert raw["uvs"] is not None and raw["uv_triangles"] is not None
    check(import_alone(path), raw)


def test_a_built_tri_alone_with_quads_shows_its_uvs(clean_scene, tmp_path):
    vertices = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 0), (2, 1, 0)]
    uvs = [(0.1, 0.05), (0.4, 0.05), (0.4, 0.3), (0.1, 0.3), (0.9, 0.8), (0.9, 0.95), (0.6, 0.95)]
    data = raw_tri.facegen_bytes(vertices, [(1, 4, 5)], quads=[(0, 1, 2, 3)], uvs=uvs, uv_triangles=[(4, 5, 6)],
                                 uv_quads=[(0, 1, 2, 3)])
    path = tmp_path / "lopsided.tri"
    path.write_bytes(data)
    raw = raw_tri.facegen(data)
    obj = import_alone(path)
    check(obj, raw)
    _, uv = corner_uvs(obj)
    assert uv[:, 1].min() > 0.04 and abs(uv[:, 1].max() - 0.95) < 1e-6  # 1 - 0.05 and 1 - 0.95 both there
