"""NIF animation sequences in real Blender: every sequence an action whose F-curves give, at each
key's frame, the value the file's bytes hold (read with struct by tests/raw_animation.py, not
the product's decoders); untouched imports write back byte for byte; a retimed key is written
at its new time and imports again there."""

import math
import re

import numpy as np
import pytest
from kf_writer import PELVIS_ROTATIONS, PELVIS_TRANSLATIONS, SKELETON, SPINE_X, SPINE_Z, build_kf
from raw_animation import read_sequences, text_keys, transform_data
from raw_nodes import read_nodes
from scene import export_file, imported


FO4 = "pynifly/tests/tests/FO4/"
ANIMATED = [
    FO4 + name
    for name in ("CigaretteMachine.nif", "Meshes/BOSRadarDish.nif", "RedR_ButtonBox.nif", "Workshop_BldWoodPDoor02.nif", "AnimatronicSpaceMan.nif")
]


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
    return find_targets(collection, node)[0]


def find_targets(collection, node):
    """[(object, None)] for a node shown as an object, [(armature object, bone name)] for a bone
    (in every armature showing it)."""
    for obj in collection.objects:
        if re.sub(r"\.\d{3}$", "", obj.name) == node:  # a second import's objects get suffixes
            return [(obj, None)]
    found = [(obj, node) for obj in collection.objects if obj.type == "ARMATURE" and node in obj.data.bones]
    if not found:
        raise KeyError(node)
    return found


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
        for (node, data), (obj, bone) in ((entry, target) for entry in entries for target in find_targets(collection, entry[0])):
            action, slot = sequence_action(obj, sequence.name)
            assert action["nif_cycle_type"] == sequence.cycle_type
            assert action["nif_frequency"] == pytest.approx(sequence.frequency, abs=1e-7)
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


def test_sequence_frequency_is_the_files(clean_scene, corpus, tmp_path):
    """Every corpus sequence plays at frequency 1: CigaretteMachine's three sequences given 0.5,
    1.25 and 2 in their bytes (after name, controlled blocks of 29 bytes, weight, text keys,
    cycle type) import with those as ``nif_frequency`` and write back byte for byte."""
    import struct

    from nif_rewriter import RawNif

    raw = RawNif.read(corpus / FO4 / "CigaretteMachine.nif")
    wanted = {}
    for index, frequency in zip(raw.indices_of("NiControllerSequence"), (0.5, 1.25, 2.0)):
        (count,) = struct.unpack_from("<I", raw.blocks[index], 4)
        struct.pack_into("<f", raw.blocks[index], 12 + 29 * count + 12, frequency)
        wanted[raw.strings[struct.unpack_from("<i", raw.blocks[index])[0]]] = frequency
    path = tmp_path / "frequency.nif"
    path.write_bytes(raw.to_bytes())
    _raw, sequences = read_sequences(path)
    assert {s.name: s.frequency for s in sequences} == wanted
    collection = imported(path)
    obj, _ = find_target(collection, "Object003")
    for sequence in sequences:
        action, _slot = sequence_action(obj, sequence.name)
        assert action["nif_frequency"] == pytest.approx(sequence.frequency, abs=1e-7), sequence.name
    export_file(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


FLT_MAX = 3.4028234663852886e38
MULTI_TARGET = [FO4 + name for name in ("CigaretteMachine.nif", "Meshes/BOSRadarDish.nif", "RedR_ButtonBox.nif",
                                        "Workshop_BldWoodPDoor02.nif", "AnimatronicSpaceMan.nif")]  # fmt: skip


def multi_target_transforms(path):
    """From the bytes: {sequence name: {node block index}} of the nodes each sequence moves
    through a NiMultiTargetTransformController, each found among the controller's target (the
    manager's node, NiTimeController's last field, at 22) and extra targets (then a u16 count
    and the pointers) by the controlled block's node name; only interpolators that hold keys
    or a pose value move anything."""
    import struct

    raw, sequences = read_sequences(path)
    controllers = {}
    for index in range(len(raw.blocks)):
        if raw.type_of(index) == "NiMultiTargetTransformController":
            (target, count) = struct.unpack_from("<iH", raw.blocks[index], 22)
            targets = [t for t in (target, *struct.unpack_from(f"<{count}i", raw.blocks[index], 28)) if t >= 0]
            controllers[index] = {raw.strings[struct.unpack_from("<i", raw.blocks[t])[0]]: t for t in targets}
    assert controllers
    moved = {}
    for index, sequence in zip(raw.indices_of("NiControllerSequence"), sequences):
        for number, (node, controller_type, interpolator) in enumerate(sequence.blocks):
            (controller,) = struct.unpack_from("<i", raw.blocks[index], 12 + 29 * number + 4)
            if controller not in controllers:
                continue
            assert controller_type == "NiTransformController" and node in controllers[controller], (sequence.name, node)
            if interpolator < 0 or raw.type_of(interpolator) != "NiTransformInterpolator":
                continue
            data = transform_data(raw, interpolator)
            if data is None:
                continue
            pose = [*data["pose"]["translation"], *data["pose"]["rotation"], data["pose"]["scale"]]
            groups = [data["translation"], data["scale"], *(data["xyz"] if "xyz" in data else [data["rotation"]])]
            if any(keys for _kind, keys in groups) or any(abs(v) < FLT_MAX for v in pose):
                moved.setdefault(sequence.name, set()).add(controllers[controller][node])
    return moved


def animated_blocks(collection):
    """{sequence name: {node block index}} of the objects and bones whose transform the
    imported actions move (an armature's bones by their F-curves' data paths)."""
    from precombined_nif.io import compat

    moved = {}
    for obj in collection.all_objects:
        bones = {bone.name: bone["nif_block"] for bone in obj.data.bones} if obj.type == "ARMATURE" else {}
        for action, slot in compat.animations(obj):
            for fcurve in compat.fcurves(action, slot):
                found = re.fullmatch(r'pose\.bones\["(.+)"\]\.(\w+)', fcurve.data_path)
                prop = found.group(2) if found else fcurve.data_path
                if prop not in ("location", "rotation_quaternion", "rotation_euler", "scale"):
                    continue
                block = bones[found.group(1)] if found else obj["nif_block"]
                moved.setdefault(action["nif_name"], set()).add(block)
    return moved


@pytest.mark.parametrize("name", MULTI_TARGET)
def test_multi_target_controller_sequences_move_its_targets(clean_scene, corpus, name):
    """The nodes a NiMultiTargetTransformController lists (by block index, in its bytes) are
    the ones its sequences move in Blender: each sequence's action animates exactly the objects
    or bones made of those blocks that it has keys for, nothing else."""
    path = corpus / name
    expected = multi_target_transforms(path)
    assert expected and all(expected.values())
    assert animated_blocks(imported(path)) == expected


def _check_bone(scene, fps, nodes, armature, bone_name, action, slot, data, most=12):
    """At up to ``most`` key times of the bone's keys: the node's local transform Blender shows
    (its placement pose @ inv(rest) @ bind, relative to its parent node's) is the keyed one
    (T R S from the keys, the node's own value for a channel without keys)."""
    from precombined_nif.io import compat

    compat.assign_action(armature, action, slot)
    bones = {bone["nif_block"]: bone.name for bone in armature.data.bones}
    index = next(i for i, name in bones.items() if name == bone_name)
    parents = {child: parent for parent, n in nodes.items() for child in n.children}
    root = armature.get("nif_block", armature.get("nif_root"))  # further armatures share the root node's space
    between, parent = np.eye(4), parents.get(index)
    while parent is not None and parent != root and parent not in bones:
        between = nodes[parent].local @ between  # nodes that are not bones stay where they are
        parent = parents.get(parent)
    own = nodes[index].local
    own_scale = np.cbrt(np.linalg.det(own[:3, :3]))
    channels = {
        "translation": {t: np.array(v) for t, v, _e in data["translation"][1]},
        "rotation": {t: quaternion_rows(v) for t, v, _e in data.get("rotation", (None, []))[1]},
        "scale": {t: v[0] for t, v, _e in data["scale"][1]},
    }
    # A channel without keys takes the interpolator's pose when it is set (not FLT_MAX), else
    # keeps the node's own value.
    pose = data["pose"]
    if abs(pose["translation"][0]) < 1e30:
        own = own.copy()
        own[:3, 3] = pose["translation"]
    if abs(pose["rotation"][0]) < 1e30:
        own = own.copy()
        own[:3, :3] = quaternion_rows(pose["rotation"]) * own_scale
    if abs(pose["scale"]) < 1e30:
        own = own.copy()
        own[:3, :3] *= pose["scale"] / own_scale
        own_scale = pose["scale"]
    times = sorted(set().union(*(set(c) for c in channels.values())) | {0.0})  # 0: the sequences' start
    checked = 0
    for time in times[:: max(1, len(times) // most)]:
        if any(c and time not in c for c in channels.values()):
            continue  # a channel keyed at other times: its value here is interpolated
        translation = channels["translation"].get(time, own[:3, 3])
        rotation = channels["rotation"].get(time, own[:3, :3] / own_scale)
        scale = channels["scale"].get(time, own_scale)
        keyed = np.eye(4)
        keyed[:3, :3], keyed[:3, 3] = rotation * scale, translation
        set_time(scene, time * fps)
        above = between if parent not in bones else _placement(armature, bones[parent]) @ between
        shown = np.linalg.inv(above) @ _placement(armature, bone_name)
        np.testing.assert_allclose(shown, keyed, atol=2e-4)
        checked += 1
    return checked


def _placement(armature, bone_name):
    """Where Blender puts a bone's node in the armature's space: pose @ inv(rest) @ bind."""
    bone = armature.data.bones[bone_name]
    pose = np.array(armature.pose.bones[bone_name].matrix, np.float64)
    bind = np.asarray(bone["nif_rest"], np.float64).reshape(4, 4)
    return pose @ np.linalg.inv(np.array(bone.matrix_local, np.float64)) @ bind


def hermite(kind, keys, time):
    """The game's value of a float key group at ``time``: linear, or quadratic keys as Hermite
    segments (key i's forward and key i+1's backward tangent spanning the interval)."""
    times = [k[0] for k in keys]
    if time <= times[0]:
        return keys[0][1][0]
    if time >= times[-1]:
        return keys[-1][1][0]
    i = max(j for j, t in enumerate(times) if t <= time)
    (t0, (p0,), extra0), (t1, (p1,), extra1) = keys[i], keys[i + 1]
    u = (time - t0) / (t1 - t0)
    if kind != 2:
        return p0 + (p1 - p0) * u
    m0, m1 = extra0[0][0], extra1[1][0]  # forward of key i, backward of key i + 1
    return (2 * u**3 - 3 * u**2 + 1) * p0 + (u**3 - 2 * u**2 + u) * m0 + (-2 * u**3 + 3 * u**2) * p1 + (u**3 - u**2) * m1


def quaternion_rows(q):
    """The rotation rows of a file quaternion (w x y z), computed here."""
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


@pytest.mark.parametrize("name", ["CigaretteMachine.nif", "Workshop_BldWoodPDoor02.nif"])
def test_between_keys_the_curves_follow_the_games_segments(clean_scene, corpus, name):
    """Quadratic keys: at four points inside every interval, each Euler F-curve holds the
    Hermite value computed here from the file's keys and tangents."""
    import bpy

    path = corpus / FO4 / name
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    checked = 0
    for sequence, entries in sequence_blocks(raw, sequences):
        for node, data in entries:
            obj, _bone = find_target(collection, node)
            action, slot = sequence_action(obj, sequence.name)
            for axis, (kind, keys) in enumerate(data["xyz"]):
                fcurve = fcurve_of(action, slot, "rotation_euler", axis)
                for (t0, _v0, _e0), (t1, _v1, _e1) in zip(keys, keys[1:]):
                    for u in (0.2, 0.4, 0.6, 0.8):
                        time = t0 + (t1 - t0) * u
                        assert fcurve.evaluate(time * fps) == pytest.approx(hermite(kind, keys, time), abs=2e-5)
                        checked += 1
    assert checked


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
            for time in sorted(set(angles[0]) | set(angles[1]) | set(angles[2])):
                set_time(scene, time * fps)
                rotation = np.array(obj.matrix_basis.to_3x3().normalized(), np.float64)
                expected = euler_rows(*(hermite(kind, keys, time) for kind, keys in data["xyz"]))
                np.testing.assert_allclose(rotation, expected, atol=1e-5)
                checked += 1
            first = min(angles[2])
            own = next(n for n in nodes.values() if n.name == node).local[:3, :3]
            at_rest += np.allclose(own / np.cbrt(np.linalg.det(own)), euler_rows(*(a[first] for a in angles)), atol=1e-3)
    assert checked >= 4 and at_rest >= 2  # the opening door and its knob start where the nodes are


def test_untouched_animated_import_exports_byte_identical_after_playing(clean_scene, corpus, tmp_path):
    """Playing the actions moves the objects; the nodes still keep their own transforms."""
    import bpy

    path = corpus / FO4 / "Workshop_BldWoodPDoor02.nif"
    collection = imported(path)
    set_time(bpy.context.scene, 17.5)
    export_file(collection, tmp_path / "out.nif")
    assert (tmp_path / "out.nif").read_bytes() == path.read_bytes()


def test_retimed_key_exports_and_imports_again_with_the_edit(clean_scene, corpus, tmp_path):
    """CigaretteMachine 'Close': its last X angle key moved 3 frames later and turned further.
    The file gets the key at (frame + 3) / fps with the new value, quadratic tangents kept
    from the handles; every other sequence's keys keep their bytes; a new import shows it."""
    import bpy

    path = corpus / FO4 / "CigaretteMachine.nif"
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    obj, _ = find_target(collection, "Object003")
    action, slot = sequence_action(obj, "Close")
    fcurve = fcurve_of(action, slot, "rotation_euler", 0)
    key = fcurve.keyframe_points[-1]
    old_frame, old_value = key.co.x, key.co.y
    for point in (key.co, key.handle_left, key.handle_right):
        point.x += 3.0
        point.y += 0.25
    fcurve.update()
    out = tmp_path / "out.nif"
    export_file(collection, out)

    raw_out, sequences_out = read_sequences(out)
    edited = {s.name: s for s in sequences_out}
    (_node, _ctrl, interpolator) = edited["Close"].blocks[0]
    kind, keys = transform_data(raw_out, interpolator)["xyz"][0]
    (_kind0, original) = transform_data(*[(raw, s.blocks[0][2]) for s in sequences if s.name == "Close"][0])["xyz"][0]
    assert kind == 2 and len(keys) == len(original)
    time, value, (forward, backward) = keys[-1]
    assert time == pytest.approx((old_frame + 3.0) / fps, abs=1e-6)
    assert value[0] == pytest.approx(old_value + 0.25, abs=1e-6)
    np.testing.assert_allclose([forward, backward], original[-1][2], atol=1e-5)  # the handles moved with the key
    # The first key keeps its time, value and slopes: its tangents span the longer interval now.
    assert len(keys) == 2 and keys[0][:2] == original[0][:2]
    stretch = (keys[1][0] - keys[0][0]) / (original[1][0] - original[0][0])
    assert original[0][2][0] != original[0][2][1]  # forward and backward differ: their order counts
    np.testing.assert_allclose(np.ravel(keys[0][2]), np.ravel(original[0][2]) * stretch, rtol=1e-5)
    # the other sequences' key data keep their bytes
    for sequence, before in zip(sequences_out, sequences):
        if sequence.name != "Close":
            data_out = raw_out.blocks[_data_of(raw_out, sequence.blocks[0][2])]
            assert data_out == raw.blocks[_data_of(raw, before.blocks[0][2])]

    again = imported_as(out, "again")
    obj2, _ = find_target(again, "Object003")
    action2, slot2 = sequence_action(obj2, "Close")
    fcurve2 = fcurve_of(action2, slot2, "rotation_euler", 0)
    assert fcurve2.keyframe_points[-1].co.x == pytest.approx(old_frame + 3.0, abs=1e-4)
    assert fcurve2.evaluate(old_frame + 3.0) == pytest.approx(old_value + 0.25, abs=1e-5)


def _data_of(raw, interpolator):
    import struct

    return struct.unpack_from("<i", raw.blocks[interpolator], 32)[0]


def imported_as(path, stem):
    target = path.with_name(f"{stem}.nif")
    path.rename(target)
    return imported(target)


def test_standalone_kf_animates_the_scenes_nodes_and_writes_back(clean_scene, corpus, tmp_path):
    """A New Vegas .kf (written by tests/kf_writer.py) imported over the New Vegas skeleton: its
    sequence is an action on the nodes' objects with the file's key values at the file's times
    (TBC, quadratic, linear and constant keys); the .kf writes back byte for byte untouched, and
    a retimed quaternion key is written at its new time."""
    import bpy

    from precombined_nif.io import compat

    imported(corpus / SKELETON)
    kf_path = tmp_path / "walk.kf"
    kf_path.write_bytes(build_kf())
    collection = imported(kf_path)
    raw, sequences = read_sequences(kf_path)
    assert [s.name for s in sequences] == ["Walk"]
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    pelvis = bpy.data.objects["Bip01 Pelvis"]
    spine = bpy.data.objects["Bip01 Spine"]
    action, slot = sequence_action(pelvis, "Walk")
    assert action.get("nif_kf") == collection.name and action.use_cyclic  # cycle type loop
    assert sorted((m.frame, m.name) for m in action.pose_markers) == [(0, "start"), (round(fps), "end")]
    for time, value, _tbc in PELVIS_ROTATIONS:
        got = [fcurve_of(action, slot, "rotation_quaternion", i).evaluate(time * fps) for i in range(4)]
        assert abs(np.dot(got, value)) == pytest.approx(1.0, abs=1e-6)
    for time, value, _tbc in PELVIS_TRANSLATIONS:
        got = [fcurve_of(action, slot, "location", i).evaluate(time * fps) for i in range(3)]
        np.testing.assert_allclose(got, value, atol=1e-5)
    action2, slot2 = sequence_action(spine, "Walk")
    assert spine.rotation_mode == "ZYX"
    for axis, keys, kind in ((0, SPINE_X, 2), (2, SPINE_Z, 1)):
        fcurve = fcurve_of(action2, slot2, "rotation_euler", axis)
        for time, value, _extra in keys:
            assert fcurve.evaluate(time * fps) == pytest.approx(value[0], abs=1e-6)
        for u in (0.25, 0.5, 0.75):  # between keys, the game's segments
            time = keys[0][0] + (keys[1][0] - keys[0][0]) * u
            expected = hermite(kind, [(t, v, (e[:1], e[1:]) if e else ()) for t, v, e in keys], time)
            assert fcurve.evaluate(time * fps) == pytest.approx(expected, abs=1e-5)
    scale = fcurve_of(action2, slot2, "scale", 0)
    assert scale.evaluate(0.49 * fps) == pytest.approx(1.0) and scale.evaluate(0.5 * fps) == pytest.approx(1.5)

    handle = next(o for o in collection.objects)
    bpy.ops.object.select_all(action="DESELECT")
    handle.select_set(True)
    out = tmp_path / "out.kf"
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert out.read_bytes() == kf_path.read_bytes()

    fcurves = [fcurve_of(action, slot, "rotation_quaternion", i) for i in range(4)]
    for fcurve in fcurves:
        key = fcurve.keyframe_points[1]
        for point in (key.co, key.handle_left, key.handle_right):
            point.x += 2.0
        fcurve.update()
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    kind, keys = transform_data(raw_out, sequences_out[0].blocks[0][2])["rotation"]
    assert kind == 3 and [k[0] for k in keys] == pytest.approx([0.0, 0.5 + 2.0 / fps, 1.0, 1.5], abs=1e-6)
    np.testing.assert_allclose([k[2] for k in keys], [k[2] for k in PELVIS_ROTATIONS], atol=1e-7)  # each key's TBC kept
    # every key keeps its value and its sign (the import turned the last one over for continuity)
    np.testing.assert_allclose([k[1] for k in keys], [k[1] for k in PELVIS_ROTATIONS], atol=1e-6)


VISIBILITY = [FO4 + "Workshop_HighTechLightFloor05_On.nif", FO4 + "AnimatronicSpaceMan.nif"]


@pytest.mark.parametrize("name", VISIBILITY)
def test_visibility_keys_hide_the_object_where_the_file_says(clean_scene, corpus, name):
    """NiVisController keys: hide_viewport and hide_render step to 'not visible' at each key;
    a key turned over in Blender is written back with the other value."""
    import bpy

    from raw_animation import bool_data

    path = corpus / name
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    checked, edited = 0, None
    for sequence in sequences:
        for number, (node, controller, interpolator) in enumerate(sequence.blocks):
            if controller != "NiVisController" or interpolator < 0 or raw.type_of(interpolator) != "NiBoolInterpolator":
                continue
            obj, bone = find_target(collection, node)
            action, slot = sequence_action(obj, sequence.name)
            kind, keys = bool_data(raw, interpolator)
            if kind is None:  # one value for the whole sequence: a key at its start
                keys = [(sequence.start, keys)]
            for path_name in ("hide_viewport", "hide_render"):
                fcurve = fcurve_of(action, slot, path_name, 0)
                for time, value in keys:
                    assert fcurve.evaluate(time * fps) == (0.0 if value else 1.0), (sequence.name, node)
                    checked += 1
            if edited is None or edited[4] is None and kind is not None:  # edit keys where there are some
                edited = (sequence.name, number, fcurve_of(action, slot, "hide_viewport", 0), keys, kind)
    assert checked
    sequence_name, number, fcurve, keys, kind = edited
    fcurve.keyframe_points[0].co.y = 1.0 - fcurve.keyframe_points[0].co.y
    out = tmp_path_of(collection) / "vis.nif"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    sequence = next(s for s in sequences_out if s.name == sequence_name)
    kind_out, written = bool_data(raw_out, sequence.blocks[number][2])
    if kind is None:  # the interpolator's own value turned over
        assert kind_out is None and written == 1 - keys[0][1]
        return
    assert [v for _t, v in written] == [1 - keys[0][1]] + [v for _t, v in keys[1:]]
    assert [t for t, _v in written] == pytest.approx([t for t, _v in keys])


def tmp_path_of(collection):
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp(prefix=f"{collection.name}-"))


def test_damaged_records_are_reported_by_name_not_raised(clean_scene, corpus, tmp_path):
    """A .kf whose sequence points past its blocks imports without its keys; an action whose
    stored records were damaged stops the export with a message naming it."""
    import bpy

    from kf_writer import KfWriter

    kf = KfWriter()
    kf.text_keys([(0.0, "start")])
    kf_path = tmp_path / "bad.kf"
    kf_path.write_bytes(kf.to_bytes(kf.sequence("Broken", [("Bip01 Pelvis", 99)], 1, 0.0, 1.0)))
    imported(corpus / SKELETON)
    imported(kf_path)  # nothing to animate, nothing raised
    assert not [a for a in bpy.data.actions if a.get("nif_kf") == "bad"]

    collection = imported(corpus / FO4 / "CigaretteMachine.nif")
    obj, _ = find_target(collection, "Object003")
    action, _slot = sequence_action(obj, "Open")
    action["nif_channels"] = '[{"block": 7, "kind": "translation", "slot": 0, "paths": [], "map": [], "fingerprint": ""}]'
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    with pytest.raises(RuntimeError, match="action 'Open'"):
        bpy.ops.export_scene.precombined_nif(filepath=str(tmp_path / "out.nif"))


SHADER_FLOATS = [FO4 + "WorkshopLightbulbHanging01.nif", FO4 + "GlowingOneTEST.nif", FO4 + "Workshop_HighTechLightFloor05_On.nif"]
SOCKETS = {("BSEffectShaderPropertyFloatController", "0"): "Emission Strength", ("BSEffectShaderPropertyFloatController", "5"): "Alpha"}


@pytest.mark.parametrize("name", SHADER_FLOATS)
def test_shader_float_keys_animate_the_materials_inputs(clean_scene, corpus, name, tmp_path):
    """Emissive multiple and alpha keys of effect shaders: the shape's material's Principled BSDF
    input holds each key's value at its time (and between keys the file's Hermite segment); an
    edited value is written back."""
    import bpy

    from raw_animation import float_data

    path = corpus / name
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    checked, edited = 0, None
    for sequence in sequences:
        for number, (node, controller, interpolator) in enumerate(sequence.blocks):
            cid = _controller_id(raw, sequence, number)
            socket = SOCKETS.get((controller, cid))
            found = float_data(raw, interpolator) if socket and interpolator >= 0 else None
            if not found or not found[1]:
                continue
            kind, keys = found
            obj, _ = find_target(collection, node)
            tree = obj.data.materials[0].node_tree
            action, slot = sequence_action(tree, sequence.name)
            bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
            index = [s.name for s in bsdf.inputs].index(socket)
            fcurve = fcurve_of(action, slot, f'nodes["{bsdf.name}"].inputs[{index}].default_value', 0)
            if fcurve is None:
                continue  # a material shared with an earlier shape carries that shape's keys
            for time, value, _extra in keys:
                assert fcurve.evaluate(time * fps) == pytest.approx(value[0], abs=1e-5)
                checked += 1
            for (t0, _v, _e), (t1, _w, _f) in zip(keys, keys[1:]):
                time = (t0 + t1) / 2
                assert fcurve.evaluate(time * fps) == pytest.approx(hermite(kind, keys, time), abs=1e-4)
            edited = edited or (sequence.name, number, fcurve, keys)
    assert checked
    sequence_name, number, fcurve, keys = edited
    fcurve.keyframe_points[0].co.y += 0.5
    fcurve.keyframe_points[0].handle_left.y += 0.5
    fcurve.keyframe_points[0].handle_right.y += 0.5
    out = tmp_path / "out.nif"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    sequence = next(s for s in sequences_out if s.name == sequence_name)
    _kind, written = float_data(raw_out, sequence.blocks[number][2])
    assert written[0][1][0] == pytest.approx(keys[0][1][0] + 0.5, abs=1e-6)
    assert [k[1] for k in written[1:]] == [k[1] for k in keys[1:]]


def _controller_id(raw, sequence, number):
    """The controlled block's controller ID string, read from the sequence's bytes."""
    import struct

    index = next(i for i in range(len(raw.blocks)) if raw.type_of(i) == "NiControllerSequence" and struct.unpack_from("<i", raw.blocks[i])[0] >= 0 and raw.strings[struct.unpack_from("<i", raw.blocks[i])[0]] == sequence.name)
    at = 12 + number * 29 + 9 + 12  # name, count, grow by; earlier blocks; refs and priority; node, property, controller type
    (cid,) = struct.unpack_from("<i", raw.blocks[index], at)
    return None if cid < 0 else raw.strings[cid]


def de_boor_basis(i, k, u, t):
    """Cox-de Boor: the degree-k basis function i at u over knots t (the last span closed)."""
    if k == 0:
        return 1.0 if t[i] <= u < t[i + 1] or (u == t[-1] and t[i] < u == t[i + 1]) else 0.0
    a = 0.0 if t[i + k] == t[i] else (u - t[i]) / (t[i + k] - t[i]) * de_boor_basis(i, k - 1, u, t)
    b = 0.0 if t[i + k + 1] == t[i + 1] else (t[i + k + 1] - u) / (t[i + k + 1] - t[i + 1]) * de_boor_basis(i + 1, k - 1, u, t)
    return a + b


def spline_value(points, u):
    n = len(points)
    t = [0.0] * 4 + list(range(1, n - 3)) + [float(n - 3)] * 4
    return sum(de_boor_basis(i, 3, u, t) * np.asarray(points[i], np.float64) for i in range(n))


def test_bspline_keys_follow_the_games_curve(clean_scene, corpus, tmp_path, capfd):
    """A .kf whose pelvis moves by a compressed B-spline (6 control points, translation and
    rotation): Blender's curves hold the spline's value (evaluated here by Cox-de Boor from the
    shorts) at the knots and between them; the file writes back byte for byte, and an edited
    spline is reported (a warning naming its action) and kept as stored."""
    import bpy

    from kf_writer import KfWriter
    from nif_rewriter import RawNif

    count, start, stop = 6, 0.0, 1.5
    rng = np.random.default_rng(7)
    translation_shorts = rng.integers(-32767, 32767, count * 3)
    quaternions = rng.normal(size=(count, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    quaternions[quaternions[:, 0] < 0] *= -1
    rotation_shorts = np.round(quaternions * 32767).astype(int).ravel()
    kf = KfWriter()
    pelvis = kf.bspline(start, stop, count, {"translation": (translation_shorts, 2.0, 10.0), "rotation": (rotation_shorts, 0.0, 1.0)})
    text = kf.text_keys([(start, "start"), (stop, "end")])
    kf_path = tmp_path / "spline.kf"
    kf_path.write_bytes(kf.to_bytes(kf.sequence("Spline", [("Bip01 Pelvis", pelvis)], text, start, stop)))
    imported(corpus / SKELETON)
    collection = imported(kf_path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    action, slot = sequence_action(bpy.data.objects["Bip01 Pelvis"], "Spline")
    translations = 2.0 + translation_shorts.reshape(count, 3) / 32767 * 10.0
    rotations = rotation_shorts.reshape(count, 4) / 32767
    for u in np.linspace(0, count - 3, 13):
        frame = (start + (stop - start) * u / (count - 3)) * fps
        got = [fcurve_of(action, slot, "location", i).evaluate(frame) for i in range(3)]
        np.testing.assert_allclose(got, spline_value(translations, u), atol=1e-4)
        got = [fcurve_of(action, slot, "rotation_quaternion", i).evaluate(frame) for i in range(4)]
        np.testing.assert_allclose(got, spline_value(rotations, u), atol=1e-5)

    handle = next(iter(collection.objects))
    bpy.ops.object.select_all(action="DESELECT")
    handle.select_set(True)
    out = tmp_path / "out.kf"
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert out.read_bytes() == kf_path.read_bytes()
    fcurve_of(action, slot, "location", 0).keyframe_points[1].co.y += 1.0
    capfd.readouterr()
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out), use_selection=True) == {"FINISHED"}
    reported = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Warning") and "B-spline" in line]
    assert reported and all(f"action {action.name!r}" in line and "kept as stored" in line for line in reported), reported
    spline_types = ("NiBSplineCompTransformInterpolator", "NiBSplineData", "NiBSplineBasisData")
    before, after = RawNif(kf_path.read_bytes()), RawNif(out.read_bytes())
    stored = [before.blocks[i] for name in spline_types for i in before.indices_of(name)]
    assert len(stored) == 3 and [after.blocks[i] for name in spline_types for i in after.indices_of(name)] == stored
    assert out.read_bytes() == kf_path.read_bytes()


def test_sequence_settings_and_markers_write_back(clean_scene, corpus, tmp_path):
    """Workshop_BldWoodPDoor02 'Open': cycle type, frequency and stop frame changed, a text key
    marker renamed and one added: the sequence and its NiTextKeyExtraData get them; the
    'Close' sequence keeps its bytes."""
    import bpy

    path = corpus / FO4 / "Workshop_BldWoodPDoor02.nif"
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    obj, _ = find_target(collection, "DoorKnob")
    action, _slot = sequence_action(obj, "Open")
    before = {s.name: s for s in sequences}["Open"]
    stored = text_keys(raw, before.text_key_ref)
    last = max(range(len(stored)), key=lambda i: stored[i][0])
    action["nif_cycle_type"] = 0
    action["nif_frequency"] = 2.0
    action.name = "Opening"
    action.frame_end = 40.0
    marker = sorted(action.pose_markers, key=lambda m: m.frame)[-1]
    marker.name = "finished"
    action.pose_markers.new("halfway").frame = 12
    out = tmp_path / "out.nif"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    after = {s.name: s for s in sequences_out}
    assert "Open" not in after
    edited = after["Opening"]
    assert (edited.cycle_type, edited.frequency, edited.start) == (0, 2.0, before.start)
    assert edited.stop == pytest.approx(40.0 / fps, abs=1e-6)
    # kept keys in the file's order, the renamed one (its time exact) and the new one by time
    kept = [key for i, key in enumerate(stored) if i != last]
    expected = sorted(kept + [(stored[last][0], "finished"), (12 / fps, "halfway")], key=lambda key: key[0])
    got = text_keys(raw_out, edited.text_key_ref)
    assert [text for _t, text in got] == [text for _t, text in expected]
    assert [t for t, _text in got] == pytest.approx([t for t, _text in expected], abs=1e-6)
    close_before, close_after = (
        next(i for i in range(len(raw.blocks)) if raw.type_of(i) == "NiControllerSequence" and raw.blocks[i][:4] == _name_bytes(raw, "Close")),
        next(i for i in range(len(raw_out.blocks)) if raw_out.type_of(i) == "NiControllerSequence" and raw_out.blocks[i][:4] == _name_bytes(raw_out, "Close")),
    )
    assert raw_out.blocks[close_after] == raw.blocks[close_before]


def _name_bytes(raw, name):
    import struct

    return struct.pack("<i", raw.strings.index(name))


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_animations_on_other_blender_versions(extension_zip, corpus, tmp_path, version):
    """Classic actions (4.2) and slotted ones without Action.fcurves (5.0): CigaretteMachine's
    sequences import, write back byte for byte, and a retimed key is written."""
    import subprocess
    from pathlib import Path

    import extension
    from support import unavailable

    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    script = Path(__file__).with_name("smoke_animation.py")
    source = corpus / FO4 / "CigaretteMachine.nif"
    command = [extension.python(venv), script, extension_zip, tmp_path / "user", tmp_path, source]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "sequences Close, Open, OpenClose" in result.stdout


def test_shader_colour_keys_animate_the_emission_colour(clean_scene, corpus, tmp_path):
    """GlowingOneTEST's emissive colour keys (BSEffectShaderPropertyColorController): the
    material's Emission Color holds each key's r, g, b at its time; an edited one is written."""
    import bpy

    from raw_animation import pos_data

    path = corpus / FO4 / "GlowingOneTEST.nif"
    raw, sequences = read_sequences(path)
    collection = imported(path)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    checked, edited = 0, None
    for sequence in sequences:
        for number, (node, controller, interpolator) in enumerate(sequence.blocks):
            if controller != "BSEffectShaderPropertyColorController" or _controller_id(raw, sequence, number) != "0":
                continue
            _kind, keys = pos_data(raw, interpolator)
            obj, _ = find_target(collection, node)
            tree = obj.data.materials[0].node_tree
            action, slot = sequence_action(tree, sequence.name)
            bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
            index = [s.name for s in bsdf.inputs].index("Emission Color")
            fcurves = [fcurve_of(action, slot, f'nodes["{bsdf.name}"].inputs[{index}].default_value', c) for c in range(3)]
            if None in fcurves:
                continue  # a material shared with an earlier shape carries that shape's keys
            for time, value, _extra in keys:
                np.testing.assert_allclose([f.evaluate(time * fps) for f in fcurves], value, atol=1e-5)
                checked += 1
            edited = edited or (sequence.name, number, fcurves[0], keys)  # red: the corpus keys are grey
    assert checked
    sequence_name, number, fcurve, keys = edited
    for point in (fcurve.keyframe_points[0].co, fcurve.keyframe_points[0].handle_left, fcurve.keyframe_points[0].handle_right):
        point.y += 0.25
    out = tmp_path / "out.nif"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    sequence = next(s for s in sequences_out if s.name == sequence_name)
    _kind, written = pos_data(raw_out, sequence.blocks[number][2])
    np.testing.assert_allclose(written[0][1], np.add(keys[0][1], (0.25, 0.0, 0.0)), atol=1e-6)
    assert [k[1] for k in written[1:]] == [k[1] for k in keys[1:]]


def test_edited_pose_writes_back_into_the_interpolator(clean_scene, corpus, tmp_path):
    """AnimatronicSpaceMan 'clothesOffAnim' holds RLeg_Foot at its interpolator's pose (no keys):
    that pose's single key moved in Blender is written into the pose, and imports again where
    it was moved to."""
    import bpy

    path = corpus / FO4 / "AnimatronicSpaceMan.nif"
    raw, sequences = read_sequences(path)
    sequence = next(s for s in sequences if s.name == "clothesOffAnim")
    number, (_node, _controller, interpolator) = next((i, b) for i, b in enumerate(sequence.blocks) if b[0] == "RLeg_Foot")
    before = transform_data(raw, interpolator)
    assert not before["translation"][1] and abs(before["pose"]["translation"][0]) < 1e30
    collection = imported(path)
    armature, bone = find_targets(collection, "RLeg_Foot")[0]
    action, slot = sequence_action(armature, "clothesOffAnim")
    fcurves = [fcurve_of(action, slot, f'pose.bones["{bone}"].location', i) for i in range(3)]
    assert all(len(f.keyframe_points) == 1 for f in fcurves)
    moved = [f.keyframe_points[0].co.y + 0.5 for f in fcurves]
    for fcurve, value in zip(fcurves, moved):
        fcurve.keyframe_points[0].co.y = value
    out = tmp_path / "moved.nif"
    layer = bpy.context.view_layer.layer_collection.children[collection.name]
    bpy.context.view_layer.active_layer_collection = layer
    assert bpy.ops.export_scene.precombined_nif(filepath=str(out)) == {"FINISHED"}
    raw_out, sequences_out = read_sequences(out)
    after = transform_data(raw_out, next(s for s in sequences_out if s.name == "clothesOffAnim").blocks[number][2])
    assert not after["translation"][1]
    assert np.linalg.norm(np.subtract(after["pose"]["translation"], before["pose"]["translation"])) > 0.1
    assert after["pose"]["rotation"] == before["pose"]["rotation"] and after["pose"]["scale"] == before["pose"]["scale"]
    again = imported(out)
    armature2, bone2 = find_targets(again, "RLeg_Foot")[0]
    action2, slot2 = sequence_action(armature2, "clothesOffAnim")
    got = [fcurve_of(action2, slot2, f'pose.bones["{bone2}"].location', i).keyframe_points[0].co.y for i in range(3)]
    np.testing.assert_allclose(got, moved, atol=1e-4)


def test_kf_files_are_offered_and_dropped_like_nifs(addon):
    import bpy

    handler = bpy.types.FileHandler.bl_rna_get_subclass_py("IO_FH_precombined_nif")
    assert handler.bl_file_extensions == ".nif;.kf"
    assert "*.kf" in bpy.ops.import_scene.precombined_nif.get_rna_type().properties["filter_glob"].default
