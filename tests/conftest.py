"""Makes the repository importable as the package ``precombined_nif`` and provides the corpus."""

import sys

import pytest

from support import CORPUS, ROOT, unavailable

sys.path.insert(0, str(ROOT))
import cli  # noqa: E402

cli.load_package()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: runs Blender in a subprocess, renders, runs Blender over the whole corpus or reads thousands of "
        "damaged files; "
        '`python3 tasks.py test -m "not slow"` leaves these out (CI runs every test)',
    )


@pytest.fixture(scope="session")
def corpus():
    """The real-file corpus folder, ``../shared/corpus`` beside the repository."""
    if not CORPUS.is_dir():
        unavailable(f"corpus not found at {CORPUS}: real-file tests need ../shared/corpus")
    return CORPUS
