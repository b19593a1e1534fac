"""The XML members of the typed classes: for each, its Havok member name, the attribute of the
typed object holding it and its kind. One description serves the XML reader (both the packfile
and the tagfile forms) and the XML packfile writer; the binary layout stays the classes' own
``sync``. Members a packfile leaves out of XML (SERIALIZE_IGNORED: hkReferencedObject's size and
count, a resource container's parent) are not listed: they keep the typed object's defaults.

Kinds: ``int``, ``bool``, ``real``, ``string``, ``ref``, ``vec4``, an enum (a dict of its value
names), a numpy dtype (an array of numbers), ``QS`` (an array of hkQsTransform), ``VEC4S``,
``STRINGS``, ``REFS``, or a ``Struct`` (an array of structures)."""

import numpy as np

from ..animation.base import Annotation, AnnotationTrack
from ..animation.behavior import CharacterStringData, ProjectStringData
from ..animation.classes import (
    HK_2014, AnimatedReferenceFrame, AnimationBinding, AnimationContainer, MemoryResourceContainer, NamedVariant,
    RootLevelContainer,
)
from ..animation.interleaved import InterleavedAnimation
from ..animation.skeleton import Bone, LocalFrameOnBone, Partition, SkeletonObject
from ..animation.spline import SplineAnimation

QS, VEC4S, STRINGS, REFS = "qstransform", "vec4 array", "string array", "ref array"
I16, U32, U8, F32 = (np.dtype(code) for code in ("<i2", "<u4", "u1", "<f4"))


class Member:
    def __init__(self, name, attribute, kind, since=None, stored=None):
        self.name = name
        self.attribute = attribute
        self.kind = kind
        self.since = since  # the first packfile version having the member (None: every one)
        self.stored = stored  # (value to attribute, attribute to value) when the attribute holds it otherwise

    def get(self, obj):
        value = getattr(obj, self.attribute)
        return self.stored[1](value) if self.stored else value

    def set(self, obj, value):
        setattr(obj, self.attribute, self.stored[0](value) if self.stored else value)

    def present(self, version):
        return self.since is None or version >= self.since


class Struct:
    """An array of structures built by ``factory()``."""

    def __init__(self, factory, members):
        self.factory = factory
        self.members = members


# hkaAnimation's type and hkaAnimationBinding's blend hint, as hk_2010 and hk_2014 name them
ANIMATION_TYPES = {
    8: {"HK_UNKNOWN_ANIMATION": 0, "HK_INTERLEAVED_ANIMATION": 1, "HK_DELTA_COMPRESSED_ANIMATION": 2,
        "HK_WAVELET_COMPRESSED_ANIMATION": 3, "HK_MIRRORED_ANIMATION": 4, "HK_SPLINE_COMPRESSED_ANIMATION": 5,
        "HK_QUANTIZED_COMPRESSED_ANIMATION": 6},
    11: {"HK_UNKNOWN_ANIMATION": 0, "HK_INTERLEAVED_ANIMATION": 1, "HK_MIRRORED_ANIMATION": 2,
         "HK_SPLINE_COMPRESSED_ANIMATION": 3, "HK_QUANTIZED_COMPRESSED_ANIMATION": 4,
         "HK_PREDICTIVE_COMPRESSED_ANIMATION": 5, "HK_REFERENCE_POSE_ANIMATION": 6},
}  # fmt: skip
BLEND_HINTS = {8: {"NORMAL": 0, "ADDITIVE": 1}, 11: {"NORMAL": 0, "ADDITIVE_DEPRECATED": 1, "ADDITIVE": 2}}
FRAME_TYPES = {11: {"REFERENCE_FRAME_UNKNOWN": 0, "REFERENCE_FRAME_DEFAULT": 1, "REFERENCE_FRAME_PARAMETRIC": 2}}


class Enum(dict):
    """An enum's value names per packfile version: {version: {name: value}}."""


ANNOTATION = Struct(Annotation, [Member("time", "time", "real"), Member("text", "text", "string")])
ANNOTATION_TRACK = Struct(AnnotationTrack, [Member("trackName", "name", "string"), Member("annotations", "annotations", ANNOTATION)])
ANIMATION = [
    Member("type", "type", Enum(ANIMATION_TYPES)),
    Member("duration", "duration", "real"),
    Member("numberOfTransformTracks", "transform_track_count", "int"),
    Member("numberOfFloatTracks", "float_track_count", "int"),
    Member("extractedMotion", "extracted_motion", "ref"),
    Member("annotationTracks", "annotation_tracks", ANNOTATION_TRACK),
]


def _camel(attribute):
    """``animation_files`` -> ``animationFilenames``, ``behavior_file`` -> ``behaviorFilename``."""
    if attribute.endswith(("_files", "_file")):
        attribute = attribute.replace("_file", "_filename")
    head, *rest = attribute.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _string_data(cls):
    """hkbProjectStringData / hkbCharacterStringData: their members named as their attributes are."""
    return [Member(_camel(name), name, STRINGS) for name in cls.ARRAYS] + [
        Member(_camel(name), name, "string") for name in cls.STRINGS
    ]


CLASSES = {
    RootLevelContainer: [
        Member("namedVariants", "variants", Struct(NamedVariant, [
            Member("name", "name", "string"), Member("className", "class_name", "string"), Member("variant", "object", "ref"),
        ])),
    ],
    AnimationContainer: [Member(name, name, REFS) for name in ("skeletons", "animations", "bindings", "attachments", "skins")],
    SkeletonObject: [
        Member("name", "name", "string"),
        Member("parentIndices", "parents", I16),
        Member("bones", "bones", Struct(Bone, [Member("name", "name", "string"), Member("lockTranslation", "lock_translation", "bool")])),
        Member("referencePose", "reference_pose", QS),
        Member("referenceFloats", "reference_floats", F32),
        Member("floatSlots", "float_slots", STRINGS),
        Member("localFrames", "local_frames", Struct(LocalFrameOnBone, [
            Member("localFrame", "frame", "ref"), Member("boneIndex", "bone", "int"),
        ])),
        Member("partitions", "partitions", Struct(Partition, [
            Member("name", "name", "string"), Member("startBoneIndex", "first_bone", "int"), Member("numBones", "bone_count", "int"),
        ]), since=HK_2014),
    ],
    AnimationBinding: [
        Member("originalSkeletonName", "skeleton_name", "string"),
        Member("animation", "animation", "ref"),
        Member("transformTrackToBoneIndices", "track_bones", I16),
        Member("floatTrackToFloatSlotIndices", "float_slots", I16),
        Member("partitionIndices", "partitions", I16, since=HK_2014),
        Member("blendHint", "blend_hint", Enum(BLEND_HINTS)),
    ],
    AnimatedReferenceFrame: [
        Member("frameType", "frame_type", Enum(FRAME_TYPES), since=HK_2014,
               stored=(lambda value: bytes([value]) + bytes(15), lambda raw: raw[0])),  # a byte, then padding
        Member("up", "up", "vec4"),
        Member("forward", "forward", "vec4"),
        Member("duration", "duration", "real"),
        Member("referenceFrameSamples", "samples", VEC4S),
    ],
    MemoryResourceContainer: [
        Member("name", "name", "string"), Member("resourceHandles", "handles", REFS), Member("children", "children", REFS),
    ],
    SplineAnimation: ANIMATION + [
        Member("numFrames", "frame_count", "int"),
        Member("numBlocks", "block_count", "int"),
        Member("maxFramesPerBlock", "frames_per_block", "int"),
        Member("maskAndQuantizationSize", "mask_size", "int"),
        Member("blockDuration", "block_duration", "real"),
        Member("blockInverseDuration", "block_inverse_duration", "real"),
        Member("frameDuration", "frame_duration", "real"),
        Member("blockOffsets", "block_offsets", U32),
        Member("floatBlockOffsets", "float_block_offsets", U32),
        Member("transformOffsets", "transform_offsets", U32),
        Member("floatOffsets", "float_offsets", U32),
        Member("data", "data", U8),
        Member("endian", "endian", "int"),
    ],
    InterleavedAnimation: ANIMATION + [Member("transforms", "transforms", QS), Member("floats", "floats", F32)],
    ProjectStringData: _string_data(ProjectStringData),
    CharacterStringData: _string_data(CharacterStringData),
}
BY_NAME = {cls.class_name: (cls, members) for cls, members in CLASSES.items()}
