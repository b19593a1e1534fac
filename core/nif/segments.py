"""Fallout 4 BSSubIndexTriShape segments: the per-triangle (segment, sub-segment) numbers the
importer shows, what the tables hold beyond their triangle ranges (a JSON-ready layout), and the
tables written back from edited numbers. Pure numpy; no bpy."""

import numpy as np

from ..errors import FormatError
from .blocks.tri_shape import PerSegmentData, Segment, SegmentSharedData

NO_SEGMENT = -1


def face_segments(shape):
    """BSSubIndexTriShape: per triangle (segment, sub-segment) numbers, -1 where none covers it.
    Segment ranges count index units (3 per triangle); sub-segments start in the same units."""
    count = len(shape.triangles) if shape.triangles is not None else 0
    segment = np.full(count, NO_SEGMENT, np.int32)
    sub = np.full(count, NO_SEGMENT, np.int32)
    for number, seg in enumerate(shape.segments):
        start = seg.start_index // 3
        segment[start : start + seg.num_primitives] = number
        for sub_number, (sub_start, sub_count, _parent, _unused) in enumerate(np.asarray(seg.sub_segments).tolist()):
            sub[sub_start // 3 : sub_start // 3 + sub_count] = sub_number
    return segment, sub


# BSSubIndexTriShape segment tables (FO4, bs >= 130), as every corpus file has them: segments
# and their sub-segments hold consecutive triangle ranges in order and together cover every
# triangle once; starts count index units (3 per triangle); an empty segment starts at 0;
# sub-segments split their segment, each naming in "parent array index" its segment's first
# record in the shared data; total segments = segments + sub-segments = shared data records.


def segment_layout(shape):
    """What a BSSubIndexTriShape's segments hold beyond their triangle ranges, JSON-ready."""
    layout = {
        "total": int(shape.total_segments),
        "segments": [
            {
                "flags": int(seg.flags),
                "parent": int(seg.parent_array_index),
                "subs": [[int(v[2]), int(v[3])] for v in np.asarray(seg.sub_segments).tolist()],
            }
            for seg in shape.segments
        ],
    }
    shared = shape.shared_data
    if shared is not None:
        layout["shared"] = {
            "starts": [int(v) for v in np.asarray(shared.segment_starts).tolist()],
            "records": [[int(r.user_index), int(r.bone_id), [float(c) for c in np.asarray(r.cut_offsets)]] for r in shared.per_segment],
            "ssf": shared.ssf_file,
        }
    return layout


def check_layout(layout):
    """A layout (segment_layout, perhaps edited by a user) that can be written, else FormatError."""
    u32 = range(1 << 32)
    try:
        segments = layout["segments"]
        count = len(segments)
        numbers = [int(layout["total"])]
        for seg in segments:
            numbers += [int(seg["flags"]), int(seg["parent"])]
            numbers += [int(v) for parent, unused in seg["subs"] for v in (parent, unused)]
        subs = sum(len(seg["subs"]) for seg in segments)
        total = numbers[0]
        shared = layout.get("shared")
        if shared is not None:
            numbers += [int(v) for v in shared["starts"]]
            numbers += [int(v) for user_index, bone_id, cuts in shared["records"] for v in (user_index, bone_id, len(cuts))]
            cut_offsets = [float(c) for *_, cuts in shared["records"] for c in cuts]
            if not isinstance(shared["ssf"], str):
                raise TypeError("the ssf file is not a string")
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise FormatError(f"segment layout is malformed ({error!r})") from None
    if shared is not None and not np.isfinite(cut_offsets).all():
        raise FormatError("segment layout: a cut offset is not a finite number")
    if any(v not in u32 for v in numbers):
        raise FormatError("segment layout: a number is not a 32-bit unsigned value")
    if not count:
        raise FormatError("segment layout: no segments to put the triangles in")
    if total != count + subs:
        raise FormatError(f"segment layout: {total} total segments but {count} segments with {subs} sub-segments")
    if total > count and shared is None:
        raise FormatError(f"segment layout: {subs} sub-segments need shared data")
    if shared is not None and (len(shared["records"]) != total or len(shared["starts"]) != count):
        raise FormatError(
            f"segment layout: shared data has {len(shared['records'])} records and {len(shared['starts'])} starts for {total} and {count}"
        )


def first_filled_segment(shape):
    """The stored segment that holds the first triangles (0 when none holds any)."""
    return next((n for n, seg in enumerate(shape.segments) if seg.num_primitives), 0)


def resolve_segments(layout, segment, sub, fallback):
    """Per triangle (segment, sub-segment) numbers the layout has: an unknown segment (-1 or
    out of range) becomes ``fallback`` (0 when the layout lacks it too); in a segment with
    sub-segments an unknown sub-segment becomes its first; in one without, it is -1."""
    sub_counts = np.array([len(seg["subs"]) for seg in layout["segments"]], np.int64)
    segment = np.asarray(segment, np.int64)
    sub = np.asarray(sub, np.int64)
    fallback = fallback if 0 <= fallback < len(sub_counts) else 0
    segment = np.where((segment >= 0) & (segment < len(sub_counts)), segment, fallback)
    here = sub_counts[segment]
    sub = np.where(here == 0, NO_SEGMENT, np.where((sub >= 0) & (sub < here), sub, 0))
    return segment, sub


def segment_order(segment, sub, sub_counts):
    """Triangle order that makes each (segment, sub-segment) contiguous, in order, and the
    ranges: returns (order, [(start triangle, count, [(sub start, sub count), ...]), ...]).
    Every triangle must name a segment (resolve_segments)."""
    segment = np.asarray(segment, np.int64)
    sub = np.asarray(sub, np.int64)
    order = np.lexsort((sub, segment))
    segment, sub = segment[order], sub[order]
    ranges = []
    for number, sub_count in enumerate(sub_counts):
        lo, hi = np.searchsorted(segment, [number, number + 1])
        subs = []
        for sub_number in range(sub_count):
            a, b = np.searchsorted(sub[lo:hi], [sub_number, sub_number + 1])
            subs.append((int(lo + a), int(b - a)))
        ranges.append((int(lo), int(hi - lo), subs))
    return order, ranges


def segments_hold(shape, layout, segment, sub):
    """Whether the shape's stored tables already say ``layout`` and, per triangle, ``segment``
    / ``sub`` (then they are kept byte for byte, whatever their own conventions)."""
    count = len(shape.triangles)
    ends = [seg.start_index // 3 + seg.num_primitives for seg in shape.segments]
    ends += [int(v[0]) // 3 + int(v[1]) for seg in shape.segments for v in np.asarray(seg.sub_segments).tolist()]
    if max(ends, default=0) > count or segment_layout(shape) != layout:
        return False
    stored_segment, stored_sub = face_segments(shape)
    return np.array_equal(stored_segment, segment) and np.array_equal(stored_sub, sub)


def write_segments(shape, layout, segment, sub):
    """FO4 (bs >= 130). Reorder the shape's triangles so each segment's (and sub-segment's) are contiguous and
    write the tables for ``layout`` (checked) with per-triangle ``segment`` / ``sub``
    (resolve_segments)."""
    check_layout(layout)
    sub_counts = [len(seg["subs"]) for seg in layout["segments"]]
    order, ranges = segment_order(segment, sub, sub_counts)
    shape.set_triangles(shape.triangles[order])  # FO4 shapes index nothing else by triangle
    segments = []
    for info, (start, count, subs) in zip(layout["segments"], ranges):
        seg = Segment()
        seg.flags, seg.parent_array_index = info["flags"], info["parent"]
        seg.start_index, seg.num_primitives = (3 * start if count else 0), count
        rows = [(3 * a if n else 0, n, parent, unused) for (a, n), (parent, unused) in zip(subs, info["subs"])]
        seg.sub_segments = np.array(rows, np.uint32).reshape(-1, 4)
        segments.append(seg)
    shape.segments = segments
    shape.total_segments = layout["total"]
    shared = layout.get("shared")
    if shared is None:
        shape.shared_data = None
        return
    data = SegmentSharedData()
    data.num_segments = len(shared["starts"])
    data.segment_starts = np.array(shared["starts"], np.uint32)
    data.per_segment = []
    for user_index, bone_id, cut_offsets in shared["records"]:
        record = PerSegmentData()
        record.user_index, record.bone_id = user_index, bone_id
        record.cut_offsets = np.array(cut_offsets, np.float32)
        data.per_segment.append(record)
    data.ssf_file = shared["ssf"]
    shape.shared_data = data
