"""Check the add-on's import statements (those inside functions too): no circle between modules,
and no module importing from a layer above its own.

    python tools/check_imports.py        prints each problem; exits 1 when there is one

Layers, lowest first: core (the codec), io (core objects <-> Blender data), preferences (the
user's folders, read by the operators and drawn by the add-on), operators, ui. The package's
``__init__``, ``cli.py`` and ``commands/`` (the command line) may import any of them; tests,
benchmarks and tools are not checked.
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "precombined_nif"  # the name cli.py loads the repository root under
LAYERS = {"core": 0, "io": 1, "preferences": 2, "operators": 3, "ui": 4}
TOP = max(LAYERS.values()) + 1  # the package's __init__ and the command line
NOT_CHECKED = ("tests", "benchmarks", "tools", "docs", "build")


def modules(root=ROOT):
    """{dotted name relative to the root ('' for the root's __init__): path} of the add-on's modules."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[0].startswith(".") or parts[0] in NOT_CHECKED or parts == ("tasks",):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name, path, known):
    """The add-on modules ``name`` (at ``path``) imports: [(module, line)]."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    result = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module == PACKAGE or (node.module or "").startswith(PACKAGE + "."):
                target = node.module.removeprefix(PACKAGE).lstrip(".")
            else:
                continue
            for alias in node.names:  # ``from . import x``: x may be a module
                sub = f"{target}.{alias.name}" if target else alias.name
                result.append((sub if sub in known else target, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    result.append((alias.name.removeprefix(PACKAGE + "."), node.lineno))
    return [(target, line) for target, line in result if target in known and target != name]


def layer(name):
    return LAYERS.get(name.split(".")[0], TOP) if name else TOP


def circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def problems(root=ROOT):
    """One line per import going up a layer and per circle of modules."""
    known = modules(root)
    graph, lines = {}, []
    for name, path in known.items():
        edges = imported(name, path, known)
        graph[name] = sorted({target for target, _ in edges})
        for target, line in edges:
            if layer(target) > layer(name):
                where = path.relative_to(root)
                lines.append(f"{where}:{line}: {name or '__init__'} ({layer(name)}) imports {target} from a layer above ({layer(target)})")
    for component in circles(graph):
        lines.append(f"import circle: {', '.join(m or '__init__' for m in component)}")
    return lines


if __name__ == "__main__":
    found = problems()
    print("\n".join(found) or f"check_imports: {len(modules())} modules, no circle, no import from a layer above")
    sys.exit(1 if found else 0)
