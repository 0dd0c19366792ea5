"""``python -m conformance.peers.agent``: list, install and try the agent peers.

- ``list``: the shipped definitions, their packages and whether each is installed;
- ``install NAME...`` (or ``all``): one pinned ``npm install`` each, into the cache;
- ``try NAME [--json FILE] [--no-isolate]``: the fixed scripted conversation
  (``trial``) through the agent, printed step by step, with its times and
  every escape beyond the loopback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance.errors import ConformanceError
from conformance.peers.agent.definition import load_definition, shipped_definitions
from conformance.peers.agent.install import ensure_installed, installed
from conformance.peers.agent.trial import TrialReport, run_trial


def _print_trial(report: TrialReport) -> None:
    where = "loopback-only namespace" if report.isolated else "NOT isolated"
    print(f"{report.agent} {report.version} ({where})")
    print(f"  start-up {report.start_seconds:.1f} s; offers {', '.join(report.offered_tools)}")
    for problem in report.mismatches:
        print(f"  DEFINITION DOES NOT FIT: {problem}")
    for number, step in enumerate(report.steps, 1):
        head = f"  {number:2d}. {step.what} [{step.tool}"
        head += f" -> {step.agent_tool}]" if step.agent_tool else "]"
        if step.not_applicable:
            print(f"{head}: not applicable: {step.not_applicable}")
            continue
        flags = "error" if step.is_error else "ok"
        if step.error_source:
            flags += f" ({step.error_source})"
        if step.dedup:
            flags += ", dedup"
        text = (step.text or "").replace("\n", "\\n")
        print(f"{head} {flags}, {step.seconds or 0:.2f} s: {text[:160]}")
        if step.file_after is not None:
            print(f"      file now {step.file_after[:80]!r}")
    print(
        f"  {report.twelve_turns} of the first twelve steps ran, in {report.twelve_seconds:.2f} s "
        f"of turns; exit {report.exit_seconds:.1f} s; whole run {report.total_seconds:.1f} s; "
        f"{report.side_requests} side requests"
    )
    print(f"  escapes beyond the loopback: {', '.join(report.escapes) or 'none'}")
    if report.failure:
        print(f"  FAILED: {report.failure}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.agent")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the shipped definitions")
    install = commands.add_parser("install", help="install agents into the cache")
    install.add_argument("names", nargs="+", help="definition names, or all")
    trial = commands.add_parser("try", help="run the scripted conversation through an agent")
    trial.add_argument("name")
    trial.add_argument("--json", type=Path, help="also write the report as JSON here")
    trial.add_argument("--no-isolate", action="store_true", help="run outside the namespace")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for name in shipped_definitions():
                definition = load_definition(name)
                where = installed(definition)
                state = "installed" if where.program.exists() else "not installed"
                spec = f"{definition.install.npm}@{definition.install.version}"
                print(f"{name:14} {spec:36} {definition.model_api.dialect:18} {state}")
            return 0
        if args.command == "install":
            names = shipped_definitions() if args.names == ["all"] else args.names
            for name in names:
                agent = ensure_installed(load_definition(name))
                print(f"{name}: {agent.program}")
            return 0
        definition = load_definition(args.name)
        report = run_trial(
            definition, ensure_installed(definition), isolate=False if args.no_isolate else None
        )
        _print_trial(report)
        if args.json:
            args.json.write_text(json.dumps(report.as_json(), indent=2) + "\n", "utf-8")
        return 1 if report.failure else 0
    except ConformanceError as exc:
        print(f"toolconf: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
