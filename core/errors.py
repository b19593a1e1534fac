"""The one error type every reader and writer raises for bad input or impossible output."""


class FormatError(Exception):
    """A file that cannot be read or data that cannot be written.

    The message names the file, the block (index and type) and the byte offset when known,
    so one line tells a user what is wrong and where.
    """

    def __init__(self, message, *, path=None, block=None, block_type=None, offset=None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.block = block
        self.block_type = block_type
        self.offset = offset

    def located(self, *, path=None, block=None, block_type=None):
        """Fill in the location parts that a lower layer could not know; returns self."""
        if self.path is None:
            self.path = path
        if self.block is None:
            self.block = block
        if self.block_type is None:
            self.block_type = block_type
        return self

    def __str__(self):
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.block is not None:
            where.append(f"block {self.block}" + (f" ({self.block_type})" if self.block_type else ""))
        if self.offset is not None:
            where.append(f"offset {self.offset} (0x{self.offset:X})")
        return ": ".join([", ".join(where), self.message] if where else [self.message])


def failure_text(path, error):
    """The one line telling a user that ``path`` (a file read or written; None: only the error
    knows) failed: the file, where in it when known, and what is wrong. Every failure a user
    sees is worded by this: the operators, the import loop, the command line."""
    if isinstance(error, FormatError):
        return str(error.located(path=path))
    where = [str(path)] if path is not None else []
    if isinstance(error, OSError):
        if error.filename is not None and str(error.filename) != str(path):  # another file than the one named
            where.append(str(error.filename))
        return ": ".join([*where, error.strerror or str(error)])
    return ": ".join([*where, f"internal error ({type(error).__name__}: {error}); please report it"])
