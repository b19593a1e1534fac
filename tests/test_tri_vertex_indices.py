"""A BodySlide .tri whose morph moves the vertex just past its shape's last (index = the
shape's vertex count) is refused naming the shape and the morph; the last vertex itself is
not (a file built here with raw_tri)."""

import pytest
from raw_tri import bodyslide_bytes

from precombined_nif.core.errors import FormatError
from precombined_nif.core.tri import read_tri


def test_a_morph_index_at_the_vertex_count_is_refused(tmp_path):
    path = tmp_path / "body.tri"
    path.write_bytes(bodyslide_bytes([("Body", [("Thin", 0.01, [(0, (1, 2, 3)), (9, (4, 5, 6))])])]))
    tri = read_tri(path)
    tri.check_shape("Body", 10)  # vertices 0 to 9: index 9 is the last
    with pytest.raises(FormatError, match=r"shape 'Body', morph 'Thin': vertex index 9 is past the shape's 9 vertices"):
        tri.check_shape("Body", 9)
