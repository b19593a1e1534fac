"""Havok animation and skeleton files (.hkx): FO4 (hk_2014) and Skyrim SE (hk_2010), 64-bit, and
Skyrim LE's 32-bit hk_2010 files.

Decoded frames are checked against an independent reading (tests/raw_hkx_spline.py: struct, one
key at a time, B-splines evaluated by the recursive Cox-de Boor definition) and against the facts
BadDogSkyrim/PyNifly's tests/anim_tests.py states about the same corpus files."""

import json
import struct

import numpy as np
import pytest
from raw_hkx import data_objects, sections, skeleton_fields
from raw_hkx_spline import _basis, independent_frames
from support import (
    CORPUS, EMPTY_PACKFILE, FO4_CREATURE_SKELETON, FO4_MOD_ANIMATION, SSE_CHARACTER_SKELETON, XML_ANIMATION, XML_SKELETON,
    corpus_files,
)

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok.animation import (
    Animation, Annotation, AnnotationTrack, RootMotion, Tolerances, build_hkx, check_skeleton, hkx_from_bytes, read_hkx,
    track_bone_names,
)
from precombined_nif.core.havok.animation.hkx import read_packfile
from precombined_nif.core.havok.animation.quantize import THREECOMP48, UNCOMPRESSED
from precombined_nif.core.havok.animation.summary import hkx_info
from precombined_nif.core.havok.animation.spline import SplineAnimation
from precombined_nif.core.havok.animation.spline_decode import decode_spline
from precombined_nif.core.havok.animation.spline_encode import basis_matrix, encode_spline

TESTS = CORPUS / "pynifly/tests/tests"
ANIMATIONS = [p for p in corpus_files("pynifly/tests/tests/FO4/Animations/*.hkx") if p.name != "skeleton.hkx"] + [
    p for p in corpus_files("pynifly/tests/tests/SkyrimSE/*.hkx") if "skeleton" not in p.name
]
SKELETONS = [TESTS / "FO4/skeleton_vanilla.hkx", TESTS / "FO4/Animations/skeleton.hkx", TESTS / "SkyrimSE/skeleton.hkx",
             TESTS / "SkyrimSE/skeleton_vanilla.hkx"]
LE_FILES = [TESTS / "Skyrim" / name for name in
            ("1hm_staggerbacksmallest.hkx", "troll_h2hattackleftd.hkx", "SOSFastErect.hkx", "skeleton.hkx",
             "skeleton_troll.hkx", "skeever_skeleton.hkx")]


def spline_object(hkx):
    return next(obj for obj, _ in hkx.packfile.objects() if isinstance(obj, SplineAnimation))


def _object_bytes(hkx):
    """The spline object's bytes and where its block offsets and data are (from its fixups)."""
    obj = spline_object(hkx)
    raw, local_fixups, _ = obj.encode(hkx.packfile.header.file_version)
    fixups = dict(local_fixups)
    return raw, {"blocks": fixups[0x58], "data": fixups[0x98]}


@pytest.mark.parametrize("name, frames", [
    ("FO4/Animations/run_forward_to_idle.hkx", range(30)),
    ("FO4/Animations/SneakIdle.hkx", [0, 100, 254, 255, 256, 285]),  # 2 blocks: 255 is shared
    ("SkyrimSE/sneak_1hmattackintro.hkx", range(10)),
    ("SkyrimSE/sneakmtidle.hkx", [0, 7, 254, 255, 256, 332]),
])
def test_decoded_frames_match_an_independent_reading(corpus, name, frames):
    hkx = read_hkx(TESTS / name)
    animation = hkx.animations[0]
    raw, where = _object_bytes(hkx)
    expected = independent_frames(raw, where, list(frames))
    for frame, (translations, rotations, _scales) in expected.items():
        np.testing.assert_allclose(animation.translation[frame], translations, atol=2e-4, rtol=1e-5)
        signs = np.sign(np.einsum("tc,tc->t", animation.rotation[frame], rotations))[:, None]
        np.testing.assert_allclose(animation.rotation[frame] * signs, rotations, atol=2e-5)


# -- facts from PyNifly's tests/anim_tests.py ------------------------------------------------
def test_fo4_run_forward_to_idle_facts(corpus):
    """TEST_READ_FO4_ANIM, TEST_FO4_ANIM_TRACKS, TEST_FO4_ANIM_QUATERNION_VALID."""
    hkx = read_hkx(TESTS / "FO4/Animations/run_forward_to_idle.hkx")
    animation = hkx.animations[0]
    assert (animation.track_count, animation.frame_count, spline_object(hkx).block_count) == (95, 30, 1)
    assert animation.duration == pytest.approx(0.9667, abs=0.001)
    assert animation.frame_duration == pytest.approx(1 / 30, abs=0.001)
    assert animation.skeleton_name == "Root" and len(animation.track_bones) == 95
    np.testing.assert_allclose(animation.translation[0, 0], 0, atol=0.01)
    np.testing.assert_allclose(animation.rotation[0, 0], [0, 0, 0, 1], atol=0.01)
    assert animation.translation[0, 1, 2] == pytest.approx(53.97, abs=0.1)
    assert animation.translation[-1, 1, 2] == pytest.approx(56.15, abs=0.1)
    dots = np.abs(np.einsum("ftc,tc->ft", animation.rotation[1:], animation.rotation[0]))
    assert (np.abs(dots - 1) > 1e-5).any(0).sum() == 61
    assert (np.abs(animation.translation[1:] - animation.translation[0]) > 1e-5).any(axis=(0, 2)).sum() == 5
    np.testing.assert_allclose(np.linalg.norm(animation.rotation, axis=2), 1, atol=0.01)


def test_skyrim_se_stagger_facts(corpus):
    """TEST_READ_SKYRIMSE_ANIM, and TEST_SKYRIM_ANIM_TRACKS's 61 animated rotation tracks (the LE
    file there is the same animation)."""
    hkx = read_hkx(TESTS / "SkyrimSE/1hm_staggerbacksmallest.hkx")
    animation = hkx.animations[0]
    assert (animation.track_count, animation.frame_count, spline_object(hkx).block_count) == (99, 38, 1)
    assert animation.duration == pytest.approx(1.2333, abs=0.001)
    assert animation.annotations()[0].text == "FootScuffRight"
    dots = np.abs(np.einsum("ftc,tc->ft", animation.rotation[1:], animation.rotation[0]))
    assert (np.abs(dots - 1) > 1e-5).any(0).sum() == 61


def test_skyrim_le_facts(corpus):
    """TEST_READ_SKYRIM_ANIM, TEST_SKYRIM_TROLL_ANIM, TEST_SKYRIM_SKELETON (32-bit files), and
    TEST_SKYRIMSE_ANIM_TRACKS: the LE and SE staggers decode to the same tracks within 0.001."""
    le = read_hkx(TESTS / "Skyrim/1hm_staggerbacksmallest.hkx")
    animation = le.animations[0]
    assert le.bits == 32 and le.game == "SSE"
    assert (animation.track_count, animation.frame_count, spline_object(le).block_count) == (99, 38, 1)
    assert animation.duration == pytest.approx(1.2333, abs=0.001)
    assert animation.annotations()[0].text == "FootScuffRight"
    se = read_hkx(TESTS / "SkyrimSE/1hm_staggerbacksmallest.hkx").animations[0]
    translation, rotation, _ = largest_errors(se, animation)
    assert translation < 0.001 and rotation < 0.001
    troll = read_hkx(TESTS / "Skyrim/troll_h2hattackleftd.hkx").animations[0]
    assert (troll.track_count, troll.frame_count) == (54, 57) and troll.duration == pytest.approx(1.8667, abs=0.001)
    assert troll.annotations()
    skeleton = read_hkx(TESTS / "Skyrim/skeleton.hkx").skeletons[0]
    assert len(skeleton.bone_names) == 99 and skeleton.bone_names[0] == "NPC Root [Root]" and skeleton.parents[0] == -1
    assert skeleton.bone_names[4] == "NPC COM [COM ]" and skeleton.parents[4] == 0
    assert skeleton.rotation[0, 3] == pytest.approx(1.0, abs=0.01)


def test_skyrim_le_animation_exports_as_se(corpus):
    """An LE animation written for SSE: 64-bit, and the same tracks within tolerance."""
    le = read_hkx(TESTS / "Skyrim/1hm_staggerbacksmallest.hkx")
    again = hkx_from_bytes(build_hkx(le.animations[0], le.game).to_bytes())
    assert again.bits == 64
    translation, rotation, _ = largest_errors(le.animations[0], again.animations[0])
    assert translation <= 0.01 and rotation <= 0.001 + 1 / 2895


def test_skyrim_se_skeleton_facts(corpus):
    """TEST_SKYRIMSE_SKELETON and TEST_SKYRIM_SKELETON."""
    skeleton = read_hkx(TESTS / "SkyrimSE/skeleton.hkx").skeletons[0]
    assert len(skeleton.bone_names) == 99 and len(skeleton.translation) == 99
    assert skeleton.bone_names[0] == "NPC Root [Root]" and skeleton.parents[0] == -1
    assert skeleton.bone_names[4] == "NPC COM [COM ]" and skeleton.parents[4] == 0
    assert skeleton.rotation[0, 3] == pytest.approx(1.0, abs=0.01)
    assert skeleton.float_slots[0] == "hkFade:AnimObjectA" and len(skeleton.reference_floats) == 8


def test_skeletons_against_their_bytes(corpus):
    """Bone names, parents and the reference pose read with struct from each bone's entry."""
    for path in SKELETONS:
        hkx = read_hkx(path)
        container = hkx.packfile.root.find("hkaAnimationContainer")
        for obj, skeleton in zip(container.skeletons, hkx.skeletons):
            raw, local_fixups, _ = obj.encode(hkx.packfile.header.file_version)
            fixups = dict(local_fixups)
            count, = struct.unpack_from("<I", raw, 0x28 + 8)
            parents = struct.unpack_from(f"<{count}h", raw, fixups[0x18])
            names = [raw[fixups[fixups[0x28] + 16 * i] :].split(b"\0")[0].decode() for i in range(count)]
            pose = np.frombuffer(raw, "<f4", 12 * count, fixups[0x38]).reshape(count, 12)
            assert skeleton.bone_names == names and list(skeleton.parents) == list(parents)
            np.testing.assert_array_equal(skeleton.translation, pose[:, :3])
            np.testing.assert_array_equal(skeleton.rotation, pose[:, 4:8])


def test_fo4_skeleton_drives_the_animation_bones(corpus):
    skeleton = read_hkx(TESTS / "FO4/skeleton_vanilla.hkx").skeletons[0]
    animation = read_hkx(TESTS / "FO4/Animations/Death1.hkx").animations[0]
    names = track_bone_names(animation, skeleton)
    assert names[:3] == ["Root", "COM", "Pelvis"] and len(names) == 95
    assert [a.text for a in animation.annotations()] == ["FootRight", "FootLeft", "FootLeft", "FootRight", "Ragdoll"]
    assert animation.root_motion is not None and len(animation.root_motion.samples) == animation.frame_count


# -- every corpus file ------------------------------------------------------------------------
@pytest.mark.parametrize("path", ANIMATIONS + SKELETONS + LE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_file_decodes_and_writes_back_identical(corpus, path):
    data = path.read_bytes()
    hkx = hkx_from_bytes(data)
    assert hkx.packfile.to_bytes() == data
    for animation in hkx.animations:
        assert np.isfinite(animation.translation).all() and np.isfinite(animation.rotation).all()
        np.testing.assert_allclose(np.linalg.norm(animation.rotation, axis=2), 1, atol=1e-5)
    assert hkx.animations or hkx.skeletons


def test_corpus_counts(corpus):
    assert len(ANIMATIONS) == 13  # 7 FO4 and 6 Skyrim SE animations


# -- files other tools wrote (realmods/) ------------------------------------------------------


def test_realmods_hkx_read_and_write_back(corpus):
    """Every .hkx of realmods/: the Skyrim SE character skeleton whose objects a converter
    numbered, the Fallout 4 creature skeleton whose ragdoll another exporter laid out (one
    parent more than its bones), the Fallout 4 animation whose ``__types__`` section has fixups,
    the Dodge mod's XML skeleton (packfile form) and animation (tagfile form), and hkxpack's
    packfile holding no objects (tests/test_havok_container.py; here only written back)."""
    paths = corpus_files("realmods/**/*.hkx")
    assert sorted(paths) == sorted([SSE_CHARACTER_SKELETON, FO4_CREATURE_SKELETON, FO4_MOD_ANIMATION, XML_SKELETON,
                                    XML_ANIMATION, EMPTY_PACKFILE])
    for path in paths:
        data = path.read_bytes()
        if path == EMPTY_PACKFILE:
            assert read_packfile(path).to_bytes() == data
            continue
        hkx = read_hkx(path)
        assert hkx.skeletons or hkx.animations
        assert hkx.packfile.to_bytes() == data
    assert [read_hkx(path).packfile.form for path in (XML_SKELETON, XML_ANIMATION)] == ["packfile", "tagfile"]
    assert read_hkx(SSE_CHARACTER_SKELETON).packfile.object_numbers == 8
    section, kept = read_hkx(FO4_MOD_ANIMATION).packfile.raw_sections[1]
    assert section.name == "__types__" and section.local == 18784 and len(kept) == section.end


@pytest.mark.parametrize("path, counts", [(SSE_CHARACTER_SKELETON, [(99, 99), (18, 18)]), (FO4_CREATURE_SKELETON, [(101, 102), (17, 17)])],
                         ids=["SSE character", "FO4 creature"])
def test_realmods_skeletons_against_their_bytes(corpus, path, counts):
    """Names, parents and reference pose as struct reads them from the file's objects (each
    member found by its pointer, whatever precedes it); one parent per bone."""
    objects = [obj for obj in data_objects(path.read_bytes()) if obj.class_name == "hkaSkeleton"]
    hkx = read_hkx(path)
    assert len(objects) == len(hkx.skeletons) == len(counts)
    for obj, skeleton, (bones, parent_count) in zip(objects, hkx.skeletons, counts):
        name, names, parents, pose = skeleton_fields(obj)
        assert (len(names), len(parents), len(pose)) == (bones, parent_count, bones)
        assert skeleton.name == name and skeleton.bone_names == names and list(skeleton.parents) == parents[:bones]
        np.testing.assert_array_equal(skeleton.translation, pose[:, :3])
        np.testing.assert_array_equal(skeleton.rotation, pose[:, 4:8])
        np.testing.assert_array_equal(skeleton.scale, pose[:, 8:11])


def test_sse_character_skeleton_is_the_games(corpus):
    """The numbered file holds the skeletons PyNifly's Skyrim SE skeleton.hkx holds: the same
    bones, their values to the six decimals of the Havok XML it was converted from."""
    numbered, plain = read_hkx(SSE_CHARACTER_SKELETON), read_hkx(TESTS / "SkyrimSE/skeleton.hkx")
    for a, b in zip(numbered.skeletons, plain.skeletons, strict=True):
        assert (a.name, a.bone_names, a.parents.tolist(), a.float_slots) == (b.name, b.bone_names, b.parents.tolist(), b.float_slots)
        for field in ("translation", "rotation", "scale", "reference_floats"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-6, atol=1e-6)
    assert np.abs(numbered.skeletons[0].translation - plain.skeletons[0].translation).max() > 0  # not a copy


def test_fo4_mod_animation_against_its_bytes(corpus):
    """Frames of both spline blocks as the independent reading decodes them from the file's
    own bytes; the facts of the file (351 frames at 30 fps, 128 tracks: the 95 bones of the
    game's human skeleton and 33 a mod's skeleton adds, root motion, 26 annotations)."""
    hkx = read_hkx(FO4_MOD_ANIMATION)
    animation = hkx.animations[0]
    spline = next(obj for obj in data_objects(FO4_MOD_ANIMATION.read_bytes()) if obj.class_name == "hkaSplineCompressedAnimation")
    expected = independent_frames(spline.data, {"blocks": spline.local[0x58], "data": spline.local[0x98]},
                                  [0, 1, 128, 254, 255, 256, 300, 350])
    for frame, (translations, rotations, scales) in expected.items():
        np.testing.assert_allclose(animation.translation[frame], translations, atol=2e-4, rtol=1e-5)
        signs = np.sign(np.einsum("tc,tc->t", animation.rotation[frame], rotations))[:, None]
        np.testing.assert_allclose(animation.rotation[frame] * signs, rotations, atol=2e-5)
        np.testing.assert_allclose(animation.scale[frame], scales, atol=2e-4)
    assert (animation.frame_count, animation.track_count, spline_object(hkx).block_count) == (351, 128, 2)
    assert animation.frame_rate == pytest.approx(30) and animation.skeleton_name == "Root"
    assert len(animation.root_motion.samples) == 351 and len(animation.annotations()) == 26
    human = read_hkx(TESTS / "FO4/skeleton_vanilla.hkx").skeletons[0]
    with pytest.raises(FormatError, match="drives bones \\[95, 96, 97, 98, 99\\] but skeleton 'Root' has 95 bones"):
        check_skeleton(animation, human)
    # its legs move the game's bones: thigh to calf as long as the game's skeleton puts them
    np.testing.assert_allclose(animation.translation[0, 4:9], human.translation[4:9], atol=0.01)


def test_sos_project_file_names_against_its_bytes(corpus):
    """Schlongs of Skyrim's project file (32-bit hk_2010): the character and behaviour files its
    hkbProjectStringData lists, read here with struct."""
    path = TESTS / "Skyrim/SOSMale.hkx"
    (strings,) = [obj for obj in data_objects(path.read_bytes()) if obj.class_name == "hkbProjectStringData"]

    def texts(at):  # an hkArray<hkStringPtr> at ``at`` (32-bit: pointer, size, capacity)
        count, = struct.unpack_from("<I", strings.data, at + 4)
        items = strings.local[at] if count else 0
        return [strings.data[strings.local[items + 4 * k]:].split(b"\0")[0].decode() for k in range(count)]

    info = hkx_info(path)
    assert info["kind"] == "project" and info["game"] == "LE"
    assert info["names"]["animations"] == texts(8) and info["names"]["behaviors"] == texts(20)
    assert info["names"]["characters"] == texts(32) == ["Characters\\SOSMaleCharacter.hkx"]
    assert read_packfile(path).to_bytes() == path.read_bytes()


def largest_errors(original, again):
    signs = np.sign(np.einsum("ftc,ftc->ft", again.rotation, original.rotation))[..., None]
    return (float(np.abs(again.translation - original.translation).max()),
            float(np.abs(again.rotation * signs - original.rotation).max()),
            float(np.abs(again.scale - original.scale).max()))


@pytest.mark.parametrize("path", ANIMATIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_encode_decode_within_tolerance(corpus, path):
    """Every corpus animation re-encoded as the game's files are (and uncompressed) decodes
    equal within Havok's default tolerances plus one quantisation step."""
    hkx = read_hkx(path)
    original = hkx.animations[0]
    step = 1 / (2047 * 2 ** 0.5)  # THREECOMP40
    tolerances = Tolerances()
    for compression in ("spline", "interleaved"):
        written = build_hkx(original, hkx.game, compression).to_bytes()
        again = hkx_from_bytes(written).animations[0]
        translation, rotation, scale = largest_errors(original, again)
        assert translation <= tolerances.translation and scale <= tolerances.scale
        assert rotation <= tolerances.rotation + step
        assert again.frame_count == original.frame_count and again.duration == pytest.approx(original.duration)
        assert [(a.time, a.text) for a in again.annotations()] == [(a.time, a.text) for a in original.annotations()]
        assert list(again.track_bones) == list(original.track_bones)
        assert list(again.float_slots) == list(original.float_slots)
        np.testing.assert_array_equal(again.floats, original.floats)
        assert again.skeleton_name == original.skeleton_name
        if original.root_motion is not None:
            np.testing.assert_array_equal(again.root_motion.samples, original.root_motion.samples)


def test_written_file_read_independently(corpus):
    """The writer's spline data is read by the independent reader above too."""
    hkx = read_hkx(TESTS / "FO4/Animations/run_forward_to_idle.hkx")
    again = hkx_from_bytes(build_hkx(hkx.animations[0], "FO4").to_bytes())
    raw, where = _object_bytes(again)
    for frame, (translations, rotations, _scales) in independent_frames(raw, where, range(0, 30, 7)).items():
        np.testing.assert_allclose(again.animations[0].translation[frame], translations, atol=2e-4)
        signs = np.sign(np.einsum("tc,tc->t", again.animations[0].rotation[frame], rotations))[:, None]
        np.testing.assert_allclose(again.animations[0].rotation[frame] * signs, rotations, atol=2e-5)


def test_written_file_carries_the_corpus_signatures(corpus):
    for path, game in [(TESTS / "FO4/Animations/Death1.hkx", "FO4"), (TESTS / "SkyrimSE/sneakmtidle.hkx", "SSE")]:
        hkx = read_hkx(path)
        written = build_hkx(hkx.animations[0], game)
        assert written.classnames.entries == hkx.packfile.classnames.entries
        fields = ("file_version", "pointer_size", "contents_version", "max_predicate", "predicates", "flags", "user_tag")
        assert [getattr(written.header, f) for f in fields] == [getattr(hkx.packfile.header, f) for f in fields]
        assert [obj.class_name for obj, _ in written.objects()] == [obj.class_name for obj, _ in hkx.packfile.objects()]


# -- animations built here --------------------------------------------------------------------
def synthetic(frames=600, tracks=4):
    t = np.arange(frames)[:, None] / 30.0
    angle = np.sin(t * np.arange(1, tracks + 1)) * 1.5
    rotation = np.zeros((frames, tracks, 4))
    rotation[..., 2], rotation[..., 3] = np.sin(angle / 2), np.cos(angle / 2)
    translation = np.zeros((frames, tracks, 3))
    translation[..., 0] = 40 * np.cos(t * 0.7)
    translation[:, 1, 1] = 3.0  # a static axis beside a spline one
    scale = np.ones((frames, tracks, 3))
    return Animation(1 / 30, translation.astype(np.float32), rotation.astype(np.float32), scale.astype(np.float32),
                     np.zeros((frames, 0), np.float32), np.arange(tracks), np.zeros(0, int), "Root",
                     annotation_tracks=[AnnotationTrack("", [Annotation(0.5, "SoundPlay")])],
                     root_motion=RootMotion(np.zeros((frames, 4), np.float32), (frames - 1) / 30))


@pytest.mark.parametrize("game", ["FO4", "SSE"])
def test_built_animation_spans_blocks(game):
    animation = synthetic()
    packfile = build_hkx(animation, game)
    obj = next(o for o, _ in packfile.objects() if isinstance(o, SplineAnimation))
    assert obj.block_count == 3  # 600 frames: 256 + 255 + 89 with shared boundary frames
    again = hkx_from_bytes(packfile.to_bytes()).animations[0]
    translation, rotation, _ = largest_errors(animation, again)
    assert translation <= 0.01 and rotation <= 0.001 + 1 / 2895
    assert again.translation[:, 1, 1].min() == pytest.approx(3.0)
    assert again.annotations() == animation.annotations()


@pytest.mark.parametrize("quantisation", [THREECOMP48, UNCOMPRESSED])
def test_other_rotation_quantisations_read_independently(quantisation):
    """THREECOMP48 and uncompressed rotations (no corpus file uses them) as the independent
    reader reads them."""
    animation = synthetic(frames=40)
    packfile = build_hkx(animation, "FO4")
    obj = next(o for o, _ in packfile.objects() if isinstance(o, SplineAnimation))
    encoded = encode_spline(animation.translation.astype(float), animation.rotation.astype(float),
                            animation.scale.astype(float), animation.floats, rotation_quantization=quantisation)
    obj.data, obj.block_offsets, obj.float_block_offsets = encoded.data, encoded.block_offsets, encoded.float_block_offsets
    again = hkx_from_bytes(packfile.to_bytes())
    assert {b >> 2 & 15 for b in spline_object(again).data[: 4 * 4 : 4]} == {quantisation}
    raw, where = _object_bytes(again)
    decoded = again.animations[0]
    for frame, (translations, rotations, _scales) in independent_frames(raw, where, range(0, 40, 3)).items():
        np.testing.assert_allclose(decoded.translation[frame], translations, atol=2e-4)
        np.testing.assert_allclose(decoded.rotation[frame], rotations, atol=2e-5)
    assert largest_errors(animation, decoded)[1] <= 0.001 + 1 / (2 * 16383 * 2 ** 0.5)


def test_8_bit_positions_built_by_hand():
    """A block written here byte by byte: one track, an 8-bit position spline on x (linear,
    three control points) with a static z, a static uncompressed rotation, identity scale."""
    masks = bytes([0 | (5 << 2) | (0 << 6), 0x10 | 0x04, 0x0F, 0])  # x splined, z static
    spline = struct.pack("<HB", 2, 1) + bytes([0, 0, 2, 4, 4])  # n=2, degree 1, knots; 4-aligned
    spline += struct.pack("<2f", -1.0, 3.0) + struct.pack("<f", 7.0) + bytes([0, 255, 51]) + bytes(1)
    rotation = struct.pack("<4f", 0.0, 0.0, 0.6, 0.8)
    data = np.frombuffer(masks + spline + rotation, np.uint8).copy()
    obj = SplineAnimation()
    obj.transform_track_count, obj.frame_count, obj.block_count, obj.mask_size = 1, 5, 1, 4
    obj.frame_duration = 1 / 30
    obj.block_offsets, obj.float_block_offsets, obj.data = np.array([0], "<u4"), np.array([len(data)], "<u4"), data
    translation, rotation_out, scale, _ = decode_spline(obj)
    # x at frames 0..4: control points -1, 3, -1 + 4 * 51/255 = -0.2 at knots 0, 2, 4
    np.testing.assert_allclose(translation[:, 0, 0], [-1, 1, 3, 1.4, -0.2], atol=1e-6)
    np.testing.assert_allclose(translation[:, 0, 2], 7.0)
    np.testing.assert_allclose(rotation_out[:, 0], [[0, 0, 0.6, 0.8]] * 5, atol=1e-7)
    np.testing.assert_array_equal(scale, 1.0)


def test_basis_with_repeated_knots_against_the_recursive_definition():
    """Inner knots repeated, the last equal to the end: where two knots of a span are equal the
    basis drops those terms (0/0) instead of dividing by zero."""
    knots, degree, frames = np.array([0, 0, 0, 0, 4, 4, 7, 10, 10, 10, 10, 10]), 3, 11
    matrix = basis_matrix(knots, degree, frames)
    assert np.isfinite(matrix).all()
    count = len(knots) - degree - 1
    expected = [[_basis(i, degree, u, knots.tolist()) for i in range(count)] for u in range(frames - 1)]
    np.testing.assert_allclose(matrix[:-1], expected, atol=1e-12)


def test_single_frame_animation():
    animation = synthetic(frames=1)
    again = hkx_from_bytes(build_hkx(animation, "FO4").to_bytes()).animations[0]
    assert again.frame_count == 1 and again.duration == 0
    np.testing.assert_allclose(again.translation, animation.translation, atol=1e-6)


# -- bad input ---------------------------------------------------------------------------------
def _damaged(path, change):
    hkx = read_hkx(path)
    change(spline_object(hkx), hkx)
    return hkx.packfile.to_bytes()


@pytest.mark.parametrize("change, message", [
    (lambda o, h: setattr(o, "data", o.data[: len(o.data) // 2]), "remain|do not divide"),
    (lambda o, h: setattr(o, "block_offsets", np.array([0, 40], "<u4")), "block offsets"),
    (lambda o, h: setattr(o, "frame_count", 100000), "blocks cannot hold"),
    (lambda o, h: setattr(o, "mask_size", 7), "mask size"),
    (lambda o, h: o.data.__setitem__(slice(0, 380, 4), 0x41), "rotation quantisation POLAR32"),
    (lambda o, h: setattr(o, "transform_track_count", 94), "mask size"),
    (lambda o, h: o.data.__setitem__(386, 255), r"\(hkaSplineCompressedAnimation\): spline knots decrease"),  # a knot of track 0
])
def test_damaged_spline_data_is_refused(corpus, tmp_path, change, message):
    path = tmp_path / "damaged.hkx"
    path.write_bytes(_damaged(TESTS / "FO4/Animations/Death1.hkx", change))
    with pytest.raises(FormatError, match=message) as error:
        read_hkx(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("change, message", [
    (lambda o, h: o.data.__setitem__(396, 0x30), "block 0: float track 0 is a spline; only static float tracks"),
    (lambda o, h: o.float_block_offsets.__setitem__(0, 8), "block 0: float tracks at 8 overlap"),
])
def test_damaged_float_tracks_are_refused(corpus, change, message):
    with pytest.raises(FormatError, match=message):
        hkx_from_bytes(_damaged(TESTS / "SkyrimSE/sneakmtidle.hkx", change))


def test_spline_header_overrunning_its_block_is_refused(corpus):
    def overrun(obj, hkx):
        # track 0's position is a spline (z) whose header, at the first byte after the masks,
        # now claims 32768 control points
        assert obj.data[1] & 0x70 and obj.data[382] == 3
        obj.data[380:382] = [0xFF, 0x7F]
    with pytest.raises(FormatError, match=r"block 0: spline knots needs 32772 bytes but only \d+ remain \(spline data offset 383\)"):
        hkx_from_bytes(_damaged(TESTS / "FO4/Animations/Death1.hkx", overrun))


@pytest.mark.parametrize("points, degree, message", [
    (b"\x02\x00", 3, r"block 0: spline at data offset 380 has 3 control points for degree 3 \(spline data offset 380\)"),
    (b"\x00\x60", 3, r"block 0: control points needs \d+ bytes but only \d+ remain \(spline data offset \d+\)"),
])
def test_spline_header_out_of_its_bounds_is_refused(corpus, points, degree, message):
    def rewrite(obj, hkx):
        # track 0's position spline header, at the first byte after the masks: its control
        # points less one (u16) and its degree
        assert obj.data[1] & 0x70 and obj.data[382] == 3
        obj.data[380:383] = [*points, degree]
    with pytest.raises(FormatError, match=message):
        hkx_from_bytes(_damaged(TESTS / "FO4/Animations/Death1.hkx", rewrite))


def test_track_name_without_its_nul_is_refused(corpus):
    """A name read with the other tracks' (a field at a time for all of them) whose bytes run to
    the end of its object without a NUL."""
    def name(obj, hkx):
        obj.annotation_tracks[5].name = "UnterminatedTrackName"
    data = bytearray(_damaged(TESTS / "FO4/Animations/Death1.hkx", name))
    _name, start, local, *_ = next(row for row in sections(data) if row[0] == "__data__")
    at = data.index(b"UnterminatedTrackName\0")
    data[at : start + local] = b"A" * (start + local - at)  # the rest of the data section: no NUL left
    with pytest.raises(FormatError, match="string has no terminating NUL inside its object"):
        hkx_from_bytes(bytes(data))


def test_binding_disagreeing_with_tracks_is_refused(corpus):
    def shorten(obj, hkx):
        binding = hkx.packfile.root.find("hkaAnimationContainer").bindings[0]
        binding.track_bones = binding.track_bones[:90]
    with pytest.raises(FormatError, match="binding maps 90 tracks"):
        hkx_from_bytes(_damaged(TESTS / "FO4/Animations/Death1.hkx", shorten))


def test_skeleton_missing_bones_is_refused(corpus):
    skeleton = read_hkx(TESTS / "FO4/skeleton_vanilla.hkx").skeletons[1]  # the 18-bone ragdoll skeleton
    animation = read_hkx(TESTS / "FO4/Animations/Death1.hkx").animations[0]
    with pytest.raises(FormatError, match="drives bones .* has 18 bones"):
        check_skeleton(animation, skeleton)


@pytest.mark.parametrize("name, message", [
    ("Skyrim/SOSMale.hkx", "a project file, not an animation or skeleton \\(`cli.py info` lists the files it names\\)"),
])
def test_unsupported_files_are_refused(corpus, name, message):
    with pytest.raises(FormatError, match=message):
        read_hkx(TESTS / name)


def test_truncated_file_is_refused(corpus):
    data = (TESTS / "SkyrimSE/sneakmtidle.hkx").read_bytes()
    for size in (0x30, 0x200, len(data) // 2, len(data) - 40):
        with pytest.raises(FormatError):
            hkx_from_bytes(data[:size])


def test_bad_model_is_refused_before_writing():
    animation = synthetic(frames=10)
    animation.rotation[3, 1] = np.nan
    with pytest.raises(FormatError, match="not finite"):
        build_hkx(animation, "FO4")
    animation = synthetic(frames=10)
    animation.track_bones = np.arange(3)
    with pytest.raises(FormatError, match="track bones"):
        build_hkx(animation, "SSE")
    animation = synthetic(frames=10)
    animation.rotation[4, 2] = 0
    with pytest.raises(FormatError, match="rotation of track 2 at frame 4 is not a quaternion"):
        build_hkx(animation, "FO4")
    with pytest.raises(FormatError, match="unknown game"):
        build_hkx(synthetic(frames=10), "FO3")


# -- command line ------------------------------------------------------------------------------
def test_cli_info_json(corpus, capsys):
    import cli

    assert cli.main(["info", "--json", str(TESTS / "SkyrimSE/1hm_staggerbacksmallest.hkx")]) in (0, None)
    info = json.loads(capsys.readouterr().out)
    (animation,) = info["animations"]
    assert info["game"] == "SSE" and info["havok_version"] == "hk_2010.2.0-r1"
    assert (animation["frames"], animation["tracks"], animation["float_tracks"], animation["blocks"]) == (38, 99, 4, 1)
    assert animation["duration"] == pytest.approx(1.2333, abs=0.001) and animation["bones"] == 99
    assert [a["text"] for a in animation["annotations"]] == ["FootScuffRight", "FootScuffLeft", "FootScuffRight"]
    assert info["classes"]["hkaSplineCompressedAnimation"] == 1


def test_cli_info_text_skeleton(corpus, capsys):
    import cli

    cli.main(["info", str(TESTS / "FO4/skeleton_vanilla.hkx")])
    out = capsys.readouterr().out
    assert "skeleton 'Root': 95 bones" in out and "Fallout 4" in out
