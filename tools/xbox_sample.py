"""An Xbox 360 NIF to try the console import and ``convert`` on (no public Xbox 360 files exist):
New Vegas's 22smg.nif from the corpus, written in the console layout by the tests' hand-written
writer (tests/xbox_writer.py: big-endian, packed half floats, strips in the skin partition).

    .venv/bin/python tools/xbox_sample.py OUT.nif
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "corpus" / "pynifly" / "tests" / "tests" / "FONV" / "22smg.nif"


def write_xbox_sample(path):
    """The console file of 22smg.nif at ``path``."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    import cli

    cli.load_package()
    from xbox_writer import make_xbox

    if not SOURCE.is_file():
        raise SystemExit(f"xbox_sample: {SOURCE} not found (the corpus belongs beside the repository)")
    Path(path).write_bytes(make_xbox(SOURCE.read_bytes()))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    write_xbox_sample(sys.argv[1])
    print(f"{sys.argv[1]}: Xbox 360 New Vegas NIF written from {SOURCE.name}")
