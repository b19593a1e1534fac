"""What a whole file described by one ``sync`` shares: reading it from a path or bytes, checking it
(``validate``), writing it back; errors name the file."""

from pathlib import Path

from .errors import FormatError
from .files import write_replacing
from .stream import ReadStream, WriteStream


class SyncedFile:
    """A subclass defines ``sync(s)`` (the layout, both directions) and ``validate()`` (raises
    FormatError, may fill ``warnings``); instances start with ``path`` None."""

    path = None

    @classmethod
    def read(cls, path):
        path = Path(path)
        return cls.from_bytes(path.read_bytes(), path=path)

    @classmethod
    def from_bytes(cls, data, path=None):
        item = cls()
        item.path = path
        try:
            item.sync(ReadStream(memoryview(bytes(data))))
            item.validate()
        except FormatError as error:
            raise error.located(path=path) from None
        return item

    def to_bytes(self):
        try:
            self.validate()
            s = WriteStream()
            self.sync(s)
        except FormatError as error:
            raise error.located(path=self.path) from None
        return bytes(s.out)

    def write(self, path):
        write_replacing(path, self.to_bytes())
