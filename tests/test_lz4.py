"""The add-on's own LZ4 frame decoder (Skyrim SE BSAs) against frames the maintained ``lz4``
package writes with every option a writer may choose."""

import lz4.frame
import numpy as np
import pytest

from precombined_nif.core.archives.lz4 import decompress_frame
from precombined_nif.core.errors import FormatError

BLOCK_SIZES = [lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX256KB, lz4.frame.BLOCKSIZE_MAX1MB,
               lz4.frame.BLOCKSIZE_MAX4MB]


def samples(corpus):
    rng = np.random.default_rng(3)
    return {
        "corpus NIF": (corpus / "pynifly/tests/tests/FO4/BTBaseMaleBody.nif").read_bytes(),
        "runs": b"a" * 70000 + b"ab" * 40000 + bytes(300000),  # overlapping matches (offset < length)
        "random": rng.bytes(150000),  # incompressible: stored blocks
        "empty": b"",
        "floats": np.tile(np.arange(2000, dtype=np.float32), 700).tobytes(),  # 5.6 MB, matches across blocks
    }


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("linked", [True, False])
@pytest.mark.parametrize("checksums", [False, True])
def test_frames_of_the_lz4_package_decode_exactly(corpus, block_size, linked, checksums):
    for name, data in samples(corpus).items():
        for level in (0, 9):  # fast and high-compression encoders
            frame = lz4.frame.compress(data, compression_level=level, block_size=block_size, block_linked=linked,
                                       content_checksum=checksums, block_checksum=checksums, store_size=checksums)
            assert decompress_frame(frame, len(data)) == data, name


def test_concatenated_and_skippable_frames(corpus):
    parts = [b"first " * 5000, (corpus / "pynifly/tests/tests/FO4/BTBaseMaleBody.nif").read_bytes()]
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    frame = lz4.frame.compress(parts[0]) + skippable + lz4.frame.compress(parts[1])
    assert decompress_frame(frame, sum(map(len, parts))) == b"".join(parts)


def test_damaged_frames_fail_cleanly(corpus):
    data = (corpus / "pynifly/tests/tests/FO4/BTBaseMaleBody.nif").read_bytes()
    frame = lz4.frame.compress(data)
    with pytest.raises(FormatError, match="expected"):
        decompress_frame(frame, len(data) + 1)
    rng = np.random.default_rng(5)
    for cut in sorted(rng.integers(0, len(frame), 40)):
        with pytest.raises(FormatError):
            decompress_frame(frame[:cut], len(data))
    for _ in range(200):
        damaged = bytearray(frame)
        for at in rng.integers(0, 64, 2):  # the header and the first block's tokens
            damaged[at] ^= int(rng.integers(1, 256))
        try:
            decompress_frame(bytes(damaged), len(data))
        except FormatError:
            pass
