"""BSXFlags kept consistent with the collision written. nif.xml (BSXFlags): bit 1 is "enable
collision" (Skyrim's bHavok); the games' statics with collision set it, and a file claiming
collision it no longer holds is what users of other exporters report crashing the game once
they deleted a mesh's collision (PyNifly #196). Only a change the export makes is followed:
files written back as imported keep their flags as stored."""

from ...core.nif.blocks.extra_data import BSX_HAVOK, NiIntegerExtraData
from ...core.nif.blocks.objects import NiObjectNET
from ...core.nif.refs import reachable


def has_collision(nif):
    """Whether a block reachable from the roots has a collision object."""
    blocks = nif.blocks
    return any(0 <= getattr(blocks[i], "collision_object", -1) < len(blocks) for i in reachable(nif))


def bsx_blocks(nif):
    """The BSXFlags blocks the file's roots carry."""
    found = []
    for root in nif.roots:
        block = nif.blocks[root] if 0 <= root < len(nif.blocks) else None
        if isinstance(block, NiObjectNET):
            for index in block.extra_data:
                extra = nif.blocks[index] if 0 <= index < len(nif.blocks) else None
                if isinstance(extra, NiIntegerExtraData) and extra.type_name == "BSXFlags":
                    found.append(extra)
    return found


def follow_collision(exporter, had_collision):
    """Clear the collision bit when the export dropped every collision object the file had,
    and say so. (Collision added to a file without any leaves its flags alone: which bits the
    games want then, besides bit 1, differs per kind of model.)"""
    if not had_collision or has_collision(exporter.nif):
        return
    for flags in bsx_blocks(exporter.nif):
        if flags.integer_data & BSX_HAVOK:
            was, flags.integer_data = flags.integer_data, flags.integer_data & ~BSX_HAVOK
            exporter.warn(f"no collision is written any more: BSXFlags bit 1 (Havok) cleared ({was:#x} -> {flags.integer_data:#x})")
