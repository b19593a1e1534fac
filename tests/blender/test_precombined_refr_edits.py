"""Edits of the corpus cell's copies (ck-precombined/) as a patch carries them, checked against
values worked out here from the edit and the files, read with struct (plugin_writer): a copy
turned about a tilted axis and moved gets DATA angles that turn the game's way to the copy's new
rotation (the convention checked first on the CK's own tilted copies and their REFRs); a patch
updated by a second export gets new REFRs numbered after the first export's, and its header's
next object id past them."""

import struct

import numpy as np
from plugin_writer import independent_refrs, xcri_pairs
from test_precombined_patch import (  # noqa: F401 (data: the fixture)
    MOVED_CELL, PATCH, PLUGIN, check_common, copies, corpus_records, data, duplicate, export, import_cell, named_copy,
    patch_records,
)

TIPPED = "00001E58_0F5ED9F3_OC.NIF"  # copies turned about x and y


def about(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    out = np.eye(3)
    out[i, i], out[i, j], out[j, i], out[j, j] = c, -s, s, c
    return out


def refr_rotation(angles):
    """The rotation a REFR's DATA angles (radians) stand for, as the game turns a reference:
    about z, then y, then x, each the other way round (xEdit's Rotation X/Y/Z, negated)."""
    x, y, z = angles
    return about(0, -x) @ about(1, -y) @ about(2, -z)


def world_rotation(obj):
    matrix = np.array(obj.matrix_world, np.float64)[:3, :3]
    return matrix / np.cbrt(np.linalg.det(matrix))


def groups(data):
    """How many GRUPs the plugin holds, walked with struct."""
    found, at = 0, 24 + struct.unpack_from("<I", data, 4)[0]
    while at < len(data):
        kind, size = struct.unpack_from("<4sI", data, at)
        if kind == b"GRUP":
            found += 1
            at += 24
        else:
            at += 24 + size
    return found


def test_the_cks_tilted_copies_stand_at_their_refrs_angles(clean_scene, addon, data):
    """The convention this file checks edits with, on the CK's own output: every copy matched to
    a REFR of the plugin has the rotation that REFR's angles give."""
    refrs = independent_refrs(PLUGIN.read_bytes())
    tilted = 0
    for name in (TIPPED, MOVED_CELL):
        collection = import_cell(addon, data / "Meshes" / "PreCombined" / name)
        for obj in (o for o in copies(collection) if "reference_form_id" in o):
            angles = refrs[int(obj["reference_form_id"], 16)][3:6]
            np.testing.assert_allclose(world_rotation(obj), refr_rotation(angles), atol=2e-4, err_msg=obj.name)
            tilted += abs(angles[0]) > 1e-3 and abs(angles[1]) > 1e-3
    assert tilted >= 1  # copies turned about x and y, so the order of the turns shows


def test_a_turned_copy_moved_gets_the_angles_of_its_new_rotation(clean_scene, addon, data):
    import bpy
    from mathutils import Matrix

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    turned = named_copy(collection, 0)
    form_id = int(turned["reference_form_id"], 16)
    before = np.array(turned.matrix_world)
    turn = about(0, 0.3) @ about(1, -0.5) @ about(2, 1.1)  # not symmetric: a transposed write shows
    location = before[:3, 3] + (40.0, -25.0, 10.0)
    new = np.eye(4)
    new[:3, :3] = turn @ before[:3, :3]
    new[:3, 3] = location
    turned.matrix_world = Matrix(new.tolist())
    bpy.context.view_layer.update()
    plan = export(addon, collection, path, data / PATCH)
    records, _, _ = check_common(data, plan)
    x, y, z, *angles = struct.unpack("<6f", records[form_id]["fields"]["DATA"][0])
    np.testing.assert_allclose((x, y, z), location, atol=1e-3)
    expected = new[:3, :3] / np.cbrt(np.linalg.det(new[:3, :3]))
    np.testing.assert_allclose(refr_rotation(angles), expected, atol=1e-5)
    assert not np.allclose(refr_rotation(angles), expected.T, atol=1e-2)


def test_a_patch_updated_twice_numbers_its_new_refrs_on(clean_scene, addon, data):
    """Two exports, each with a duplicated copy: two new REFRs, the second numbered after the
    first (both kept), both in the CELL's combined references, HEDR's next object id past both."""
    import bpy

    path = data / "Meshes" / "PreCombined" / MOVED_CELL
    collection = import_cell(addon, path)
    first = duplicate(named_copy(collection, 2), (0.0, 0.0, 150.0))
    plan = export(addon, collection, path, data / PATCH)
    _, records = patch_records(data)
    (new_first,) = [r for r in records.values() if r["form_id"] >> 24 == 2]
    first_position = np.array(first.matrix_world)[:3, 3]
    bpy.data.objects.remove(first)

    other = data / "Meshes" / "PreCombined" / TIPPED
    second = import_cell(addon, other)
    source = named_copy(second, 0)
    twin = duplicate(source, (75.0, 0.0, 0.0))
    plan = export(addon, second, other, data / PATCH, update=True)
    check_common(data, plan)
    _, records = patch_records(data)
    new = sorted((r for r in records.values() if r["form_id"] >> 24 == 2), key=lambda r: r["form_id"])
    assert [r["form_id"] for r in new] == [new_first["form_id"], new_first["form_id"] + 1]
    np.testing.assert_allclose(struct.unpack("<6f", new[0]["fields"]["DATA"][0])[:3], first_position, atol=1e-3)
    np.testing.assert_allclose(struct.unpack("<6f", new[1]["fields"]["DATA"][0])[:3], np.array(twin.matrix_world)[:3, 3],
                               atol=1e-3)
    assert new[1]["fields"]["NAME"] == corpus_records()[int(source["reference_form_id"], 16)]["fields"]["NAME"]
    meshes, pairs = xcri_pairs(records[0x1E58]["fields"]["XCRI"][0])
    listed = {ref for ref, _ in pairs}
    assert {r["form_id"] for r in new} <= listed
    assert (new[1]["form_id"], int(TIPPED.split("_")[1], 16)) in pairs
    header = (data / PATCH).read_bytes()
    assert header[:4] == b"TES4" and header[24:28] == b"HEDR"
    _, count, next_id = struct.unpack_from("<fiI", header, 30)
    assert next_id == (new[1]["form_id"] & 0xFFFFFF) + 1
    assert count == len(records) + groups(header)  # the game's count: records and groups, not TES4
    bpy.data.objects.remove(twin)
