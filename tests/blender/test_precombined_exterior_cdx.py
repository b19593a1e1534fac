"""The corpus cell's 11 meshes exported where the plugin's .cdx lists the cell as an exterior
one (the CK's own rows turned, with struct, into the rows of the cell in world 3C at a grid
place, as test_cdx_exterior builds them): the .cdx written again is the same file, every row
still keyed by the world and the grid, at (0, 0) (no grid bits) too."""

import pytest
from test_cdx_exterior import CK, WORLD, exterior, file_of, rows_of
from test_precombined_previs import data_folder, export_all

pytestmark = pytest.mark.slow  # the corpus's 11 real cells imported and exported in Blender


@pytest.mark.parametrize("grid", [(0, 0), (-3, 5)])
def test_the_cells_exterior_rows_are_written_back_keyed_by_world_and_grid(clean_scene, addon, tmp_path, grid):
    folder = data_folder(tmp_path, "loose")
    index = file_of(exterior(rows_of((CK / "AlootHomePlate.cdx").read_bytes()), WORLD, *grid))
    (folder / "AlootHomePlate.cdx").write_bytes(index)
    export_all(addon, folder, tmp_path / "out")
    written = (tmp_path / "out" / "AlootHomePlate.cdx").read_bytes()
    assert {(r[1], r[0] & 0xFFFFFF80) for r in rows_of(written)} == {(WORLD, (grid[0] & 0xFFF) << 20 | (grid[1] & 0xFFF) << 8)}
    assert written == index
