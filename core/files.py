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


def write_replacing(path, data):
    """Write ``data`` to a new temporary file beside ``path`` (created exclusively, with a
    random name, so nothing planted there is written through), flush it to the disk, give it
    the permissions ``path`` has (or a new file's), then put it in place in one step. A
    failure leaves ``path`` as it was and is reported against ``path``."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    handle, temporary = None, None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as stream:
            handle = None
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    finally:
        if handle is not None:
            os.close(handle)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def read_bytes(path):
    """The bytes of ``path``; FormatError naming it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise FormatError(f"cannot be read: {error.strerror}", path=path) from None


class SyncedFile:
    """A file format whose ``sync(s)`` describes the whole file (little-endian): reading from
    bytes or a path, writing to bytes or a path. ``check()`` refuses what cannot be written."""

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
        self.check()
        s = WriteStream()
        self.sync(s)
        return bytes(s.out)

    def write(self, path):
        write_replacing(path, self.to_bytes())
