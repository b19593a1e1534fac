"""Writing files so that a failure never leaves a damaged one behind."""

import os
import stat
import tempfile
from pathlib import Path


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
