"""One wording for every failure a user sees (core.errors.failure_text): the file, where in it
when known, what is wrong; a path never twice."""

import errno

from precombined_nif.core.errors import FormatError, failure_text


def test_a_format_error_is_located_in_the_file_once():
    assert failure_text("a.nif", FormatError("truncated", block=3, block_type="NiNode", offset=16)) == (
        "a.nif, block 3 (NiNode), offset 16 (0x10): truncated")
    # found where the file was known already: named once
    assert failure_text("a.nif", FormatError("truncated", path="a.nif")) == "a.nif: truncated"
    assert failure_text(None, FormatError("truncated", path="b.nif")) == "b.nif: truncated"


def test_a_system_error_names_its_file_once():
    assert failure_text("a.nif", OSError(errno.ENOENT, "No such file or directory", "a.nif")) == (
        "a.nif: No such file or directory")
    # another file than the one imported or exported: both, the failing one last
    assert failure_text("cell.nif", OSError(errno.EACCES, "Permission denied", "geometry.csg")) == (
        "cell.nif: geometry.csg: Permission denied")
    assert failure_text(None, OSError(errno.ENOSPC, "No space left on device")) == "No space left on device"
    assert failure_text("a.nif", OSError("disk gone")) == "a.nif: disk gone"


def test_a_bug_of_ours_is_one_line_asking_for_a_report():
    assert failure_text("a.nif", KeyError("x")) == "a.nif: internal error (KeyError: 'x'); please report it"
    assert failure_text(None, ValueError("bad")) == "internal error (ValueError: bad); please report it"
