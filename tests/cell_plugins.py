"""Test-only Data folders holding one cell of every base kind a cell draws (plugin_writer's
records: UESP's and xEdit's wbDefinitionsFO4 / TES5 layouts, never the product's writer), and
the values they were written with, for the whole-cell tests and benchmark."""

import math
import shutil
import struct

from plugin_writer import group, plugin, record, zstring

CELL = 0x000A00  # the cell's object id in the master
MODELS = ("aloot/HomePlate/ALOOT_HP_DogBed.nif", "aloot/HomePlate/ALOOT_HP_Poster12.nif",
          "aloot/HomePlate/ALOOT_HP_ToolRack01.nif")  # corpus models copied into the test's Data folder
# every base kind with a model a cell draws (ARMO: its world model MOD2), then what has none
KINDS = ("STAT", "SCOL", "MSTT", "FURN", "CONT", "DOOR", "ACTI", "LIGH", "MISC", "FLOR", "TREE", "BOOK", "WEAP",
         "ARMO", "ALCH", "NPC_")
FORM_VERSION = {"FO4": 131, "SSE": 44}
HEDR_VERSION = {"FO4": 1.0, "SSE": 1.7}
MASTER = {"FO4": "Fallout4.esm", "SSE": "Skyrim.esm"}
NEAR_POLE = math.pi / 2 - 1e-4


def versioned(kind, form_id, fields, game, flags=0):
    """plugin_writer.record with the game's form version."""
    data = record(kind, form_id, fields, flags=flags)
    return data[:20] + struct.pack("<H", FORM_VERSION[game]) + data[22:]


def obnd(low, high):
    return ("OBND", struct.pack("<6h", *low, *high))


def base_record(kind, form_id, model, game, parts=()):
    fields = [("EDID", zstring(f"Test{kind.strip('_')}{form_id:X}")), obnd((-10, -20, -5), (10, 20, 30))]
    if kind == "ARMO":
        fields.append(("MOD2", zstring(model)))
    elif kind != "NPC_":
        fields.append(("MODL", zstring(model)))
    if kind == "LIGH":  # time, radius, colour (r, g, b, unused), flags
        fields.append(("DATA", struct.pack("<iI4BI", -1, 512, 255, 128, 0, 0, 0)))
    for part, placements in parts:
        fields.append(("ONAM", struct.pack("<I", part)))
        fields.append(("DATA", b"".join(struct.pack("<7f", *p) for p in placements)))
    return versioned(kind, form_id, fields, game)


def placed(kind, form_id, base, position, angles, game, scale=None, flags=0, parent=None):
    fields = [("NAME", struct.pack("<I", base))]
    if parent is not None:
        fields.append(("XESP", struct.pack("<IB3x", *parent)))
    if scale is not None:
        fields.append(("XSCL", struct.pack("<f", scale)))
    fields.append(("DATA", struct.pack("<6f", *position, *angles)))
    return versioned(kind, form_id, fields, game, flags=flags)


def interior(cell_id, editor_id, references, game):
    cell = versioned("CELL", cell_id, [("EDID", zstring(editor_id)), ("DATA", struct.pack("<H", 1))], game)
    children = group(cell_id, [group(cell_id, references, 9)], 6)
    return group("CELL", [group(0, [group(0, [cell, children], 3)], 2)])


def write_cell(data, corpus, game="FO4"):
    """A master holding one base of each kind, a SCOL of two STAT parts, a marker, a base whose
    model is missing, and an interior cell placing each (rotations near the poles, scales, an
    enable parent, an initially disabled and a deleted reference, an ACHR); then Mod.esp
    overriding one reference (moved) and adding one. Returns {FormID: (position, angles,
    scale, base FormID, flags)} of the cell's references as the load order leaves them."""
    meshes = data / "meshes"
    for model in MODELS:
        target = meshes / model
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / "ck-precombined/Meshes" / model, target)
    bases, refs, expected = [], [], {}
    part_a, part_b = 0x900, 0x901
    bases.append(base_record("STAT", part_a, MODELS[1], game))
    bases.append(base_record("STAT", part_b, MODELS[2], game))
    scol_parts = [(part_a, [(0, 0, 10, 0, 0, math.pi / 2, 1.0), (50, 0, 0, 0.3, -0.2, 0.1, 0.5)]),
                  (part_b, [(-30, 20, 5, NEAR_POLE, 0, 0, 2.0)])]
    form_id = 0x800
    for number, kind in enumerate(KINDS):
        base_id = 0x100 + number
        bases.append(base_record(kind, base_id, MODELS[number % len(MODELS)], game,
                                 scol_parts if kind == "SCOL" else ()))
        angles = [(0.1 * number, NEAR_POLE, -0.3), (-NEAR_POLE, 0.2, 1.0), (0.5, -NEAR_POLE, 2.5),
                  (0, 0, 0.25 * number)][number % 4]
        position = (100.0 * number, -37.5 * number, 12.25)
        scale = (None, 1.5, 0.25, 3.0)[number % 4]
        refs.append(placed("ACHR" if kind == "NPC_" else "REFR", form_id, base_id, position, angles, game, scale))
        expected[form_id] = (position, angles, scale or 1.0, base_id, 0)
        form_id += 1
    marker, missing = 0x200, 0x201
    bases.append(base_record("STAT", marker, "Markers/XMarkerHeading.nif", game))
    bases.append(base_record("STAT", missing, "Test/NotThere.nif", game))
    extra = [(marker, 0, None), (missing, 0, None), (0x100, 0x800, None), (0x101, 0, (0x800, 1)),
             (0x102, 0x20, None), (0xFFF, 0, None)]  # 0xFFF: a base no plugin holds
    for base_id, flags, parent in extra:
        position, angles = (form_id * 3.0, 7.0, -2.0), (0.0, 0.0, 0.5)
        refs.append(placed("REFR", form_id, base_id, position, angles, game, flags=flags, parent=parent))
        expected[form_id] = (position, angles, 1.0, base_id, flags)
        form_id += 1
    groups = [group(kind, [b for b in bases if b[:4] == kind.encode()]) for kind in dict.fromkeys(
        b[:4].decode() for b in bases)]
    groups.append(interior(CELL, "TestCell", refs, game))
    master = MASTER[game]
    (data / master).write_bytes(_versioned_plugin([], groups, game, flags=1))
    # Mod.esp: the cell's override moving the first reference, and a reference of its own
    moved = ((1.0, 2.0, 3.0), (0.0, 0.0, 1.0), 2.0)
    own = 0x01000800
    mod_refs = [placed("REFR", 0x800, 0x100, *moved[:2], game, scale=moved[2]),
                placed("REFR", own, 0x103, (5.0, 5.0, 5.0), (0.0, 0.0, 0.0), game)]
    (data / "Mod.esp").write_bytes(_versioned_plugin([master], [interior(CELL, "TestCell", mod_refs, game)], game))
    expected[0x800] = (*moved, 0x100, 0)
    expected[own] = ((5.0, 5.0, 5.0), (0.0, 0.0, 0.0), 1.0, 0x103, 0)
    return expected


def _versioned_plugin(masters, groups, game, flags=0):
    data = plugin(masters, groups, flags=flags)
    size = struct.unpack_from("<I", data, 4)[0]
    header = bytearray(data[:24 + size])
    header[20:22] = struct.pack("<H", FORM_VERSION[game])
    header[30:34] = struct.pack("<f", HEDR_VERSION[game])  # HEDR's version, first field's first value
    return bytes(header) + data[24 + size:]
