"""Every command the user's guide shows runs, for real (docs/developing.md, "Commands in the guide
are tests", is the convention). Each line of a fenced ``sh`` block in README.md and docs/*.md is a
command typed at the repository root; a page's commands run in order in a fresh copy of the
repository under a temporary folder, ``../shared/corpus`` beside it, and each must exit with status
0. A shell fence of another name, or a command whose program this file cannot run, fails."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import CORPUS, ROOT, unavailable

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```\s*(\S*)\s*$")
# Fence names a command could hide behind: only ``sh`` is allowed for commands.
SHELL_FENCES = {"", "bash", "console", "shell", "shell-session", "sh-session", "zsh"}
# The programs a documented command may start with (as typed at the repository root).
CODEC = ("python cli.py ", ".venv/bin/python cli.py ")
CODEC_TOOLS = (".venv/bin/python tools/xbox_sample.py ",)  # tools that need only numpy, as the codec commands
PROGRAMS = (*CODEC, "python3 tasks.py ", ".venv/bin/python tools/", ".venv/bin/python benchmarks/",
            "blender -b --python cli.py -- ", "blender --command extension ", "mkdir -p ")
STARTS_BLENDER = re.compile(r"cli\.py (-- )?(import|export)\b")
# Commands that would run the suite inside itself only collect it.
REDUCED = {"python3 tasks.py test": " --collect-only -q"}
# Blender as the bpy module: ``blender -b --python SCRIPT -- ARGS`` and ``blender --command ARGS``.
BLENDER = """#!/bin/sh
if [ "$1" = "--command" ]; then shift; exec "{python}" tools/blender_command.py "$@"; fi
if [ "$1" = "-b" ] && [ "$2" = "--python" ]; then script="$3"; shift 3; exec "{python}" "$script" "$@"; fi
echo "blender stand-in: cannot run: blender $*" >&2; exit 2
"""
PICTURE_SIZE_LIMIT = 200 * 1024


def fences(page):
    return fences_in(page.read_text(encoding="utf-8"))


def fences_in(text):
    """(language, first line number, lines) of each fenced block of a page's text."""
    blocks, current = [], None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if current is None and match:
            current = (match.group(1), number + 1, [])
        elif current is not None and line.startswith("```"):
            blocks.append(current)
            current = None
        elif current is not None:
            current[2].append(line)
    return blocks


def commands(page):
    """The commands of a page's ``sh`` blocks, in order (blank lines and ``#`` comments left out)."""
    found = []
    for language, _, lines in fences(page):
        if language == "sh":
            found += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return found


def starts_blender(command):
    return not command.startswith(CODEC + CODEC_TOOLS) or bool(STARTS_BLENDER.search(command))


def file_names(command):
    """The names of files a command reads or writes, but the corpus's."""
    return {word for word in shlex.split(command)[1:]
            if "." in word and not word.startswith(("-", "../shared/corpus")) and word != "cli.py"}


def codec_only(shown):
    """The commands needing only numpy, but those reading what a Blender command before them wrote."""
    kept, made = [], set()
    for command in shown:
        if starts_blender(command):
            made |= file_names(command)
        elif not file_names(command) & made:
            kept.append(command)
    return kept


def page_id(page):
    return str(page.relative_to(ROOT))


def test_commands_are_only_in_sh_fences():
    """A shell block under another name would not be run: refused."""
    wrong = [f"{page_id(page)}:{line - 1}: ```{language}" for page in PAGES for language, line, _ in fences(page)
             if language in SHELL_FENCES]
    assert not wrong, "commands go in ```sh blocks (run by this test); output in ```text"


def test_every_command_has_a_program_this_test_runs():
    unknown = [f"{page_id(page)}: {command}" for page in PAGES for command in commands(page)
               if not command.startswith(PROGRAMS) or command.endswith("\\")]
    assert not unknown, f"no way to run these (one command a line, starting with one of {PROGRAMS})"


def test_every_cli_command_is_shown():
    shown = " ".join(command for page in PAGES for command in commands(page))
    for name in ("info", "roundtrip", "convert", "sample", "ls", "extract", "precombines", "import", "export"):
        assert re.search(rf"cli\.py (-- )?{name} ", shown), f"no page shows cli.py {name}"


def test_readme_opens_with_the_two_commands_ci_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Precombined NIF\n")
    section = text.split("\n## Two commands\n", 1)[1]
    first = next(lines for language, _, lines in fences_in(section) if language == "sh")
    assert first == ["python3 tasks.py main", "python3 tasks.py test"]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == "exec " + first[1]


def test_links_and_pictures_exist_and_pictures_are_small():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            path = (page.parent / target).resolve()
            assert path.exists(), f"{page_id(page)} links to {target}, which does not exist"
            if path.suffix == ".png":
                assert path.stat().st_size < PICTURE_SIZE_LIMIT, f"{target}: {path.stat().st_size} bytes"


# -- running them -----------------------------------------------------------------------------------
def sandbox(tmp_path):
    """A copy of the repository (its environments linked in) with the corpus beside it, a bin folder
    of stand-ins (python, python3: the project's .venv Python; blender: the bpy module) and a HOME."""
    if not CORPUS.is_dir():
        unavailable(f"corpus not found at {CORPUS}: the guide's commands use it")
    repo = tmp_path / "repo"
    fresh_clone(repo)
    for venv in ROOT.glob(".venv*"):
        (repo / venv.name).symlink_to(venv.resolve())
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "corpus").symlink_to(CORPUS.resolve())
    python = repo / ".venv" / "bin" / "python"  # a venv's python must be run by its path in the venv
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name, text in (("python", f'#!/bin/sh\nexec "{python}" "$@"\n'), ("python3", f'#!/bin/sh\nexec "{python}" "$@"\n'),
                       ("blender", BLENDER.format(python=python))):
        (bin_folder / name).write_text(text)
        (bin_folder / name).chmod(0o755)
    (tmp_path / "home").mkdir()
    env = {**os.environ, "PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path / "home")}
    return repo, env


def fresh_clone(repo):
    """What a clone of the repository holds: the files git tracks and those new and not ignored
    (committed, they are the clone's), nothing else that lies in the working folder."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file() and not (ROOT / name).is_symlink():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)


def run_page(page, tmp_path, only_codec):
    repo, env = sandbox(tmp_path)
    shown = commands(page)
    ran = 0
    for command in codec_only(shown) if only_codec else shown:
        if "tasks.py pictures" in command:
            workbench_or_unavailable()
        typed = command + next((extra for start, extra in REDUCED.items() if command.startswith(start)), "")
        result = subprocess.run(["bash", "-c", typed], cwd=repo, env=env, capture_output=True, text=True, timeout=1200)
        assert result.returncode == 0, (f"{page_id(page)}: `{typed}` exited with {result.returncode}\n"
                                        f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        ran += 1
    return ran


def workbench_or_unavailable():
    sys.path.insert(0, str(ROOT / "tools"))
    import render_pictures

    if not render_pictures.workbench_works():
        unavailable("Workbench cannot render here: it needs an OpenGL driver (a GPU's or Mesa's EGL)")


CODEC_PAGES = [page for page in PAGES if codec_only(commands(page))]


@pytest.mark.parametrize("page", CODEC_PAGES, ids=page_id)
def test_codec_commands_of(page, tmp_path):
    """The commands needing only numpy, in the fast set: in order, leaving out the Blender ones and
    those reading their files."""
    assert run_page(page, tmp_path, only_codec=True)


@pytest.mark.slow  # imports and exports start Blender (the bpy module) in subprocesses
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_of(page, tmp_path):
    assert run_page(page, tmp_path, only_codec=False) == len(commands(page))
