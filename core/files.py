"""Writing files so that a failure never leaves a damaged one behind."""

from pathlib import Path


def write_replacing(path, data):
    """Write ``data`` to a temporary file beside ``path``, then replace ``path`` in one step."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
