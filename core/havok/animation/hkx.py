"""Animation and skeleton files: the packfile's objects to the model (model.py) and back
(64-bit FO4 and Skyrim SE files; 32-bit Skyrim LE ones are read too).

Reading decodes the animation, skeleton and behaviour string classes (``CLASSES``); the rest of a
file (a skeleton's ragdoll and mappers) is carried as it is. It takes the hkaAnimationContainer
named by the root-level container: its skeletons, and its animations decoded with the binding
that names each. Building makes the object graph the games' files carry (root-level container
with the animation container and an empty memory resource container; animation, binding,
optional reference frame) for hk_2010 (Skyrim SE) or hk_2014 (Fallout 4), with those files'
class signatures.
"""

from pathlib import Path

import numpy as np

from ...errors import FormatError
from ..classnames import ClassNames
from ..header import FileHeader
from ..container import Packfile
from ..objects import RawObject
from .behavior import CharacterStringData, ProjectStringData, behavior_file_kind
from .base import INTERLEAVED, SPLINE, Annotation as AnnotationObject, AnnotationTrack as AnnotationTrackObject
from .classes import HK_2010, HK_2014, AnimatedReferenceFrame, AnimationBinding, AnimationContainer, MemoryResourceContainer, NamedVariant, RootLevelContainer
from .interleaved import InterleavedAnimation
from .model import Animation, Annotation, AnnotationTrack, RootMotion, Skeleton
from .skeleton import SkeletonObject
from .spline import SplineAnimation
from .spline_decode import decode_spline
from .spline_encode import encode_spline

GAMES = {"FO4": HK_2014, "SSE": HK_2010}

BASE = ("hkClass", "hkClassMember", "hkClassEnum", "hkClassEnumItem", "hkRootLevelContainer", "hkaAnimationContainer")
CONTENTS_VERSION = {HK_2014: "hk_2014.1.0-r1", HK_2010: "hk_2010.2.0-r1"}
PREDICATES = b"\x14" + bytes(15)  # hk_2014 .hkx files: max predicate 21, this predicate array
# The classes a file is read through; the rest (a skeleton's ragdoll and mappers) is carried as it is.
CLASSES = frozenset(cls.class_name for cls in (
    RootLevelContainer, AnimationContainer, AnimationBinding, AnimatedReferenceFrame, MemoryResourceContainer,
    SkeletonObject, SplineAnimation, InterleavedAnimation, ProjectStringData, CharacterStringData,
))


class HkxFile:
    """A read animation or skeleton file: ``skeletons`` [Skeleton], ``animations``
    [Animation] and the ``packfile`` they came from (written back unchanged by
    ``packfile.write``). ``game`` is "FO4" (hk_2014) or "SSE" (hk_2010: Skyrim SE, and the
    32-bit Skyrim LE files, which are written back as SE's 64-bit ones when exported)."""

    def __init__(self, packfile, skeletons, animations, path=None):
        self.packfile = packfile
        self.skeletons = skeletons
        self.animations = animations
        self.path = path

    @property
    def game(self):
        return game_of(self.packfile.header)

    @property
    def bits(self):
        return 8 * self.packfile.header.pointer_size


def game_of(header):
    """"FO4" for an hk_2014 packfile, "SSE" for an hk_2010 one (Skyrim SE, or LE's 32-bit files)."""
    return "FO4" if header.file_version >= HK_2014 else "SSE"


def is_empty(packfile):
    """A file with nothing in it: its contents an hkBaseObject of no bytes (a tool's own test file)."""
    root = packfile.root
    return isinstance(root, RawObject) and root.class_name == "hkBaseObject" and not root.data


def read_hkx(path):
    path = Path(path)
    try:
        return hkx_from_packfile(packfile_from_bytes(path.read_bytes()), path)
    except FormatError as error:
        raise error.located(path=path) from None


def read_packfile(path):
    """The packfile of a .hkx, its animation, skeleton and behaviour classes decoded (an
    XmlHavokFile for an XML one)."""
    path = Path(path)
    try:
        return packfile_from_bytes(path.read_bytes())
    except FormatError as error:
        raise error.located(path=path) from None


def packfile_from_bytes(data):
    """A binary packfile read through CLASSES, or an XML file's objects (XmlHavokFile)."""
    from ..xml import XmlHavokFile, is_xml

    return XmlHavokFile.from_bytes(data) if is_xml(data) else Packfile.from_bytes(data, CLASSES)


def hkx_from_bytes(data, path=None):
    return hkx_from_packfile(packfile_from_bytes(data), path)


def hkx_from_packfile(packfile, path=None):
    root = packfile.root
    container = root.find("hkaAnimationContainer") if isinstance(root, RootLevelContainer) else None
    if container is None:
        if is_empty(packfile):
            raise FormatError("an empty packfile (no objects), not an animation or skeleton")
        kind = behavior_file_kind(packfile)
        if kind is not None:
            raise FormatError(f"a {kind} file, not an animation or skeleton (`cli.py info` lists the files it names)")
        held = sorted({v.object.class_name for v in root.variants if v.object}) if isinstance(root, RootLevelContainer) else [root.class_name]
        raise FormatError(f"not an animation or skeleton file: no hkaAnimationContainer (it holds {', '.join(held) or 'nothing'})")
    skeletons = [skeleton_from(obj) for obj in container.skeletons if isinstance(obj, SkeletonObject)]
    animations = []
    for index, obj in enumerate(container.animations):
        if not isinstance(obj, (SplineAnimation, InterleavedAnimation)):
            kind = "a null pointer" if obj is None else f"a {obj.class_name}, which is not supported"
            raise FormatError(f"animation {index} is {kind} (spline-compressed and interleaved animations are)")
        binding = next((b for b in container.bindings if isinstance(b, AnimationBinding) and b.animation is obj), None)
        animations.append(animation_from(obj, binding, f"animation {index} ({obj.class_name})"))
    return HkxFile(packfile, skeletons, animations, path)


def skeleton_from(obj):
    """One parent and one reference transform per bone; entries beyond the bones name no bone
    and are left out (a Fallout 4 mod's skeleton lists one parent more than its bones)."""
    count = len(obj.bones)
    if len(obj.parents) < count or len(obj.reference_pose) < count:
        raise FormatError(f"skeleton {obj.name!r}: {count} bones, {len(obj.parents)} parents, {len(obj.reference_pose)} reference transforms")
    pose = obj.reference_pose[:count]
    parents = obj.parents[:count].astype(np.int16)
    if ((parents < -1) | (parents >= count)).any():
        raise FormatError(f"skeleton {obj.name!r}: a parent index lies outside its {count} bones")
    if len(obj.reference_floats) != len(obj.float_slots):
        raise FormatError(f"skeleton {obj.name!r}: {len(obj.float_slots)} float slots, {len(obj.reference_floats)} reference floats")
    return Skeleton(
        name=obj.name,
        bone_names=[bone.name or "" for bone in obj.bones],
        parents=parents,
        translation=pose["translation"][:, :3].astype(np.float32),
        rotation=pose["rotation"].astype(np.float32),
        scale=pose["scale"][:, :3].astype(np.float32),
        lock_translation=np.array([bool(bone.lock_translation) for bone in obj.bones], bool),
        float_slots=[text or "" for text in obj.float_slots],
        reference_floats=obj.reference_floats.astype(np.float32),
    )


def animation_from(obj, binding, where):
    """Decode an animation object with its binding (None: track i drives bone i)."""
    tracks, floats = obj.transform_track_count, obj.float_track_count
    if isinstance(obj, SplineAnimation):
        translation, rotation, scale, float_values = decode_spline(obj, where)
        frame_duration = obj.frame_duration
        compression = "spline"
    else:
        translation, rotation, scale, float_values, frame_duration = _interleaved(obj, where)
        compression = "interleaved"
    if binding is None:
        track_bones, float_slots, name, hint = np.arange(tracks), np.arange(floats), None, 0
    else:
        track_bones = binding.track_bones.astype(np.int64) if len(binding.track_bones) else np.arange(tracks)
        float_slots = binding.float_slots.astype(np.int64) if len(binding.float_slots) else np.arange(floats)
        name, hint = binding.skeleton_name, binding.blend_hint
        if len(track_bones) != tracks or len(float_slots) != floats:
            raise FormatError(
                f"{where}: the binding maps {len(track_bones)} tracks and {len(float_slots)} float tracks, "
                f"the animation has {tracks} and {floats}"
            )
    if (track_bones < 0).any() or (float_slots < 0).any():
        raise FormatError(f"{where}: the binding names a negative bone or float slot")
    motion = obj.extracted_motion
    root_motion = None
    if isinstance(motion, AnimatedReferenceFrame):
        root_motion = RootMotion(np.array(motion.samples, np.float32).reshape(-1, 4), motion.duration, tuple(motion.up), tuple(motion.forward))
    return Animation(
        frame_duration=float(frame_duration),
        translation=translation,
        rotation=rotation,
        scale=scale,
        floats=float_values,
        track_bones=track_bones,
        float_slots=float_slots,
        skeleton_name=name,
        blend_hint=hint,
        annotation_tracks=[
            AnnotationTrack(track.name or "", [Annotation(float(a.time), a.text or "") for a in track.annotations] if track.annotations else [])
            for track in obj.annotation_tracks  # most tracks have none: no comprehension for those
        ],
        root_motion=root_motion,
        compression=compression,
    )


def _interleaved(obj, where):
    tracks, floats = obj.transform_track_count, obj.float_track_count
    if tracks < 0 or floats < 0 or not tracks + floats:
        raise FormatError(f"{where}: {tracks} tracks and {floats} float tracks")
    frames = len(obj.transforms) // tracks if tracks else len(obj.floats) // floats
    if frames < 1 or len(obj.transforms) != frames * tracks or len(obj.floats) != frames * floats:
        raise FormatError(f"{where}: {len(obj.transforms)} transforms and {len(obj.floats)} floats are not whole frames of {tracks} and {floats} tracks")
    transforms = obj.transforms.reshape(frames, tracks)
    frame_duration = obj.duration / (frames - 1) if frames > 1 else 1.0 / 30.0
    return (
        transforms["translation"][..., :3].astype(np.float32),
        transforms["rotation"].astype(np.float32),
        transforms["scale"][..., :3].astype(np.float32),
        obj.floats.reshape(frames, floats).astype(np.float32),
        frame_duration,
    )


def check_skeleton(animation, skeleton):
    """Raises FormatError when the animation drives bones or float slots the skeleton lacks."""
    bones = len(skeleton.bone_names)
    if len(animation.track_bones) and animation.track_bones.max() >= bones:
        missing = sorted(set(animation.track_bones[animation.track_bones >= bones].tolist()))
        raise FormatError(f"the animation drives bones {missing[:5]} but skeleton {skeleton.name!r} has {bones} bones")
    slots = len(skeleton.float_slots)
    if len(animation.float_slots) and animation.float_slots.max() >= slots:
        raise FormatError(f"the animation drives float slot {animation.float_slots.max()} but skeleton {skeleton.name!r} has {slots}")


def track_bone_names(animation, skeleton):
    """The skeleton bone name each track drives."""
    check_skeleton(animation, skeleton)
    return [skeleton.bone_names[index] for index in animation.track_bones.tolist()]


# -- writing -----------------------------------------------------------------------------
def build_hkx(animation, game="FO4", compression="spline", tolerances=None):
    """A Packfile holding ``animation`` (model.Animation) as the game's files do:
    spline-compressed (16-bit positions and scales, THREECOMP40 rotations, 256 frames per
    block) or interleaved uncompressed."""
    if game not in GAMES:
        raise FormatError(f"unknown game {game!r}: animations are written for {', '.join(GAMES)}")
    version = GAMES[game]
    frames, tracks = animation.rotation.shape[:2]
    floats = np.asarray(animation.floats, np.float32).reshape(frames, -1)
    _check_model(animation, frames, tracks, floats)
    duration = (frames - 1) * animation.frame_duration
    if compression == "spline":
        obj = _spline_object(animation, floats, version, tolerances)
    elif compression == "interleaved":
        obj = InterleavedAnimation()
        obj.type = INTERLEAVED
        transforms = np.zeros(frames * tracks, obj.transforms.dtype)
        transforms["translation"][:, :3] = np.asarray(animation.translation, np.float32).reshape(-1, 3)
        transforms["rotation"] = np.asarray(animation.rotation, np.float32).reshape(-1, 4)
        transforms["scale"][:, :3] = np.asarray(animation.scale, np.float32).reshape(-1, 3)
        obj.transforms = transforms
        obj.floats = floats.reshape(-1)
    else:
        raise FormatError(f"unknown compression {compression!r}: spline or interleaved")
    obj.duration = duration
    obj.transform_track_count = tracks
    obj.float_track_count = floats.shape[1]
    tracks_of_annotations = list(animation.annotation_tracks) + [AnnotationTrack("")] * (tracks - len(animation.annotation_tracks))
    obj.annotation_tracks = [
        AnnotationTrackObject(track.name, [AnnotationObject(a.time, a.text) for a in track.annotations])
        for track in tracks_of_annotations
    ]
    if animation.root_motion is not None:
        motion = animation.root_motion
        obj.extracted_motion = AnimatedReferenceFrame(np.asarray(motion.samples, np.float32).reshape(-1, 4), motion.duration)
        obj.extracted_motion.up, obj.extracted_motion.forward = tuple(motion.up), tuple(motion.forward)
    bones = np.asarray(animation.track_bones, np.int16)
    if version == HK_2010 and np.array_equal(bones, np.arange(tracks)):
        bones = bones[:0]  # Skyrim's files leave the identity map empty
    binding = AnimationBinding(obj, animation.skeleton_name, bones, np.asarray(animation.float_slots, np.int16), animation.blend_hint)
    container = AnimationContainer(animations=[obj], bindings=[binding])
    root = RootLevelContainer([
        NamedVariant("Merged Animation Container", "hkaAnimationContainer", container),
        NamedVariant("Resource Data", "hkMemoryResourceContainer", MemoryResourceContainer("")),
    ])
    packfile = Packfile(root)
    packfile.header = header = FileHeader()
    header.file_version = version
    header.contents_version = CONTENTS_VERSION[version]
    header.predicates = PREDICATES if version == HK_2014 else b""
    names = BASE + (obj.class_name,) + (("hkaDefaultAnimatedReferenceFrame",) if obj.extracted_motion else ()) + (
        "hkaAnimationBinding", "hkMemoryResourceContainer")
    packfile.classnames = ClassNames.listing(version, names)
    return packfile


def write_hkx(path, animation, game="FO4", compression="spline", tolerances=None):
    packfile = build_hkx(animation, game, compression, tolerances)
    Path(path).write_bytes(packfile.to_bytes())
    return packfile


def _check_model(animation, frames, tracks, floats):
    shapes = {"translation": (frames, tracks, 3), "rotation": (frames, tracks, 4), "scale": (frames, tracks, 3)}
    for name, shape in shapes.items():
        if np.shape(getattr(animation, name)) != shape:
            raise FormatError(f"animation {name} has shape {np.shape(getattr(animation, name))}, expected {shape}")
    if frames < 1 or tracks < 1:
        raise FormatError(f"an animation needs frames and tracks ({frames} frames, {tracks} tracks)")
    if len(animation.track_bones) != tracks or len(animation.float_slots) != floats.shape[1]:
        raise FormatError(f"{len(animation.track_bones)} track bones for {tracks} tracks, {len(animation.float_slots)} float slots for {floats.shape[1]} float tracks")
    if not animation.frame_duration > 0:
        raise FormatError(f"frame duration {animation.frame_duration} is not positive")
    for name in ("translation", "rotation", "scale"):
        if not np.isfinite(getattr(animation, name)).all():
            raise FormatError(f"animation {name} holds values that are not finite")
    frame, track = np.unravel_index(np.argmin(np.linalg.norm(animation.rotation, axis=2)), (frames, tracks))
    if np.linalg.norm(animation.rotation[frame, track]) < 1e-6:
        raise FormatError(f"the rotation of track {track} at frame {frame} is not a quaternion (zero length)")


def _spline_object(animation, floats, version, tolerances):
    encoded = encode_spline(
        np.asarray(animation.translation, np.float64), np.asarray(animation.rotation, np.float64),
        np.asarray(animation.scale, np.float64), floats, tolerances=tolerances,
    )
    obj = SplineAnimation()
    obj.type = SPLINE[version]
    obj.frame_count = animation.rotation.shape[0]
    obj.block_count = len(encoded.block_offsets)
    obj.frames_per_block = encoded.frames_per_block
    obj.mask_size = encoded.mask_size
    obj.block_duration = (encoded.frames_per_block - 1) * animation.frame_duration
    obj.block_inverse_duration = 1.0 / obj.block_duration
    obj.frame_duration = animation.frame_duration
    obj.block_offsets = encoded.block_offsets
    obj.float_block_offsets = encoded.float_block_offsets
    obj.data = encoded.data
    return obj
