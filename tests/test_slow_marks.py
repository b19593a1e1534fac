"""The slow marker: registered (``-m "not slow"`` runs the fast set without warnings), and on
every test that starts Blender in a subprocess (the command line under Blender, other Blender
versions, tasks.py), found here in the tests' source: directly or through a helper of its module."""

import ast
import sys

from support import ROOT

STARTS_BLENDER = {"blender_cli", "run_cli", "run"}  # helpers of tests/blender that start a process


def _marked_slow(node):
    return any(ast.unparse(decorator) == "pytest.mark.slow" for decorator in node.decorator_list)


def _starts_a_process(function, functions, depth=0):
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        call = node.func
        name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
        if isinstance(call, ast.Attribute) and getattr(call.value, "id", "") == "subprocess":
            return True
        if isinstance(call, ast.Name) and name in STARTS_BLENDER and name not in functions:
            return True  # imported from tests/blender/extension.py
        helper = functions.get(name)
        if helper is not None and helper is not function and depth < 2 and _starts_a_process(helper, functions, depth + 1):
            return True
    return False


def unmarked_blender_subprocesses():
    found = []
    for path in sorted((ROOT / "tests" / "blender").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_slow = any(isinstance(node, ast.Assign) and ast.unparse(node).replace(" ", "") == "pytestmark=pytest.mark.slow"
                          for node in tree.body)
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        for name, function in functions.items():
            if name.startswith("test_") and not module_slow and not _marked_slow(function) and _starts_a_process(function, functions):
                found.append(f"{path.name}::{name}")
    return found


def test_slow_marker_is_registered(pytestconfig):
    assert any(line.startswith("slow:") for line in pytestconfig.getini("markers"))


def test_every_blender_subprocess_test_is_marked_slow():
    assert not unmarked_blender_subprocesses()


def test_the_check_finds_an_unmarked_blender_subprocess(tmp_path, monkeypatch):
    """The check itself: an unmarked test calling blender_cli is named."""
    folder = tmp_path / "tests" / "blender"
    folder.mkdir(parents=True)
    (folder / "test_example.py").write_text(
        "import pytest\nfrom extension import blender_cli\n\n"
        "def helper():\n    return blender_cli('info')\n\n"
        "def test_quick():\n    assert True\n\n"
        "def test_unmarked():\n    helper()\n\n"
        "@pytest.mark.slow\ndef test_marked():\n    blender_cli('info')\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert unmarked_blender_subprocesses() == ["test_example.py::test_unmarked"]
