"""A record's field bytes ending in a few bytes too short for a field header (type and u16
size: 6 bytes) are refused naming the record and where, not read past (bytes built here)."""

import struct

import pytest

from precombined_nif.core.errors import FormatError
from precombined_nif.core.plugin.records import iter_fields


@pytest.mark.parametrize("stray", [1, 3, 5])
def test_stray_bytes_after_the_last_field_are_refused(stray):
    data = b"EDID" + struct.pack("<H", 4) + b"abc\0" + b"\x01" * stray
    with pytest.raises(FormatError, match=r"CELL 00001E58: field header at 10 runs past the record"):
        list(iter_fields("CELL", 0x1E58, data))
    assert list(iter_fields("CELL", 0x1E58, data[:10])) == [(b"EDID", 6, 4)]
