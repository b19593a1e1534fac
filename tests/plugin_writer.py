"""Test-only writer of small Fallout 4 plugins (records, groups, compressed records, XXXX
fields), written from UESP's TES5/FO4 record layout without the product's reader."""

import struct
import zlib


def field(kind, data):
    if len(data) > 0xFFFF:
        return struct.pack("<4sHI", b"XXXX", 4, len(data)) + struct.pack("<4sH", kind.encode(), 0) + data
    return struct.pack("<4sH", kind.encode(), len(data)) + data


def zstring(text):
    return text.encode("cp1252") + b"\0"


def record(kind, form_id, fields, compressed=False):
    body = b"".join(field(k, v) for k, v in fields)
    flags = 0
    if compressed:
        body = struct.pack("<I", len(body)) + zlib.compress(body)
        flags |= 0x40000
    return struct.pack("<4sIIIIHH", kind.encode(), len(body), flags, form_id, 0, 131, 0) + body


def group(label, records, group_type=0):
    body = b"".join(records)
    return struct.pack("<4sI4siHHI", b"GRUP", 24 + len(body), label.encode() if isinstance(label, str) else label,
                       group_type, 0, 0, 0) + body


def plugin(masters, groups, flags=0):
    header = [("HEDR", struct.pack("<fiI", 1.0, 0, 0x800))]
    for master in masters:
        header += [("MAST", zstring(master)), ("DATA", bytes(8))]
    return record("TES4", 0, header) + b"".join(groups)


def refr(form_id, base, position, angles, scale=None):
    fields = [("NAME", struct.pack("<I", base))]
    if scale is not None:
        fields.append(("XSCL", struct.pack("<f", scale)))
    fields.append(("DATA", struct.pack("<6f", *position, *angles)))
    return record("REFR", form_id, fields)


def cell(form_id, mesh_hashes, references, compressed=True):
    xcri = struct.pack("<II", len(mesh_hashes), len(references)) + struct.pack(f"<{len(mesh_hashes)}I", *mesh_hashes) \
        + struct.pack(f"<{len(references)}I", *references)
    return record("CELL", form_id, [("EDID", zstring("TestCell")), ("XCRI", xcri)], compressed=compressed)


def static(form_id, editor_id, model):
    return record("STAT", form_id, [("EDID", zstring(editor_id)), ("MODL", zstring(model))])
