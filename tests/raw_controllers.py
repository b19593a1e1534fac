"""A Fallout 3 / New Vegas file with a controller manager, built by hand with struct from
nif.xml's layouts (20.2.0.7, bs 34), apart from the product's writer: a corpus weapon with
collision (22smg.nif) gets a NiControllerManager on its root with two sequences, an object
palette, a multi-target transform controller, text keys and animation notes, a visibility and an
alpha controller driven by blend interpolators (one manager-controlled, one holding its blend
array), a material colour controller and a bhkBlendController. Each packed block records where its
references sit, so a test can read them back from any file these blocks were written to."""

import struct

from nif_rewriter import RawNif

SOURCE = "pynifly/tests/tests/FONV/22smg.nif"
ROOT, MATERIAL = 0, 9  # the root node and ##Mechanism's NiMaterialProperty
COLLISION = (4, 5, 6)  # the root's bhkConvexVerticesShape, bhkRigidBody, bhkCollisionObject
NODES = {"##Mechanism": 7, "##22smgTrigger": 13, "##22smgClip": 20}
FLT_MAX = 3.4028234663852886e38


class Packed:
    """A block's bytes and the offsets of its references in them."""

    def __init__(self):
        self.data, self.refs = bytearray(), []

    def put(self, fmt, *values):
        self.data += struct.pack("<" + fmt, *values)
        return self

    def ref(self, index):
        self.refs.append(len(self.data))
        return self.put("i", index)


def time_controller(next_controller, target, flags=0x48, start=0.0, stop=1.0):
    """NiTimeController: next controller, flags, frequency, phase, start, stop, target."""
    return Packed().ref(next_controller).put("H4f", flags, 1.0, 0.0, start, stop).ref(target)


def controller_offset(nif, index):
    """Offset of NiObjectNET's controller ref in a node's or property's bytes (name, extra data
    list, controller)."""
    (extra,) = struct.unpack_from("<I", nif.blocks[index], 4)
    return 8 + 4 * extra


class AnimatedFile:
    """``nif`` (RawNif) holds the source blocks and the added ones; ``added``: {index: Packed}."""

    def __init__(self, corpus):
        self.nif = RawNif.read(corpus / SOURCE)
        self.added = {}
        self.build()

    def add(self, type_name, packed):
        index = self.nif.add_block(type_name, bytes(packed.data))
        self.added[index] = packed
        return index

    def text(self, value):
        return -1 if value is None else self.nif.string_index(value)

    def build(self):
        nif, count = self.nif, len(self.nif.blocks)
        # indices of the blocks added below, in order
        (manager, multi, palette, fire, idle, transform_interp, transform_data, bool_interp, bool_data, float_interp,
         float_data, text_keys, notes, note, visibility, blend_bool, alpha, blend_float, color, point3, pos_data,
         blend_controller) = range(count, count + 22)
        p = time_controller(multi, ROOT, flags=0x4C).put("B", 1).put("I", 2).ref(fire).ref(idle).ref(palette)
        self.add("NiControllerManager", p)
        p = time_controller(blend_controller, ROOT).put("H", 2).ref(NODES["##22smgTrigger"]).ref(NODES["##22smgClip"])
        self.add("NiMultiTargetTransformController", p)
        p = Packed().ref(ROOT).put("I", 1 + len(NODES))
        for name, index in [("22SMG", ROOT), *NODES.items()]:
            p.put(f"I{len(name)}s", len(name), name.encode()).ref(index)
        self.add("NiDefaultAVObjectPalette", p)
        self.add("NiControllerSequence", self.sequence("Fire", [
            (transform_interp, multi, "##22smgTrigger", None, "NiTransformController"),
            (bool_interp, visibility, "##22smgClip", None, "NiVisController"),
        ], text_keys, manager, [notes]))
        self.add("NiControllerSequence", self.sequence("Idle", [
            (float_interp, alpha, "##Mechanism", "NiMaterialProperty", "NiAlphaController"),
        ], -1, manager, []))
        p = Packed().put("3f4ff", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0).ref(transform_data)
        self.add("NiTransformInterpolator", p)
        # two linear quaternion keys, two linear translation keys, no scale keys
        p = Packed().put("II", 2, 1).put("5f", 0.0, 1.0, 0.0, 0.0, 0.0).put("5f", 1.0, 0.0, 0.0, 0.0, 1.0)
        self.add("NiTransformData", p.put("II", 2, 1).put("4f", 0.0, 0, 0, 0).put("4f", 1.0, 0, 0, 2.5).put("I", 0))
        self.add("NiBoolInterpolator", Packed().put("B", 2).ref(bool_data))
        self.add("NiBoolData", Packed().put("II", 2, 5).put("fB", 0.0, 1).put("fB", 0.5, 0))
        self.add("NiFloatInterpolator", Packed().put("f", -FLT_MAX).ref(float_data))
        self.add("NiFloatData", Packed().put("II", 2, 1).put("2f", 0.0, 1.0).put("2f", 1.0, 0.25))
        p = Packed().put("i", -1).put("I", 2).put("fi", 0.0, self.text("start")).put("fi", 1.0, self.text("end"))
        self.add("NiTextKeyExtraData", p)
        self.add("BSAnimNotes", Packed().put("H", 1).ref(note))
        self.add("BSAnimNote", Packed().put("IfI", 1, 0.25, 1))  # GRABIK, arm 1
        clip = NODES["##22smgClip"]
        self.add("NiVisController", time_controller(-1, clip).ref(blend_bool))
        self.add("NiBlendBoolInterpolator", Packed().put("BBfB", 1, 0, 0.0, 2))  # manager-controlled
        self.add("NiAlphaController", time_controller(color, MATERIAL).ref(blend_float))
        p = Packed().put("BBf", 0, 2, 0.0).put("BBbb4f", 1, 0, 0, -128, 0.0, 1.0, -FLT_MAX, 0.0)
        p.ref(float_interp).put("ffBf", 1.0, 1.0, 0, 0.0).ref(-1).put("ffBf", 0.0, 0.0, 0, 0.0)
        self.add("NiBlendFloatInterpolator", p.put("f", 0.5))
        self.add("NiMaterialColorController", time_controller(-1, MATERIAL).ref(point3).put("H", 3))  # emissive
        self.add("NiPoint3Interpolator", Packed().put("3f", -FLT_MAX, -FLT_MAX, -FLT_MAX).ref(pos_data))
        self.add("NiPosData", Packed().put("II", 1, 1).put("4f", 0.0, 1.0, 0.5, 0.25))
        self.add("bhkBlendController", time_controller(-1, ROOT).put("I", 0))
        assert len(nif.blocks) == count + 22
        for index, controller in ((ROOT, manager), (MATERIAL, alpha)):  # their controller refs
            packed = Packed()
            packed.data, packed.refs = nif.blocks[index], [controller_offset(nif, index)]
            struct.pack_into("<i", packed.data, packed.refs[0], controller)
            self.added[index] = packed

    def sequence(self, name, controlled, text_keys, manager, note_arrays):
        """NiControllerSequence (bs 34): name, controlled blocks (interpolator, controller,
        priority, node name, property type, controller type, controller ID, interpolator ID),
        weight, text keys, cycle type, frequency, start, stop, manager, accum root name, anim
        note arrays."""
        p = Packed().put("iII", self.text(name), len(controlled), 1)
        for interpolator, controller, node, property_type, controller_type in controlled:
            p.ref(interpolator).ref(controller).put("B", 26)
            p.put("5i", self.text(node), self.text(property_type), self.text(controller_type), -1, -1)
        p.put("f", 1.0).ref(text_keys).put("I3f", 0, 1.0, 0.0, 1.0).ref(manager).put("i", self.text("22SMG"))
        p.put("H", len(note_arrays))
        for notes in note_arrays:
            p.ref(notes)
        return p

    def to_bytes(self):
        return self.nif.to_bytes()


def refs_in(data, packed_blocks, mapping):
    """For each packed block (by its index in the built file): (expected, found) references,
    expected from ``mapping`` (old index -> new index, dropped -> -1), found in ``data``'s bytes
    at the block's new index."""
    nif = RawNif(data)
    out = []
    for old, packed in packed_blocks.items():
        original = [struct.unpack_from("<i", packed.data, at)[0] for at in packed.refs]
        found = [struct.unpack_from("<i", nif.blocks[mapping[old]], at)[0] for at in packed.refs]
        out.append(([mapping.get(r, -1) if r >= 0 else r for r in original], found))
    return out
