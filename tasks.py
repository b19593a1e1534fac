#!/usr/bin/env python3
"""Developer and CI entry point (standard library only).

    python3 tasks.py main                 set up .venv, import a precombined cell (the corpus's
                                          Creation Kit interior when ../shared/corpus is there, else
                                          a sample), leave its .blend and a picture in the working folder
    python3 tasks.py test [PYTEST ARGS]   set up the environments, then run the test suite (or the
                                          files named; -m "not slow": the fast set, main
                                          environment only)
    python3 tasks.py pictures [--check] [NAME...]
                                          render the README's pictures into docs/pictures
                                          (--check: report those a fresh render changes)
    python3 tasks.py build [FOLDER]       build the extension zip (into build/), as
                                          blender --command extension build does
    python3 tasks.py install USER_FOLDER [--blender 4.2|4.5|5.0]
                                          build the zip, then install and enable it in a
                                          Blender user folder (e.g. ~/.config/blender/4.5)

Environments are created on first use and rebuilt when their pinned requirements change.
"""

import os
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
# The Blender each environment's bpy is, for the tests and for installing into a user folder.
BLENDERS = {"4.2": ".venv-bpy42", "4.5": ".venv", "5.0": ".venv-bpy50"}
EXTENSION_ID = "precombined_nif"
# A real interior the Creation Kit precombined (11 cell files, their .csg and plugin), in the
# corpus beside the repository when there is one: what `main` shows first.
CK_CELL = ROOT.parent / "shared" / "corpus" / "ck-precombined"
CK_GEOMETRY = "AlootHomePlate - Geometry.csg"


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


def run(*command, env=None, quiet=False):
    """Run a command from the repository root; exit with its status if it fails. ``quiet``: show
    its output only then (Blender's renderer logs every tile and its display probing)."""
    result = subprocess.run([str(part) for part in command], cwd=ROOT, env=env, capture_output=quiet, text=True)
    if result.returncode:
        if quiet:
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
        sys.exit(result.returncode)
    return result


def blender_user_environment(folder):
    """Environment variables giving Blender (or bpy) ``folder`` as its user folder (where a
    Blender install keeps its version's config, scripts and extensions); they take effect
    only if set before bpy is imported. BLENDER_USER_RESOURCES alone moves every user folder;
    the others override any a developer has set."""
    folder = Path(folder).resolve()
    environment = {"BLENDER_USER_RESOURCES": str(folder)}
    for name in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        environment[f"BLENDER_USER_{name}"] = str(folder / name.lower())
    return environment


def blender_command(name, *args, env=None):
    """``blender --command extension ARGS`` with the bpy of environment ``name``."""
    ensure(name)
    run(python_of(name), ROOT / "tools" / "blender_command.py", "extension", *args, env=env)


def source_files(root=ROOT):
    """The add-on's own files, relative to ``root``: what git tracks there (a fresh clone's
    files), not what commands left lying around; None outside a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = listed.decode("utf-8", "surrogateescape").split("\0")
    return [name for name in names if name and (Path(root) / name).is_file()]


def source_copy(folder, root=ROOT):
    """``root``'s own files (source_files) copied into ``folder``; returns it, or ``root`` itself
    outside a git checkout."""
    files = source_files(root)
    if files is None:
        return Path(root)
    for name in files:
        target = Path(folder) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(root) / name, target)
    return Path(folder)


def build_job(folder, environment=".venv"):
    """Validate the repository's own files (what git tracks) as an extension and build their zip
    into ``folder``; returns the zip."""
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    built = set(folder.glob(f"{EXTENSION_ID}-*.zip"))
    for old in built:  # so the zip found below is this build's, whatever its version
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="precombined_nif-source-") as tmp:
        source = source_copy(Path(tmp) / EXTENSION_ID)
        blender_command(environment, "validate", source)
        blender_command(environment, "build", "--source-dir", source, "--output-dir", folder)
    (zip_path,) = folder.glob(f"{EXTENSION_ID}-*.zip")
    return zip_path


def install_job(args):
    """Install and enable the extension in a Blender user folder, with that Blender's bpy."""
    folder, version = Path(args[0]), None
    if args[1:2] == ["--blender"] and len(args) == 3:
        version = args[2]
    elif len(args) != 1:
        sys.exit(__doc__)
    version = version or (folder.name if folder.name in BLENDERS else "4.5")
    if version not in BLENDERS:
        sys.exit(f"tasks.py install: --blender must be one of {', '.join(BLENDERS)}, not {version}")
    environment = BLENDERS[version]
    with tempfile.TemporaryDirectory(prefix="precombined_nif-") as tmp:
        zip_path = build_job(tmp, environment)
        environ = {**os.environ, **blender_user_environment(folder)}
        blender_command(environment, "install-file", "--repo", "user_default", "--enable", zip_path, env=environ)
    installed = folder.resolve() / "extensions" / "user_default" / EXTENSION_ID / "blender_manifest.toml"
    if not installed.is_file() or not (folder.resolve() / "config" / "userpref.blend").is_file():
        sys.exit(f"tasks.py install: Blender reported no error, but {installed.parent} or its saved preferences are missing")
    print(f"tasks.py install: {EXTENSION_ID} installed in {installed.parent} and enabled in "
          f"{folder.resolve() / 'config' / 'userpref.blend'} (Blender {version})")


def main_job():
    """Import a precombined cell, the Creation Kit's when the corpus is beside the repository, else
    a sample; leave its .blend and a picture of it in the working folder."""
    ensure(".venv")
    blend, picture = (Path.cwd() / f"precombined_nif_sample.{kind}" for kind in ("blend", "png"))
    with tempfile.TemporaryDirectory(prefix="precombined_nif-") as tmp:
        cells = sorted(CK_CELL.glob("Meshes/PreCombined/*_OC.NIF"))
        options = ["--csg", CK_CELL / CK_GEOMETRY]  # its plugin is found beside it and names the copies
        if not cells or not (CK_CELL / CK_GEOMETRY).is_file():
            cells, options = [Path(tmp) / "00012345_0ABCDEF0_OC.nif"], []
            run(python_of(".venv"), "cli.py", "sample", "--cell", cells[0])
        # The corpus has no game Data folder: a real cell's textures and materials are warned about, once each.
        imported = run(python_of(".venv"), "cli.py", "import", *cells, *options, "--blend", blend, quiet=True)
    sys.stdout.write(imported.stdout)
    warnings = imported.stderr.count("warning: ")
    if warnings:
        print(f"tasks.py main: {warnings} warning(s), mostly textures and materials not found (no game Data folder)")
    run(python_of(".venv"), ROOT / "tools" / "render_pictures.py", "--blend", blend, picture, quiet=True)
    print(f"tasks.py main: the imported cell is in {blend}\ntasks.py main: a picture of it is {picture}")


def pictures_job(args):
    """Render the README's pictures (or, with --check, compare fresh renders with them)."""
    ensure(".venv")
    result = subprocess.run(
        [str(python_of(".venv")), str(ROOT / "tools" / "render_pictures.py"), *args], cwd=ROOT, capture_output=True, text=True
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("render_pictures")]
    print("\n".join(lines))
    if result.returncode:  # without the renderer's display probing
        sys.stderr.write("".join(line for line in result.stderr.splitlines(True) if not line.startswith("EGL Error")))
    return result.returncode


# pytest options whose value is the next argument (so that value is no file to run)
VALUE_OPTIONS = {"-m", "-k", "-p", "-o", "-c", "-n", "-W", "-r", "--maxfail", "--deselect", "--ignore", "--durations",
                 "--junitxml", "--basetemp", "--tb", "--rootdir", "--confcutdir"}


def test_plan(pytest_args):
    """(environments to set up, pytest's arguments). Files or folders named run alone (else the
    whole of tests/); the other two environments serve only the slow tests of tests/blender/,
    so the fast set (-m "not slow") and files outside tests/blender/ need the main one alone."""
    paths, marker, after_option = [], None, None
    for arg in pytest_args:
        if after_option == "-m":
            marker = arg
        elif after_option is None and not arg.startswith("-") and (ROOT / arg.split("::")[0]).exists():
            paths.append(arg)
        if arg.startswith("-m") and arg != "-m":
            marker = arg[2:].lstrip("=")
        after_option = arg if arg in VALUE_OPTIONS else None
    fast = marker is not None and marker.split() == ["not", "slow"]
    blender_tests = ROOT / "tests" / "blender"

    def covers_blender_tests(path):  # inside tests/blender/, or a folder holding it
        path = (ROOT / path.split("::")[0]).resolve()
        return path.is_relative_to(blender_tests) or blender_tests.is_relative_to(path)

    blender = not paths or any(map(covers_blender_tests, paths))
    environments = [".venv"] if fast or not blender else list(ENVIRONMENTS)
    return environments, ([] if paths else ["tests"]) + list(pytest_args)


def test_job(pytest_args):
    environments, arguments = test_plan(pytest_args)
    for name in environments:
        ensure(name)
    status = subprocess.run([str(python_of(".venv")), "-m", "pytest", *arguments], cwd=ROOT).returncode
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
    elif job == "pictures":
        sys.exit(pictures_job(args))
    elif job == "build" and len(args) <= 1:
        print(f"tasks.py build: {build_job(args[0] if args else ROOT / 'build')}")
    elif job == "install" and args:
        install_job(args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    cli()
