"""Mutation testing of one module or package with cosmic-ray: how many small planted errors (a
swapped comparison, a changed number, a dropped ``not``) the tests that exercise it catch.

    python3 tools/mutate.py core/precombined [--tests tests/test_cdx.py ...] [--sample 20]

Not part of CI: a developer's command for the modules a change touches. On first use it creates
``.venv-mutation`` (Python 3.11, cosmic-ray 8.x from the package index) and runs itself there;
the shared ``.venv`` runs the tests and is never changed. The mutants are made in a copy of the
repository under a temporary folder (the environments and ``../shared/corpus`` linked in), so
the work tree is never edited. Without ``--tests`` the tests are the files of ``tests/`` (and
``tests/blender/``) that import the module. ``--sample N`` (default 20; 0 for all) runs N of
the mutants drawn at random (``--seed``): a sample's score, said so in the output, comes in
minutes on a small machine. Prints the score (killed / (killed + survived)) per module file and
in all, and the diff of each surviving mutant."""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-mutation"
TESTS_PYTHON = ROOT / ".venv" / "bin" / "python"
REQUIREMENT = "cosmic-ray>=8.7,<9"
ENVIRONMENTS = (".venv", ".venv-bpy42", ".venv-bpy50")


def venv_python():
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv():
    """Create .venv-mutation with cosmic-ray on first use (never the shared environments)."""
    python = venv_python()
    if python.exists() and subprocess.run([python, "-c", "import cosmic_ray"], capture_output=True).returncode == 0:
        return python
    base = shutil.which("python3.11") or sys.executable
    print(f"creating {VENV.name} ({REQUIREMENT}) ...", flush=True)
    subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", REQUIREMENT], check=True)
    return python


def arguments(argv):
    parser = argparse.ArgumentParser(description="Mutation testing of a module or package (cosmic-ray).")
    parser.add_argument("module", help="a file or a package of the repository, e.g. core/precombined or core/tri/facegen.py")
    parser.add_argument("--tests", nargs="+", help="test files or node ids to run (default: those importing the module)")
    parser.add_argument("--sample", type=int, default=20, help="mutants drawn at random (0: all of them)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample")
    parser.add_argument("--marks", help="pytest -m expression, e.g. 'not slow'")
    parser.add_argument("--deselect", nargs="+", default=[], help="test node ids left out (a test failing already)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 times the unmutated run, at least 60)")
    return parser.parse_args(argv)


def module_files(module):
    path = ROOT / module
    if path.is_dir():
        return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
    if path.suffix == ".py" and path.is_file():
        return [path]
    raise SystemExit(f"{module}: not a Python file or package of the repository")


def dotted(path):
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def tests_importing(module):
    """Test files naming the module (or, for a package, any of its modules) in an import, and
    those of a package's domain by their name (``io/precombined``: ``test_precombined_*.py``;
    Blender tests reach io/ modules through operators)."""
    path = ROOT / module
    names = {dotted(path if path.is_dir() else path)}
    patterns = []
    for name in names:
        parent, _, last = name.rpartition(".")
        patterns.append(re.escape(name) + r"\b")
        if parent:  # from precombined_nif.core.precombined import cdx, csg
            patterns.append(r"\b" + re.escape(parent) + r" import [^\n]*\b" + re.escape(last) + r"\b")
    found = re.compile("|".join(patterns))
    domain = path.stem if path.is_dir() else path.parent.name
    tests = sorted((ROOT / "tests").glob("test_*.py")) + sorted((ROOT / "tests" / "blender").glob("test_*.py"))
    return [str(t.relative_to(ROOT)) for t in tests
            if t.stem.startswith(f"test_{domain}") or found.search(t.read_text(encoding="utf-8"))]


def copy_repository(into):
    """The repository's files (tracked and new, not ignored) copied into ``into``/repo, the
    environments linked in and ../shared/corpus beside it."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    repo = into / "repo"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    for name in ENVIRONMENTS:
        if (ROOT / name).exists():
            os.symlink((ROOT / name).resolve(), repo / name)
    corpus = ROOT.parent / "shared" / "corpus"
    if corpus.is_dir():
        (into / "shared").mkdir()
        os.symlink(corpus.resolve(), into / "shared" / "corpus")
    return repo


def test_command(tests, marks, deselect):
    command = [str(TESTS_PYTHON), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header"]
    if marks:
        command += ["-m", marks]
    for node in deselect:
        command += ["--deselect", node]
    return command + tests


def toml_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv):
    args = arguments(argv)
    files = module_files(args.module)
    tests = args.tests or tests_importing(args.module)
    if not tests:
        raise SystemExit(f"no test imports {args.module}: name them with --tests")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with tempfile.TemporaryDirectory(prefix="mutate-") as temporary:
        temporary = Path(temporary)
        repo = copy_repository(temporary)
        environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # a mutant's .pyc never outlives it
        command = test_command(tests, args.marks, args.deselect)
        print(f"tests: {' '.join(tests)}", flush=True)
        start = time.monotonic()
        clean = subprocess.run(command, cwd=repo, env=environment, capture_output=True, text=True)
        took = time.monotonic() - start
        if clean.returncode != 0:
            print(clean.stdout[-3000:], clean.stderr[-2000:])
            raise SystemExit("the tests fail without a mutant: fix them first")
        timeout = args.timeout or max(60.0, 3 * took)
        config = temporary / "config.toml"
        module_path = [str(f.relative_to(ROOT)) for f in files]
        config.write_text("[cosmic-ray]\n"
                          f"module-path = [{', '.join(toml_string(m) for m in module_path)}]\n"
                          f"timeout = {timeout:.0f}\n"
                          "excluded-modules = []\n"
                          f"test-command = {toml_string(subprocess.list2cmdline(command))}\n"
                          "[cosmic-ray.distributor]\nname = \"local\"\n", encoding="utf-8")
        session = temporary / "session.sqlite"
        cosmic_ray = [str(venv_python().with_name("cosmic-ray" + (".exe" if os.name == "nt" else "")))]
        subprocess.run([*cosmic_ray, "init", str(config), str(session)], cwd=repo, env=environment, check=True)
        with use_db(str(session), WorkDB.Mode.open) as db:
            items = sorted(db.pending_work_items, key=lambda item: item.job_id)
            chosen = items if not args.sample or args.sample >= len(items) else random.Random(args.seed).sample(items, args.sample)
            keep = {item.job_id for item in chosen}
            db.set_multiple_results([i.job_id for i in items if i.job_id not in keep],
                                    WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        what = f"a sample of {len(chosen)} of {len(items)} mutants (seed {args.seed})" if len(chosen) < len(items) \
            else f"all {len(items)} mutants"
        print(f"{args.module}: {what}; unmutated run {took:.0f} s, timeout {timeout:.0f} s per mutant", flush=True)
        subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=repo, env=environment, check=True)
        with use_db(str(session), WorkDB.Mode.open) as db:
            report(args.module, what, db.completed_work_items)


def report(module, what, completed):
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    per_file, survivors, errors = {}, [], 0
    for item, result in completed:
        if result.worker_outcome == WorkerOutcome.SKIPPED:
            continue
        name = str(item.mutations[0].module_path)
        killed, total = per_file.get(name, (0, 0))
        if result.test_outcome == TestOutcome.INCOMPETENT or result.worker_outcome != WorkerOutcome.NORMAL:
            errors += 1
            continue
        survived = result.test_outcome == TestOutcome.SURVIVED
        per_file[name] = (killed + (not survived), total + 1)
        if survived:
            survivors.append((name, item.mutations[0], result.diff))
    print(f"\nmutation score of {module} ({what}; killed / killed + survived):")
    for name, (killed, total) in sorted(per_file.items()):
        print(f"  {name}: {killed}/{total} = {killed / total:.0%}")
    killed = sum(k for k, _ in per_file.values())
    total = sum(t for _, t in per_file.values())
    print(f"  in all: {killed}/{total}" + (f" = {killed / total:.0%}" if total else "")
          + (f" ({errors} incompetent mutants left out)" if errors else ""))
    for name, mutation, diff in survivors:
        print(f"\nsurvived: {name} line {mutation.start_pos[0]} ({mutation.operator_name})\n{diff or ''}")


if __name__ == "__main__":
    if Path(sys.prefix).resolve() != VENV.resolve():
        python = ensure_venv()
        sys.exit(subprocess.run([str(python), __file__, *sys.argv[1:]]).returncode)
    main(sys.argv[1:])
