"""Havok XML files into real Blender through the import of binary ones: the Dodge mod's XML
packfile skeleton as an armature whose bones rest where its text's reference pose (parsed and
composed here) puts them; its XML tagfile animation on that armature, posed where the
independent spline reading (tests/raw_hkx_spline.py) of the animation's data puts the bones."""

import numpy as np
from raw_hkx import data_objects
from raw_hkx_spline import independent_frames
from support import XML_ANIMATION, XML_SKELETON, unavailable
from test_havok_animation_blender import assert_rests, composed, import_onto_skeleton, local_matrices
from test_havok_xml import packfile_skeletons

from precombined_nif.core.havok.xml.convert import convert_hkx


def corpus(path):
    if not path.is_file():
        unavailable(f"corpus file missing: {path}")
    return path


def test_xml_skeleton_and_animation_import(clean_scene):
    import bpy

    from precombined_nif.io.havok.animation import importer

    (_, names, parents, pose, _), _ragdoll = packfile_skeletons(corpus(XML_SKELETON).read_text("ascii"))
    parents = np.array(parents)
    world = composed(parents, local_matrices(pose[:, :3], pose[:, 3:7], pose[:, 7:]))
    assert_rests(importer.import_skeleton(bpy.context, XML_SKELETON).data.bones, names, parents, world)

    written, _, _ = convert_hkx(corpus(XML_ANIMATION).read_bytes(), "64")  # its data as a binary object, for the raw reading
    spline = next(o for o in data_objects(written) if o.class_name == "hkaSplineCompressedAnimation")
    frames = independent_frames(spline.data, {"blocks": spline.local[0x58], "data": spline.local[0x98]}, [0, 14, 28])
    armature = import_onto_skeleton(XML_ANIMATION, XML_SKELETON)
    worst = 0.0
    for frame, (translation, rotation, scale) in frames.items():
        bpy.context.scene.frame_set(frame)
        posed = composed(parents, local_matrices(translation, rotation, scale))
        for index, name in enumerate(names):
            worst = max(worst, np.abs(np.array(armature.pose.bones[name].matrix) - posed[index]).max())
    assert worst < 1e-3
