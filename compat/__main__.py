"""`python -m compat run|diff`: the compatibility matrix from the command line.

    python -m compat run --target shim --clients all                  # prints the matrix
    python -m compat run --target shim --target tansu --markdown compat/REPORT.md
    python -m compat diff --target shim --target tansu --scenarios roundtrip --clients kafka-python

Exit status 1 when any cell fails (n/a and unavailable cells do not fail the run).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from compat.catalog import SCENARIOS
from compat.drivers import DRIVERS
from compat.matrix import differential, load_outcomes, print_progress, resolve, run_matrix
from compat.report import markdown, text
from compat.targets import TARGETS


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m compat", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    for name, summary in (("run", "run the matrix and print it"), ("diff", "diff two targets' observations")):
        sub = commands.add_parser(name, help=summary)
        sub.add_argument(
            "--target", action="append", choices=sorted(TARGETS), help="repeatable (default shim)"
        )
        sub.add_argument(
            "--clients", nargs="+", default=["all"], help=f"all or some of: {', '.join(DRIVERS)}"
        )
        sub.add_argument(
            "--scenarios", nargs="+", default=["all"], help=f"all or some of: {', '.join(SCENARIOS)}"
        )
        sub.add_argument("--skip-heavy", action="store_true", help="leave out the scale scenarios")
    run = commands.choices["run"]
    run.add_argument("--markdown", type=Path, help="also write the matrix as markdown here")
    run.add_argument("--preface", type=Path, help="markdown inserted under the report's header")
    run.add_argument("--json", type=Path, help="also write every outcome as JSON here")
    run.add_argument(
        "--reuse", type=Path, help="take cells that did not fail from this --json file (resume a long run)"
    )
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    targets = args.target or ["shim"]
    if args.command == "diff" and len(targets) != 2:
        raise SystemExit("diff needs exactly two --target options")
    scenarios = resolve(args.scenarios, SCENARIOS, "scenario")
    if args.skip_heavy:
        scenarios = [name for name in scenarios if not SCENARIOS[name].heavy]
    clients = resolve(args.clients, DRIVERS, "client")
    started = time.monotonic()
    reuse = load_outcomes(args.reuse) if getattr(args, "reuse", None) else None
    matrix = run_matrix(targets, scenarios, clients, progress=print_progress, reuse=reuse)
    wall_s = time.monotonic() - started
    if args.command == "diff":
        for (scenario, client), diff in differential(matrix).items():
            print(f"{scenario} x {client}:")
            for key, (left, right) in diff.items():
                print(f"  {key}: {targets[0]}={json.dumps(left)}  {targets[1]}={json.dumps(right)}")
    else:
        print(text(matrix))
        if args.markdown:
            preface = args.preface.read_text() if args.preface else ""
            command_line = "python -m compat " + shlex.join(sys.argv[1:] if argv is None else argv)
            args.markdown.write_text(markdown(matrix, command_line, wall_s, preface))
        if args.json:
            args.json.write_text(json.dumps([vars(o) for o in matrix.outcomes.values()], indent=1))
    print(f"{len(matrix.outcomes)} cells in {wall_s:.0f}s", file=sys.stderr)
    return 1 if matrix.failures() else 0


if __name__ == "__main__":
    raise SystemExit(main())
