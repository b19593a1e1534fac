"""Test-only writer of small Fallout 4 plugins (records, groups, compressed records, XXXX
fields), written from UESP's TES5/FO4 record layout without the product's reader; and a reader
of their placed references as independent of the product's."""

import struct
import zlib


def field(kind, data):
    if len(data) > 0xFFFF:
        return struct.pack("<4sHI", b"XXXX", 4, len(data)) + struct.pack("<4sH", kind.encode(), 0) + data
    return struct.pack("<4sH", kind.encode(), len(data)) + data


def zstring(text):
    return text.encode("cp1252") + b"\0"


def record(kind, form_id, fields, compressed=False, flags=0, vci=0):
    """``vci``: the header's Version Control Info 1 (its low 16 bits a date, see ``stamp``)."""
    body = b"".join(field(k, v) for k, v in fields)
    if compressed:
        body = struct.pack("<I", len(body)) + zlib.compress(body)
        flags |= 0x40000
    return struct.pack("<4sIIIIHH", kind.encode(), len(body), flags, form_id, vci, 131, 0) + body


def group(label, records, group_type=0):
    """``label``: a record type (top groups) or a FormID / block number (int)."""
    body = b"".join(records)
    label = struct.pack("<I", label) if isinstance(label, int) else label.encode() if isinstance(label, str) else label
    return struct.pack("<4sI4siHHI", b"GRUP", 24 + len(body), label, group_type, 0, 0, 0) + body


def plugin(masters, groups, flags=0):
    """``flags``: the TES4 header's (0x1 master, 0x200 light; UESP/fopdoc)."""
    header = [("HEDR", struct.pack("<fiI", 1.0, 0, 0x800))]
    for master in masters:
        header += [("MAST", zstring(master)), ("DATA", bytes(8))]
    return record("TES4", 0, header, flags=flags) + b"".join(groups)


# -- precombined cells across a load order (xEdit wbDefinitionsFO4.pas CELL, PJMail's deep dive)
def stamp(year, month, day):
    """A PCMB/VISI date, also a Version Control Info 1's low half: day bits 0-4, month 5-8,
    year - 2000 from bit 9."""
    return (year - 2000) << 9 | month << 5 | day


def precombined_cell(form_id, meshes, references, pcmb=None, visi=None, *, flags=0, vci=0, interior=True,
                     grid=None, rvis=None, xcri=True):
    """A CELL with XCRI (meshes, then (reference, mesh) pairs, the count of u32s twice the
    pairs), PCMB/VISI dates when given, RVIS, and XCLC ``grid`` for exterior cells."""
    fields = [("EDID", zstring(f"Cell{form_id:X}")), ("DATA", struct.pack("<H", 1 if interior else 0))]
    if visi is not None:
        fields.append(("VISI", struct.pack("<H", visi)))
    if rvis is not None:
        fields.append(("RVIS", struct.pack("<I", rvis)))
    if pcmb is not None:
        fields.append(("PCMB", struct.pack("<H", pcmb)))
    if grid is not None:
        fields.append(("XCLC", struct.pack("<2iI", *grid, 0)))
    if xcri:
        pairs = b"".join(struct.pack("<II", ref, meshes[0] if meshes else 0) for ref in references)
        fields.append(("XCRI", struct.pack("<II", len(meshes), 2 * len(references))
                       + struct.pack(f"<{len(meshes)}I", *meshes) + pairs))
    return record("CELL", form_id, fields, compressed=True, flags=flags, vci=vci)


def placed(form_id, base, position, vci=0, flags=0):
    return record("REFR", form_id, [("NAME", struct.pack("<I", base)), ("DATA", struct.pack("<6f", *position, 0, 0, 0))],
                  flags=flags, vci=vci)


def land(form_id, vci=0):
    return record("LAND", form_id, [("DATA", struct.pack("<I", 0))], vci=vci)


def cell_with_children(cell_record, form_id, temporary=(), persistent=()):
    """A CELL followed by its children group (type 6) holding persistent (8) and temporary (9) groups."""
    children = ([group(form_id, persistent, 8)] if persistent else []) + ([group(form_id, temporary, 9)] if temporary else [])
    return cell_record + group(form_id, children, 6)


def interior_cells(*cells):
    """The CELL top group: block 0 (type 2), sub-block 0 (type 3), the cells with their children."""
    return group("CELL", [group(0, [group(0, list(cells), 3)], 2)])


def worldspace(world_id, *cells):
    """The WRLD top group: the WRLD record, its children (type 1): block (4) and sub-block (5)."""
    return group("WRLD", [record("WRLD", world_id, [("EDID", zstring("TestWorld"))]),
                          group(world_id, [group(0, [group(0, list(cells), 5)], 4)], 1)])


def refr(form_id, base, position, angles, scale=None):
    fields = [("NAME", struct.pack("<I", base))]
    if scale is not None:
        fields.append(("XSCL", struct.pack("<f", scale)))
    fields.append(("DATA", struct.pack("<6f", *position, *angles)))
    return record("REFR", form_id, fields)


def cell(form_id, mesh_hashes, references, compressed=True):
    """A CELL holding only XCRI: the meshes, then (reference, mesh) pairs, each reference paired
    with the first mesh."""
    pairs = b"".join(struct.pack("<II", reference, mesh_hashes[0]) for reference in references)
    xcri = struct.pack("<II", len(mesh_hashes), 2 * len(references)) + struct.pack(f"<{len(mesh_hashes)}I", *mesh_hashes) + pairs
    return record("CELL", form_id, [("EDID", zstring("TestCell")), ("XCRI", xcri)], compressed=compressed)


def static(form_id, editor_id, model):
    return record("STAT", form_id, [("EDID", zstring(editor_id)), ("MODL", zstring(model))])


def independent_refrs(data):
    """{FormID: (x, y, z, rx, ry, rz, scale)} of every REFR, read with struct and zlib only."""
    out = {}

    def walk(at, end):
        while at < end:
            kind, size, flags, form_id = struct.unpack_from("<4sIII", data, at)
            if kind == b"GRUP":
                walk(at + 24, at + size)
                at += size
                continue
            body = data[at + 24:at + 24 + size]
            if flags & 0x40000:
                body = zlib.decompress(body[4:])
            if kind == b"REFR":
                fields, pos = {}, 0
                while pos < len(body):
                    name, length = struct.unpack_from("<4sH", body, pos)
                    fields.setdefault(name, body[pos + 6:pos + 6 + length])
                    pos += 6 + length
                scale = struct.unpack("<f", fields[b"XSCL"])[0] if b"XSCL" in fields else 1.0
                out[form_id] = (*struct.unpack("<6f", fields[b"DATA"]), scale)
            at += 24 + size

    walk(24 + struct.unpack_from("<I", data, 4)[0], len(data))
    return out


def independent_records(data):
    """Every record of a plugin, read with struct and zlib only after xEdit's wbDefinitionsFO4
    (record header: type, size, flags, FormID, Version Control Info 1, form version, VCI 2;
    fields: type, u16 size, XXXX giving the next field a u32 size): a list of dicts (type,
    flags, form_id, vci, fields: {type: [bytes, ...]}, groups: [(label bytes, group type), ...]
    from the outermost down)."""
    out = []

    def walk(at, end, groups):
        while at < end:
            kind, size, flags, form_id, vci = struct.unpack_from("<4sIIII", data, at)
            if kind == b"GRUP":
                group_type = struct.unpack_from("<i", data, at + 12)[0]
                walk(at + 24, at + size, groups + [(data[at + 8:at + 12], group_type)])
                at += size
                continue
            body = data[at + 24:at + 24 + size]
            if flags & 0x40000:
                body = zlib.decompress(body[4:])
            fields, pos, big = {}, 0, None
            while pos < len(body):
                name, length = struct.unpack_from("<4sH", body, pos)
                length = big if big is not None else length
                value = body[pos + 6:pos + 6 + length]
                big = struct.unpack("<I", value)[0] if name == b"XXXX" else None
                if name != b"XXXX":
                    fields.setdefault(name.decode(), []).append(value)
                pos += 6 + length
            out.append({"type": kind.decode(), "flags": flags, "form_id": form_id, "vci": vci, "fields": fields,
                        "groups": groups})
            at += 24 + size

    walk(24 + struct.unpack_from("<I", data, 4)[0], len(data), [])
    return out


def xcri_pairs(xcri):
    """(mesh hashes, [(reference, mesh)]) of an XCRI field (xEdit's wbCELLCombinedRefsCounter:
    the second count is twice the pairs)."""
    meshes, values = struct.unpack_from("<II", xcri)
    hashes = list(struct.unpack_from(f"<{meshes}I", xcri, 8))
    flat = struct.unpack_from(f"<{values}I", xcri, 8 + 4 * meshes)
    return hashes, list(zip(flat[::2], flat[1::2]))


def masters_of(data):
    """The MAST names of a plugin's TES4 record."""
    size = struct.unpack_from("<I", data, 4)[0]
    body, pos, names = data[24:24 + size], 0, []
    while pos < len(body):
        name, length = struct.unpack_from("<4sH", body, pos)
        if name == b"MAST":
            names.append(body[pos + 6:pos + 6 + length].rstrip(b"\0").decode("cp1252"))
        pos += 6 + length
    return names
