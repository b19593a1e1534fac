""".bsm2 in real Blender (bpy 4.5, the installed extension): import, deformation against the
file's own skinning, export back, edits, limits and clean failures. smoke_bsm2.py runs the
action-API-dependent part on 4.2 and 5.0."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from support import corpus_files, unavailable

import extension
from precombined_nif.core.bsm2 import SUBSET_DTYPE, Bsm2File, packing, samples, skinning

BSM2_FILES = corpus_files("bsm2/*.bsm2")
SMOKE = Path(__file__).with_name("smoke_bsm2.py")
TO_BLENDER = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], np.float64)  # (x, -z, y)


@pytest.fixture
def scene(addon):
    """An empty scene; whatever a test creates is removed afterwards."""
    import bpy

    kinds = ("objects", "meshes", "armatures", "actions", "materials")
    before = {kind: set(getattr(bpy.data, kind)) for kind in kinds}
    bpy.context.scene.frame_set(1)
    yield bpy.context.scene
    for kind in kinds:
        collection = getattr(bpy.data, kind)
        for datablock in set(collection) - before[kind]:
            collection.remove(datablock)


def import_file(path):
    import bpy

    assert bpy.ops.import_scene.bsm2(filepath=str(path)) == {"FINISHED"}
    mesh_object = bpy.context.view_layer.objects.active
    assert mesh_object.type == "MESH"
    return mesh_object, mesh_object.parent


def export_file(path):
    import bpy

    assert bpy.ops.export_scene.bsm2(filepath=str(path)) == {"FINISHED"}
    return Bsm2File.read(path)


def foreach(collection, field, width, dtype=np.float32):
    values = np.empty(len(collection) * width, dtype)
    collection.foreach_get(field, values)
    return values.reshape(-1, width)


def deformed_positions(mesh_object, frame):
    import bpy

    scene = bpy.context.scene
    scene.frame_set(int(np.floor(frame)), subframe=float(frame - np.floor(frame)))
    evaluated = mesh_object.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        return foreach(mesh.vertices, "co", 3).astype(np.float64)
    finally:
        evaluated.to_mesh_clear()


def key_frames(scene, animation):
    step = animation.interval_ns * scene.render.fps / scene.render.fps_base / 1e9
    return scene.frame_start + np.arange(len(animation.keys)) * step


def assert_deforms_like_the_file(compat, bsm, mesh_object, armature_object):
    """At every key of every animation, Blender's deformed vertices are the file's own skinning
    (in Blender's axes), within 1e-4 of the mesh's size."""
    import bpy

    assert all(track.mute for track in armature_object.animation_data.nla_tracks)
    for animation, (action, slot) in zip(bsm.animations, compat.animations(armature_object)):
        compat.assign_action(armature_object, action, slot)
        expected = skinning.skin(bsm.vertices, skinning.skinning_matrices(bsm, animation)) @ TO_BLENDER.T
        size = max(1.0, float(np.abs(expected).max()))
        for key, frame in enumerate(key_frames(bpy.context.scene, animation)):
            error = np.abs(deformed_positions(mesh_object, frame) - expected[key]).max()
            assert error <= 1e-4 * size, (animation.name, key, error)


def assert_same_data(original, exported, matrix_tolerance=1e-5):
    """Import -> export keeps what the file says: vertices bit for bit, matrices within tolerance."""
    for field in ("position", "normal", "tangent", "uv", "weights"):
        np.testing.assert_array_equal(exported.vertices[field], original.vertices[field], err_msg=field)
    weighted = original.vertices["weights"] > 0
    np.testing.assert_array_equal(exported.vertices["bones"][weighted], original.vertices["bones"][weighted])
    np.testing.assert_array_equal(exported.indices, original.indices)
    np.testing.assert_array_equal(exported.subsets, original.subsets)
    assert exported.materials == original.materials and exported.num_bones == original.num_bones
    assert [(a.name, a.duration_ns, a.interval_ns, len(a.keys)) for a in exported.animations] == [
        (a.name, a.duration_ns, a.interval_ns, len(a.keys)) for a in original.animations
    ]
    for a, b in zip(exported.animations, original.animations):
        np.testing.assert_allclose(a.keys, b.keys, rtol=0, atol=matrix_tolerance, err_msg=a.name)
    assert (exported.hierarchy is None) == (original.hierarchy is None)
    if original.hierarchy is not None:
        np.testing.assert_array_equal(exported.hierarchy.parents, original.hierarchy.parents)
        assert exported.hierarchy.names == original.hierarchy.names
        np.testing.assert_allclose(exported.hierarchy.inverse_bind, original.hierarchy.inverse_bind, atol=matrix_tolerance)


# -- import -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_import_keeps_every_vertex_and_attribute(scene, path):
    bsm = Bsm2File.read(path)
    mesh_object, armature_object = import_file(path)
    mesh = mesh_object.data
    assert len(mesh.vertices) == len(bsm.vertices) and len(mesh.polygons) == len(bsm.indices) // 3
    positions = foreach(mesh.vertices, "co", 3)
    np.testing.assert_array_equal(positions, bsm.vertices["position"] @ TO_BLENDER.T)  # Z up, exact
    corners = foreach(mesh.loops, "vertex_index", 1, np.int32).ravel()
    np.testing.assert_array_equal(corners, bsm.indices)
    uv = foreach(mesh.uv_layers["UVMap"].data, "uv", 2)
    np.testing.assert_array_equal(uv[:, 0], packing.uv_decode(bsm.vertices["uv"][corners, 0]))
    np.testing.assert_allclose(uv[:, 1], 1 - packing.uv_decode(bsm.vertices["uv"][corners, 1]), atol=1e-7)
    assert mesh.has_custom_normals

    # One material slot per subset, named after its material; faces in their subset's slot.
    assert [slot.material.name for slot in mesh_object.material_slots] == [bsm.materials[s["material"]] for s in bsm.subsets]
    face_slots = foreach(mesh.polygons, "material_index", 1, np.int32).ravel()
    for index, subset in enumerate(bsm.subsets):
        assert np.all(face_slots[subset["first"] // 3 : (subset["first"] + subset["count"]) // 3] == index)

    # Bones, vertex groups and weights.
    assert armature_object.type == "ARMATURE" and mesh_object.find_armature() == armature_object
    names = [f"Bone_{i:03d}" for i in range(bsm.num_bones)]
    assert sorted(bone.name for bone in armature_object.data.bones) == names
    assert [group.name for group in mesh_object.vertex_groups] == names
    for index in range(0, len(mesh.vertices), max(1, len(mesh.vertices) // 50)):
        vertex, raw = mesh.vertices[index], bsm.vertices[index]
        expected = {}
        for bone, weight in zip(raw["bones"], raw["weights"]):
            if weight:
                expected[f"Bone_{bone:03d}"] = expected.get(f"Bone_{bone:03d}", 0) + weight / 255
        got = {mesh_object.vertex_groups[g.group].name: g.weight for g in vertex.groups}
        assert got.keys() == expected.keys()
        np.testing.assert_allclose([got[k] for k in expected], list(expected.values()), atol=1e-7)


@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_import_makes_one_action_per_animation(scene, addon, path):
    compat = addon.io.compat
    bsm = Bsm2File.read(path)
    _, armature_object = import_file(path)
    actions = compat.animations(armature_object)
    assert [action.get("bsm2_name", {}).get("file", action.name.encode()).decode() for action, _ in actions] == [
        a.name for a in bsm.animations
    ]
    assert armature_object.animation_data.action == actions[0][0]  # the first one plays
    for animation, (action, slot) in zip(bsm.animations, actions):
        fcurves = compat.fcurves(action, slot)
        assert len(fcurves) == 10 * bsm.num_bones  # location, quaternion, scale per bone
        frames = key_frames(scene, animation)
        for fcurve in fcurves:
            keys = foreach(fcurve.keyframe_points, "co", 2)
            np.testing.assert_allclose(keys[:, 0], frames, rtol=1e-6)
        assert action["bsm2_interval_ns"] == animation.interval_ns
        assert action["bsm2_duration_ns"] == animation.duration_ns


@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_deformation_matches_the_files_skinning(scene, addon, path):
    bsm = Bsm2File.read(path)
    assert_deforms_like_the_file(addon.io.compat, bsm, *import_file(path))


@pytest.mark.parametrize("hierarchy", [True, False], ids=["hierarchy", "full-matrices"])
def test_sample_imports_and_deforms(scene, addon, tmp_path, hierarchy):
    bsm = samples.skinned_strip(hierarchy)
    path = tmp_path / "strip.bsm2"
    bsm.write(path)
    mesh_object, armature_object = import_file(path)
    bones = armature_object.data.bones
    if hierarchy:
        assert [bone.name for bone in bones] == list(samples.BONE_NAMES)
        assert bones["tip"].parent == bones["middle"] and bones["middle"].parent == bones["root"]
        assert bones["root"].parent is None
        # The rest is the bind pose (engine +Y is Blender +Z).
        np.testing.assert_allclose(bones["middle"].head_local, [0, 0, samples.SEGMENT], atol=1e-5)
    else:
        assert all(bone.parent is None for bone in bones)
    assert_deforms_like_the_file(addon.io.compat, bsm, mesh_object, armature_object)


def test_multiple_files_and_drag_and_drop(scene, corpus):
    import bpy

    armatures = set(bpy.data.armatures)
    files = [{"name": path.name} for path in BSM2_FILES]
    # What a drop does: the file handler's operator invoked with the folder and the files.
    handler = bpy.types.FileHandler.bl_rna_get_subclass_py("IO_FH_bsm2")
    assert handler.bl_import_operator == "import_scene.bsm2" and handler.bl_file_extensions == ".bsm2"
    result = bpy.ops.import_scene.bsm2("INVOKE_DEFAULT", directory=str(corpus / "bsm2"), files=files)
    assert result == {"FINISHED"}
    assert len(set(bpy.data.armatures) - armatures) == len(BSM2_FILES)


def test_menu_entries(addon):
    import bpy

    for menu, draw in ((bpy.types.TOPBAR_MT_file_import, "draw_import"), (bpy.types.TOPBAR_MT_file_export, "draw_export")):
        assert getattr(addon.ui.menus, draw) in menu._dyn_ui_initialize()
    labels = [label for _, label in addon.ui.menus.IMPORTS + addon.ui.menus.EXPORTS]
    assert labels.count("Banuba Skinned Mesh (.bsm2)") == 2


# -- failures leave the scene alone -------------------------------------------------------------
def scene_state():
    import bpy

    kinds = ("objects", "meshes", "armatures", "actions", "materials", "collections")
    state = {kind: sorted(d.name for d in getattr(bpy.data, kind)) for kind in kinds}
    state["selected"] = sorted(o.name for o in bpy.context.view_layer.objects if o.select_get())
    active = bpy.context.view_layer.objects.active
    state["active"] = active.name if active else None
    return state


def test_damaged_file_leaves_the_scene_unchanged(scene, tmp_path):
    import bpy

    good = tmp_path / "good.bsm2"
    samples.skinned_strip(True).write(good)
    import_file(good)  # something selected and active beforehand
    data = good.read_bytes()
    damaged = tmp_path / "damaged.bsm2"
    damaged.write_bytes(data[:-5])
    before = scene_state()
    # In the background an operator's error report is raised as a RuntimeError.
    with pytest.raises(RuntimeError, match=f"{damaged}, offset .*truncated"):
        bpy.ops.import_scene.bsm2(filepath=str(damaged))
    assert scene_state() == before
    with pytest.raises(RuntimeError, match="No such file"):
        bpy.ops.import_scene.bsm2(filepath=str(tmp_path / "missing.bsm2"))
    assert scene_state() == before
    # Of several files, the good ones import and the bad one is only a warning.
    armatures = len(bpy.data.armatures)
    files = [{"name": "damaged.bsm2"}, {"name": "good.bsm2"}]
    assert bpy.ops.import_scene.bsm2(directory=str(tmp_path), files=files) == {"FINISHED"}
    assert len(bpy.data.armatures) == armatures + 1


def test_more_subsets_than_material_slots_fail_cleanly(scene, tmp_path):
    import bpy

    bsm = samples.skinned_strip(False)
    bsm.subsets = np.zeros(40_000, SUBSET_DTYPE)  # empty subsets are valid in the file
    bsm.write(tmp_path / "many.bsm2")
    before = scene_state()
    with pytest.raises(RuntimeError, match="40000 subsets: a Blender mesh holds at most 32767 material slots"):
        bpy.ops.import_scene.bsm2(filepath=str(tmp_path / "many.bsm2"))
    assert scene_state() == before


def test_failure_while_building_removes_everything(scene, addon, corpus, monkeypatch):
    """A failure after datablocks exist (here: while keying) removes them all."""
    import bpy

    bsm2_import = addon.io.bsm2.importer
    before = scene_state()

    def broken(*args):
        raise RuntimeError("keying failed")

    monkeypatch.setattr(addon.io.sampled_keys, "set_keys", broken)
    with pytest.raises(RuntimeError, match="keying failed"):
        bsm2_import.build(bpy.context, Bsm2File.read(corpus / "bsm2/Rabbit.bsm2"), "Rabbit")
    assert scene_state() == before


# -- export -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", BSM2_FILES, ids=lambda p: p.stem)
def test_reexport_of_an_unedited_file(scene, path, tmp_path):
    original = Bsm2File.read(path)
    import_file(path)
    assert_same_data(original, export_file(tmp_path / "out.bsm2"))


EVERY_BSM2 = corpus_files("bsm2/*.bsm2") + corpus_files("realmods/agora-plugin-filters-android/**/*.bsm2")


def first_difference(written, original):
    """Where two files' bytes first differ, and how many bytes differ (None when equal)."""
    if written == original:
        return None
    size = min(len(written), len(original))
    differ = np.flatnonzero(np.frombuffer(written[:size], np.uint8) != np.frombuffer(original[:size], np.uint8))
    return (int(differ[0]) if len(differ) else size, len(differ) + abs(len(written) - len(original)), len(written), len(original))


@pytest.mark.parametrize("path", EVERY_BSM2, ids=lambda p: p.stem)
def test_untouched_import_writes_every_byte_back(scene, path, tmp_path):
    """Every corpus .bsm2 imported and exported untouched: the file's bytes, every one."""
    import_file(path)
    export_file(tmp_path / "out.bsm2")
    assert first_difference((tmp_path / "out.bsm2").read_bytes(), path.read_bytes()) is None


def test_a_small_key_edit_is_written(scene, tmp_path, corpus):
    """A key moved by less than the rounding the kept keys allow (1e-4 of their size): the
    F-curves changed, so the keys written are those Blender holds, not the file's."""
    from precombined_nif.io import compat

    path = corpus / "bsm2/Rabbit.bsm2"
    _, armature_object = import_file(path)
    animation = armature_object.animation_data
    fcurve = next(c for c in compat.fcurves(animation.action, animation.action_slot if compat.SLOTTED_ACTIONS else None)
                  if c.data_path.endswith(".location"))
    fcurve.keyframe_points[100].co[1] += 2e-4
    fcurve.update()
    written = export_file(tmp_path / "out.bsm2").animations[0].keys
    original = Bsm2File.read(path).animations[0].keys
    assert not np.array_equal(written, original)
    assert np.abs(written - original).max() < 1e-2


@pytest.mark.parametrize("layout", ["skin-matrices", "two-animations", "hierarchy"])
def test_built_files_write_every_byte_back(scene, tmp_path, layout):
    """Files written by tests/raw_bsm2.py (Rabbit's geometry, keys of the test's own turning
    each bone, in the layouts Banuba files use) imported and exported untouched: every byte."""
    import raw_bsm2

    source = (Path(BSM2_FILES[0]).parent / "Rabbit.bsm2").read_bytes()
    bones = raw_bsm2.geometry(source)[3]
    animations = [("Take 001", 10_000_000_000, 33_333_333, raw_bsm2.rigid_keys(301, bones, 1, 5.0))]
    hierarchy = None
    if layout == "two-animations":
        animations.append(("idle", 1_000_000_000, 33_333_333, raw_bsm2.rigid_keys(31, bones, 2, 50.0)))
    if layout == "hierarchy":
        binds = np.tile(np.eye(4, dtype=np.float32), (bones, 1, 1))
        binds[:, 3, 1] = -3.0 * np.arange(bones)  # column-major: the translation in the last four floats
        hierarchy = ([0] + list(range(bones - 1)), binds.reshape(bones, 16), [f"bone{i}" for i in range(bones)])
    data = raw_bsm2.bsm2(source, ["Ear_shadow_mat", "mat_RabbitEar", "mat_rabbit"], animations, hierarchy)
    (tmp_path / "built.bsm2").write_bytes(data)
    import_file(tmp_path / "built.bsm2")
    export_file(tmp_path / "out.bsm2")
    assert first_difference((tmp_path / "out.bsm2").read_bytes(), data) is None


@pytest.mark.parametrize("hierarchy", [True, False], ids=["hierarchy", "full-matrices"])
def test_reexport_of_the_sample(scene, tmp_path, hierarchy):
    original = samples.skinned_strip(hierarchy)
    original.write(tmp_path / "strip.bsm2")
    import_file(tmp_path / "strip.bsm2")
    exported = export_file(tmp_path / "out.bsm2")
    assert_same_data(original, exported, matrix_tolerance=1e-5 * samples.SEGMENT * 3)
    for a, b in zip(original.animations, exported.animations):
        np.testing.assert_allclose(
            skinning.skin(exported.vertices, skinning.skinning_matrices(exported, b)),
            skinning.skin(original.vertices, skinning.skinning_matrices(original, a)),
            atol=1e-4,
        )


def test_edits_change_the_output(scene, addon, corpus, tmp_path):
    compat = addon.io.compat
    path = corpus / "bsm2/Rabbit.bsm2"
    original = Bsm2File.read(path)
    mesh_object, armature_object = import_file(path)
    mesh_object.data.vertices[5].co.z += 1.0
    action, slot = compat.animations(armature_object)[0]
    fcurve = next(f for f in compat.fcurves(action, slot) if f.data_path.endswith(".location") and f.array_index == 0)
    fcurve.keyframe_points[10].co.y += 2.0
    bone = int(fcurve.data_path.split('"')[1].removeprefix("Bone_"))
    exported = export_file(tmp_path / "edited.bsm2")
    moved = exported.vertices["position"] != original.vertices["position"]
    assert np.flatnonzero(moved.any(axis=1)).tolist() == [5]
    assert exported.vertices["position"][5, 1] == pytest.approx(original.vertices["position"][5, 1] + 1.0)  # Blender z = engine y
    changed = np.abs(exported.animations[0].keys - original.animations[0].keys).max(axis=(2, 3)) > 1e-3
    assert np.argwhere(changed).tolist() == [[10, bone]]


def test_weights_are_normalised_to_four_sorted(scene, corpus, tmp_path):
    mesh_object, _ = import_file(corpus / "bsm2/Rabbit.bsm2")
    groups = mesh_object.vertex_groups
    for index, weight in zip(range(6), (0.9, 0.05, 0.3, 0.2, 0.1, 0.6)):
        groups[index].add([0], weight, "REPLACE")  # six influences, not normalised
    vertex = export_file(tmp_path / "out.bsm2").vertices[0]
    assert vertex["weights"].sum(dtype=np.int64) == 255
    assert vertex["bones"].tolist() == [0, 5, 2, 3]  # the two smallest dropped, largest first
    assert np.all(np.diff(vertex["weights"].astype(np.int64)) <= 0)


def test_unweighted_vertices_are_refused(scene, corpus, tmp_path):
    import bpy

    mesh_object, _ = import_file(corpus / "bsm2/Cut.bsm2")
    for group in mesh_object.vertex_groups:
        group.remove([3])
    target = tmp_path / "out.bsm2"
    with pytest.raises(RuntimeError, match=r"out.bsm2 \(Cut\): 1 vertices have no bone weight \(vertex 3\)"):
        bpy.ops.export_scene.bsm2(filepath=str(target))
    assert not target.exists()


def test_too_many_bones_or_vertices_are_refused(scene, addon, tmp_path):
    import bmesh
    import bpy

    mesh = bpy.data.meshes.new("grid")
    b = bmesh.new()
    bmesh.ops.create_grid(b, x_segments=255, y_segments=256, size=1.0)  # 65792 vertices
    b.to_mesh(mesh)
    b.free()
    obj = bpy.data.objects.new("grid", mesh)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    target = tmp_path / "big.bsm2"
    export = addon.io.bsm2.exporter
    with pytest.raises(Exception, match="at most 65535") as error:
        export.export_file(bpy.context, target)
    assert type(error.value).__name__ == "FormatError" and not target.exists()

    armature = bpy.data.armatures.new("many")
    rig = bpy.data.objects.new("many", armature)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    for index in range(257):
        bone = armature.edit_bones.new(f"b{index}")
        bone.tail = (0, 1, 0)
    bpy.ops.object.mode_set(mode="OBJECT")
    small = bpy.data.objects.new("small", bpy.data.meshes.new("small"))
    small.data.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    scene.collection.objects.link(small)
    small.modifiers.new("Armature", "ARMATURE").object = rig
    small.vertex_groups.new(name="b0").add([0, 1, 2], 1.0, "REPLACE")
    with pytest.raises(Exception, match="257 bones"):
        export.export_file(bpy.context, target, small)
    assert not target.exists()


def test_mesh_without_armature_exports_as_static(scene, tmp_path):
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    exported = export_file(tmp_path / "cube.bsm2")
    assert exported.num_bones == 1 and [a.name for a in exported.animations] == ["static"]
    assert len(exported.vertices) == 24  # split at the cube's sharp edges and UV seams
    assert np.all(exported.vertices["weights"][:, 0] == 255)


# -- Blender versions and the command line ------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_actions_on_other_blender_versions(version, extension_zip, tmp_path, corpus):
    """The classic (4.2) and slotted (5.0) action APIs, through the installed extension."""
    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    command = [extension.python(venv), SMOKE, extension_zip, tmp_path / "user", corpus / "bsm2/Rabbit.bsm2", tmp_path]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout
    expected = "classic" if version == "4.2" else "slotted"
    assert f"{expected} actions" in result.stdout


def cli_with_bpy(*args):
    """cli.py run by the Python that has bpy 4.5 (as ``blender -b --python cli.py`` would)."""
    venv = extension.VENVS["4.5"]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy in {venv}: python3 tasks.py test creates it")
    command = [extension.python(venv), extension.ROOT / "cli.py", *args]
    return subprocess.run([str(a) for a in command], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_import_then_export(corpus, tmp_path):
    sources = [corpus / "bsm2/Rabbit.bsm2", corpus / "bsm2/Cut.bsm2"]
    blend = tmp_path / "both.blend"
    result = cli_with_bpy("import", *sources, "--blend", blend)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "rabbit.bsm2"
    result = cli_with_bpy("export", blend, out, "--object", "Rabbit")
    assert result.returncode == 0, result.stderr
    assert_same_data(Bsm2File.read(sources[0]), Bsm2File.read(out))


@pytest.mark.slow
def test_cli_import_failure_keeps_the_good_file(tmp_path, corpus):
    """A batch finishes the good files and saves them; the bad one is named, the status is 2.
    Alone, the bad file writes nothing."""
    damaged = tmp_path / "damaged.bsm2"
    damaged.write_bytes(b"\x01\x00\x00\x00" * 3)
    blend = tmp_path / "out.blend"
    result = cli_with_bpy("import", corpus / "bsm2/Brow.bsm2", damaged, "--blend", blend)
    assert result.returncode == 2 and blend.exists() and "1 of 2 file(s) imported" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {damaged}, offset ") and "Traceback" not in result.stderr
    alone = tmp_path / "alone.blend"
    result = cli_with_bpy("import", damaged, "--blend", alone)
    assert result.returncode == 2 and not alone.exists()


def test_names_blender_cannot_hold_are_written_back(scene, tmp_path):
    """Long names, duplicate bone names and bytes that are not UTF-8 survive import -> export."""
    bsm = samples.skinned_strip(True)
    bsm.materials = ["m" * 80, "nail"]
    bsm.hierarchy.names = ["bone", "bone", "t\udcffp"]  # \udcff: the byte 0xFF, kept as it is
    bsm.animations[0].name = "a" * 70
    bsm.write(tmp_path / "names.bsm2")
    mesh_object, armature_object = import_file(tmp_path / "names.bsm2")
    assert sorted(bone.name for bone in armature_object.data.bones) == ["bone", "bone.001", "t\ufffdp"]
    exported = export_file(tmp_path / "out.bsm2")
    assert exported.materials == bsm.materials
    assert exported.hierarchy.names == bsm.hierarchy.names
    assert [a.name for a in exported.animations] == [a.name for a in bsm.animations]


def test_blender_made_rig_exports_its_own_deformation(scene, tmp_path):
    """A rig made in Blender (parented bones with rolled rests, Euler keys) exports as a
    hierarchy file whose own skinning is what Blender shows at every key."""
    import bpy

    mesh = bpy.data.meshes.new("column")
    rows = np.arange(5) * 0.5
    mesh.from_pydata(
        [(x, 0.0, z) for z in rows for x in (-0.2, 0.2)], [], [(2 * i, 2 * i + 1, 2 * i + 3, 2 * i + 2) for i in range(4)]
    )
    mesh.uv_layers.new(name="UVMap")
    column = bpy.data.objects.new("column", mesh)
    armature = bpy.data.armatures.new("rig")
    rig = bpy.data.objects.new("rig", armature)
    for obj in (rig, column):
        scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    lower, upper = armature.edit_bones.new("lower"), armature.edit_bones.new("upper")
    lower.head, lower.tail, lower.roll = (0, 0, 0), (0, 0, 1), 0.3
    upper.head, upper.tail, upper.roll = (0, 0, 1), (0.1, 0, 2), -0.5
    upper.parent = lower
    bpy.ops.object.mode_set(mode="OBJECT")
    column.parent = rig
    column.modifiers.new("Armature", "ARMATURE").object = rig
    lower_group, upper_group = column.vertex_groups.new(name="lower"), column.vertex_groups.new(name="upper")
    # Weights that bytes hold exactly (0.6 = 153 / 255), so the file deforms exactly as Blender does.
    lower_group.add(list(range(4)), 1.0, "REPLACE")
    lower_group.add([4, 5], 0.6, "REPLACE")
    upper_group.add([4, 5], 0.4, "REPLACE")
    upper_group.add(list(range(6, 10)), 1.0, "REPLACE")
    pose = rig.pose.bones
    pose["upper"].rotation_mode = "ZXY"
    for frame, angle in ((1, 0.0), (4, 0.8), (7, -0.4)):
        pose["upper"].rotation_euler = (angle, 0.2 * angle, 0.0)
        pose["upper"].keyframe_insert("rotation_euler", frame=frame)
        pose["lower"].location = (0.0, angle, 0.0)
        pose["lower"].keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = column

    exported = export_file(tmp_path / "rig.bsm2")
    assert exported.hierarchy is not None and exported.hierarchy.names == ["lower", "upper"]
    assert exported.hierarchy.parents.tolist() == [0, 0]
    animation = exported.animations[0]
    assert len(animation.keys) == 7  # frames 1 to 7, one key per frame at the scene's rate
    expected = skinning.skin(exported.vertices, skinning.skinning_matrices(exported, animation)) @ TO_BLENDER.T
    # The exported vertices are Blender's, in corner order: map them back through their positions.
    rest = foreach(mesh.vertices, "co", 3).astype(np.float64)
    order = [int(np.argmin(np.abs(rest - p).sum(axis=1))) for p in exported.vertices["position"] @ TO_BLENDER.T]
    for key in range(len(animation.keys)):
        np.testing.assert_allclose(deformed_positions(column, 1 + key)[order], expected[key], atol=1e-4)
