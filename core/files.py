"""Reading and writing files: failures named by the file, and writes that never leave a damaged
file behind; the common ends of the formats one ``sync`` describes whole."""

import os
import stat
import tempfile
from pathlib import Path

from .errors import FormatError
from .stream import Budget, ReadStream, WriteStream


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode(path):
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def read_bytes(path):
    """A file's bytes; a file that cannot be read is a FormatError naming it."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=str(path)) from None


def write_replacing(path, data):
    """Write ``data`` to a new temporary file beside ``path`` (created exclusively, with a
    random name, so nothing planted there is written through), flush it to the disk, give it
    the permissions ``path`` has (or a new file's), then put it in place in one step. A
    failure leaves ``path`` as it was and is reported against ``path``."""
    write_all([(path, data)])


def write_all(files):
    """Write every ``(path, data)`` as write_replacing does, all staged in temporary files
    before any is put in place: a failure while writing leaves every path as it was. (One while
    putting them in place, a rename, stops there.) Errors are reported against the path."""
    staged, current = [], None
    try:
        for path, data in files:
            current = path = Path(path)
            mode = _mode(path)
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((temporary, path))
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, mode)
        while staged:
            current = staged[0][1]
            os.replace(staged[0][0], current)
            staged.pop(0)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(current)) from None
    finally:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)


class SyncedFile:
    """A file format whose ``sync(s)`` describes the whole file (little-endian): reading from
    bytes or a path, writing to bytes or a path. ``check()`` refuses what cannot be written
    (a ``sync`` calls it too when reading, where the file's own rules apply). Errors name the
    file: the one read, or the one written from (``path``)."""

    path = None

    def check(self):
        pass

    @classmethod
    def from_bytes(cls, data, path=None):
        """Decoded from a private copy of ``data`` (the arrays are writable views of it)."""
        decoded = cls()
        decoded.path = path
        try:
            decoded.sync(ReadStream(memoryview(bytearray(data)), budget=Budget(len(data))))
        except FormatError as error:
            raise error.located(path=path) from None
        return decoded

    @classmethod
    def read(cls, path):
        return cls.from_bytes(read_bytes(path), path)

    def to_bytes(self):
        try:
            self.check()
            s = WriteStream()
            self.sync(s)
        except FormatError as error:
            raise error.located(path=self.path) from None
        return bytes(s.out)

    def write(self, path):
        write_replacing(path, self.to_bytes())
