"""The pages as a new user reads them (issue 44): every file a command uses is made by a command
before it, and command-line.md's Python is one that has numpy 1.26."""

from test_docs_commands import PAGES, commands, page_id

from support import ROOT


def test_no_page_needs_a_file_it_does_not_make():
    """22smg_xbox360.nif (no public Xbox 360 files exist) is written by a command of the page
    before any command reading it (the slow test runs them from a fresh clone)."""
    for page in PAGES:
        shown = commands(page)
        users = [i for i, command in enumerate(shown) if "22smg_xbox360.nif" in command]
        if users:
            assert "tools/xbox_sample.py 22smg_xbox360.nif" in shown[users[0]], page_id(page)


def test_command_line_page_runs_cli_with_the_projects_python():
    page = ROOT / "docs" / "command-line.md"
    text = page.read_text(encoding="utf-8")
    assert "numpy 1.26" in text
    assert not [command for command in commands(page) if command.startswith("python cli.py")]
