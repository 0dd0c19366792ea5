"""How long one whole run takes, serial and with ``--jobs N``: a benchmark, not a test.

Each implementation named with ``--impl`` runs the whole suite (or what the
arguments after ``--`` select) once per ``--jobs`` value, one run at a time,
each through ``python -m conformance run`` in a process of its own; the wall
time of each is recorded, with the machine it ran on and whether its
JSON-lines report is the serial run's apart from the times (it must be)::

    python -m benchmarks.whole_run                                   # direct and stdio
    python -m benchmarks.whole_run --impl claude-code:2.1.88 --jobs 1 --jobs 4
    python -m benchmarks.whole_run --impl direct -- --area read      # a part of the suite

The figures go to ``benchmarks/results/pace/whole-run.json`` (one entry per
implementation and selection, replaced when measured again, the others
kept) and the table beside it, ``whole-run.md``, is written from all of them.
Nothing here asserts a time: the machine is shared, and the figures say so
(its load when each run began).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
RESULTS: Final = ROOT / "benchmarks" / "results" / "pace"
LIMIT: Final = 4 * 3600.0
"""Seconds one run may take before it is stopped (a CLI peer's serial run takes under one)."""
STDIO_REFERENCE: Final = f"stdio:{shlex.quote(sys.executable)} -m reference.adapter"


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, then write the figures and the table; 1 when a report differed from the
    serial one or a run did not finish."""
    args = _parser().parse_args(argv)
    impls = args.impls or ["direct", STDIO_REFERENCE]
    jobs = sorted(set(args.jobs or [1, 2]))
    if 1 not in jobs:
        jobs.insert(0, 1)  # the serial run is what the others are compared with
    entries = _load(args.results)
    status = 0
    for impl in impls:
        entry = _measure(impl, jobs, args.run_args, args.limit)
        status |= not entry["complete"] or not all(m["same_report"] for m in entry["runs"])
        entries = [e for e in entries if _key(e) != _key(entry)] + [entry]
        _save(args.results, entries)
        print(_line(entry), flush=True)
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.whole_run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--impl",
        dest="impls",
        action="append",
        default=[],
        metavar="IMPL",
        help=f"an implementation to time (repeatable; default direct and {STDIO_REFERENCE})",
    )
    parser.add_argument(
        "--jobs",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help="a --jobs value to time (repeatable; default 1 and 2; 1 is always timed)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS / "whole-run.json",
        metavar="FILE",
        help="the figures (the table is written beside it, .md)",
    )
    parser.add_argument(
        "--limit", type=float, default=LIMIT, metavar="S", help="seconds one run may take"
    )
    parser.add_argument(
        "run_args", nargs="*", metavar="-- RUN-ARGS", help="more arguments for toolconf run"
    )
    return parser


def _key(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["impl"], entry["selection"]


def _measure(impl: str, jobs: list[int], run_args: list[str], limit: float) -> dict[str, Any]:
    """Every ``--jobs`` value's run of ``impl``, the serial one first."""
    runs: list[dict[str, Any]] = []
    serial: list[dict[str, Any]] | None = None
    header: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="toolconf-pace-") as work:
        for count in jobs:
            report = Path(work) / f"jobs-{count}.jsonl"
            argv = [sys.executable, "-m", "conformance", "run", "--no-progress", "--impl", impl]
            argv += ["--jobs", str(count), "--report", f"jsonl={report}", *run_args]
            load = os.getloadavg()[0]
            began = time.monotonic()
            try:
                done = subprocess.run(
                    argv, cwd=ROOT, capture_output=True, text=True, timeout=limit, check=False
                )
                finished = done.returncode in (0, 1) and report.is_file()
            except subprocess.TimeoutExpired:
                finished = False
            seconds = time.monotonic() - began
            lines = _records(report) if finished else []
            if lines and count == 1:
                serial, header = lines, json.loads(report.read_text().splitlines()[0])
            runs.append(
                {
                    "jobs": count,
                    "seconds": round(seconds, 1),
                    "load_at_start": round(load, 2),
                    "finished": finished,
                    "same_report": bool(lines) and lines == serial,
                    "counts": lines[-1].get("counts", {}) if lines else {},
                }
            )
    implementation = header.get("implementation", {})
    return {
        "impl": impl.replace(sys.executable, "python"),  # the same key on every machine
        "selection": shlex.join(run_args),
        "implementation": f"{implementation.get('name', '?')} {implementation.get('version', '')}",
        "scenarios": sum(runs[0]["counts"].values()) if runs[0]["counts"] else 0,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "complete": all(r["finished"] for r in runs),
        "runs": runs,
    }


def _records(report: Path) -> list[dict[str, Any]]:
    """A report's lines without what differs from run to run: the times."""
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    for line in lines:
        line.pop("duration", None)
        line.pop("started", None)
    return lines


def _machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores, {platform.platform()}, Python {platform.python_version()}"


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    data = json.loads(path.read_text("utf-8"))
    return list(data.get("entries", [])) if isinstance(data, dict) else []


def _save(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"entries": entries}, indent=1) + "\n", "utf-8")
    path.with_suffix(".md").write_text(_table(entries), "utf-8")


def _minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{seconds:.1f}s"


def _table(entries: list[dict[str, Any]]) -> str:
    jobs = sorted({r["jobs"] for e in entries for r in e["runs"]})
    head = ["implementation", "`--impl`", "selection", "scenarios"]
    head += [("serial" if n == 1 else f"`--jobs {n}`") for n in jobs]
    head += ["fastest ÷ serial", "same report", "date", "machine"]
    rows = [
        "# Whole runs, serial and with `--jobs`",
        "",
        "Wall time of one `toolconf run` each, one run at a time (`python -m "
        "benchmarks.whole_run`); the load average when each began is in `whole-run.json`. "
        "\"Same report\": every `--jobs` run's JSON-lines report is the serial one's but for "
        "its times.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for entry in entries:
        by_jobs = {r["jobs"]: r for r in entry["runs"]}
        times = [
            _minutes(by_jobs[n]["seconds"]) + ("" if by_jobs[n]["finished"] else " (stopped)")
            if n in by_jobs
            else "-"
            for n in jobs
        ]
        finished = [r["seconds"] for r in entry["runs"] if r["finished"]]
        serial = by_jobs.get(1, {}).get("seconds")
        ratio = f"{serial / min(finished):.2f}×" if serial and finished else "-"
        same = "yes" if all(r["same_report"] for r in entry["runs"]) else "NO"
        cells = [entry["implementation"], f"`{entry['impl']}`", entry["selection"] or "whole suite"]
        cells += [str(entry["scenarios"]), *times, ratio, same, entry["date"][:10]]
        cells.append(entry["machine"].split(",")[0])
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def _line(entry: dict[str, Any]) -> str:
    runs = ", ".join(
        f"--jobs {r['jobs']}: {r['seconds']:.1f} s{'' if r['same_report'] else ' (REPORT DIFFERS)'}"
        for r in entry["runs"]
    )
    return f"{entry['impl']}: {entry['scenarios']} scenarios; {runs}"


if __name__ == "__main__":
    sys.exit(main())
