"""Havok skeletons and animations in real Blender: a skeleton .hkx (or skeleton NIF) as an
armature whose rests are where the game's skeleton NIF puts its nodes (read from the NIF's bytes
by tests/raw_nodes.py, not the product's reader); animations as actions whose pose at a frame is
the codec's decoded transforms composed here; import then export re-imports equal within the
file's quantisation; the command line; bad input leaving the scene as it was."""

import numpy as np
import pytest
from raw_nodes import NODE_TYPES, read_nodes, world_matrices
from support import CORPUS, FO4_CREATURE_SKELETON, FO4_MOD_ANIMATION, SSE_CHARACTER_SKELETON, unavailable

FO4 = CORPUS / "pynifly/tests/tests/FO4"
FO4_SKELETON_HKX = FO4 / "Animations/skeleton.hkx"
FO4_SKELETON_NIF = FO4 / "skeleton.nif"


def corpus(path):
    if not path.is_file():
        unavailable(f"corpus file missing: {path}")
    return path


def nif_bones(path):
    """{node name: (parent node name or None, 4x4 world matrix relative to the root node)} of
    every node under a NIF's first root, from the file's bytes (the header naming block types)."""
    from precombined_nif.core.nif import NifFile

    header = NifFile.read(path).header
    nodes, roots = read_nodes(path)
    nodes = {i: n for i, n in nodes.items() if header.block_types[int(header.block_type_indices[i]) & 0x7FFF] in NODE_TYPES}
    root = roots[0]
    worlds = world_matrices(nodes, [root])
    to_root = np.linalg.inv(worlds[root])
    parents = {child: index for index, node in nodes.items() for child in node.children if child in nodes}
    out = {}
    for index, world in worlds.items():
        if index == root:
            continue
        parent = parents.get(index)
        out[nodes[index].name] = (nodes[parent].name if parent not in (None, root) else None, to_root @ world)
    return out


def rigid(matrix):
    """Rotation (scale removed) and translation: what a Blender bone's rest holds."""
    out = np.array(matrix, np.float64)
    out[:3, :3] /= np.linalg.norm(out[:3, :3], axis=0)
    return out


def test_skeleton_nif_becomes_an_armature_of_its_nodes(clean_scene):
    import bpy

    from precombined_nif.io.havok.animation import importer

    path = corpus(FO4_SKELETON_NIF)
    expected = nif_bones(path)
    obj = importer.import_skeleton(bpy.context, path)
    bones = obj.data.bones
    assert sorted(bone.name for bone in bones) == sorted(expected)
    worst = 0.0
    for bone in bones:
        parent, world = expected[bone.name]
        assert (bone.parent.name if bone.parent else None) == parent
        worst = max(worst, np.abs(np.array(bone.matrix_local) - rigid(world)).max())
    assert worst < 1e-4


FO4_ANIMATIONS = sorted(p.name for p in (FO4 / "Animations").glob("*.hkx") if p.name != "skeleton.hkx")
SSE = CORPUS / "pynifly/tests/tests/SkyrimSE"
SSE_ANIMATIONS = sorted(p.name for p in SSE.glob("*.hkx") if not p.name.startswith("skeleton"))
ANIMATIONS = [(FO4 / "Animations" / name, FO4_SKELETON_HKX) for name in FO4_ANIMATIONS] + [
    (SSE / name, SSE / "skeleton.hkx") for name in SSE_ANIMATIONS
]


def decoded(path):
    """The codec's decoding of an animation file: (core Animation, (F, T, 4, 4) local matrices)."""
    from precombined_nif.core.havok.animation import read_hkx

    animation = read_hkx(path).animations[0]
    return animation, local_matrices(animation.translation, animation.rotation, animation.scale)


def local_matrices(translation, rotation_xyzw, scale):
    """4x4 matrices T R S of Havok transforms (quaternions x y z w), computed here."""
    x, y, z, w = np.moveaxis(np.asarray(rotation_xyzw, np.float64), -1, 0)
    rotation = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)  # fmt: skip
    out = np.zeros(rotation.shape[:-2] + (4, 4))
    out[..., :3, :3] = rotation * np.asarray(scale, np.float64)[..., None, :]
    out[..., :3, 3] = translation
    out[..., 3, 3] = 1.0
    return out


def skeleton_of(path):
    """(bone names, parents, (B, 4, 4) reference pose) of a skeleton .hkx's first skeleton."""
    from precombined_nif.core.havok.animation import read_hkx

    skeleton = read_hkx(path).skeletons[0]
    return skeleton.bone_names, skeleton.parents, local_matrices(skeleton.translation, skeleton.rotation, skeleton.scale)


def posed_world(skeleton, animation, local_frame):
    """(B, 4, 4) every skeleton bone's pose in the skeleton's space at one frame: the decoded
    local transforms of the animated bones, the reference pose of the others, composed here."""
    _names, parents, reference = skeleton
    local = reference.copy()
    local[animation.track_bones] = local_frame
    world = local.copy()
    for i, parent in enumerate(parents.tolist()):
        if parent >= 0:
            world[i] = world[parent] @ local[i]
    return world


def import_onto_skeleton(animation, skeleton, **options):
    import bpy

    from precombined_nif.io.havok.animation.importer import import_animations

    armatures, messages = import_animations(bpy.context, [str(animation)], skeleton=str(skeleton), **options)
    assert armatures, messages
    return armatures[0]


def scene_state():
    import bpy

    return {kind: len(getattr(bpy.data, kind)) for kind in ("objects", "armatures", "actions", "collections")}


SKELETON_PAIRS = [
    # skeleton .hkx, the game's skeleton NIF, bones, bones the NIF has too, what the others are
    (FO4_SKELETON_HKX, FO4_SKELETON_NIF, 95, 78, lambda bone: "Weapon" in [p.name for p in bone.parent_recursive]),
    (SSE / "skeleton.hkx", SSE / "skeleton_vanilla.nif", 99, 96, lambda bone: bone.name.startswith("x_NPC ")),
]


@pytest.mark.parametrize("hkx, nif, count, shared_count, hkx_only", SKELETON_PAIRS, ids=["FO4", "SSE"])
def test_skeleton_hkx_and_skeleton_nif_give_the_same_bones(clean_scene, hkx, nif, count, shared_count, hkx_only):
    """Every bone of the skeleton .hkx that the game's skeleton NIF has (names in any case, as the
    games match them) has the NIF's parent (its nearest node that is a bone) and its rest where
    the NIF puts the node (composed here from the NIF's bytes). FO4's .hkx has 17 weapon bones
    the NIF lacks, Skyrim SE's three look/translate/rotate helpers."""
    import bpy

    from precombined_nif.io.havok.animation import importer

    expected = {name.lower(): (parent and parent.lower(), world) for name, (parent, world) in nif_bones(corpus(nif)).items()}
    obj = importer.import_skeleton(bpy.context, corpus(hkx))
    bones = obj.data.bones
    assert len(bones) == count
    shared = [bone for bone in bones if bone.name.lower() in expected]
    assert len(shared) == shared_count
    assert {bone.name for bone in bones} - {bone.name for bone in shared} == {bone.name for bone in bones if hkx_only(bone)}
    names = {bone.name.lower() for bone in bones}

    def nearest_bone_above(name):  # the NIF's nodes between bones (FO4's CamTargetParent) are no bones
        parent = expected[name][0]
        while parent is not None and parent not in names:
            parent = expected[parent][0]
        return parent

    rotation = translation = 0.0
    for bone in shared:
        _parent, world = expected[bone.name.lower()]
        assert (bone.parent.name.lower() if bone.parent else None) == nearest_bone_above(bone.name.lower()), bone.name
        difference = np.abs(np.array(bone.matrix_local) - rigid(world))
        rotation, translation = max(rotation, difference[:3, :3].max()), max(translation, difference[:3, 3].max())
    print(f"{hkx.name} vs {nif.name}: largest difference of the rests, rotation entries {rotation:.3g}, "
          f"translation {translation:.3g} units")
    # two files of the game's own, written apart: they agree to the float rounding of their tools
    assert rotation < 1e-3 and translation < 0.01


LE = CORPUS / "pynifly/tests/tests/Skyrim"
POSED = [ANIMATIONS[0], ANIMATIONS[-1], (LE / "1hm_staggerbacksmallest.hkx", LE / "skeleton.hkx"),
         (LE / "troll_h2hattackleftd.hkx", LE / "skeleton_troll.hkx")]


@pytest.mark.parametrize("animation, skeleton", POSED, ids=lambda p: p.parent.name + "/" + p.name)
def test_pose_at_frames_is_the_decoded_animation(clean_scene, animation, skeleton):
    """At the first, a middle and the last frame every bone is where the codec's decoded local
    transforms put it (composed here through the skeleton's parents); one key per frame, the
    file's frame rate and length, annotations as markers."""
    import bpy

    from precombined_nif.io import compat
    from precombined_nif.io.havok.animation.importer import import_animations

    armatures, messages = import_animations(bpy.context, [str(corpus(animation))], skeleton=str(corpus(skeleton)))
    armature = armatures[0]
    assert messages == ([f"{animation}: a Skyrim LE (32-bit) file: its action exports as Skyrim SE (64-bit)"]
                        if animation.parent == LE else [])
    decoded_animation, local = decoded(animation)
    skel = skeleton_of(skeleton)
    names = [skel[0][i] for i in decoded_animation.track_bones]
    frames = decoded_animation.frame_count
    action = armature.animation_data.action
    curves = compat.fcurves(action, armature.animation_data.action_slot if compat.SLOTTED_ACTIONS else None)
    assert len(curves) == 10 * len(names)
    assert {len(c.keyframe_points) for c in curves} == {frames}
    assert action.frame_range[:] == pytest.approx((0, frames - 1))
    scene = bpy.context.scene
    fps = decoded_animation.frame_rate
    assert scene.render.fps / scene.render.fps_base == pytest.approx(fps, rel=1e-5)
    assert sorted((m.frame, m.name) for m in action.pose_markers) == sorted(
        (round(a.time * fps), a.text) for a in decoded_animation.annotations()
    )
    worst = 0.0
    for frame in (0, frames // 2, frames - 1):
        scene.frame_set(frame)
        world = posed_world(skel, decoded_animation, local[frame])
        for track, name in enumerate(names):
            pose = np.array(armature.pose.bones[name].matrix)
            worst = max(worst, np.abs(pose - world[decoded_animation.track_bones[track]]).max())
    assert worst < 1e-3


def key_values(armature):
    """{(data path, index): key values} of the armature's active action."""
    from precombined_nif.io import compat

    animation = armature.animation_data
    curves = compat.fcurves(animation.action, animation.action_slot if compat.SLOTTED_ACTIONS else None)
    out = {}
    for fcurve in curves:
        co = np.zeros(2 * len(fcurve.keyframe_points), np.float32)
        fcurve.keyframe_points.foreach_get("co", co)
        out[(fcurve.data_path, fcurve.array_index)] = co[1::2].astype(np.float64)
    return out


def differences(before, after):
    """(largest rotation angle in radians, largest translation difference) between two imports'
    keys of the same bones."""
    assert before.keys() == after.keys()
    paths = {path for path, _ in before}
    rotation = translation = 0.0
    for path in paths:
        if path.endswith("rotation_quaternion"):
            a = np.column_stack([before[(path, i)] for i in range(4)])
            b = np.column_stack([after[(path, i)] for i in range(4)])
            dots = np.abs(np.einsum("ij,ij->i", a / np.linalg.norm(a, axis=1)[:, None], b / np.linalg.norm(b, axis=1)[:, None]))
            rotation = max(rotation, float(2 * np.arccos(np.clip(dots, 0, 1)).max()))
        elif path.endswith("location"):
            translation = max(translation, max(float(np.abs(before[(path, i)] - after[(path, i)]).max()) for i in range(3)))
    return rotation, translation


@pytest.mark.slow
@pytest.mark.parametrize("compressed", [True, False], ids=["spline", "uncompressed"])
@pytest.mark.parametrize("animation, skeleton", ANIMATIONS, ids=lambda p: p.name)
def test_import_export_reimport(clean_scene, tmp_path, animation, skeleton, compressed):
    """Every corpus animation imported, exported and imported again gives the same keys: within
    the quantisation the file used (spline compressed), or as stored (uncompressed)."""
    import bpy

    from precombined_nif.core.havok.animation import Tolerances
    from precombined_nif.io.havok.animation.action_export import export_animation

    armature = import_onto_skeleton(corpus(animation), corpus(skeleton))
    first = armature.animation_data.action
    before = key_values(armature)
    markers = sorted((m.frame, m.name) for m in first.pose_markers)
    out = tmp_path / animation.name
    written, game = export_animation(bpy.context, out, armature, compressed=compressed)
    original, _ = decoded(animation)
    assert game == ("FO4" if "FO4" in str(animation) else "SSE")
    assert written.frame_count == original.frame_count and np.array_equal(written.track_bones, original.track_bones)
    from precombined_nif.io.havok.animation.importer import import_animations

    armatures, messages = import_animations(bpy.context, [str(out)])
    assert armatures == [armature], messages
    assert armature.animation_data.action != first
    after = key_values(armature)
    assert sorted((m.frame, m.name) for m in armature.animation_data.action.pose_markers) == markers
    rotation, translation = differences(before, after)
    reread, _ = decoded(out)
    assert reread.frame_duration == pytest.approx(original.frame_duration, rel=1e-6)
    assert [a.text for a in reread.annotations()] == [a.text for a in original.annotations()]
    assert [a.time for a in reread.annotations()] == pytest.approx([a.time for a in original.annotations()], abs=1e-6)
    assert np.array_equal(reread.floats, original.floats)
    print(f"{animation.name} ({'spline' if compressed else 'uncompressed'}): largest rotation error "
          f"{np.degrees(rotation):.4f} degrees, translation {translation:.5f} units")
    if compressed:  # the encoder's fitting tolerances (a quaternion component, a length) plus its quantisation
        tolerances = Tolerances()
        assert rotation < 4 * tolerances.rotation and translation < 2 * tolerances.translation
    else:
        assert rotation < 1e-5 and translation < 1e-4


@pytest.mark.slow
def test_cli_import_then_export(tmp_path):
    """``cli.py import ANIM.hkx --skeleton SKELETON.hkx --blend`` then ``cli.py export BLEND OUT.hkx
    --object --action``: the written file decodes to the animation's bones and frames."""
    from extension import blender_cli

    animation, skeleton = corpus(ANIMATIONS[0][0]), corpus(ANIMATIONS[0][1])
    blend, out = tmp_path / "anim.blend", tmp_path / "out.hkx"
    result = blender_cli("import", animation, "--skeleton", skeleton, "--blend", blend)
    assert result.returncode == 0, result.stderr
    assert "1 of 1 file(s) imported" in result.stdout
    result = blender_cli("export", blend, out, "--object", "Root", "--action", animation.stem)
    assert result.returncode == 0, result.stderr
    original, local = decoded(animation)
    written, written_local = decoded(out)
    assert f"{original.track_count} tracks, {original.frame_count} frames" in result.stdout
    assert np.array_equal(written.track_bones, original.track_bones) and written.frame_count == original.frame_count
    assert np.abs(written_local[..., :3, 3] - local[..., :3, 3]).max() < 0.05
    result = blender_cli("export", blend, tmp_path / "none.hkx", "--object", "Root", "--action", "nothing")
    assert result.returncode == 2 and "no action named 'nothing'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "none.hkx").exists()


@pytest.mark.slow
def test_cli_animation_without_its_skeleton_fails(tmp_path):
    """No skeleton given, none beside the file: an error naming --skeleton, nothing written."""
    from extension import blender_cli

    animation = tmp_path / corpus(ANIMATIONS[0][0]).name
    animation.write_bytes(corpus(ANIMATIONS[0][0]).read_bytes())
    result = blender_cli("import", animation, "--blend", tmp_path / "x.blend")
    assert result.returncode == 2 and f"{animation}: an animation needs its skeleton" in result.stderr
    assert "--skeleton FILE" in result.stderr
    assert not (tmp_path / "x.blend").exists()


@pytest.mark.slow
def test_cli_animation_takes_the_skeleton_beside_it(tmp_path):
    """``cli.py import ANIM.hkx`` with the game's skeleton.hkx in its folder: imported onto it."""
    from extension import blender_cli

    animation, skeleton = corpus(ANIMATIONS[0][0]), corpus(ANIMATIONS[0][1])
    assert skeleton.parent == animation.parent
    result = blender_cli("import", animation, "--blend", tmp_path / "x.blend")
    assert result.returncode == 0, result.stderr
    assert "1 of 1 file(s) imported" in result.stdout and "bones" in result.stdout


def test_animation_of_another_skeleton_fails_cleanly(clean_scene):
    """A Fallout 4 animation onto the Skyrim SE skeleton: one error naming the file and both
    skeletons; neither the skeleton's armature nor an action is left behind."""
    import bpy

    from precombined_nif.io.havok.animation.importer import import_animations

    animation = corpus(ANIMATIONS[0][0])
    before = scene_state()
    armatures, messages = import_animations(bpy.context, [str(animation)], skeleton=str(corpus(SSE / "skeleton.hkx")))
    assert armatures == [] and messages == [
        f"{animation}: made for skeleton 'Root', not 'NPC Root [Root]' (armature 'NPC Root [Root]'): choose or give the "
        "skeleton it was made for"
    ]
    assert scene_state() == before


def test_skeleton_nif_lacking_moving_bones(clean_scene):
    """Onto FO4's skeleton.nif (no weapon bones; the tracks' bones named by the skeleton.hkx beside
    the animation): Death1 moves weapon bones, an error naming one, nothing left behind;
    PoseA_Idle1's weapon bones hold still, left out with a warning, the others posed as decoded."""
    import bpy

    from precombined_nif.io.havok.animation.importer import import_animations

    death = corpus(FO4 / "Animations/Death1.hkx")
    before = scene_state()
    armatures, messages = import_animations(bpy.context, [str(death)], skeleton=str(corpus(FO4_SKELETON_NIF)))
    assert armatures == [] and len(messages) == 1
    assert messages[0].startswith(f"{death}: the skeleton 'skeleton.nif' has no bone 'WeaponBolt' (12 bones the animation moves")
    assert scene_state() == before
    idle = corpus(FO4 / "Animations/PoseA_Idle1.hkx")
    armatures, messages = import_animations(bpy.context, [str(idle)], skeleton=str(corpus(FO4_SKELETON_NIF)))
    assert len(armatures) == 1 and len(messages) == 1 and "17 tracks of bones armature 'skeleton.nif' lacks" in messages[0]
    animation, local = decoded(idle)
    skeleton = skeleton_of(FO4_SKELETON_HKX)
    frame = animation.frame_count // 2
    bpy.context.scene.frame_set(frame)
    world = posed_world(skeleton, animation, local[frame])
    for name in ("Chest", "LArm_Hand", "RLeg_Foot", "Head"):
        pose = np.array(armatures[0].pose.bones[name.upper() if name == "Head" else name].matrix)
        assert np.abs(pose - world[skeleton[0].index(name)]).max() < 0.01, name


def test_bone_removed_from_the_armature_is_named(clean_scene):
    import bpy

    from precombined_nif.io.havok.animation import importer
    from precombined_nif.io.havok.animation.importer import import_animations

    obj = importer.import_skeleton(bpy.context, corpus(FO4_SKELETON_HKX))
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["LArm_Hand"])
    bpy.ops.object.mode_set(mode="OBJECT")
    before = scene_state()
    armatures, messages = import_animations(bpy.context, [str(corpus(ANIMATIONS[0][0]))])
    assert armatures == [] and "has no bone 'LArm_Hand'" in messages[0]
    assert scene_state() == before and obj.animation_data is None


@pytest.mark.parametrize("cut", [0, 64, 200, 0x200, -100])
def test_damaged_file_leaves_the_scene_unchanged(clean_scene, tmp_path, cut):
    import bpy

    from precombined_nif.io.havok.animation.importer import import_animations

    data = corpus(ANIMATIONS[0][0]).read_bytes()
    damaged = tmp_path / "damaged.hkx"
    damaged.write_bytes(data[:cut] if cut > 0 else data[:cut] if cut < 0 else b"")
    skeleton = corpus(FO4_SKELETON_HKX)
    before = scene_state()
    armatures, messages = import_animations(bpy.context, [str(damaged)], skeleton=str(skeleton))
    assert armatures == [] and len(messages) == 1 and messages[0].startswith(str(damaged))
    assert "internal error" not in messages[0]
    assert scene_state() == before


def test_menu_entries_and_drag_and_drop(addon):
    import bpy

    from precombined_nif.ui import menus

    assert ("import_scene.havok_animation", "Havok Animation (.hkx)") in menus.IMPORTS
    assert ("export_scene.havok_animation", "Havok Animation (.hkx)") in menus.EXPORTS
    handler = bpy.types.FileHandler.bl_rna_get_subclass_py("IO_FH_havok_animation")
    assert handler.bl_import_operator == "import_scene.havok_animation" and handler.bl_file_extensions == ".hkx"


def test_root_motion_on_the_armature_object(clean_scene, tmp_path):
    """With Root Motion, the reference frame's samples key the armature object: at each frame its
    location is the sample's translation and its rotation the sample's angle about the up axis;
    exported, the samples come back."""
    import bpy

    from precombined_nif.io.havok.animation.action_export import export_animation

    path = corpus(FO4 / "Animations/CoughingAfterCryo.hkx")  # walks 212 units and turns half a turn
    armature = import_onto_skeleton(path, corpus(FO4_SKELETON_HKX), root_motion=True)
    animation, _ = decoded(path)
    samples = animation.root_motion.samples.astype(np.float64)
    assert len(samples) == animation.frame_count
    for frame in (0, animation.frame_count // 3, animation.frame_count - 1):
        bpy.context.scene.frame_set(frame)
        x, y, z, angle = samples[frame]
        assert np.array(armature.location) == pytest.approx((x, y, z), abs=1e-3)
        expected = (np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
        q = np.array(armature.rotation_quaternion)
        assert abs(np.dot(q, expected)) == pytest.approx(1.0, abs=1e-6)
    out = tmp_path / "root.hkx"
    export_animation(bpy.context, out, armature, compressed=True)
    written, _ = decoded(out)
    angles = np.angle(np.exp(1j * (written.root_motion.samples[:, 3] - samples[:, 3])))  # the same turn, any lap
    assert np.abs(written.root_motion.samples[:, :3] - samples[:, :3]).max() < 1e-3 and np.abs(angles).max() < 1e-4
    assert written.root_motion.duration == pytest.approx(animation.root_motion.duration, rel=1e-6)


def test_a_skeleton_that_does_not_fit_is_an_error_naming_it(clean_scene):
    """The troll's animation (54 tracks bound by bone index, the same skeleton name as the
    human's) given the human skeleton of 99 bones: refused, naming the skeleton and the file,
    and nothing is left; given its own skeleton it imports."""
    import bpy

    from precombined_nif.io.havok.animation.importer import import_animations

    animation = corpus(LE / "troll_h2hattackleftd.hkx")
    before = scene_state()
    armatures, messages = import_animations(bpy.context, [str(animation)], skeleton=str(corpus(LE / "skeleton.hkx")))
    assert armatures == [] and len(messages) == 1
    assert messages[0].startswith(f"{animation}: the skeleton 'NPC Root [Root]' from 'skeleton' (99 bones) does not fit "
                                  f"this animation")
    assert "give the skeleton it was made for" in messages[0]
    assert scene_state() == before
    armatures, _ = import_animations(bpy.context, [str(animation)], skeleton=str(corpus(LE / "skeleton_troll.hkx")))
    assert len(armatures) == 1


def raw_root_motion(path):
    """(samples bytes, duration) of a file's hkaDefaultAnimatedReferenceFrame, read with struct
    (tests/raw_hkx.py): the duration after two 16-byte vectors, the samples where its one array
    points (count after the pointer)."""
    import struct

    from raw_hkx import data_objects

    (frame,) = [o for o in data_objects(path.read_bytes()) if o.class_name == "hkaDefaultAnimatedReferenceFrame"]
    (array_at,) = frame.local
    count, = struct.unpack_from("<I", frame.data, array_at + 8)
    duration, = struct.unpack_from("<f", frame.data, array_at - 8)
    return frame.data[frame.local[array_at]:frame.local[array_at] + 16 * count], duration


@pytest.mark.parametrize("root_motion", [False, True])
def test_root_motion_written_back_as_read(clean_scene, tmp_path, root_motion):
    """PoseA_Idle1's root motion (201 samples) keyed on the armature object or not, exported
    untouched: every sample's bytes and the duration as the file has them."""
    import bpy

    from precombined_nif.io.havok.animation.action_export import export_animation

    path = corpus(FO4 / "Animations/PoseA_Idle1.hkx")
    samples, duration = raw_root_motion(path)
    assert len(samples) == 16 * 201
    armature = import_onto_skeleton(path, corpus(FO4_SKELETON_HKX), root_motion=root_motion)
    export_animation(bpy.context, tmp_path / "idle.hkx", armature)
    assert raw_root_motion(tmp_path / "idle.hkx") == (samples, duration)


def test_edited_root_motion_is_written_as_keyed(clean_scene, tmp_path):
    """The keyed object moved by 10 units at every key: the samples written are the file's moved."""
    import bpy

    from precombined_nif.io import compat
    from precombined_nif.io.havok.animation.action_export import export_animation

    path = corpus(FO4 / "Animations/PoseA_Idle1.hkx")
    samples = np.frombuffer(raw_root_motion(path)[0], "<f4").reshape(-1, 4)
    armature = import_onto_skeleton(path, corpus(FO4_SKELETON_HKX), root_motion=True)
    animation = armature.animation_data
    (fcurve,) = [c for c in compat.fcurves(animation.action, animation.action_slot if compat.SLOTTED_ACTIONS else None)
                 if c.data_path == "location" and c.array_index == 0]
    for key in fcurve.keyframe_points:
        key.co[1] += 10.0
    export_animation(bpy.context, tmp_path / "idle.hkx", armature)
    written = np.frombuffer(raw_root_motion(tmp_path / "idle.hkx")[0], "<f4").reshape(-1, 4)
    assert np.abs(written[:, 0] - (samples[:, 0] + 10.0)).max() < 1e-4
    assert np.abs(written[:, 1:3] - samples[:, 1:3]).max() < 1e-4


@pytest.mark.slow
def test_cli_import_and_export_keep_root_motion(tmp_path):
    """``cli.py import skeleton.hkx PoseA_Idle1.hkx`` then ``export``: the root motion comes in as
    the armature object's motion and goes back out, every sample as the file has it."""
    from extension import blender_cli

    path = corpus(FO4 / "Animations/PoseA_Idle1.hkx")
    result = blender_cli("import", corpus(FO4_SKELETON_HKX), path, "--blend", tmp_path / "idle.blend")
    assert result.returncode == 0, result.stderr
    result = blender_cli("export", tmp_path / "idle.blend", tmp_path / "idle.hkx")
    assert result.returncode == 0, result.stderr
    assert raw_root_motion(tmp_path / "idle.hkx") == raw_root_motion(path)


def test_operators_import_and_export(clean_scene, tmp_path):
    """File > Import with the Skeleton option, File > Export with Uncompressed, as Blender runs them."""
    import bpy

    animation = corpus(ANIMATIONS[0][0])
    result = bpy.ops.import_scene.havok_animation(filepath=str(animation), skeleton=str(corpus(FO4_SKELETON_HKX)))
    assert result == {"FINISHED"}
    armature = bpy.context.view_layer.objects.active
    assert armature.type == "ARMATURE" and armature.animation_data.action.name == animation.stem
    out = tmp_path / "out.hkx"
    assert bpy.ops.export_scene.havok_animation(filepath=str(out), compression="NONE") == {"FINISHED"}
    written, local = decoded(out)
    original, original_local = decoded(animation)
    assert written.compression == "interleaved" and written.frame_count == original.frame_count
    assert np.abs(local - original_local).max() < 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.2", "5.0"])
def test_other_blender_versions(version, extension_zip, tmp_path):
    """The classic (4.2) and slotted (5.0) action APIs, through the installed extension."""
    import subprocess
    from pathlib import Path

    import extension

    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    smoke = Path(__file__).with_name("smoke_hkx.py")
    animation, skeleton = corpus(ANIMATIONS[-1][0]), corpus(ANIMATIONS[-1][1])
    command = [extension.python(venv), smoke, extension_zip, tmp_path / "user", animation, skeleton, tmp_path]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout
    assert ("classic" if version == "4.2" else "slotted") + " actions: imported and exported" in result.stdout


def test_new_action_on_a_skeleton_armature(clean_scene, tmp_path):
    """An action keyed by hand on an armature made from the skeleton .hkx: every skeleton bone a
    track, bound to its own index, the keyed bone's turn in its track, the others at rest."""
    import bpy

    from precombined_nif.io.havok.animation import importer
    from precombined_nif.io.havok.animation.action_export import export_animation

    armature = importer.import_skeleton(bpy.context, corpus(FO4_SKELETON_HKX))
    names, _parents, reference = skeleton_of(FO4_SKELETON_HKX)
    hand = armature.pose.bones["LArm_Hand"]
    angle = 0.6
    for frame, turn in ((0, 0.0), (10, angle)):
        hand.rotation_quaternion = (np.cos(turn / 2), 0.0, 0.0, np.sin(turn / 2))
        hand.keyframe_insert("rotation_quaternion", frame=frame)
    out = tmp_path / "wave.hkx"
    written, game = export_animation(bpy.context, out, armature, compressed=False)
    animation, local = decoded(out)
    assert game == "FO4" and animation.skeleton_name == "Root"
    assert np.array_equal(animation.track_bones, np.arange(95)) and animation.frame_count == 11
    index = names.index("LArm_Hand")
    # frame 0: the reference pose but for its scales (each within 0.0002 of 1), which a Blender rest cannot hold
    assert np.abs(local[0] - reference).max() < 2e-3
    rest = np.array(armature.data.bones["LArm_Hand"].parent.matrix_local.inverted() @ armature.data.bones["LArm_Hand"].matrix_local)
    turned = rest @ local_matrices([0, 0, 0], [0, 0, np.sin(angle / 2), np.cos(angle / 2)], [1, 1, 1])
    assert np.abs(local[10, index] - turned).max() < 1e-4


def test_skeleton_and_animation_dropped_together(clean_scene):
    """Files dropped together (Blender passes the folder and the names, here in name order): the
    skeleton is built first and the animation goes onto it."""
    import bpy

    animation = corpus(ANIMATIONS[1][0])
    files = [{"name": animation.name}, {"name": "skeleton.hkx"}]
    result = bpy.ops.import_scene.havok_animation("EXEC_DEFAULT", directory=str(animation.parent), files=files)
    assert result == {"FINISHED"}
    armature = bpy.context.view_layer.objects.active
    assert armature.name == "Root" and armature.animation_data.action.name == animation.stem


def test_failure_while_keying_removes_the_action(clean_scene, addon, monkeypatch):
    """A failure after the action exists (here: half way through keying) removes it again; the
    armature keeps the action and rotation modes it had."""
    import bpy

    import importlib

    importer = importlib.import_module(f"{addon.__name__}.io.havok.animation.importer")  # the installed add-on's
    armature = importer.import_skeleton(bpy.context, corpus(FO4_SKELETON_HKX))
    keyed = []
    real = addon.io.sampled_keys.set_keys

    def failing(*args):
        keyed.append(1)
        if len(keyed) > 300:
            raise RuntimeError("keying failed")
        return real(*args)

    monkeypatch.setattr(addon.io.sampled_keys, "set_keys", failing)
    before = scene_state()
    armatures, messages = addon.io.havok.animation.importer.import_animations(bpy.context, [str(corpus(ANIMATIONS[0][0]))])
    assert armatures == [] and "keying failed" in messages[0]
    assert scene_state() == before and armature.animation_data is None


# -- files other tools wrote (realmods/) --------------------------------------------------------


def struct_skeleton(path):
    """(names, parents, (n, 12) reference pose) of a skeleton .hkx's first skeleton, read with
    struct (tests/raw_hkx.py): one parent per bone."""
    from raw_hkx import data_objects, skeleton_fields

    obj = next(o for o in data_objects(path.read_bytes()) if o.class_name == "hkaSkeleton")
    _name, names, parents, pose = skeleton_fields(obj)
    return names, np.array(parents[: len(names)]), pose


def composed(parents, local):
    world = np.array(local, np.float64)
    for index, parent in enumerate(parents.tolist()):
        if parent >= 0:
            world[index] = world[parent] @ local[index]
    return world


@pytest.mark.parametrize("path", [SSE_CHARACTER_SKELETON, FO4_CREATURE_SKELETON], ids=["SSE character (numbered objects)", "FO4 creature"])
def test_realmods_skeleton_bones_where_the_reference_pose_puts_them(clean_scene, path):
    """Every bone has the file's parent and rests where the file's reference pose (read and
    composed here) puts it."""
    import bpy

    from precombined_nif.io.havok.animation import importer

    names, parents, pose = struct_skeleton(corpus(path))
    world = composed(parents, local_matrices(pose[:, :3], pose[:, 4:8], pose[:, 8:11]))
    assert_rests(importer.import_skeleton(bpy.context, path).data.bones, names, parents, world)


def assert_rests(bones, names, parents, world):
    """The armature's bones are the skeleton's, each with its parent and resting at ``world``."""
    assert sorted(bone.name for bone in bones) == sorted(names)
    worst = 0.0
    for index, name in enumerate(names):
        bone = bones[name]
        assert (bone.parent.name if bone.parent else None) == (names[parents[index]] if parents[index] >= 0 else None)
        worst = max(worst, np.abs(np.array(bone.matrix_local) - rigid(world[index])).max())
    assert worst < 1e-4


def test_fo4_mod_animation_poses_against_its_bytes(clean_scene, tmp_path):
    """The mod's animation drives 128 bones: the 95 of the game's human skeleton and 33 a mod's
    skeleton adds (not in the corpus). On the game's skeleton extended here by 33 bones under
    its root (rests: the animation's first frame), written as a skeleton .hkx by
    tests/hkx_writer.py, every bone at the first, a middle and the last frame is where the
    file's keys, decoded here with struct, put it."""
    import bpy
    from hkx_writer import animation_container, packfile, root_container, skeleton
    from raw_hkx import data_objects
    from raw_hkx_spline import independent_frames

    names, parents, pose = struct_skeleton(corpus(FO4 / "skeleton_vanilla.hkx"))
    spline = next(o for o in data_objects(corpus(FO4_MOD_ANIMATION).read_bytes())
                  if o.class_name == "hkaSplineCompressedAnimation")
    frames = independent_frames(spline.data, {"blocks": spline.local[0x58], "data": spline.local[0x98]}, [0, 175, 350])
    translations, rotations, scales = frames[0]
    tracks = len(translations)
    extra = np.zeros((tracks - len(names), 12), np.float32)
    extra[:, :3], extra[:, 4:8], extra[:, 8:11] = translations[len(names):], rotations[len(names):], scales[len(names):]
    all_names = names + [f"Mod Bone {index}" for index in range(len(names), tracks)]
    all_parents = parents.tolist() + [0] * len(extra)
    written = skeleton("Root", all_names, all_parents, np.concatenate([pose, extra]), version=11)
    skeleton_path = tmp_path / "skeleton.hkx"
    skeleton_path.write_bytes(packfile(root_container([("Merged Animation Container", "hkaAnimationContainer",
                                                         animation_container([written]))]), version=11))

    armature = import_onto_skeleton(FO4_MOD_ANIMATION, skeleton_path)
    worst = 0.0
    for frame, (translation, rotation, scale) in frames.items():
        bpy.context.scene.frame_set(frame)
        world = composed(np.array(all_parents), local_matrices(translation, rotation, scale))
        for index, name in enumerate(all_names):
            worst = max(worst, np.abs(np.array(armature.pose.bones[name].matrix) - world[index]).max())
    assert worst < 1e-3
