"""The extension as a user gets it: validated, zipped, installed and enabled on each Blender."""

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import extension
from support import unavailable

pytestmark = pytest.mark.slow  # every test runs Blender or tasks.py in a subprocess

SMOKE = Path(__file__).with_name("smoke_install.py")
SMOKE_INSTALLED = Path(__file__).with_name("smoke_installed.py")
TASKS = [sys.executable, str(extension.ROOT / "tasks.py")]  # the tests run on Python 3.11, as tasks.py needs


def venv_for(version):
    venv = extension.VENVS[version]
    if extension.scripts(venv) is None:
        unavailable(f"no bpy {version} in {venv}: python3 tasks.py test creates it")
    return venv


@pytest.mark.parametrize("version", extension.VENVS)
def test_manifest_valid(version):
    extension.blender_ext(venv_for(version), "validate", extension.ROOT)


def test_zip_contents(extension_zip):
    names = zipfile.ZipFile(extension_zip).namelist()
    required = ["blender_manifest.toml", "LICENSE", "__init__.py", "cli.py"]
    required += [f"{package}/__init__.py" for package in ("core", "io", "operators", "ui")]
    assert not [name for name in required if name not in names]
    unwanted = [
        name
        for name in names
        if name.startswith((".", "tests/", "benchmarks/", "tools/"))
        or name in ("tasks.py", "README.md")
        or "__pycache__/" in name
        or name.endswith(".pyc")
    ]
    assert not unwanted
    # Only code, the manifest and the licence: no test data, pictures or notes.
    assert not [name for name in names if not name.endswith((".py", "/")) and name not in ("blender_manifest.toml", "LICENSE")]


def test_zip_carries_the_licence(extension_zip):
    """The manifest's GPL-3.0-or-later, as the full GPL version 3 text (the FSF's file)."""
    manifest = (extension.ROOT / "blender_manifest.toml").read_text()
    assert 'license = ["SPDX:GPL-3.0-or-later"]' in manifest
    text = zipfile.ZipFile(extension_zip).read("LICENSE")
    assert text == (extension.ROOT / "LICENSE").read_bytes()
    assert hashlib.md5(text).hexdigest() == "1ebbd3e34237af26da5dc08a4e440464"
    assert text.decode().lstrip().startswith("GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007")


@pytest.mark.parametrize("version", extension.VENVS)
def test_install_enable_disable(version, extension_zip, tmp_path):
    command = [extension.python(venv_for(version)), SMOKE, extension_zip, tmp_path]
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout


def test_tasks_build_makes_the_zip_blenders_builder_makes(tmp_path):
    """``tasks.py build`` runs Blender's own ``--command extension build`` from the bpy wheel: the
    same bytes as the extension tool run directly (built together: the zip holds files' times)."""
    (tmp_path / "tasks").mkdir()
    result = subprocess.run([*TASKS, "build", str(tmp_path / "tasks")], capture_output=True, text=True, timeout=300)
    expected = extension.build(venv_for("4.5"), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    built = tmp_path / "tasks" / "precombined_nif-0.1.0.zip"
    assert f"tasks.py build: {built}" in result.stdout
    assert built.read_bytes() == expected.read_bytes()


@pytest.mark.parametrize("version", extension.VENVS)
def test_tasks_install_enables_in_a_user_folder(version, tmp_path):
    venv_for(version)
    user_dir = tmp_path / version  # named like a Blender user folder, though --blender decides
    command = [*TASKS, "install", str(user_dir), "--blender", version]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"enabled in {user_dir / 'config' / 'userpref.blend'} (Blender {version})" in result.stdout
    check = [str(extension.python(extension.VENVS[version])), str(SMOKE_INSTALLED), str(user_dir)]
    result = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Blender {version}." in result.stdout and "installed and enabled" in result.stdout


def test_tasks_install_refuses_an_unknown_blender(tmp_path):
    result = subprocess.run([*TASKS, "install", str(tmp_path), "--blender", "3.6"], capture_output=True, text=True)
    assert result.returncode == 1 and "--blender must be one of 4.2, 4.5, 5.0, not 3.6" in result.stderr
    assert not any(tmp_path.iterdir())


def test_preferences_in_process(addon):
    import bpy

    preferences = bpy.context.preferences.addons[extension.ADDON].preferences
    assert type(preferences) is extension.preferences_class()
    preferences.fo4_data = "/games/Fallout 4/Data"
    assert addon.preferences.get(bpy.context).fo4_data == "/games/Fallout 4/Data"


class RecordingLayout:
    """Stands in for a UI layout (there is none headless): records what is drawn."""

    use_property_split = False

    def __init__(self):
        self.drawn = []

    def prop(self, data, name):
        self.drawn.append(("prop", name))

    def label(self, text, icon="NONE"):
        self.drawn.append((icon, text))

    def box(self):
        self.drawn.append(("box", None))
        return self


@pytest.mark.parametrize("game, setting, plugin", [
    ("FO4", "fo4_data", "Fallout4.esm"),
    ("FO3", "fnv_data", "FalloutNV.esm"),
    ("SSE", "sse_data", "Skyrim.esm"),
    ("SKYRIM", "skyrim_data", "Skyrim.esm"),
    ("FO76", "fo76_data", "SeventySix.esm"),
    ("SF", "sf_data", "Starfield.esm"),
])
def test_preferences_say_when_a_data_folder_lacks_the_games_files(addon, tmp_path, game, setting, plugin):
    import bpy

    preferences = addon.preferences.get(bpy.context)
    module = addon.preferences
    try:
        setattr(preferences, setting, str(tmp_path))
        problem = module.folder_problem(preferences, game)
        assert problem == addon.core.games.data_folder_problem(game, str(tmp_path))
        assert problem.startswith(f"{tmp_path}: not a ") and plugin in problem
        layout = RecordingLayout()
        module.draw_data_folders(layout, preferences, module.SETTINGS)
        assert ("prop", setting) in layout.drawn
        assert layout.drawn[layout.drawn.index(("prop", setting)) + 1] == ("ERROR", problem)
        (tmp_path / plugin.upper()).write_bytes(b"")
        assert module.folder_problem(preferences, game) is None
        layout = RecordingLayout()
        module.draw_data_folders(layout, preferences, module.SETTINGS)
        assert layout.drawn == [("prop", name) for name in ("fo4_data", "fnv_data", "sse_data", "skyrim_data", "fo76_data", "sf_data")]
        assert module.folders(bpy.context).data_folders(game) == [str(tmp_path)]
    finally:
        setattr(preferences, setting, "")
    assert module.folders(bpy.context).data_folders(game) == []


@pytest.mark.parametrize("operator, folders", [
    ("precombined_nif", ["fo4_data", "fnv_data", "sse_data", "skyrim_data", "fo76_data", "sf_data"]),
    ("precombined_cell", ["fo4_data"]),
])
def test_import_options_show_the_data_folders_they_look_in(addon, tmp_path, operator, folders):
    """Each import's options end with the Data folders of its games, a bad one with its problem;
    its own options are drawn as Blender would (every visible property)."""
    import types

    import bpy

    cls = getattr(bpy.types, f"IMPORT_SCENE_OT_{operator}")
    rna = getattr(bpy.ops.import_scene, operator).get_rna_type()
    stand_in = types.SimpleNamespace(
        properties=types.SimpleNamespace(bl_rna=rna), layout=RecordingLayout(), data_folder_games=cls.data_folder_games
    )
    preferences = addon.preferences.get(bpy.context)
    preferences.fo4_data = str(tmp_path)
    try:
        cls.draw(stand_in, bpy.context)
    finally:
        preferences.fo4_data = ""
    drawn = stand_in.layout.drawn
    options = [p.identifier for p in rna.properties if p.identifier != "rna_type" and not p.is_hidden]
    assert {"scale", "use_collision", "use_skin"} <= set(options) and "filepath" not in options
    box = drawn.index(("box", None))
    assert drawn[:box] == [("prop", name) for name in options]
    assert drawn[box + 1] == ("NONE", "Data folders (add-on preferences)")
    problem = addon.core.games.data_folder_problem("FO4", str(tmp_path))
    assert drawn[box + 2:] == [("prop", "fo4_data"), ("ERROR", problem)] + [("prop", name) for name in folders[1:]]
