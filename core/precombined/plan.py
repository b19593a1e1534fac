"""What a precombined cell export writes, gathered before anything is: every file with its new
bytes, the patch plugin's records, and messages naming what could not follow the edits. A dry
run shows it; the export writes every file or none (core.files.write_all)."""

from pathlib import Path

from ..files import write_all


class ExportPlan:
    def __init__(self):
        self.nif = None  # the cell
        self.files = []  # (Path, bytes, what)
        self.records = []  # lines: the patch's records
        self.messages = []
        self.wrote = []  # (path, what) of the files write() wrote

    def add(self, path, data, what):
        self.files.append((Path(path), data, what))

    def written(self, what):
        """The path of the file added as ``what``, or None."""
        return next((path for path, _, kind in self.files if kind == what), None)

    def changed(self):
        """The files whose bytes differ from what is on disk."""
        out = []
        for path, data, what in self.files:
            try:
                same = path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
            except OSError:
                same = False
            if not same:
                out.append((path, data, what))
        return out

    def lines(self):
        """What a dry run prints: each file (new, replaced or unchanged), the patch's records,
        the messages."""
        changed = {id(data) for _, data, _ in self.changed()}
        out = []
        for path, data, what in self.files:
            state = "unchanged" if id(data) not in changed else "replaced" if path.exists() else "new"
            out.append(f"{path}: {what}, {len(data)} bytes ({state})")
        out += [f"  {line}" for line in self.records]
        out += [f"warning: {message}" for message in self.messages]
        return out

    def write(self):
        """Write the files that changed, all or none."""
        changed = self.changed()
        write_all([(path, data) for path, data, _ in changed])
        self.wrote = [(path, what) for path, _, what in changed]
