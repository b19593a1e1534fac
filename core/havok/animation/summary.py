"""What ``cli.py info`` reports about a Havok .hkx file: an animation's or skeleton's contents;
the files a behaviour, character or project file names."""

from collections import Counter

from ...errors import FormatError
from .behavior import behavior_file_kind, behavior_names
from .hkx import game_of, hkx_from_packfile, is_empty, read_packfile
from .spline import SplineAnimation

GAME_NAMES = {"FO4": "Fallout 4", "SSE": "Skyrim Special Edition", "LE": "Skyrim, 32-bit", "Skyrim": "Skyrim"}


def hkx_info(path):
    try:
        return _info(read_packfile(path), path)
    except FormatError as error:
        raise error.located(path=path) from None


def _info(packfile, path):
    if is_empty(packfile):
        return {**_packfile_info(packfile), "kind": "empty", "skeletons": [], "animations": []}
    kind = behavior_file_kind(packfile)
    if kind is not None:
        return {**_packfile_info(packfile), "kind": kind, "names": behavior_names(packfile)}
    hkx = hkx_from_packfile(packfile, path)
    container = packfile.root.find("hkaAnimationContainer")
    animations = []
    for obj, animation in zip(container.animations, hkx.animations):
        entry = {
            "class": obj.class_name,
            "compression": animation.compression,
            "duration": round(animation.duration, 6),
            "frames": animation.frame_count,
            "frame_rate": round(animation.frame_rate, 3),
            "tracks": animation.track_count,
            "float_tracks": int(animation.floats.shape[1]),
            "bones": len(set(animation.track_bones.tolist())),  # distinct skeleton bones driven
            "skeleton": animation.skeleton_name,
            "blend": "additive" if animation.blend_hint else "normal",
            "annotations": [{"time": round(a.time, 6), "text": a.text} for a in animation.annotations()],
            "root_motion": None if animation.root_motion is None else len(animation.root_motion.samples),
        }
        if isinstance(obj, SplineAnimation):
            entry["blocks"] = obj.block_count
        animations.append(entry)
    return {
        **_packfile_info(packfile),
        "kind": "animation" if hkx.animations else "skeleton",
        "skeletons": [
            {"name": s.name, "bones": len(s.bone_names), "roots": [s.bone_names[i] for i in (s.parents < 0).nonzero()[0].tolist()],
             "float_slots": s.float_slots}
            for s in hkx.skeletons
        ],
        "animations": animations,
    }


def _packfile_info(packfile):
    header = packfile.header
    xml = getattr(packfile, "form", None)  # an XML file's: "packfile" or "tagfile"
    return {
        "format": "hkx",
        **({"xml": xml} if xml else {}),
        # XML says no pointer size: an hk_2010 one serves either Skyrim
        "game": ("Skyrim" if xml and game_of(header) == "SSE" else game_of(header)) if xml or header.pointer_size == 8 else "LE",
        "havok_version": header.contents_version,
        "classes": dict(Counter(obj.class_name for obj, _ in packfile.objects())),
    }


def render_hkx_text(path, info):
    form = f" XML {info['xml']}" if "xml" in info else ""
    lines = [f"{path}: Havok {info['havok_version']}{form} ({GAME_NAMES[info['game']]}), "
             + ", ".join(f"{n} {name}" for name, n in sorted(info["classes"].items()))]
    if info["kind"] == "empty":
        lines.append("  an empty packfile: its contents an hkBaseObject of no bytes, nothing else")
    if "names" in info:
        return "\n".join(lines + _names_text(info["kind"], info["names"]))
    for skeleton in info["skeletons"]:
        lines.append(f"  skeleton {skeleton['name']!r}: {skeleton['bones']} bones, {len(skeleton['float_slots'])} float slots")
    for animation in info["animations"]:
        motion = f", root motion ({animation['root_motion']} samples)" if animation["root_motion"] is not None else ""
        lines.append(
            f"  animation ({animation['compression']}): {animation['duration']:g} s, {animation['frames']} frames at "
            f"{animation['frame_rate']:g} fps, {animation['tracks']} tracks ({animation['bones']} bones of "
            f"{animation['skeleton']!r}), {animation['float_tracks']} float tracks, {animation['blend']}{motion}"
        )
        for annotation in animation["annotations"]:
            lines.append(f"    {annotation['time']:8.3f} s  {annotation['text']}")
    return "\n".join(lines)


SHOWN_NAMES = 10  # the text lists this many names of a kind; the JSON has them all


def _names_text(kind, names):
    lines = [f"  a {kind} file, naming:"] if any(names.values()) else [f"  a {kind} file naming no files it reads"]
    for what, found in names.items():
        if found:
            more = f" and {len(found) - SHOWN_NAMES} more" if len(found) > SHOWN_NAMES else ""
            lines.append(f"    {what} ({len(found)}): " + ", ".join(repr(name) for name in found[:SHOWN_NAMES]) + more)
    return lines
