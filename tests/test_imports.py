"""The add-on's modules import in one direction: no circle, no import from a layer above
(tools/check_imports.py, over every import statement, those inside functions too)."""

import importlib.util

from support import ROOT

spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
check_imports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_imports)


def test_no_import_circle_and_no_import_from_a_layer_above():
    assert check_imports.problems() == []


def test_the_check_finds_a_circle_and_an_import_going_up(tmp_path):
    """A tree made for it: io imports operators (up a layer), and two core modules import each
    other, one inside a function (the kind of circle lazy imports hide)."""
    files = {
        "__init__.py": "def register():\n    from . import operators\n",
        "core/__init__.py": "",
        "core/a.py": "from .b import B\n",
        "core/b.py": "B = 1\ndef later():\n    from . import a\n",
        "io/__init__.py": "",
        "io/reader.py": "from ..core import a\nfrom ..operators.loader import thing\n",
        "operators/__init__.py": "",
        "operators/loader.py": "from precombined_nif.io import reader\nthing = 1\n",
        "cli.py": "from precombined_nif.ui import menus\n",
        "ui/__init__.py": "",
        "ui/menus.py": "from ..operators import loader\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = check_imports.problems(tmp_path)
    assert found == [
        "io/reader.py:2: io.reader (1) imports operators.loader from a layer above (3)",
        "import circle: core.a, core.b",
        "import circle: io.reader, operators.loader",
    ]
