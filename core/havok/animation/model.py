"""What a Havok animation file means, apart from its bytes: skeletons and decoded animations.

Conventions: quaternions x, y, z, w (Havok's order); transforms are bone-local (parent space);
lengths in the file's own units (nothing is scaled); per-frame arrays are (frames, tracks, ...)
float32; frame f is at time f * frame_duration, the last at ``duration``.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Skeleton:
    name: str
    bone_names: list  # [str], bone i
    parents: np.ndarray  # (bones,) int16, -1 for a root
    translation: np.ndarray  # (bones, 3) float32, reference pose, parent space
    rotation: np.ndarray  # (bones, 4) float32, x y z w
    scale: np.ndarray  # (bones, 3) float32
    lock_translation: np.ndarray  # (bones,) bool
    float_slots: list = field(default_factory=list)  # [str]
    reference_floats: np.ndarray = field(default_factory=lambda: np.zeros(0, "f4"))  # (slots,)

    def bone_index(self):
        """{bone name: index}."""
        return {name: index for index, name in enumerate(self.bone_names)}


@dataclass
class Annotation:
    time: float  # seconds from the start
    text: str


@dataclass
class AnnotationTrack:
    name: str  # the games leave most empty; FO4 and Skyrim put their events on track 0
    annotations: list = field(default_factory=list)  # [Annotation]


@dataclass
class RootMotion:
    """hkaDefaultAnimatedReferenceFrame: the motion the game applies to the character."""

    samples: np.ndarray  # (samples, 4) float32: x y z translation, w yaw angle (radians)
    duration: float
    up: tuple = (0.0, 0.0, 1.0, 0.0)
    forward: tuple = (0.0, 1.0, 0.0, 0.0)


@dataclass
class Animation:
    """A decoded animation with its binding. ``track_bones[t]`` is the skeleton bone track t
    drives; ``float_slots[k]`` the skeleton float slot float track k drives."""

    frame_duration: float  # seconds per frame
    translation: np.ndarray  # (frames, tracks, 3) float32
    rotation: np.ndarray  # (frames, tracks, 4) float32, x y z w, unit length
    scale: np.ndarray  # (frames, tracks, 3) float32
    floats: np.ndarray  # (frames, float tracks) float32
    track_bones: np.ndarray  # (tracks,) int: bone index per track
    float_slots: np.ndarray  # (float tracks,) int: float slot per float track
    skeleton_name: str = None  # the binding's original skeleton name
    blend_hint: int = 0  # 0 normal, 1 additive
    annotation_tracks: list = field(default_factory=list)  # [AnnotationTrack], one per track in the files
    root_motion: RootMotion = None
    compression: str = "spline"  # how the file stored it: "spline" or "interleaved"

    @property
    def frame_count(self):
        return self.rotation.shape[0]

    @property
    def track_count(self):
        return self.rotation.shape[1]

    @property
    def duration(self):
        return (self.frame_count - 1) * self.frame_duration

    @property
    def frame_rate(self):
        return 1.0 / self.frame_duration

    def annotations(self):
        """Every annotation of every track, by time: [Annotation]."""
        return sorted((a for track in self.annotation_tracks for a in track.annotations), key=lambda a: a.time)
