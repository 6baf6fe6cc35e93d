"""python -m tests.fidelity: replay Kafka 3.9.0's corpus and print what differs (see corpus.py)."""

from __future__ import annotations

import argparse
import json
import sys

from tests.fidelity.corpus import judge, load_golden, load_known, only_cases, replay


def main() -> int:
    parser = argparse.ArgumentParser(description="Replay the Kafka 3.9.0 corpus against kafka-shim.")
    parser.add_argument(
        "--bootstrap", help="a running single-node broker, fresh (default: an in-process shim)"
    )
    parser.add_argument("--only", action="append", help="only the cases whose id contains this (repeatable)")
    parser.add_argument("--out", help="also write the observed records here, as JSON lines")
    parser.add_argument("--all", action="store_true", help="print every difference, listed or not")
    args = parser.parse_args()
    observed = replay(args.bootstrap, args.only)
    if args.out:
        with open(args.out, "w") as out:
            for steps in observed.values():
                out.writelines(json.dumps(record) + "\n" for record in steps.values())
    verdict = judge(only_cases(load_golden(), args.only), observed, load_known(), partial=bool(args.only))
    print(verdict.report(every=args.all))
    return 0 if not verdict.unlisted and not verdict.stale else 1


if __name__ == "__main__":
    sys.exit(main())
