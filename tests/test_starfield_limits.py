"""Starfield edges that surviving mutants showed untested: a morph.dat of exactly 128 morphs
(the four u32 of a vertex's mask) is written, its last morph read back here with struct at the
mask's last bit, and 129 are refused; a .mesh that says 4 weights a vertex but holds none
gives every vertex no weights (files built here with raw_starfield)."""

import numpy as np
import pytest
from raw_starfield import read_morphs, write_mesh

from precombined_nif.core.errors import FormatError
from precombined_nif.core.starfield.mesh import MeshData
from precombined_nif.core.starfield.morphs import MorphFile


def test_128_morphs_fill_the_mask_and_129_are_refused():
    deltas = np.zeros((128, 3, 3), np.float32)
    deltas[127, 0] = (0.5, 0.0, -0.25)  # the last morph moves vertex 0: the mask's bit 127
    deltas[0, 2] = (0.0, 1.0, 0.0)
    names = [f"m{k}" for k in range(128)]
    read_names, count, found = read_morphs(MorphFile.from_deltas(names, deltas).to_bytes())
    assert read_names == names and count == 3
    assert set(found) == {(127, 0), (0, 2)}
    assert found[127, 0][0] == (0.5, 0.0, -0.25) and found[0, 2][0] == (0.0, 1.0, 0.0)
    with pytest.raises(FormatError, match="129 morphs: a vertex's mask names at most 128"):
        MorphFile.from_deltas([*names, "one more"], np.zeros((129, 3, 3), np.float32))


def test_a_mesh_saying_four_weights_a_vertex_but_holding_none_has_no_weights():
    data = write_mesh(2, [(0, 1, 2)], 1.0, [(0, 0, 0), (32767, 0, 0), (0, 32767, 0)], [0, 0, 0], [0, 0, 0],
                      uvs=[(0, 0)] * 3, per_vertex=4)
    bones, weights = MeshData.from_bytes(data).bone_weights
    assert bones.shape == weights.shape == (3, 0)
