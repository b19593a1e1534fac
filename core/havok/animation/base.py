"""hkaAnimation, the base of every animation class, and its annotation tracks.

+0x10 type (i32; hk_2010: 1 interleaved, 5 spline compressed; hk_2014: 1 interleaved, 3 spline
compressed), +0x14 duration (seconds), +0x18 transform track count, +0x1C float track count,
+0x20 extracted motion (object pointer: the root motion), +0x28 annotation tracks (hkArray of
24 bytes: track name, hkArray of annotations of 16 bytes: f32 time, 4 padding bytes, text).
"""

from ..objects import HavokObject

INTERLEAVED = 1
SPLINE = {8: 5, 11: 3}  # the spline-compressed type value per packfile version


class Annotation:
    size = 16
    columns = True  # arrays of these are read a field at a time (ObjectReader.items)

    def __init__(self, time=0.0, text=""):
        self.time = time
        self.padding = bytes(4)
        self.text = text

    def sync(self, s):
        self.time = s.f32(self.time)
        self.padding = s.raw(self.padding, s.pointer_size - 4)
        self.text = s.string_ptr(self.text)


class AnnotationTrack:
    size = 24
    columns = True

    def __init__(self, name="", annotations=()):
        self.name = name
        self.annotations = list(annotations)

    def sync(self, s):
        self.name = s.string_ptr(self.name)
        self.annotations = s.hk_array(self.annotations, Annotation, what="annotations")


class AnimationObject(HavokObject):
    """The fields every hkaAnimation has; subclasses sync theirs after ``sync_base``."""

    def __init__(self):
        self.reference = bytes(16)
        self.type = 0
        self.duration = 0.0
        self.transform_track_count = 0
        self.float_track_count = 0
        self.extracted_motion = None
        self.annotation_tracks = []

    def sync_base(self, s):
        self.reference = s.raw(self.reference, 2 * s.pointer_size)
        self.type = s.i32(self.type)
        self.duration = s.f32(self.duration)
        self.transform_track_count = s.i32(self.transform_track_count)
        self.float_track_count = s.i32(self.float_track_count)
        self.extracted_motion = s.pointer(self.extracted_motion)
        self.annotation_tracks = s.hk_array(self.annotation_tracks, AnnotationTrack, what="annotation tracks")
