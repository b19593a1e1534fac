"""What ``cli.py precombines`` tells of the Creation Kit before it runs (core.precombined.ck_rules):
``--meshes``, one line a model (whether it can be combined, else the rule and the block);
``--cell ID --plan``, one line a reference of the cell (combined and its group, or the rule
keeping it out, or the file a verdict needs)."""

import json
import sys
import time

from . import ENTRY, CommandError, UsageError


def command_meshes(args):
    """Each model's line (with --json its object) on stdout, a summary on stderr. A model the
    Data folder lacks or that cannot be read is a line too; a NIF named on the command line that
    cannot be read is also an error line on stderr, and the exit status is 2 (as for any file the
    command line cannot read)."""
    from . import batch

    if args.meshes:
        jobs = [(path, (str(path),)) for path, _ in batch.expand(args.meshes)]
        missing, problems = [], []
        if not jobs:
            raise UsageError(f"{', '.join(args.meshes)}: holds no .nif file")
    else:
        if args.data_folder is None:
            raise UsageError("precombines --meshes: give the Data folder, or NIF files")
        from ..core.precombined.ck_rules.models import load_order_models

        models, problems = load_order_models(args.data_folder, args.plugins)
        jobs = [(item["file"], (item["model"],)) for item in models if item["file"]]
        missing = [item for item in models if not item["file"]]
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    started, counts = time.monotonic(), {}
    import runpy

    try:
        for ok, line, error in batch.run(batch.ck_mesh_task, jobs, args.jobs, True, (runpy.run_path, (str(ENTRY),))):
            result = json.loads(line)
            if not ok:  # an internal error: the model's, reported, the others go on
                result.update(model=result["file"], verdict="unreadable", findings=[], notes=[])
                line = json.dumps(result, ensure_ascii=False)
            counts[result["verdict"]] = counts.get(result["verdict"], 0) + 1
            print(line if args.json else f"{result['model']}: {mesh_line(result)}", flush=True)
            if args.meshes and result["verdict"] == "unreadable":
                print(f"error: {result['file']}: {result['error'] or 'cannot be read'}", file=sys.stderr, flush=True)
    except batch.WorkerLost as error:
        raise CommandError(f"error: {error}") from None
    for item in missing:
        counts["not found"] = counts.get("not found", 0) + 1
        if args.json:
            print(json.dumps({**item, "verdict": "not found"}, ensure_ascii=False))
        else:
            print(f"{item['model']}: not found (neither loose nor in an archive of the Data folder)")
    total = len(jobs) + len(missing)
    summary = ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items()))
    print(f"{total} model(s): {summary or 'none'} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return 2 if args.meshes and counts.get("unreadable") else 0


def mesh_line(result):
    """A model's verdict, then its findings, error and notes, as one line."""
    details = [finding["text"] for finding in result["findings"]] + ([result["error"]] if result["error"] else [])
    return "; ".join([result["verdict"], *details, *result["notes"]])


def command_plan(args):
    from ..core.precombined.ck_rules.plan import cell_plan

    if args.cell is None:
        raise UsageError("precombines --plan: name the cell with --cell")
    plan = cell_plan(args.data_folder, args.cell, args.plugins)
    return json.dumps(plan, ensure_ascii=False) if args.json else render_plan(plan)


def reference_line(item):
    base = " ".join(part for part in (item["base_type"], item["base"], item["editor_id"]) if part)
    model = f", {item['model']}" if item["model"] else ""
    what = f"{item['type'] or 'REFR'} {item['reference']}" + (f" ({base}{model})" if base else "")
    verdict = item["verdict"]
    if verdict == "combined":
        verdict += f", group {item['group']}" if item["group"] else ", group unknown"
    elif verdict == "needs":
        verdict = f"needs {'; '.join(dict.fromkeys(item['needs']))}"
    else:
        verdict += f": {'; '.join(item['reasons'])}"
    listed = f" [XCRI: {item['xcri_group']}]" if item["xcri_group"] else ""
    notes = "".join(f"; {note}" for note in item["notes"])
    return f"  {what}: {verdict}{notes}{listed}"


def render_plan(plan):
    lines = [f"problem: {problem}" for problem in plan["problems"]]
    name = f" {plan['editor_id']}" if plan["editor_id"] else ""
    counts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(plan["counts"].items()))
    lines.append(f"CELL {plan['cell']}{name} ({'interior' if plan['interior'] else 'exterior'}; wins: {plan['plugin']}"
                 f"; XCRI of {plan['xcri_plugin'] or 'no plugin'}): {len(plan['references'])} references: {counts}")
    lines += [reference_line(item) for item in plan["references"]]
    listed = [item for item in plan["references"] if item["xcri_group"]]
    if listed:
        verdicts = {}
        for item in listed:
            verdicts[item["verdict"]] = verdicts.get(item["verdict"], 0) + 1
        lines.append(f"XCRI lists {len(listed)} of them: "
                     + ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())))
    if not plan["interior"]:
        lines.append("exterior cell: its groups are not known (the CK's exterior key is not reproduced)")
    return "\n".join(lines)
