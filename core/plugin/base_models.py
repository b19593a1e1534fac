"""The model (MODL) of every base record of some types across a load order, the last plugin's
record winning, read from those types' top groups only (every other group is skipped by its
header's size)."""

import mmap
import struct

from ..errors import FormatError
from ..stream import decode_text
from .records import GROUP, HEADER, HEADER_SIZE, inflate, iter_fields

DELETED = 0x20


def base_models(load_order, kinds=(b"STAT", b"SCOL")):
    """({base key: (plugin name, type, model path or None)}, problems): the winning record of
    every base of ``kinds``; a deleted one has no model."""
    found, problems = {}, []
    for entry in load_order.entries:
        codes, masks = load_order.origins(entry)
        try:
            for kind, form_id, model in _models(entry.path, kinds):
                key = codes[form_id >> 24] << 24 | form_id & masks[form_id >> 24]
                found[key] = (entry.name, kind, model)
        except FormatError as error:
            problems.append(f"{error}: its bases are skipped")
    return found, problems


def _models(path, kinds):
    try:
        with open(path, "rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if handle.seek(0, 2) else b""
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(path)) from None
    try:
        if len(data) < HEADER_SIZE:
            raise FormatError(f"{len(data)} bytes: not even a record header", path=str(path))
        at = HEADER_SIZE + HEADER.unpack_from(data, 0)[1]
        while at < len(data):
            kind, size, label = struct.unpack_from("<4sI4s", data, at) if at + 12 <= len(data) else (None, 0, None)
            if kind != GROUP or size < HEADER_SIZE or at + size > len(data):
                raise FormatError(f"top group at {at} is damaged", path=str(path))
            if label in kinds:
                yield from _group_models(data, at + HEADER_SIZE, at + size, path)
            at += size
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def _group_models(data, at, end, path):
    while at < end:
        if at + HEADER_SIZE > end:
            raise FormatError(f"record header at {at} runs past its group", path=str(path))
        kind, size, flags, form_id = HEADER.unpack_from(data, at)[:4]
        if kind == GROUP:  # no subgroups in a base type's group: skipped whole
            at += max(size, HEADER_SIZE)
            continue
        record_end = at + HEADER_SIZE + size
        if record_end > end:
            raise FormatError(f"record {form_id:08X} at {at} runs past its group", path=str(path))
        label = kind.decode("ascii", "replace")
        model = None
        if not flags & DELETED:
            try:
                body = inflate(label, form_id, flags, data[at + HEADER_SIZE:record_end])
                model = next((decode_text(bytes(body[start:start + length]).split(b"\0", 1)[0])
                              for name, start, length in iter_fields(label, form_id, body) if name == b"MODL"), None)
            except FormatError as error:
                raise error.located(path=str(path)) from None
        yield label, form_id, model or None
        at = record_end
