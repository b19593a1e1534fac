"""Named animation sequences: NiControllerSequence (what a .kf file or a NiControllerManager
holds), its text keys and animation notes, the manager playing them and the palette naming its
objects. In 20.2.0.7 files every name is a string-table entry (the string palette of 10.2 to 20.1
is gone, though a file may still carry one)."""

from ..block import Block, block_class
from .animation import FLT_MAX, NiTimeController
from .extra_data import NiExtraData

# CycleType
LOOP, REVERSE, CLAMP = 0, 1, 2


@block_class("NiControllerManager")
class NiControllerManager(NiTimeController):
    cumulative = 0
    sequences = ()
    object_palette = -1

    def sync(self, s):
        super().sync(s)
        self.cumulative = s.bool8(self.cumulative)
        self.sequences = s.ref_list(self.sequences)
        self.object_palette = s.ref(self.object_palette)


class ControlledBlock:
    """One animated value of a sequence: its interpolator, the controller type that applies it,
    and the names finding its target (node, property type, controller ID, interpolator ID)."""

    interpolator = -1
    controller = -1
    priority = 0
    node_name = None
    property_type = None
    controller_type = None
    controller_id = None
    interpolator_id = None

    def __init__(self, **fields):
        for key, value in fields.items():
            if not hasattr(type(self), key):
                raise AttributeError(f"ControlledBlock has no field {key!r}")
            setattr(self, key, value)

    def sync(self, s):
        self.interpolator = s.ref(self.interpolator)
        self.controller = s.ref(self.controller)
        self.priority = s.u8(self.priority)
        self.node_name = s.string(self.node_name)
        self.property_type = s.string(self.property_type)
        self.controller_type = s.string(self.controller_type)
        self.controller_id = s.string(self.controller_id)
        self.interpolator_id = s.string(self.interpolator_id)


@block_class("NiControllerSequence")
class NiControllerSequence(Block):
    name = None
    controlled_blocks = ()
    array_grow_by = 1
    weight = 1.0
    text_keys = -1
    cycle_type = CLAMP
    frequency = 1.0
    start_time = FLT_MAX
    stop_time = -FLT_MAX
    manager = -1
    accum_root_name = None
    anim_notes = -1  # bs 24 to 28
    anim_note_arrays = ()  # later

    def sync(self, s):
        self.name = s.string(self.name)
        n = s.count(len(self.controlled_blocks), item_size=29, what="controlled blocks")
        self.array_grow_by = s.u32(self.array_grow_by)
        self.controlled_blocks = s.items(self.controlled_blocks, ControlledBlock, n, min_size=29)
        self.weight = s.f32(self.weight)
        self.text_keys = s.ref(self.text_keys)
        self.cycle_type = s.u32(self.cycle_type)
        self.frequency = s.f32(self.frequency)
        self.start_time = s.f32(self.start_time)
        self.stop_time = s.f32(self.stop_time)
        self.manager = s.ref(self.manager)
        self.accum_root_name = s.string(self.accum_root_name)
        bs = s.context.bs_version
        if 24 <= bs <= 28:
            self.anim_notes = s.ref(self.anim_notes)
        elif bs > 28:
            n = s.count(len(self.anim_note_arrays), kind="u16", item_size=4, what="anim note arrays")
            self.anim_note_arrays = s.repeat(self.anim_note_arrays, n, s.ref)


class PaletteObject:
    name = ""
    block = -1

    def __init__(self, name="", block=-1):
        self.name, self.block = name, block

    def sync(self, s):
        self.name = s.sized_string(self.name)
        self.block = s.ref(self.block)


@block_class("NiStringPalette", fallback_raw=True)
class NiStringPalette(Block):
    """NUL-separated names (sequences of 10.2 to 20.1 point into it; kept for files that carry
    one): the text, then its length again."""

    palette = ""
    length = 0

    def sync(self, s):
        self.palette = s.sized_string(self.palette)
        self.length = s.u32(self.length)


@block_class("NiDefaultAVObjectPalette")
class NiDefaultAVObjectPalette(Block):
    """The manager's objects by name (names stored in the block itself, not the string table)."""

    scene = -1
    objects = ()

    def sync(self, s):
        self.scene = s.ref(self.scene)
        n = s.count(len(self.objects), item_size=8, what="palette objects")
        self.objects = s.items(self.objects, PaletteObject, n, min_size=8)


class TextKey:
    time = 0.0
    text = None

    def __init__(self, time=0.0, text=None):
        self.time, self.text = time, text

    def sync(self, s):
        self.time = s.f32(self.time)
        self.text = s.string(self.text)


@block_class("NiTextKeyExtraData")
class NiTextKeyExtraData(NiExtraData):
    """Named moments of a sequence ('start', 'end', sound cues...)."""

    keys = ()

    def sync(self, s):
        super().sync(s)
        n = s.count(len(self.keys), item_size=8, what="text keys")
        self.keys = s.items(self.keys, TextKey, n, min_size=8)


@block_class("BSAnimNotes", fallback_raw=True)
class BSAnimNotes(Block):
    """The notes a sequence's ``anim_notes`` / ``anim_note_arrays`` name."""

    notes = ()

    def sync(self, s):
        n = s.count(len(self.notes), kind="u16", item_size=4, what="anim notes")
        self.notes = s.repeat(self.notes, n, s.ref)


@block_class("BSAnimNote", fallback_raw=True)
class BSAnimNote(Block):
    """A moment of a sequence where an arm grabs (type 1, GRABIK: which arm) or the head looks
    (type 2, LOOKIK: gain and state)."""

    note_type = 0
    time = 0.0
    arm = 0
    gain = 0.0
    state = 0

    def sync(self, s):
        self.note_type = s.u32(self.note_type)
        self.time = s.f32(self.time)
        if self.note_type == 1:
            self.arm = s.u32(self.arm)
        elif self.note_type == 2:
            self.gain = s.f32(self.gain)
            self.state = s.u32(self.state)
