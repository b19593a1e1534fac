"""Building the extension zip and installing it the way a user does.

Shared by conftest.py (in-process, bpy 4.5) and smoke_install.py (a subprocess per Blender
version), so bpy is imported only inside the functions that need it.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # for tasks.py, also when a smoke script runs this in a subprocess
import tasks  # noqa: E402
from tasks import blender_user_environment as user_environment  # noqa: E402,F401

ADDON = f"bl_ext.user_default.{tasks.EXTENSION_ID}"
PREFERENCES_CLASS = "PrecombinedNifPreferences"

# Each Blender version the tests cover, and the environment tasks.py makes for it.
VENVS = {version: ROOT / name for version, name in tasks.BLENDERS.items()}


def python(venv):
    return venv / "bin" / "python"


def scripts(venv):
    """The scripts folder bundled in the bpy wheel installed in ``venv``, or None."""
    found = sorted(venv.glob("lib/python3*/site-packages/bpy/*/scripts"))
    return found[0] if found else None


def blender_ext(venv, command, *args):
    """Run Blender's extension command line (``bl_pkg``) from ``venv``'s bpy wheel.

    ``--valid-tags`` applies Blender's own tag list, as ``blender --command extension`` does.
    """
    root = scripts(venv)
    tags = root / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    cli = root / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    argv = [python(venv), cli, command, f"--valid-tags={tags}", *args]
    result = subprocess.run([str(arg) for arg in argv], capture_output=True, text=True, timeout=120)
    if result.returncode:
        raise AssertionError(f"blender_ext {command} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def build(venv, output_dir):
    """Validate the repository as an extension source and build its zip; returns the zip's path."""
    blender_ext(venv, "validate", ROOT)
    output = Path(output_dir) / "precombined_nif.zip"
    blender_ext(venv, "build", "--source-dir", ROOT, "--output-filepath", output)
    return output


def install_and_enable(zip_path):
    """Install the zip into the "user_default" repository and enable it, as Preferences >
    Get Extensions > Install from Disk does; returns the add-on's module."""
    import bpy

    result = bpy.ops.extensions.package_install_files(
        filepath=str(zip_path), repo="user_default", enable_on_install=True
    )
    if result != {"FINISHED"} or ADDON not in bpy.context.preferences.addons or ADDON not in sys.modules:
        raise AssertionError(f"installing {zip_path} did not enable {ADDON} (the operator returned {result})")
    return sys.modules[ADDON]


def preferences_class():
    """The add-on's registered preferences class, or None."""
    import bpy

    return bpy.types.AddonPreferences.bl_rna_get_subclass_py(PREFERENCES_CLASS)


def disable_all():
    """Disable the add-on, then every other one Blender enabled: bpy 4.5 can hang at interpreter
    exit while add-ons are still registered."""
    import addon_utils
    import bpy

    bpy.ops.preferences.addon_disable(module=ADDON)
    addon_utils.disable_all()


# cli.py run the way ``blender -b --python cli.py -- ...`` runs it: bpy loaded, the arguments
# after ``--``.
RUN_AS_BLENDER = (
    "import runpy, sys, bpy; "
    "sys.argv = ['blender', '-b', '--python', sys.argv[1], '--', *sys.argv[2:]]; "
    "runpy.run_path(sys.argv[3], run_name='__main__')"
)


def blender_cli(*args):
    from support import unavailable

    venv = VENVS["4.5"]
    if scripts(venv) is None:
        unavailable(f"no bpy in {venv}: python3 tasks.py test creates it")
    command = [python(venv), "-c", RUN_AS_BLENDER, ROOT / "cli.py", *args]
    return subprocess.run([str(a) for a in command], capture_output=True, text=True, timeout=180)
