"""Blender-side fixtures: the built extension zip, and this process's bpy (4.5) with the add-on
installed from it and enabled. Tests needing bpy take ``addon`` (and import bpy inside the test),
so without bpy they skip, or fail in CI."""

import pytest

import extension
from support import unavailable

MAIN = extension.VENVS["4.5"]


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory):
    """The extension zip, validated and built by Blender's own extension tool."""
    if extension.scripts(MAIN) is None:
        unavailable(f"no bpy in {MAIN}: python3 tasks.py test creates it")
    return extension.build(MAIN, tmp_path_factory.mktemp("extension"))


@pytest.fixture(scope="session")
def addon(extension_zip, tmp_path_factory):
    """The add-on's module, installed from the zip and enabled in an empty temporary user folder."""
    user_dir = str(tmp_path_factory.mktemp("blender-user"))
    # Blender reads these whenever it looks up a user folder, so they stay set for the session.
    environment = pytest.MonkeyPatch()
    for name, value in extension.user_environment(user_dir).items():
        environment.setenv(name, value)
    try:
        import bpy
    except ImportError as error:
        environment.undo()
        unavailable(f"bpy is not importable: {error}")
    if not bpy.utils.resource_path("USER").startswith(user_dir):
        environment.undo()
        pytest.fail("bpy was imported before the addon fixture, so it may use the developer's own user folder")
    try:
        yield extension.install_and_enable(extension_zip)
    finally:
        extension.disable_all()
        environment.undo()


DATA_KINDS = ("objects", "meshes", "armatures", "materials", "images", "actions", "node_groups", "collections")


@pytest.fixture
def clean_scene(addon):
    """The scene; data a test adds (objects, meshes, armatures, materials, images, actions,
    node groups, collections) is removed afterwards, and the 3D cursor (where Add puts new
    objects) is put back."""
    import bpy

    before = {kind: set(getattr(bpy.data, kind)) for kind in DATA_KINDS}
    cursor = bpy.context.scene.cursor.matrix.copy()
    yield bpy.context.scene
    bpy.context.scene.cursor.matrix = cursor
    for kind in DATA_KINDS:
        for datablock in set(getattr(bpy.data, kind)) - before[kind]:
            getattr(bpy.data, kind).remove(datablock)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a Blender run in a subprocess (seconds each)")
