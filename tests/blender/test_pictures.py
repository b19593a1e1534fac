"""The README's pictures (tools/render_pictures.py) and the main job's picture: rendered headless
by the project's bpy, not blank, checked against a reference, captioned with their commands."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import extension
from support import unavailable

sys.path.insert(0, str(extension.ROOT / "tools"))
import render_pictures  # noqa: E402

pytestmark = pytest.mark.slow  # renders, in Blender subprocesses

PYTHON = str(extension.python(extension.VENVS["4.5"]))
SCRIPT = str(extension.ROOT / "tools" / "render_pictures.py")


def run(*args, cwd=extension.ROOT, env=None):
    return subprocess.run([str(arg) for arg in args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def rgba(addon, path):
    import bpy

    return render_pictures.pixels(bpy, path)


def assert_not_blank(image, width, height):
    """Something drawn over a part of the frame, with shading (not one flat colour)."""
    assert image.shape == (height, width, 4)
    covered = image[..., 3] > 0.5
    assert 0.002 < covered.mean() < 0.95
    assert image[covered][:, :3].std(axis=0).max() > 0.02


def test_render_one_small_file_is_not_blank(addon, corpus, tmp_path):
    blend, picture = tmp_path / "clock.blend", tmp_path / "clock.png"
    result = run(PYTHON, extension.ROOT / "cli.py", "import", corpus / "pynifly/tests/tests/FO4/AlarmClock.nif", "--blend", blend)
    assert result.returncode == 0, result.stderr
    result = run(PYTHON, SCRIPT, "--blend", blend, picture, "--size", 160, 100)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_not_blank(rgba(addon, picture), 160, 100)


@pytest.fixture(scope="module")
def workbench():
    """Workbench can render here (the README's pictures are Workbench renders)."""
    if not render_pictures.workbench_works():
        unavailable("Workbench cannot render here: it needs an OpenGL driver (a GPU's or Mesa's EGL)")


def test_check_reports_a_changed_picture(addon, corpus, tmp_path, workbench):
    """--check passes against the same render and fails, naming the picture, against another."""
    result = run(PYTHON, SCRIPT, "xbox_fnv", "--output", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    picture = tmp_path / "xbox_fnv.png"
    assert f"render_pictures: {picture}: .venv/bin/python cli.py import 22smg_xbox360.nif" in result.stdout
    assert_not_blank(rgba(addon, picture), *render_pictures.SIZE)
    result = run(PYTHON, SCRIPT, "--check", "xbox_fnv", "--against", tmp_path)
    assert result.returncode == 0 and "xbox_fnv: unchanged, 0.00% of pixels differ" in result.stdout
    shutil.copy(extension.ROOT / "docs" / "pictures" / "bsm2_frame.png", picture)  # another picture
    result = run(PYTHON, SCRIPT, "--check", "xbox_fnv", "--against", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"of pixels differ from {picture}" in result.stderr


def test_changed_share_counts_pixels_beyond_the_tolerance(addon, tmp_path):
    import bpy

    image = bpy.data.images.new("reference", 20, 10, alpha=True)
    try:
        pixels = np.zeros((10, 20, 4), np.float32)
        image.pixels.foreach_set(pixels.ravel())
        image.filepath_raw, image.file_format = str(tmp_path / "a.png"), "PNG"
        image.save()
        pixels[0, :3, 0] = 1.0  # 3 pixels of 200 changed fully
        pixels[1, :, 1] = 0.02  # a row changed within the tolerance
        image.pixels.foreach_set(pixels.ravel())
        image.filepath_raw = str(tmp_path / "b.png")
        image.save()
    finally:
        bpy.data.images.remove(image)
    assert render_pictures.changed_share(bpy, tmp_path / "b.png", tmp_path / "a.png") == pytest.approx(3 / 200)


def test_readme_shows_every_picture_with_its_command():
    readme = (extension.ROOT / "README.md").read_text()
    for picture in render_pictures.PICTURES:
        image = extension.ROOT / "docs" / "pictures" / f"{picture.name}.png"
        assert image.is_file()
        link = f"![{picture.name}](docs/pictures/{picture.name}.png)"
        assert f"{link}\n\n{picture.title}:\n\n```sh\n{picture.command()}\n```" in readme


def test_caption_patterns_expand_to_the_files_imported(corpus):
    """The cell's caption says ``PreCombined/*.NIF``: the 11 cells and the physics cell."""
    cell = next(p for p in render_pictures.PICTURES if p.name == "ck_cell")
    paths = cell.paths(Path("unused"))
    on_disk = sorted((corpus / "ck-precombined/Meshes/PreCombined").glob("*.NIF"))
    assert [Path(p).name for p in paths] == [p.name for p in on_disk] and len(paths) == 12


def test_main_job_leaves_a_blend_and_a_picture(addon, tmp_path):
    """``python3 tasks.py main`` from any folder: the .blend and picture land there. Without the
    corpus beside the repository it imports the sample cell."""
    main = "import sys; sys.path.insert(0, sys.argv[1]); import tasks; tasks.CK_CELL = tasks.ROOT / 'no-corpus'; tasks.main_job()"
    result = run(sys.executable, "-c", main, extension.ROOT, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    blend, picture = tmp_path / "precombined_nif_sample.blend", tmp_path / "precombined_nif_sample.png"
    assert f"tasks.py main: the imported cell is in {blend}" in result.stdout
    assert f"tasks.py main: a picture of it is {picture}" in result.stdout
    assert "12 precombined instances of 3 records" in result.stdout
    assert blend.read_bytes()[:7] == b"BLENDER"
    assert_not_blank(rgba(addon, picture), *render_pictures.SIZE)


def test_main_job_shows_the_creation_kit_cell_when_the_corpus_is_beside_the_repository(addon, corpus, tmp_path):
    """The first picture is a real interior: the corpus's 11 cell files with their .csg, copies
    named after the plugin's references (00001E58_1200ADBE: 13 copies, 10 placed by the plugin)."""
    result = run(sys.executable, extension.ROOT / "tasks.py", "main", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "11 of 11 file(s) imported" in result.stdout
    assert "00001E58_1200ADBE_OC: 19 objects, 6 meshes, 13 precombined instances of 6 records, 10 named after" in result.stdout
    assert "placeholder" not in result.stdout + result.stderr  # every record found its geometry in the .csg
    assert_not_blank(rgba(addon, tmp_path / "precombined_nif_sample.png"), *render_pictures.SIZE)


def without_opengl(tmp_path):
    """The environment of a machine without an OpenGL driver: no EGL vendor for glvnd to load."""
    environment = {**os.environ, "__EGL_VENDOR_LIBRARY_DIRS": str(tmp_path / "no-egl-vendors")}
    if run(PYTHON, SCRIPT, "--probe", env=environment).returncode == 0:
        unavailable("Workbench still renders without glvnd's EGL vendors: no way to take OpenGL away here")
    return environment


def test_without_opengl_a_blend_renders_with_cycles(addon, corpus, tmp_path):
    """Workbench aborts Blender without an OpenGL context; tasks.py main's picture must still come."""
    blend, picture = tmp_path / "clock.blend", tmp_path / "clock.png"
    result = run(PYTHON, extension.ROOT / "cli.py", "import", corpus / "pynifly/tests/tests/FO4/AlarmClock.nif", "--blend", blend)
    assert result.returncode == 0, result.stderr
    result = run(PYTHON, SCRIPT, "--blend", blend, picture, "--size", 96, 60, env=without_opengl(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Workbench cannot render here (no OpenGL driver): rendering with Cycles" in result.stderr
    assert_not_blank(rgba(addon, picture), 96, 60)


def test_without_opengl_the_readme_pictures_are_refused(tmp_path):
    result = run(PYTHON, SCRIPT, "xbox_fnv", "--output", tmp_path, env=without_opengl(tmp_path))
    assert result.returncode == 1 and "Workbench cannot render here" in result.stderr
    assert not (tmp_path / "xbox_fnv.png").exists()
