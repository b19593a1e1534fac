"""Havok XML files (issue 45, point 3): the packfile form hkxcmd and the HCT write and the tagfile
form, read into the objects the binary reader gives; conversions between XML and binary and
between 32- and 64-bit pointers that read back to the same values.

Checked against values computed here: the corpus files' own text parsed by this module (regular
expressions, apart from the product's reader), files built here to both layouts (their text
written by this module, not by the product's writer), and binary files written by the product
read back by tests/raw_hkx.py's independent reading."""

import json
import re
import struct
import subprocess
import sys

import numpy as np
import pytest
from raw_hkx import data_objects, skeleton_fields
from raw_hkx_spline import independent_frames
from support import CORPUS, ROOT, XML_ANIMATION, XML_SKELETON, corpus_bytes, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok.animation.hkx import hkx_from_bytes, read_hkx
from precombined_nif.core.havok.animation.summary import hkx_info
from precombined_nif.core.havok.xml.convert import convert_hkx, same_values

TESTS = CORPUS / "pynifly/tests/tests"
TAIL_SKELETON = TESTS / "Skyrim/tailskeleton.hkx"  # an XML packfile of animation classes only
PYNIFLY_XML_SKELETON = TESTS / "Skyrim/skeleton_xml.hkx"


def xml_files():
    return [path for path in corpus_files("**/*.[hH][kK][xX]") if corpus_bytes(path).lstrip()[:1] == b"<"]


def binary_files():
    return [path for path in corpus_files("**/*.[hH][kK][xX]") if corpus_bytes(path)[:4] == bytes.fromhex("57E0E057")]


def test_every_corpus_xml_file_reads(corpus):
    """The four XML .hkx of the corpus: both skeleton copies (pynifly's and the Dodge mod's),
    pynifly's tail skeleton and the Dodge mod's tagfile animation."""
    found = {path.relative_to(CORPUS).as_posix(): read_hkx(path) for path in xml_files()}
    assert sorted(found) == sorted(p.relative_to(CORPUS).as_posix() for p in (XML_SKELETON, XML_ANIMATION, TAIL_SKELETON, PYNIFLY_XML_SKELETON))
    for path, hkx in found.items():
        assert hkx.skeletons or hkx.animations, path
        assert hkx.packfile.to_bytes() == corpus_bytes(CORPUS / path)  # written back as read


# -- the corpus's XML packfile skeleton -----------------------------------------------------------
def packfile_skeletons(text):
    """[(name, bone names, parents, (n, 10) pose floats, lock flags)] of each hkaSkeleton object,
    read from the XML text with regular expressions."""
    found = []
    for body in re.findall(r'<hkobject name="#\d+" class="hkaSkeleton"[^>]*>(.*?)\n\t\t</hkobject>', text, re.S):
        param = lambda name: re.search(rf'<hkparam name="{name}"[^>]*>(.*?)</hkparam>', body, re.S).group(1)  # noqa: E731
        bones = re.search(r'<hkparam name="bones"[^>]*>(.*?)\n\t\t\t</hkparam>', body, re.S).group(1)
        names = re.findall(r'<hkparam name="name">(.*?)</hkparam>', bones)
        locks = [flag == "true" for flag in re.findall(r'<hkparam name="lockTranslation">(\w+)</hkparam>', bones)]
        pose = np.array(param("referencePose").replace("(", " ").replace(")", " ").split(), np.float32).reshape(-1, 10)
        found.append((re.search(r'^\s*<hkparam name="name">(.*?)</hkparam>', body, re.M).group(1), names,
                      [int(v) for v in param("parentIndices").split()], pose, locks))
    return found


def test_xml_packfile_skeleton_against_its_text(corpus):
    """Names, parents, lock flags and reference pose of both skeletons (99 and 18 bones) as the
    text gives them; and the same skeletons as the binary 32-bit skeleton.hkx beside pynifly's
    copy holds, to the six decimals of the XML."""
    text = XML_SKELETON.read_text("ascii")
    expected = packfile_skeletons(text)
    hkx = read_hkx(XML_SKELETON)
    assert [len(names) for _, names, _, _, _ in expected] == [len(s.bone_names) for s in hkx.skeletons] == [99, 18]
    for (name, names, parents, pose, locks), skeleton in zip(expected, hkx.skeletons, strict=True):
        assert (skeleton.name, skeleton.bone_names, skeleton.parents.tolist(), skeleton.lock_translation.tolist()) == (name, names, parents, locks)
        np.testing.assert_array_equal(np.hstack([skeleton.translation, skeleton.rotation, skeleton.scale]), pose)
    assert hkx.skeletons[0].float_slots == re.findall(r"<hkcstring>(.*?)</hkcstring>", text)[:8]
    classes = re.findall(r'<hkobject name="#\d+" class="(\w+)"', text)
    assert hkx_info(XML_SKELETON)["classes"] == {name: classes.count(name) for name in set(classes)}  # every object reached
    binary = read_hkx(TESTS / "Skyrim/skeleton.hkx")
    for a, b in zip(hkx.skeletons, binary.skeletons, strict=True):
        assert (a.name, a.bone_names, a.parents.tolist(), a.float_slots) == (b.name, b.bone_names, b.parents.tolist(), b.float_slots)
        for field in ("translation", "rotation", "scale"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), atol=1e-6)


def test_a_ragdoll_skeleton_is_not_converted(corpus, tmp_path):
    """Its physics classes have no layout here: refused with their names, nothing written."""
    with pytest.raises(FormatError, match=r"layout is not known here \(.*hkpRigidBody.*\)"):
        convert_hkx(XML_SKELETON.read_bytes(), "32")
    result = run_cli("convert", XML_SKELETON, tmp_path / "out.hkx")
    assert result.returncode == 2 and "hkpRigidBody" in result.stderr and not (tmp_path / "out.hkx").exists()


@pytest.mark.parametrize("to, pointer", [("32", 4), ("64", 8)])
def test_tail_skeleton_converts_to_binary(corpus, to, pointer):
    """pynifly's XML tail skeleton as a binary packfile: the independent binary reading finds the
    text's names, parents and pose; back to XML, the same values."""
    (name, names, parents, pose, _), = packfile_skeletons(TAIL_SKELETON.read_text("ascii"))
    written, _, _ = convert_hkx(TAIL_SKELETON.read_bytes(), to)
    assert written[16] == pointer
    obj, = (obj for obj in data_objects(written) if obj.class_name == "hkaSkeleton")
    got_name, got_names, got_parents, got_pose = skeleton_fields(obj, pointer)
    assert (got_name, got_names, got_parents) == (name, names, parents)
    np.testing.assert_array_equal(got_pose[:, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]], pose)
    again, _, _ = convert_hkx(written, "xml")
    assert same_values(written, again) is None and same_values(TAIL_SKELETON.read_bytes(), again) is None


# -- the corpus's XML tagfile animation -----------------------------------------------------------
def tagfile_member(text, object_type, kind, name):
    return re.search(rf'type="{object_type}">.*?<{kind} name="{name}"[^>]*>(.*?)</{kind}>', text, re.S).group(1)


def bits(token):
    return struct.unpack("<f", struct.pack("<I", int(token.strip().split()[0][1:], 16)))[0]


def test_xml_tagfile_animation_against_its_text(corpus):
    """Frame and track counts, duration and annotation from the text; its spline data (the
    tagfile's byte array) is what the 64-bit file written from it holds, and the frames the
    independent spline reading decodes from that file are the ones read from the XML."""
    text = XML_ANIMATION.read_text("ascii")
    spline = "hkaSplineCompressedAnimation"
    frames, tracks = int(tagfile_member(text, spline, "int", "numFrames")), int(tagfile_member(text, spline, "int", "numberOfTransformTracks"))
    assert (frames, tracks) == (29, 99)
    data = bytes(int(v) for v in tagfile_member(text, spline, "array", "data").split())
    animation = read_hkx(XML_ANIMATION).animations[0]
    assert (animation.frame_count, animation.track_count) == (frames, tracks)
    assert animation.frame_duration == bits(tagfile_member(text, spline, "real", "frameDuration"))
    assert animation.duration == pytest.approx(bits(tagfile_member(text, spline, "real", "duration")), abs=1e-6)
    assert [(a.time, a.text) for a in animation.annotations()] == [(bits("x3eddddde"), "FootLeft")]
    assert len(animation.root_motion.samples) == 29 and animation.skeleton_name == "NPC Root [Root]"
    names = re.findall(r'<string name="trackName">(.*?)</string>', text)
    assert [track.name for track in animation.annotation_tracks] == names and len(names) == 99

    written, _, _ = convert_hkx(XML_ANIMATION.read_bytes(), "64")
    obj, = (obj for obj in data_objects(written) if obj.class_name == spline)
    assert obj.data[obj.local[0x98] : obj.local[0x98] + len(data)] == data
    expected = independent_frames(obj.data, {"blocks": obj.local[0x58], "data": obj.local[0x98]}, [0, 1, 14, 27, 28])
    for frame, (translations, rotations, scales) in expected.items():
        np.testing.assert_allclose(animation.translation[frame], translations, atol=1e-4, rtol=1e-5)
        signs = np.sign(np.einsum("tc,tc->t", animation.rotation[frame], rotations))[:, None]
        np.testing.assert_allclose(animation.rotation[frame] * signs, rotations, atol=1e-4)
        np.testing.assert_allclose(animation.scale[frame], scales, atol=1e-4)


def test_32_bit_reference_frame_layout(corpus):
    """The root motion of the tagfile animation written 32-bit, read here with struct: the up and
    forward vectors the text gives at +0x10 and +0x20 (hkReferencedObject's 8 bytes padded to 16),
    the duration at +0x30 and the samples' hkArray straight after it at +0x34, 29 of them."""
    text = XML_ANIMATION.read_text("ascii")
    frame = "hkaDefaultAnimatedReferenceFrame"
    up, forward = ([bits(token) for token in re.findall(r"x[0-9a-f]{8}", tagfile_member(text, frame, "vec4", name))] for name in ("up", "forward"))
    written, _, _ = convert_hkx(XML_ANIMATION.read_bytes(), "32")
    obj, = (obj for obj in data_objects(written) if obj.class_name == frame)
    assert list(struct.unpack_from("<4f", obj.data, 0x10)) == up == [0, 0, 1, 0]
    assert list(struct.unpack_from("<4f", obj.data, 0x20)) == forward == [1, 0, 0, 0]
    assert struct.unpack_from("<f", obj.data, 0x30)[0] == bits(tagfile_member(text, frame, "real", "duration"))
    assert struct.unpack_from("<II", obj.data, 0x38) == (29, 29 | 0x80000000) and list(obj.local) == [0x34]
    assert len(obj.data) == 0x40 + 29 * 16


@pytest.mark.parametrize("to", ["32", "64", "xml"])
def test_xml_tagfile_animation_converts(corpus, to):
    """Each form written from the tagfile reads back to its values; each converts to the
    others and back to the same bytes."""
    source = XML_ANIMATION.read_bytes()
    written, read, wrote = convert_hkx(source, to)
    assert read == "an XML tagfile" and same_values(source, written) is None
    for other in {"32", "64", "xml"} - {to}:
        there, _, _ = convert_hkx(written, other)
        assert convert_hkx(there, to)[0] == written, other


# -- binary files to XML and to the other pointer size ---------------------------------------------
def test_every_convertible_binary_file_converts(corpus):
    """Every binary .hkx of the corpus holding only the classes known here: to XML and to the
    other pointer size, each reading back to the same values (and XML back to the same bytes)."""
    converted = []
    for path in binary_files():
        data = corpus_bytes(path)
        try:
            xml, _, _ = convert_hkx(data, "xml")
        except FormatError as error:
            assert "layout is not known here" in str(error), path
            continue
        bits = "32" if data[16] == 8 else "64"
        if data[12] == 11:  # Fallout 4's files: 64-bit only
            with pytest.raises(FormatError, match="64-bit only"):
                convert_hkx(data, bits)
            converted.append(path.name)
            assert same_values(data, convert_hkx(xml, "64")[0]) is None
            continue
        other, _, _ = convert_hkx(data, bits)
        assert same_values(data, xml) is None and same_values(data, other) is None, path
        # XML gives a transform's translation and scale as 3 numbers: bytes differ only where a w is not 0
        free_w = all(not skeleton_fields(obj, data[16])[3][:, [3, 11]].any() for obj in data_objects(data) if obj.class_name == "hkaSkeleton")
        assert (convert_hkx(xml, bits)[0] == other) == free_w, path
        converted.append(path.name)
    assert len(converted) == 20 and "SOSSkeleton.HKX" in converted  # of 31: the 9 with ragdolls, a project file, the empty one


def test_skyrim_le_animation_converts_to_the_games_se_file(corpus):
    """The LE and SE copies of 1hm_staggerbacksmallest.hkx: each converts to the other byte for
    byte (the 64-bit layout is the one Bethesda's SE file has)."""
    le, se = (TESTS / "Skyrim/1hm_staggerbacksmallest.hkx").read_bytes(), (TESTS / "SkyrimSE/1hm_staggerbacksmallest.hkx").read_bytes()
    assert convert_hkx(le, "64")[0] == se
    assert convert_hkx(se, "32")[0] == le
    assert convert_hkx(convert_hkx(le, "xml")[0], "64")[0] == se


# -- files built here to the two layouts -----------------------------------------------------------
BONES = ["Root", "Spine", "Head"]
PARENTS = [-1, 0, 1]
FRAMES = 4


def values():
    rng = np.random.default_rng(45)
    pose = rng.uniform(-50, 50, (3, 10)).round(3).astype(np.float32)
    pose[:, 3:7] = (pose[:, 3:7] / np.linalg.norm(pose[:, 3:7], axis=1, keepdims=True)).round(6)  # as the text gives them
    frames = rng.uniform(-2, 2, (FRAMES, 3, 10)).round(3).astype(np.float32)
    return pose, frames


def f(value):
    return f"{value:.6f}"


def qs(row):
    return f"({' '.join(map(f, row[:3]))})({' '.join(map(f, row[3:7]))})({' '.join(map(f, row[7:]))})"


def built_packfile(pose, frames, version=8):
    """An XML packfile as hkxcmd lays it out: referenced objects first, the root last."""
    tracks = "".join(f'<hkobject><hkparam name="trackName">{name}</hkparam><hkparam name="annotations" numelements="{int(i == 1)}">'
                     + ('<hkobject><hkparam name="time">0.500000</hkparam><hkparam name="text">Hit</hkparam></hkobject>' if i == 1 else "")
                     + "</hkparam></hkobject>" for i, name in enumerate(BONES))
    bones = "".join(f'<hkobject><hkparam name="name">{name}</hkparam><hkparam name="lockTranslation">{"true" if i == 2 else "false"}'
                    "</hkparam></hkobject>" for i, name in enumerate(BONES))
    contents = {8: "hk_2010.2.0-r1", 11: "hk_2014.1.0-r1"}[version]
    extra = '<hkparam name="partitions" numelements="0"></hkparam>' if version == 11 else ""
    extra_binding = '<hkparam name="partitionIndices" numelements="0"></hkparam>' if version == 11 else ""
    return f"""<?xml version="1.0" encoding="ascii"?>
<hkpackfile classversion="{version}" contentsversion="{contents}" toplevelobject="#0090">
	<hksection name="__data__">
		<hkobject name="#0091" class="hkaSkeleton" signature="0x366e8220">
			<!-- memSizeAndFlags SERIALIZE_IGNORED -->
			<hkparam name="name">Built Root</hkparam>
			<hkparam name="parentIndices" numelements="3">{' '.join(map(str, PARENTS))}</hkparam>
			<hkparam name="bones" numelements="3">{bones}</hkparam>
			<hkparam name="referencePose" numelements="3">{''.join(map(qs, pose))}</hkparam>
			<hkparam name="referenceFloats" numelements="1">0.250000</hkparam>
			<hkparam name="floatSlots" numelements="1"><hkcstring>hkVis:Shield</hkcstring></hkparam>
			<hkparam name="localFrames" numelements="0"></hkparam>{extra}
		</hkobject>
		<hkobject name="#0092" class="hkaInterleavedUncompressedAnimation" signature="0x930af031">
			<hkparam name="type">HK_INTERLEAVED_ANIMATION</hkparam>
			<hkparam name="duration">0.100000</hkparam>
			<hkparam name="numberOfTransformTracks">3</hkparam>
			<hkparam name="numberOfFloatTracks">0</hkparam>
			<hkparam name="extractedMotion">null</hkparam>
			<hkparam name="annotationTracks" numelements="3">{tracks}</hkparam>
			<hkparam name="transforms" numelements="{FRAMES * 3}">{''.join(qs(row) for row in frames.reshape(-1, 10))}</hkparam>
			<hkparam name="floats" numelements="0"></hkparam>
		</hkobject>
		<hkobject name="#0093" class="hkaAnimationBinding" signature="0x66eac971">
			<hkparam name="originalSkeletonName">Built Root</hkparam>
			<hkparam name="animation">#0092</hkparam>
			<hkparam name="transformTrackToBoneIndices" numelements="3">2 1 0</hkparam>
			<hkparam name="floatTrackToFloatSlotIndices" numelements="0"></hkparam>{extra_binding}
			<hkparam name="blendHint">ADDITIVE</hkparam>
		</hkobject>
		<hkobject name="#0094" class="hkaAnimationContainer" signature="0x8dc20333">
			<hkparam name="skeletons" numelements="1">#0091</hkparam>
			<hkparam name="animations" numelements="1">#0092</hkparam>
			<hkparam name="bindings" numelements="1">#0093</hkparam>
			<hkparam name="attachments" numelements="0"></hkparam>
			<hkparam name="skins" numelements="0"></hkparam>
		</hkobject>
		<hkobject name="#0090" class="hkRootLevelContainer" signature="0x2772c11e">
			<hkparam name="namedVariants" numelements="1"><hkobject><hkparam name="name">Merged Animation Container</hkparam>
				<hkparam name="className">hkaAnimationContainer</hkparam><hkparam name="variant">#0094</hkparam></hkobject></hkparam>
		</hkobject>
	</hksection>
</hkpackfile>
""".encode("ascii")


def hexbits(value):
    return f"x{struct.unpack('<I', struct.pack('<f', value))[0]:08x} <!-- {value} -->"


def vec12(row):
    full = [*row[:3], 0.0, *row[3:7], *row[7:], 0.0]
    return "<vec12>" + " ".join(hexbits(v) for v in full) + "</vec12>"


def built_tagfile(pose, frames):
    """An XML tagfile as the Dodge mod's: members at their defaults left out, annotation tracks
    as objects of their own, reals as their bits."""
    lock = '<byte name="lockTranslation">1</byte>'
    bones = "".join(f'<struct><string name="name">{name}</string>{lock if i == 2 else ""}</struct>' for i, name in enumerate(BONES))
    tracks = "".join(f'<object id="#00{10 + i}" type="hkaAnnotationTrack"><string name="trackName">{name}</string>'
                     + (f'<array name="annotations" size="1"><struct><real name="time">{hexbits(0.5)}</real><string name="text">Hit</string></struct></array>' if i == 1 else "")
                     + "</object>" for i, name in enumerate(BONES))
    return f"""<?xml version="1.0" encoding="us-ascii"?>
<hktagfile version="1">
  <class name="hkRootLevelContainer" version="0"><member name="namedVariants" type="struct" array="true" class="hkRootLevelContainerNamedVariant" /></class>
  <object id="#0001" type="hkRootLevelContainer"><array name="namedVariants" size="1"><struct><string name="name">Animation Container</string>
    <string name="className">hkaAnimationContainer</string><ref name="variant">#0002</ref></struct></array></object>
  <object id="#0002" type="hkaAnimationContainer"><array name="skeletons" size="1"><ref>#0003</ref></array>
    <array name="animations" size="1"><ref>#0004</ref></array><array name="bindings" size="1"><ref>#0005</ref></array></object>
  <object id="#0003" type="hkaSkeleton"><string name="name">Built Root</string><array name="parentIndices" size="3">{' '.join(map(str, PARENTS))}</array>
    <array name="bones" size="3">{bones}</array><array name="referencePose" size="3">{''.join(map(vec12, pose))}</array>
    <array name="referenceFloats" size="1"><real>{hexbits(0.25)}</real></array><array name="floatSlots" size="1"><string>hkVis:Shield</string></array></object>
  <object id="#0004" type="hkaInterleavedUncompressedAnimation"><int name="type">1</int><real name="duration">{hexbits(0.1)}</real>
    <int name="numberOfTransformTracks">3</int><array name="annotationTracks" size="3"><ref>#0010</ref><ref>#0011</ref><ref>#0012</ref></array>
    <array name="transforms" size="{FRAMES * 3}">{''.join(vec12(row) for row in frames.reshape(-1, 10))}</array></object>
  <object id="#0005" type="hkaAnimationBinding"><string name="originalSkeletonName">Built Root</string><ref name="animation">#0004</ref>
    <array name="transformTrackToBoneIndices" size="3">2 1 0</array><int name="blendHint">1</int></object>
  {tracks}
</hktagfile>
""".encode("ascii")


def check_built(hkx, pose, frames, blend=1):
    skeleton, = hkx.skeletons
    assert (skeleton.name, skeleton.bone_names, skeleton.parents.tolist()) == ("Built Root", BONES, PARENTS)
    assert skeleton.lock_translation.tolist() == [False, False, True]
    assert skeleton.float_slots == ["hkVis:Shield"] and skeleton.reference_floats.tolist() == [0.25]
    np.testing.assert_array_equal(skeleton.translation, pose[:, :3])
    np.testing.assert_array_equal(skeleton.rotation, pose[:, 3:7])
    np.testing.assert_array_equal(skeleton.scale, pose[:, 7:])
    animation, = hkx.animations
    assert (animation.frame_count, animation.track_count, animation.compression) == (FRAMES, 3, "interleaved")
    assert animation.track_bones.tolist() == [2, 1, 0] and animation.blend_hint == blend and animation.skeleton_name == "Built Root"
    assert [(track.name, [(a.time, a.text) for a in track.annotations]) for track in animation.annotation_tracks] == [
        ("Root", []), ("Spine", [(0.5, "Hit")]), ("Head", [])]
    np.testing.assert_array_equal(animation.translation, frames[..., :3])
    np.testing.assert_array_equal(animation.rotation, frames[..., 3:7])
    np.testing.assert_array_equal(animation.scale, frames[..., 7:])
    assert animation.frame_duration == pytest.approx(0.1 / (FRAMES - 1))


@pytest.mark.parametrize("form", ["packfile", "packfile hk_2014", "tagfile"])
def test_built_xml_reads_and_converts(form):
    """The built file's values as read, and as read back from each binary and XML conversion
    (the skeleton also through the independent binary reading)."""
    pose, frames = values()
    data = built_tagfile(pose, frames) if form == "tagfile" else built_packfile(pose, frames, 11 if "2014" in form else 8)
    blend = 2 if "2014" in form else 1  # ADDITIVE: hk_2014 numbers it after ADDITIVE_DEPRECATED
    check_built(hkx_from_bytes(data), pose, frames, blend)
    for to, pointer in (("32", 4), ("64", 8), ("xml", None)):
        if to == "32" and "2014" in form:
            continue
        written, _, _ = convert_hkx(data, to)
        check_built(hkx_from_bytes(written), pose, frames, blend)
        if pointer:
            obj, = (obj for obj in data_objects(written) if obj.class_name == "hkaSkeleton")
            name, names, parents, got = skeleton_fields(obj, pointer)
            assert (name, names, parents) == ("Built Root", BONES, PARENTS)
            np.testing.assert_array_equal(got[:, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]], pose)


def test_built_behaviour_and_character_xml_list_their_files(tmp_path):
    """A behaviour graph and a character file as XML packfiles: `info` lists the animations and
    behaviours their nodes and string data name."""
    graph = tmp_path / "graph.hkx"
    graph.write_text("""<?xml version="1.0" encoding="ascii"?>
<hkpackfile classversion="8" contentsversion="hk_2010.2.0-r1" toplevelobject="#0001"><hksection name="__data__">
<hkobject name="#0003" class="hkbClipGenerator" signature="0x333b85b9"><hkparam name="name">#Idle #12</hkparam>
  <hkparam name="animationName">Animations\\idle.hkx</hkparam></hkobject>
<hkobject name="#0004" class="hkbBehaviorReferenceGenerator" signature="0xfcb5423"><hkparam name="behaviorName">Behaviors\\magic.hkx</hkparam></hkobject>
<hkobject name="#0002" class="hkbBehaviorGraph" signature="0xb1218f86"><hkparam name="rootGenerator">#0003</hkparam>
  <hkparam name="other">#0004</hkparam></hkobject>
<hkobject name="#0001" class="hkRootLevelContainer" signature="0x2772c11e"><hkparam name="namedVariants" numelements="1"><hkobject>
  <hkparam name="name">hkbBehaviorGraph</hkparam><hkparam name="className">hkbBehaviorGraph</hkparam><hkparam name="variant">#0002</hkparam>
</hkobject></hkparam></hkobject></hksection></hkpackfile>""", "ascii")
    info = hkx_info(graph)
    assert info["kind"] == "behavior graph" and info["xml"] == "packfile"
    assert info["names"]["animations"] == ["Animations\\idle.hkx"] and info["names"]["behaviors"] == ["Behaviors\\magic.hkx"]
    character = tmp_path / "character.hkx"
    character.write_text("""<?xml version="1.0" encoding="ascii"?>
<hkpackfile classversion="8" contentsversion="hk_2010.2.0-r1" toplevelobject="#0001"><hksection name="__data__">
<hkobject name="#0003" class="hkbCharacterStringData" signature="0x655b42bc">
  <hkparam name="deformableSkinNames" numelements="0"></hkparam><hkparam name="rigidSkinNames" numelements="0"></hkparam>
  <hkparam name="animationNames" numelements="2"><hkcstring>Animations\\walk.hkx</hkcstring><hkcstring>Animations\\run.hkx</hkcstring></hkparam>
  <hkparam name="animationFilenames" numelements="0"></hkparam><hkparam name="characterPropertyNames" numelements="0"></hkparam>
  <hkparam name="retargetingSkeletonMapperFilenames" numelements="0"></hkparam><hkparam name="lodNames" numelements="0"></hkparam>
  <hkparam name="mirroredSyncPointSubstringsA" numelements="0"></hkparam><hkparam name="mirroredSyncPointSubstringsB" numelements="0"></hkparam>
  <hkparam name="name">Wolf</hkparam><hkparam name="rigName">CharacterAssets\\skeleton.HKX</hkparam>
  <hkparam name="ragdollName">CharacterAssets\\skeleton.HKX</hkparam><hkparam name="behaviorFilename">Behaviors\\WolfBehavior.hkx</hkparam>
</hkobject>
<hkobject name="#0002" class="hkbCharacterData" signature="0x300d6808"><hkparam name="stringData">#0003</hkparam></hkobject>
<hkobject name="#0001" class="hkRootLevelContainer" signature="0x2772c11e"><hkparam name="namedVariants" numelements="1"><hkobject>
  <hkparam name="name">hkbCharacterData</hkparam><hkparam name="className">hkbCharacterData</hkparam><hkparam name="variant">#0002</hkparam>
</hkobject></hkparam></hkobject></hksection></hkpackfile>""", "ascii")
    names = hkx_info(character)["names"]
    assert names["skeletons"] == ["CharacterAssets\\skeleton.HKX"] and names["behaviors"] == ["Behaviors\\WolfBehavior.hkx"]
    assert names["animations"] == ["Animations\\walk.hkx", "Animations\\run.hkx"]
    result = run_cli("info", character)
    assert result.returncode == 0 and "a character file, naming" in result.stdout, result.stderr


# -- damaged and hostile XML -------------------------------------------------------------------------
def hostile():
    pose, frames = values()
    good = built_packfile(pose, frames)
    laughs = b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><hkpackfile>&b;</hkpackfile>'
    return [
        ("entities", laughs, "DOCTYPE declaration"),
        ("external entity", b'<?xml version="1.0"?><!ENTITY x SYSTEM "file:///etc/passwd"><hkpackfile/>', "ENTITY declaration"),
        ("cut off", good[: len(good) // 2], "damaged or cut off at line"),
        ("huge count", good.replace(b'name="parentIndices" numelements="3"', b'name="parentIndices" numelements="4000000000"'),
         "declares 4000000000 items but holds 3"),
        ("deep nesting", b"<hkpackfile>" + b"<a>" * 100_000 + b"</a>" * 100_000 + b"</hkpackfile>", "nest deeper than 64"),
        ("unknown reference", good.replace(b'name="variant">#0094', b'name="variant">#9999'), "names object '#9999'"),
        ("not a number", good.replace(b">-1 0 1<", b">-1 zero 1<"), "not an integer"),
        ("out of range", good.replace(b">-1 0 1<", b">-1 0 70000<"), "outside int16"),
        ("beyond 64 bits", good.replace(b">-1 0 1<", b">-1 0 99999999999999999999<"), "not an integer"),
        ("count beyond 32 bits", good.replace(b'<hkparam name="numberOfTransformTracks">3<', b'<hkparam name="numberOfTransformTracks">99999999999<'),
         "does not fit 32 bits"),
        ("broken transforms", good.replace(b'name="referencePose" numelements="3">(', b'name="referencePose" numelements="3">(9 '),
         "31 numbers are not whole transforms of 10"),
        ("other version", good.replace(b"hk_2010.2.0-r1", b"hk_2012.2.0-r1"), "hk_2010 and hk_2014 are read"),
        ("other root", b'<?xml version="1.0"?><html/>', "not <hkpackfile> or <hktagfile>"),
        ("repeated id", good.replace(b'name="#0093"', b'name="#0092"'), "repeated"),
    ]


@pytest.mark.parametrize("case", hostile(), ids=[case[0] for case in hostile()])
def test_hostile_xml_is_refused_clearly(tmp_path, case):
    _, data, message = case
    path = tmp_path / "hostile.hkx"
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        read_hkx(path)
    assert str(path) in str(caught.value)
    if message:
        assert message in str(caught.value)


# -- the command line --------------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_cli_converts_and_informs(corpus, tmp_path):
    out32, back = tmp_path / "roll_forward.hkx", tmp_path / "roll_forward_xml.hkx"
    result = run_cli("convert", XML_ANIMATION, out32, "--to", "32")
    assert result.returncode == 0 and "a 32-bit packfile written from an XML tagfile" in result.stdout, result.stderr
    result = run_cli("convert", out32, back, "--json")
    assert json.loads(result.stdout)["to"] == "an XML packfile" and back.read_bytes().startswith(b'<?xml version="1.0" encoding="ascii"?>\n<hkpackfile classversion="8"')
    result = run_cli("info", XML_ANIMATION)
    assert "XML tagfile (Skyrim)" in result.stdout and "29 frames at 30 fps, 99 tracks" in result.stdout, result.stderr
    result = run_cli("convert", TESTS / "SkyrimSE/skeleton.hkx", tmp_path / "x.hkx", "--to", "64")
    assert result.returncode == 2 and "hkpRigidBody" in result.stderr


@pytest.mark.parametrize("path", [TAIL_SKELETON, XML_ANIMATION], ids=["packfile", "tagfile"])
def test_damaged_xml_fails_cleanly(corpus, path):
    """Cut, overwritten, inserted and deleted bytes: each damaged copy reads (and converts) or
    gives a FormatError, never another exception."""
    import random

    data = path.read_bytes()
    rng = random.Random(path.name)
    problems = []
    for k in range(240):
        damaged = bytearray(data)
        if k % 4 == 0:
            damaged = damaged[: rng.randrange(len(damaged))]
        elif k % 4 == 1:
            for _ in range(rng.randint(1, 8)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        elif k % 4 == 2:
            at = rng.randrange(len(damaged))
            damaged[at:at] = rng.choice([b"<", b">", b"#0001", b"x", b"-", b"99999999999", b'"', b"(", b")", b"nan", b" 7"])
        else:
            at = rng.randrange(len(damaged))
            del damaged[at : at + rng.randrange(200)]
        try:
            hkx_from_bytes(bytes(damaged))
            convert_hkx(bytes(damaged), "32")
        except FormatError:
            pass
        except Exception as error:  # noqa: BLE001 - any other exception is the failure reported
            problems.append(f"mutation {k}: {type(error).__name__}: {error}")
    assert not problems, problems[:5]
