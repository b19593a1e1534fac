"""A copy only rescaled (neither moved nor turned) is an edit: the patch overrides its REFR
with the new scale (XSCL, read with struct) at the old DATA place and angles, and the cell's
merged physics holds its collision rescaled about its place (the crate cell of
test_precombined_physics, whose model is at hand)."""

import importlib

import numpy as np
from plugin_writer import independent_refrs
from test_precombined_physics import (  # noqa: F401 (data: the fixture)
    CELL, FLOOR, REFRS, data, found, imported_copies, matrix, merged_triangles, model_triangles, placed, placements,
)


def test_a_copy_rescaled_by_one_and_a_half_is_overridden_and_its_collision_follows(clean_scene, addon, data):
    import bpy

    exporter = importlib.import_module(f"{addon.__name__}.io.precombined.exporter")
    cell_outputs = importlib.import_module(f"{addon.__name__}.io.precombined.cell_outputs")
    path, collection, copies = imported_copies(addon, data)
    rescaled = copies[REFRS[1]]
    rescaled.scale = np.array(rescaled.scale) * 1.5
    bpy.context.view_layer.update()
    instances = placements()["instances"]
    stored = independent_refrs((data / "Test.esp").read_bytes())[REFRS[1]]
    plan = exporter.export_cell(str(path), list(collection.all_objects), plugins=[str(data / "Test.esp")],
                                patch=cell_outputs.PatchOptions(str(data / "Patch.esp")))
    assert not [m for m in plan.messages if "collision" in m], plan.messages

    refrs = independent_refrs((data / "Patch.esp").read_bytes())
    assert set(refrs) == {REFRS[1]}  # the others are kept: no override
    x, y, z, rx, ry, rz, scale = refrs[REFRS[1]]
    assert scale == np.float32(instances[1]["scale"] * 1.5) == np.float32(stored[6] * 1.5)  # 1.25 x 1.5
    np.testing.assert_allclose((x, y, z, rx, ry, rz), stored[:6], atol=1e-5)

    after = matrix(instances[1])
    after[:3, :3] *= 1.5  # about the copy's own place: its translation stays
    written = merged_triangles(data / "Meshes" / "PreCombined" / f"{CELL:08X}_Physics.nif")
    model = model_triangles()
    assert len(written) == 3 * len(model) + len(FLOOR)
    assert found(placed(after, model), written) == len(model)  # rescaled with its copy
    assert found(placed(matrix(instances[1]), model), written) < len(model) / 4  # not left at the old scale
    for kept in (0, 2):
        assert found(placed(matrix(instances[kept]), model), written) == len(model)
    assert found(FLOOR, written) == 2
