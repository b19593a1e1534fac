#!/usr/bin/env python3
"""Developer and CI entry point (standard library only).

    python3 tasks.py main                 set up .venv, then import a sample precombined cell
    python3 tasks.py test [PYTEST ARGS]   set up every environment, then run the test suite

Environments are created on first use and rebuilt when their pinned requirements change.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PYTHON = (3, 11)  # the only Python the bpy wheels are built for

# The main environment runs the command line and pytest, with bpy 4.5 LTS in process; the
# other two serve tests/blender/, which validates, installs and enables the extension on
# Blender 4.2 (the manifest's minimum) and 5.0 too.
ENVIRONMENTS = {
    ".venv": ("bpy==4.5.15", "numpy==1.26.4", "pytest==9.0.3", "lz4==4.4.4"),  # lz4: tests write SSE BSAs
    ".venv-bpy42": ("bpy==4.2.23", "numpy==1.26.4"),
    ".venv-bpy50": ("bpy==5.0.1", "numpy==1.26.4"),
}
STAMP = "requirements.stamp"


def python_of(name):
    return ROOT / name / "bin" / "python"


def ensure(name):
    """Create (or rebuild) the environment ``name`` unless its stamp matches the pins."""
    path = ROOT / name
    wanted = "\n".join((f"python {PYTHON[0]}.{PYTHON[1]}", *ENVIRONMENTS[name])) + "\n"
    stamp = path / STAMP
    if python_of(name).exists() and stamp.exists() and stamp.read_text() == wanted:
        return
    print(f"tasks.py: creating {name}: {' '.join(ENVIRONMENTS[name])}", flush=True)
    shutil.rmtree(path, ignore_errors=True)
    run(sys.executable, "-m", "venv", path)
    run(python_of(name), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet",
        *ENVIRONMENTS[name])
    stamp.write_text(wanted)  # written last, so an interrupted setup is redone


def run(*command):
    """Run a command from the repository root; exit with its status if it fails."""
    status = subprocess.run([str(part) for part in command], cwd=ROOT).returncode
    if status:
        sys.exit(status)


def main_job():
    ensure(".venv")
    with tempfile.TemporaryDirectory(prefix="precombined_nif-") as tmp:
        cell = Path(tmp) / "00012345_0ABCDEF0_OC.nif"
        run(python_of(".venv"), "cli.py", "sample", "--cell", cell)
        run(python_of(".venv"), "cli.py", "import", cell, "--blend", Path(tmp) / "cell.blend")


def test_job(pytest_args):
    for name in ENVIRONMENTS:
        ensure(name)
    status = subprocess.run([str(python_of(".venv")), "-m", "pytest", "tests", *pytest_args], cwd=ROOT).returncode
    if status == 5:
        print("tasks.py: pytest collected no tests: failing", file=sys.stderr)
        return 1
    return status


def cli():
    if sys.version_info[:2] != PYTHON:
        sys.exit(
            f"tasks.py needs Python {PYTHON[0]}.{PYTHON[1]} (the bpy wheels exist only for it); "
            f"this is Python {sys.version.split()[0]} at {sys.executable}"
        )
    job, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else (None, [])
    if job == "main" and not args:
        main_job()
    elif job == "test":
        sys.exit(test_job(args))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    cli()
