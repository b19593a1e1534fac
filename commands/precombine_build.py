"""``cli.py precombines DATA --cell ID --build``: a cell's precombines built without the Creation
Kit (core.precombined.build.cell), every file written or none; ``--dry-run`` lists them."""

import json

from . import UsageError


def command_build(args):
    from ..core.precombined.build.cell import Build

    if args.cell is None:
        raise UsageError("precombines --build: name the cell with --cell")
    build = Build(args.data_folder, args.cell, into=args.into, layout=args.layout, plugins_txt=args.plugins)
    report = build.report()
    report["written"] = bool(build.files) and not args.dry_run
    if report["written"]:
        build.write()
    return json.dumps(report, ensure_ascii=False) if args.json else render_build(report, args.dry_run)


def render_build(report, dry_run):
    lines = [f"problem: {line}" for line in report["messages"]]
    waiting = {}  # references waiting on a plugin the Data folder lacks: one line per plugin
    for item in report["left_out"]:
        if item["verdict"] == "needs" and not any(why.startswith("meshes\\") for why in item["why"]):
            for why in dict.fromkeys(why.split(" ", 1)[0] for why in item["why"]):
                waiting[why] = waiting.get(why, 0) + 1
            continue
        lines.append(f"  left out: {item['reference']}: {item['verdict']}: {'; '.join(item['why'])}")
    lines += [f"  left out: {count} references: they need {name}" for name, count in sorted(waiting.items())]
    if not report["files"]:
        lines.append(f"CELL {report['cell']}: no reference to combine: nothing written")
        return "\n".join(lines)
    lines.append(f"CELL {report['cell']}: {report['references']} references combined into {len(report['groups'])} "
                 f"meshes")
    verb = "would write" if dry_run else "wrote"
    lines += [f"  {verb} {path} ({size} bytes)" for path, size in report["files"]]
    return "\n".join(lines)
