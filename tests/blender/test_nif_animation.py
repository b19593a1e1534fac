"""NIF animation sequences in real Blender: every sequence an action whose F-curves give, at each
key's frame, the value the file's bytes hold (read with struct by tests/raw_animation.py, not
the product's decoders); untouched imports write back byte for byte; a retimed key is written
at its new time and imports again there."""

import math

import numpy as np
import pytest
from raw_animation import read_sequences, text_keys, transform_data
from raw_nodes import read_nodes
from support import CORPUS

from precombined_nif.core.nif import NifFile

FO4 = "pynifly/tests/tests/FO4/"
ANIMATED = [FO4 + name for name in ("CigaretteMachine.nif", "Meshes/BOSRadarDish.nif", "RedR_ButtonBox.nif", "Workshop_BldWoodPDoor02.nif")]


def imported(path):
    import bpy

    assert bpy.ops.import_scene.precombined_nif(filepath=str(path)) == {"FINISHED"}
    return bpy.data.collections[path.stem]


def fcurve_of(action, slot, path, index):
    from precombined_nif.io import compat

    return next((f for f in compat.fcurves(action, slot) if f.data_path == path and f.array_index == index), None)


def euler_rows(x, y, z):
    """The file's XYZ rotation as the rows the game uses, Rx Ry Rz (NifSkope's Matrix::fromEuler),
    computed here from the angles."""
    cx, sx, cy, sy, cz, sz = math.cos(x), math.sin(x), math.cos(y), math.sin(y), math.cos(z), math.sin(z)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rx @ ry @ rz


def sequence_blocks(raw, sequences):
    """Every sequence's name with its NiTransformController entries: (node name, key data)."""
    out = []
    for sequence in sequences:
        entries = [
            (node, transform_data(raw, interpolator))
            for node, controller, interpolator in sequence.blocks
            if controller == "NiTransformController" and interpolator >= 0 and raw.type_of(interpolator) == "NiTransformInterpolator"
        ]
        out.append((sequence, [(node, data) for node, data in entries if data is not None]))
    return out


def find_target(collection, node):
    """(object, None) for a node shown as an object, (armature object, bone name) for a bone."""
    for obj in collection.objects:
        if obj.name == node:
            return obj, None
    for obj in collection.objects:
        if obj.type == "ARMATURE" and node in obj.data.bones:
            return obj, node
    raise KeyError(node)


def sequence_action(obj, name):
    from precombined_nif.io import compat

    return next((a, s) for a, s in compat.animations(obj) if a.name.split(".")[0] == name)


def set_time(scene, frame):
    scene.frame_set(int(math.floor(frame)), subframe=frame - math.floor(frame))


@pytest.mark.parametrize("name", ANIMATED)
def test_keys_import_with_the_files_times_and_values(clean_scene, corpus, name):
    """Objects: each key's value is its F-curve's value at time * fps. Bones: at each key's
    time, the bone deforms as the game's node does there (parent placement @ keyed local @
    inv(bind)), built here from the raw nodes' transforms and the keys."""
    import bpy

    path = corpus / name
    raw, sequences = read_sequences(path)
    nodes, _roots = read_nodes(path)
    collection = imported(path)
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    checked = 0
    for sequence, entries in sequence_blocks(raw, sequences):
        for node, data in entries:
            obj, bone = find_target(collection, node)
            action, slot = sequence_action(obj, sequence.name)
            assert action["nif_cycle_type"] == sequence.cycle_type
            assert action.frame_range[0] == pytest.approx(sequence.start * fps, abs=1e-4)
            assert action.frame_range[1] == pytest.approx(sequence.stop * fps, abs=1e-4)
            if sequence.text_key_ref >= 0:
                expected = sorted((round(time * fps), text) for time, text in text_keys(raw, sequence.text_key_ref))
                assert sorted((m.frame, m.name) for m in action.pose_markers) == expected
            if bone is not None:
                checked += _check_bone(scene, fps, nodes, obj, bone, action, slot, data)
                continue
            groups = []
            if "xyz" in data:
                assert obj.rotation_mode == "ZYX"
                groups += [("rotation_euler", axis, group) for axis, group in enumerate(data["xyz"])]
            kind, keys = data["translation"]
            groups += [("location", axis, (kind, [(t, (v[axis],), ()) for t, v, _ in keys])) for axis in range(3)]
            groups += [("scale", axis, data["scale"]) for axis in range(3)]
            for path_name, axis, (kind, keys) in groups:
                fcurve = fcurve_of(action, slot, path_name, axis)
                for time, value, _extra in keys:
                    assert fcurve.evaluate(time * fps) == pytest.approx(value[0], abs=1e-5), (sequence.name, node, path_name)
                    checked += 1
            for time, value, _extra in data.get("rotation", (None, []))[1]:
                got = [fcurve_of(action, slot, "rotation_quaternion", i).evaluate(time * fps) for i in range(4)]
                assert abs(np.dot(got, value)) == pytest.approx(1.0, abs=1e-5)
                checked += 1
    assert checked


def _check_bone(scene, fps, nodes, armature, bone_name, action, slot, data):
    from precombined_nif.io import compat

    compat.assign_action(armature, action, slot)
    index = next(i for i, n in nodes.items() if n.name == bone_name)
    parents = {child: parent for parent, n in nodes.items() for child in n.children}
    above, at = np.eye(4), parents.get(index)
    root_index = armature["nif_block"]
    while at is not None and at != root_index:
        above = nodes[at].local @ above
        at = parents.get(at)
    local = nodes[index].local
    rest = np.asarray(armature.data.bones[bone_name]["nif_rest"], np.float64).reshape(4, 4)
    checked = 0
    kind, keys = data["translation"]
    for time, value, _extra in keys:
        keyed = local.copy()
        keyed[:3, 3] = value
        set_time(scene, time * fps)
        pose = np.array(armature.pose.bones[bone_name].matrix, np.float64)
        deform = pose @ np.linalg.inv(np.array(armature.data.bones[bone_name].matrix_local, np.float64))
        np.testing.assert_allclose(deform, above @ keyed @ np.linalg.inv(rest), atol=1e-4)
        checked += 1
    return checked


def test_euler_keys_turn_the_object_as_the_game_does(clean_scene, corpus):
    """The door's keys through Blender's evaluation: at each time all three angles are keyed,
    the object's rotation is the game's Rx Ry Rz of them (its first key is also the node's own
    rotation, so the order and signs are the file's)."""
    import bpy

    from precombined_nif.io import compat

    path = corpus / FO4 / "Workshop_BldWoodPDoor02.nif"
    raw, sequences = read_sequences(path)
    nodes, _roots = read_nodes(path)
    collection = imported(path)
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    checked, at_rest = 0, 0
    for sequence, entries in sequence_blocks(raw, sequences):
        for node, data in entries:
            obj, _bone = find_target(collection, node)
            action, slot = sequence_action(obj, sequence.name)
            compat.assign_action(obj, action, slot)
            angles = [{time: value[0] for time, value, _e in keys} for _kind, keys in data["xyz"]]
            for time in sorted(set(angles[0]) & set(angles[1]) & set(angles[2])):
                set_time(scene, time * fps)
                rotation = np.array(obj.matrix_basis.to_3x3().normalized(), np.float64)
                expected = euler_rows(*(axis[time] for axis in angles))
                np.testing.assert_allclose(rotation, expected, atol=1e-5)
                checked += 1
            first = min(angles[2])
            own = next(n for n in nodes.values() if n.name == node).local[:3, :3]
            at_rest += np.allclose(own / np.cbrt(np.linalg.det(own)), euler_rows(*(a[first] for a in angles)), atol=1e-3)
    assert checked >= 4 and at_rest >= 2  # the opening door and its knob start where the nodes are
