"""The ``toolconf`` command line (also ``python -m conformance``).

Commands:

- ``run [PATHS] [--impl I] [-k PATTERN] [--spec ID] ...``: run scenarios and report;
- ``list [PATHS] [-k PATTERN] [--level L] [--spec ID]``: ids, levels, SPEC IDs, titles;
- ``lint``: check the suite itself (``conformance.analysis.lint``);
- ``summary REPORT...``: the totals of saved JSON-lines reports;
- ``diff A.jsonl B.jsonl [--unspecified FILE]``: which scenarios changed outcome
  between two reports, ID by ID, grouped by SPEC section (``conformance.analysis.release_diff``);
- ``smoke --impl I``: hello, begin, end; say what the implementation is;
- ``mutants [--only NAME] [--list] [--full] [--report markdown]``: every
  mutant against the scenarios citing the SPEC IDs it breaks, and the whole
  suite against those that survive that (``--full``: the whole suite against
  every one); fails unless each is killed by its own IDs.
- ``bench [--impl I]... [--rounds N] [--output-dir DIR]``: what dedup and the
  token gate cost and save, for the reference and each ``--impl`` side by side
  (``conformance.instruments.bench``): JSON, Markdown and a PNG plot.

Exit status: 0 all good; 1 something failed (a scenario outcome of fail,
error, crash, timeout or xpass; a stale expected failure; a lint problem; a
scenario file that does not load); 2 bad usage or an unreadable input file;
3 the implementation could not be started; 5 no scenario selected.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fnmatch
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from conformance.analysis.baseline import (
    Baseline,
    diff_baseline,
    load_baseline,
    merge_baseline,
    save_baseline,
)
from conformance.analysis.console import (
    Progress,
    describe_result,
    format_table,
    level_lines,
    summarize,
    verdict_line,
)
from conformance.analysis.fidelity import (
    fidelity_markdown,
    load_report,
    merge_reports,
    write_jsonl,
)
from conformance.analysis.lint import LintPaths, lint
from conformance.analysis.reports import FORMATS, RunInfo, write_report
from conformance.analysis.spec_lint import reference_profiles, write_annexes
from conformance.errors import AdapterFailure, ConformanceError, ScenarioLoadError
from conformance.instruments.bench.trace import AFTER_EDIT_SHARE, SEED_REREAD_SHARE
from conformance.peers.registry import connect
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.runner import DEFAULT_FIXTURES, HOST_PATHS_REASON, Runner
from conformance.run.xfail import apply_expected_failures, load_expected_failures, unknown_entries
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES, provenance_filter
from conformance.suite.registry import (
    DEFAULT_BEHAVIOURS,
    DEFAULT_CODE,
    DEFAULT_EXCLUDED,
    DEFAULT_FEATURES,
    DEFAULT_SCENARIOS,
    DEFAULT_SPEC,
    DEFAULT_UNCITED,
    load_reasons,
)
from conformance.suite.scenario import RawFilter, Scenario, discover, load_scenarios
from conformance.suite.selection import citing_filter
from conformance.suite.spec import Spec
from conformance.wire.connector import ConnectorOptions
from conformance.wire.profiles import DEFAULT_PROFILE, PROFILE_NAMES
from conformance.wire.protocol import check_ok
from reference.version import __version__

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_NOTHING = 0, 1, 2, 3, 5
_EXTENSIONS = {"junit": "xml", "jsonl": "jsonl", "markdown": "md", "html": "html"}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.command(args)
    except ConformanceError as exc:
        print(f"toolconf: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolconf", description="Tool-system conformance suite.")
    parser.add_argument("--version", action="version", version=f"toolconf {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run scenarios against an implementation")
    _add_selection(run)
    run.add_argument(
        "--spec",
        dest="spec_ids",
        action="append",
        default=[],
        metavar="ID",
        help="only scenarios citing this SPEC ID (exact, or a glob such as 'READ-*'); repeatable",
    )
    run.add_argument(
        "--provenance",
        dest="provenances",
        action="append",
        default=[],
        choices=PROVENANCES,
        help="only scenarios whose SPEC IDs all have this provenance or another given one "
        "(PROTO-PROVENANCE-1; --provenance documented judges the documented contract alone); "
        "repeatable",
    )
    _add_impl(run)
    run.add_argument("--features", help="comma-separated features to assume instead of the hello's")
    run.add_argument(
        "--levels",
        type=_levels,
        default=LEVELS,
        metavar="L,...",
        help="the assertion levels that decide pass or fail: behaviour, identity, rendering "
        "(default all three; the others are still evaluated and reported)",
    )
    run.add_argument(
        "--expected-failures", type=Path, metavar="FILE", help="YAML {scenario-id: reason}"
    )
    run.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default=DEFAULT_PROFILE,
        help="the behaviour profile to judge (PROFILE-RUN-1; default documented): scenarios "
        "not holding under it are not applicable, and begin asks the implementation for it",
    )
    run.add_argument(
        "--report",
        dest="reports",
        action="append",
        default=[],
        type=_report_spec,
        metavar="FORMAT[=PATH]",
        help=f"also write a report: {', '.join(sorted(FORMATS))}; PATH '-' is stdout "
        "(default toolconf-report.EXT, or --output); repeatable",
    )
    run.add_argument(
        "--output",
        metavar="FILE",
        help="where a --report without =PATH goes ('-' for stdout; default toolconf-report.EXT)",
    )
    run.add_argument(
        "--baseline", type=Path, metavar="FILE", help="record outcomes, or compare with them"
    )
    run.add_argument(
        "--update-baseline", action="store_true", help="rewrite an existing baseline with this run"
    )
    run.add_argument(
        "--fixtures", type=Path, default=DEFAULT_FIXTURES, help="what {fixtures} expands to"
    )
    run.add_argument("--keep", action="store_true", help="keep each scenario's sandbox on disk")
    run.add_argument(
        "--host-paths",
        action="store_true",
        help="also run the scenarios aiming at real host paths (/dev/null, ~) when the "
        "implementation is not isolated: one that fails them may harm this host (PROTO-ISOLATE-2)",
    )
    run.add_argument(
        "--no-progress", action="store_true", help="print only the summary, not a line per scenario"
    )
    run.set_defaults(command=_run)

    summary = commands.add_parser(
        "summary", help="the totals of saved JSON-lines reports (toolconf run --report jsonl)"
    )
    summary.add_argument("reports", type=Path, nargs="+", metavar="REPORT")
    summary.set_defaults(command=_summary)

    listing = commands.add_parser("list", help="list scenarios: id, level, SPEC IDs, title")
    _add_selection(listing)
    listing.add_argument("--level", choices=("MUST", "SHOULD", "MAY"))
    listing.add_argument(
        "--spec", metavar="PREFIX", help="only scenarios citing a SPEC ID with this prefix"
    )
    listing.set_defaults(command=_list)

    check = commands.add_parser(
        "lint", help="check scenarios, SPEC coverage, features, exclusions and code citations"
    )
    check.add_argument("--scenarios", type=Path, default=DEFAULT_SCENARIOS)
    check.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    check.add_argument("--features", type=Path, default=DEFAULT_FEATURES)
    check.add_argument("--excluded", type=Path, default=DEFAULT_EXCLUDED)
    check.add_argument("--code", type=Path, default=DEFAULT_CODE, help="the engine's sources")
    check.add_argument("--uncited", type=Path, default=DEFAULT_UNCITED)
    check.add_argument(
        "--strict-spec",
        action="store_true",
        help="hold every SPEC section to the evidence rules, converted or not (SPEC.md 0.2)",
    )
    check.set_defaults(command=_lint)

    fidelity = commands.add_parser(
        "fidelity", help="per SPEC ID and level: agrees / disagrees / not observable, from a report"
    )
    fidelity.add_argument(
        "reports", type=Path, nargs="+", help="JSON-lines reports of one implementation"
    )
    fidelity.add_argument("--jsonl", type=Path, help="also write the merged reports here")
    fidelity.add_argument(
        "--expected-failures",
        type=Path,
        help="say which behaviour disagreements this file's reasons (Decisions) account for",
    )
    fidelity.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    fidelity.add_argument("--output", default="-", help="Markdown file ('-': stdout)")
    fidelity.add_argument("--regenerate", default="", help="command that regenerates it")
    fidelity.set_defaults(command=_fidelity)

    # -- diff: which scenarios changed outcome between two runs (release diffs) --
    release_diff = commands.add_parser(
        "diff", help="which scenarios changed outcome between two JSON-lines reports, by SPEC ID"
    )
    release_diff.add_argument("before", type=Path, help="report A (toolconf run --report jsonl)")
    release_diff.add_argument("after", type=Path, help="report B")
    release_diff.add_argument(
        "--unspecified",
        type=Path,
        metavar="FILE",
        help="YAML list of {title, text, evidence}: B's behaviour SPEC.md has no ID for",
    )
    release_diff.add_argument(
        "--edited",
        metavar="COMMIT..COMMIT",
        help="mark scenarios whose file git says changed in this range (the two runs' suites)",
    )
    release_diff.add_argument(
        "--note", action="append", default=[], help="a sentence for the page; repeatable"
    )
    release_diff.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    release_diff.add_argument("--output", default="-", help="Markdown file ('-': stdout)")
    release_diff.add_argument("--regenerate", default="", help="command that regenerates it")
    release_diff.set_defaults(command=_diff)

    smoke = commands.add_parser("smoke", help="start an implementation, open and close a session")
    _add_impl(smoke)
    smoke.set_defaults(command=_smoke)

    mutants = commands.add_parser(
        "mutants",
        help="run each mutant where it breaks first (the scenarios citing its SPEC IDs), "
        "then the whole suite if it survives; fail unless each is killed by its own IDs",
    )
    mutants.add_argument("--only", action="append", default=[], metavar="NAME", help="repeatable")
    mutants.add_argument("--list", action="store_true", help="list the mutants and exit")
    mutants.add_argument(
        "--full",
        action="store_true",
        help="audit: the whole suite against every mutant, in a process each (slow)",
    )
    mutants.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    mutants.add_argument("--report", choices=("markdown",), help="also write a report")
    mutants.add_argument("--output", metavar="FILE", help="report file (toolconf-mutants.md)")
    mutants.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help="scenarios the control may fail (default conformance/known-engine-bugs.yaml)",
    )
    mutants.set_defaults(command=_mutants)

    bench = commands.add_parser(
        "bench", help="measure dedup and the token gate through protocol v1, side by side"
    )
    bench.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="I",
        help="an implementation to measure beside the reference (repeatable): stdio:COMMAND | "
        "direct[:MODULE:FACTORY] | mutant:NAME; LABEL=I names it in the report",
    )
    bench.add_argument(
        "--no-reference", action="store_true", help="measure only the --impl implementations"
    )
    bench.add_argument("--rounds", type=int, default=15, help="timed calls per figure (default 15)")
    bench.add_argument("--reads", type=int, default=1000, help="Reads in the trace (default 1000)")
    bench.add_argument("--seed", type=int, default=0, help="the trace's seed (default 0)")
    bench.add_argument(
        "--reread-share",
        type=float,
        default=SEED_REREAD_SHARE,
        help="share of the trace's Reads that re-read (default 0.18, seed 000's figure)",
    )
    bench.add_argument(
        "--after-edit-share",
        type=float,
        default=AFTER_EDIT_SHARE,
        help="share of re-reads that follow an Edit of the file (default 0.3)",
    )
    bench.add_argument(
        "--output-dir",
        type=Path,
        default=Path("toolconf-bench"),
        help="where bench.json, bench.md and bench.png go (default ./toolconf-bench)",
    )
    bench.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per request (default 60)"
    )
    bench.set_defaults(command=_bench)

    stress = commands.add_parser(
        "stress",
        help="attack an implementation: SIGKILL during writes, a protocol fuzzer, hostile "
        "files, permission bypasses (PROTO-STRESS-1)",
    )
    stress.add_argument(
        "--impl",
        default=None,
        help="stdio:COMMAND | mutant:NAME (default: the reference adapter with this Python)",
    )
    stress.add_argument("--only", metavar="C,...", help="classes: kills, fuzz, hostile, bypass")
    stress.add_argument(
        "--full", action="store_true", help="the full counts: 1,000 kills, 10,000 lines, 4 MB files"
    )
    stress.add_argument("--seed", type=int, help="the seed of every random choice (default 12)")
    stress.add_argument("--kills", type=int, help="SIGKILLs during Write and Edit (default 6)")
    stress.add_argument("--file-mb", type=float, help="size of each killed file (default 1)")
    stress.add_argument("--lines", type=int, help="fuzz lines (default 300)")
    stress.add_argument("--line-timeout", type=float, help="seconds per fuzz line (default 5)")
    stress.add_argument(
        "--big-line-mb", type=float, help="the hostile one-line file's size (default 20)"
    )
    stress.add_argument("--slow", type=float, help="a hostile item over this is slow (default 2)")
    stress.add_argument("--timeout", type=float, help="seconds per request (default 5)")
    stress.add_argument("--race-rounds", type=int, help="cap on each race case's rounds")
    stress.add_argument("--cases", type=Path, help="bypass cases YAML (default bypass-cases.yaml)")
    stress.add_argument(
        "--json", type=Path, default=Path("toolconf-stress.json"), help="the figures file"
    )
    stress.add_argument("--isolation", choices=("auto", "on", "off"), default="auto")
    stress.add_argument("--pass-env", action="append", default=[], metavar="NAME")
    stress.set_defaults(command=_stress)
    _add_matrix(commands)
    _add_spec(commands)
    return parser


def _report_spec(text: str) -> tuple[str, str | None]:
    """``FORMAT`` or ``FORMAT=PATH`` -> (format, path or None)."""
    fmt, sep, path = text.partition("=")
    if fmt not in FORMATS:
        raise argparse.ArgumentTypeError(
            f"unknown report format {fmt!r}; choose from {', '.join(sorted(FORMATS))}"
        )
    if sep and not path:
        raise argparse.ArgumentTypeError(f"--report {text}: empty path")
    return fmt, path if sep else None


def _report_paths(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Each requested report's format and destination; ``--output`` serves those without one."""
    chosen: list[tuple[str, str]] = []
    for fmt, path in args.reports:
        chosen.append((fmt, path or args.output or f"toolconf-report.{_EXTENSIONS[fmt]}"))
    return chosen


def _stress(args: argparse.Namespace) -> int:
    from conformance.instruments.reliability.common import DEFAULT_IMPL  # noqa: PLC0415
    from conformance.instruments.reliability.stress import config_from, run_stress  # noqa: PLC0415

    args.impl = args.impl or DEFAULT_IMPL
    try:
        config = config_from(args, full=args.full)
    except ValueError as exc:
        print(f"stress: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return run_stress(config, sys.stdout, args.json)


def _levels(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    unknown = [level for level in chosen if level not in LEVELS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown level {', '.join(unknown) or '(none)'}; choose from {', '.join(LEVELS)}"
        )
    return chosen


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=f"scenario files or directories (default {DEFAULT_SCENARIOS})",
    )
    parser.add_argument(
        "-k",
        "--id",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only ids containing PATTERN, or matching it as a glob; repeatable",
    )


def _add_impl(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--impl", default="direct", help="direct | stdio:COMMAND | mutant:NAME (default direct)"
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per request (default 10)"
    )
    parser.add_argument(
        "--isolation",
        choices=("auto", "on", "off"),
        default="auto",
        help="run adapter processes in namespaces of their own (PROTO-ISOLATE-1): auto (when "
        "the host permits, the default), on (refuse to run without), off",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable of this environment the adapter inherits beyond the allowlist "
        "(PROTO-ENV-1); repeatable",
    )


def _options(args: argparse.Namespace) -> ConnectorOptions:
    """The connector options of ``_add_impl``'s arguments."""
    return ConnectorOptions(
        timeout=args.timeout,
        hello_timeout=max(args.timeout, 30.0),
        isolation=args.isolation,
        pass_env=tuple(args.pass_env),
    )


def _selected(scenario_id: str, patterns: Sequence[str]) -> bool:
    if not patterns:
        return True
    return any(
        fnmatch.fnmatchcase(scenario_id, p) if any(c in p for c in "*?[") else p in scenario_id
        for p in patterns
    )


def _load(
    args: argparse.Namespace,
    spec_ids: Sequence[str] = (),
    provenance: RawFilter | None = None,
) -> tuple[list[Scenario], list[ScenarioLoadError]]:
    paths: list[Path] = args.paths or [DEFAULT_SCENARIOS]
    root = paths[0] if len(paths) == 1 and paths[0].is_dir() else DEFAULT_SCENARIOS
    for path in paths:
        if not path.exists():
            raise ConformanceError(f"no such file or directory: {path}")
    # Ids equal file stems, so -k picks files before any is parsed; --spec and
    # --provenance pick them after parsing, before validation (which costs the most).
    files = [p for p in discover(paths) if _selected(p.stem, args.patterns)]
    filters = [f for f in (citing_filter(spec_ids) if spec_ids else None, provenance) if f]

    def every(data: object) -> bool:
        return all(f(data) for f in filters)

    return load_scenarios(files, root=root, keep=every if filters else None)


def _provenances() -> dict[str, str]:
    """SPEC ID -> its provenance, from the shipped SPEC.md's evidence (none without it)."""
    return dict(Spec.load(DEFAULT_SPEC).provenances()) if DEFAULT_SPEC.is_file() else {}


def _load_error_result(error: ScenarioLoadError) -> ScenarioResult:
    path = Path(error.path)
    return ScenarioResult(
        id=path.stem,
        outcome=Outcome.ERROR,
        area=path.parent.name,
        path=error.path,
        kind="scenario",
        where="load",
        message=str(error),
    )


# -- run ----------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    provenances = _provenances()
    chosen = tuple(p for p in PROVENANCES if p in args.provenances)
    if chosen and not provenances:
        raise ConformanceError("--provenance: SPEC.md's evidence gives no provenances")
    keep = provenance_filter(chosen, provenances) if chosen else None
    scenarios, load_errors = _load(args, args.spec_ids, keep)
    reports = _report_paths(args)
    if len({path for _, path in reports}) < len(reports):
        raise ConformanceError("two --report options write the same file")
    console = sys.stderr if any(path == "-" for _, path in reports) else sys.stdout
    if not scenarios and not load_errors:
        print("toolconf: no scenarios selected", file=console)
        return EXIT_NOTHING
    expected = load_expected_failures(args.expected_failures) if args.expected_failures else {}
    baseline = load_baseline(args.baseline) if args.baseline and args.baseline.exists() else None
    features = None if args.features is None else [f for f in args.features.split(",") if f.strip()]
    runner = Runner(
        connect(args.impl, _options(args)),
        features=features,
        fixtures=args.fixtures,
        keep=args.keep,
        levels=args.levels,
        host_paths=args.host_paths,
        profile=args.profile,
    )
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    try:
        hello = runner.start()
    except AdapterFailure as exc:
        print(f"toolconf: cannot start {args.impl}: [{exc.kind}] {exc}", file=sys.stderr)
        if stderr := runner.connector.take_stderr().strip():
            print(stderr, file=sys.stderr)
        return EXIT_UNAVAILABLE
    print(
        f"toolconf {__version__}: {hello.name} via {args.impl}, {len(scenarios)} scenarios",
        file=console,
    )
    for line in _hello_lines(hello.unreported, hello.inferences, args.levels):
        print(line, file=console)
    for line in _profile_lines(args.profile, hello.profiles):
        print(line, file=console)
    if chosen:
        print(
            f"judging the scenarios whose SPEC IDs are each {' or '.join(chosen)} "
            "(PROTO-PROVENANCE-1)",
            file=console,
        )
    results = [_load_error_result(e) for e in load_errors]
    progress = Progress(len(scenarios), console, quiet=args.no_progress)
    try:
        for raw in runner.run_all(scenarios):
            result = apply_expected_failures(raw, expected)
            results.append(result)
            progress.update(result)
    finally:
        progress.finish()
        features_used = sorted(runner.features)
        runner.close()

    status = _print_summary(results, console, provenances)
    skipped = [r.id for r in results if r.reason.startswith(HOST_PATHS_REASON)]
    if skipped:  # PROTO-ISOLATE-2: loudly
        print(
            f"\nWARNING: {len(skipped)} scenarios aiming at real host paths were skipped: "
            f"{args.impl} is not isolated (in-process connectors never are; adapter processes "
            "are isolated with Linux and unshare, PROTO-ISOLATE-1). "
            f"--host-paths runs them anyway, at the host's risk: {', '.join(skipped)}",
            file=console,
        )
    for line in _hello_lines(hello.unreported, hello.inferences, args.levels):
        print(line, file=console)
    # Ids equal file stems, so every scenario that exists is known without loading it.
    roots = [p for p in [DEFAULT_SCENARIOS, *args.paths] if p.exists()]
    stale = unknown_entries(expected, [p.stem for p in discover(roots)])
    if stale:
        print(f"stale expected failures (no such scenario): {', '.join(stale)}", file=console)
        status = EXIT_FAILED
    if args.keep:
        for result in results:
            if result.kept:
                print(f"kept {result.id}: {result.kept}", file=console)
    if reports:
        info = RunInfo(
            impl=args.impl,
            implementation=hello.implementation,
            features=features_used,
            started=started,
            unreported=sorted(hello.unreported),
            inferences=hello.inferences,
            levels=args.levels,
            sections=Spec.load(DEFAULT_SPEC).section_labels() if DEFAULT_SPEC.is_file() else {},
            profile=args.profile,
            plays=hello.profiles,
            provenances=provenances,
            selected=chosen or PROVENANCES,
        )
        for fmt, path in reports:
            with _open_output(path) as out:
                write_report(fmt, results, info, out)
            if path != "-":
                print(f"report ({fmt}): {path}", file=console)
    if args.baseline:
        _baseline(
            args.baseline,
            baseline=baseline,
            results=results,
            implementation=dict(hello.implementation),
            update=args.update_baseline,
            console=console,
        )
    return status


def _print_summary(
    results: list[ScenarioResult], console: TextIO, provenances: Mapping[str, str]
) -> int:
    bad = [r for r in results if r.bad]
    differing = [r for r in results if r.outcome is Outcome.PASS and r.mismatches]
    for result in differing + [r for r in results if r.outcome is Outcome.XFAIL] + bad:
        print("\n" + describe_result(result), file=console)
    print("\n" + format_table("level", summarize(results, lambda r: r.level)), file=console)
    print("\n" + format_table("area", summarize(results, lambda r: r.area)), file=console)
    print("\n" + "\n".join(level_lines(results, provenances)), file=console)
    print("\n" + verdict_line(results), file=console)
    return EXIT_FAILED if bad else EXIT_OK


def _hello_lines(
    unreported: Iterable[str], inferences: Sequence[Mapping[str, Any]], levels: Sequence[str]
) -> list[str]:
    """What the run's judgement rests on besides the scenarios: levels, unreported, inferences."""
    lines = []
    if tuple(levels) != LEVELS:
        lines.append(f"deciding levels: {', '.join(levels)} (the others are reported only)")
    if unreported:
        lines.append(f"not reported by the implementation: {', '.join(sorted(unreported))}")
    for inference in inferences:
        lines.append(
            f"inferred: {inference.get('field')} from {inference.get('from')} "
            f"through {inference.get('table')}"
        )
    return lines


def _profile_lines(profile: str, plays: Sequence[str]) -> list[str]:
    """PROFILE-RUN-1: the profile judged, when it is not the default or not one played."""
    if profile == DEFAULT_PROFILE and profile in plays:
        return []
    if profile in plays:
        return [f"profile: {profile} (played by the implementation)"]
    return [
        f"profile: {profile}, which the implementation does not claim to play "
        f"(it plays {', '.join(plays)}): a measurement, not an agreement run"
    ]


@contextlib.contextmanager
def _open_output(name: str) -> Iterator[TextIO]:
    if name == "-":
        yield sys.stdout
        return
    with open(name, "w", encoding="utf-8") as handle:
        yield handle


def _baseline(
    path: Path,
    *,
    baseline: Baseline | None,
    results: list[ScenarioResult],
    implementation: dict[str, object],
    update: bool,
    console: TextIO,
) -> None:
    if baseline is None:
        save_baseline(path, merge_baseline(Baseline(), results), implementation)
        print(f"baseline recorded: {path} ({len(results)} scenarios)", file=console)
        return
    changes = diff_baseline(baseline, results)
    if not changes:
        print(f"baseline {path}: no changes", file=console)
    else:
        print(f"baseline {path}: {len(changes)} changed", file=console)
        for change in changes:
            print(f"  {change}", file=console)
        spec_ids = sorted({s for c in changes for s in c.spec})
        if spec_ids:
            print(f"  SPEC IDs affected: {', '.join(spec_ids)}", file=console)
    if update:
        save_baseline(path, merge_baseline(baseline, results), implementation)
        print(f"baseline updated: {path}", file=console)
    elif changes:
        print("  (use --update-baseline to record them)", file=console)


# -- list, lint, smoke ----------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    scenarios, errors = _load(args)
    for error in errors:
        print(error, file=sys.stderr)
    chosen = [
        s
        for s in scenarios
        if (args.level is None or s.level == args.level)
        and (args.spec is None or any(spec_id.startswith(args.spec) for spec_id in s.spec))
    ]
    for s in chosen:
        print(f"{s.area}/{s.id}\t{s.level}\t{','.join(s.spec)}\t{s.title}")
    return EXIT_FAILED if errors else EXIT_OK


def _summary(args: argparse.Namespace) -> int:
    """Per report and, for several, all together: outcome counts by area and level figures."""
    everything: list[ScenarioResult] = []
    for path in args.reports:
        if not path.is_file():
            raise ConformanceError(f"no such report: {path}")
        try:
            report = load_report(path)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConformanceError(f"{path}: not a JSON-lines report: {exc}") from exc
        results = [ScenarioResult.from_json(r) for r in report.results]
        everything += results
        implementation = report.header.get("implementation", {})
        name = f"{implementation.get('name', '?')} {implementation.get('version', '')}".strip()
        started = report.header.get("started", "")
        print(f"== {path}: {name} via {report.header.get('impl', '?')}, {started}")
        _print_totals(results)
    if len(args.reports) > 1:
        print(f"== all {len(args.reports)} reports")
        _print_totals(everything)
    return EXIT_FAILED if any(r.bad for r in everything) else EXIT_OK


def _print_totals(results: list[ScenarioResult]) -> None:
    print(format_table("area", summarize(results, lambda r: r.area)))
    print("\n".join(level_lines(results, _provenances())))
    bad = sum(r.bad for r in results)
    print(f"{'FAILED' if bad else 'OK'}: {bad} of {len(results)} scenarios not passing\n")


def _fidelity(args: argparse.Namespace) -> int:
    report = merge_reports([load_report(path) for path in args.reports])
    if args.jsonl:
        with args.jsonl.open("w", encoding="utf-8") as out:
            write_jsonl(report, out)
    started = str(report.header.get("started", ""))[:10] or "unknown date"
    command = args.regenerate or f"toolconf run --impl {report.header.get('impl', '?')}"
    if not args.regenerate and report.header.get("profile", DEFAULT_PROFILE) != DEFAULT_PROFILE:
        command += f" --profile {report.header['profile']}"  # PROFILE-RUN-1
    expected = None
    if args.expected_failures:
        expected, _, problems = load_reasons(args.expected_failures, "expected failures")
        if problems:
            raise ConformanceError("; ".join(str(p) for p in problems))
    page = fidelity_markdown(
        report, Spec.load(args.spec), command=command, date=started, expected=expected
    )
    with _open_output(args.output) as out:
        out.write(page)
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    """``toolconf diff A B``: the release-diff page (``conformance.analysis.release_diff``)."""
    from conformance.analysis.release_diff import diff_markdown, load_unspecified  # noqa: PLC0415

    for path in (args.before, args.after):
        if not path.is_file():
            raise ConformanceError(f"no such report: {path}")
    unspecified = load_unspecified(args.unspecified) if args.unspecified else []
    command = args.regenerate or _diff_command(args)
    page = diff_markdown(
        load_report(args.before),
        load_report(args.after),
        Spec.load(args.spec),
        command=command,
        unspecified=unspecified,
        edited=_edited_scenarios(args.edited) if args.edited else frozenset(),
        notes=args.note,
    )
    with _open_output(args.output) as out:
        out.write(page)
    return EXIT_OK


def _diff_command(args: argparse.Namespace) -> str:
    """The ``diff`` command line that makes this very page (for its ``regenerate`` line)."""
    import shlex  # noqa: PLC0415

    words = ["python", "-m", "conformance", "diff", str(args.before), str(args.after)]
    if args.unspecified:
        words += ["--unspecified", str(args.unspecified)]
    if args.edited:
        words += ["--edited", args.edited]
    for note in args.note:
        words += ["--note", note]
    if args.output != "-":
        words += ["--output", args.output]
    return shlex.join(words)


def _edited_scenarios(commits: str) -> frozenset[str]:
    """Ids of the scenario files ``git diff --name-only COMMITS`` names (a range, or one
    commit to the work tree)."""
    import subprocess  # noqa: PLC0415

    try:
        done = subprocess.run(
            ["git", "diff", "--name-only", commits, "--", str(DEFAULT_SCENARIOS)],
            capture_output=True,
            text=True,
            check=True,
            cwd=DEFAULT_SCENARIOS,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ConformanceError(f"--edited {commits}: git diff failed: {exc}") from exc
    return frozenset(Path(line).stem for line in done.stdout.splitlines() if line.endswith(".yaml"))


def _lint(args: argparse.Namespace) -> int:
    problems = lint(
        LintPaths(
            scenarios=args.scenarios,
            spec=args.spec,
            features=args.features,
            excluded=args.excluded,
            code=args.code,
            uncited=args.uncited,
        ),
        strict_spec=True if args.strict_spec else None,
    )
    for problem in problems:
        print(problem)
    if problems:
        print(f"lint: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
        return EXIT_FAILED
    print("lint: ok")
    return EXIT_OK


def _mutants(args: argparse.Namespace) -> int:
    from conformance.instruments.mutants import orchestrate  # noqa: PLC0415  (imports the engine)

    if args.expected_failures is None and orchestrate.KNOWN_ENGINE_BUGS.is_file():
        args.expected_failures = orchestrate.KNOWN_ENGINE_BUGS
    return orchestrate.run_mutants(args)


def _smoke(args: argparse.Namespace) -> int:
    connector = connect(args.impl, _options(args))
    try:
        hello = connector.start()
        with tempfile.TemporaryDirectory(prefix="toolconf-smoke-") as base:
            root = Path(base, "root")
            session_dir = Path(base, "session")
            root.mkdir()
            session_dir.mkdir()
            session = {
                "root": str(root),
                "cwd": str(root),
                "env": {"HOME": str(root)},
                "settings": {},
                "prompt": "deny",
                "test_tools": False,
                "session_dir": str(session_dir),
            }
            check_ok(connector.request({"cmd": "begin", "session": session}), "begin")
            check_ok(connector.request({"cmd": "end"}), "end")
    except AdapterFailure as exc:
        print(f"smoke: {args.impl} is not usable: [{exc.kind}] {exc}")
        if stderr := connector.take_stderr().strip():
            print(stderr)
        connector.close()
        return EXIT_UNAVAILABLE
    connector.close()
    language = hello.implementation.get("language", "?")
    print(f"smoke: ok: {hello.name} ({language}), protocol {hello.protocol}")
    print(f"features: {', '.join(sorted(hello.features)) or 'none'}")
    return EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    # Deferred: the bench modules and Pillow (the plot) cost every other command.
    from conformance.instruments.bench import report as bench_report  # noqa: PLC0415
    from conformance.instruments.bench.run import REFERENCE_LABEL, bench, reference_spec  # noqa: PLC0415

    specs: list[tuple[str, str]] = (
        [] if args.no_reference else [(REFERENCE_LABEL, reference_spec())]
    )
    for index, given in enumerate(args.impl, 1):
        label, sep, spec = given.partition("=")
        if not sep or ":" in label or not label:
            label, spec = f"impl-{index}", given
        specs.append((label, spec))
    if not specs:
        print("bench: nothing to measure (--no-reference without --impl)", file=sys.stderr)
        return EXIT_USAGE
    if args.rounds < 1 or args.reads < 2:
        print("bench: --rounds must be at least 1 and --reads at least 2", file=sys.stderr)
        return EXIT_USAGE
    if not (0 <= args.reread_share < 1 and 0 <= args.after_edit_share <= 1):
        print(
            "bench: --reread-share must lie in [0, 1), --after-edit-share in [0, 1]",
            file=sys.stderr,
        )
        return EXIT_USAGE
    run = bench(
        specs,
        rounds=args.rounds,
        reads=args.reads,
        seed=args.seed,
        reread_share=args.reread_share,
        after_edit_share=args.after_edit_share,
        timeout=args.timeout,
    )
    args.output_dir.mkdir(parents=True, exist_ok=True)
    markdown = bench_report.to_markdown(run)
    (args.output_dir / "bench.json").write_text(bench_report.to_json(run), encoding="utf-8")
    (args.output_dir / "bench.md").write_text(markdown, encoding="utf-8")
    (args.output_dir / "bench.png").write_bytes(bench_report.to_png(run))
    print(markdown)
    print(f"bench: wrote bench.json, bench.md and bench.png to {args.output_dir}")
    failed = [impl for impl in run.implementations if impl.failure]
    return EXIT_UNAVAILABLE if failed else EXIT_OK


# -- toolconf matrix (conformance/analysis/matrix.py) ----------------------------------


def _add_matrix(commands: Any) -> None:
    """The ``matrix`` subcommand: reports side by side, per behaviour and per SPEC section."""
    matrix = commands.add_parser(
        "matrix",
        help="implementations x behaviours (kept / partly / not kept / differs / n/a) and x SPEC "
        "sections, as Markdown and self-contained HTML, from JSON-lines reports",
    )
    matrix.add_argument("reports", type=Path, nargs="+", help="JSON-lines reports, one column each")
    matrix.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    matrix.add_argument(
        "--behaviours",
        type=Path,
        default=DEFAULT_BEHAVIOURS,
        help="the behaviour table's data (default the shipped behaviours.yaml)",
    )
    matrix.add_argument(
        "--output-dir", type=Path, default=Path("."), help="where matrix.md and matrix.html go"
    )
    matrix.add_argument(
        "--readme",
        type=Path,
        help="also rewrite the behaviour table between its markers in this README",
    )
    matrix.add_argument("--date", default="", help="the date the page names (default: today)")
    matrix.add_argument("--regenerate", default="", help="the command that regenerates it")
    matrix.set_defaults(command=_matrix)


def _matrix(args: argparse.Namespace) -> int:
    from conformance.analysis.matrix_pages import (  # noqa: PLC0415  (only this command)
        matrix_pages,
        replace_block,
    )

    out = args.output_dir
    link = os.path.relpath(out / "matrix.md", args.readme.resolve().parent if args.readme else out)
    pages = matrix_pages(
        args.reports,
        spec=args.spec,
        behaviours=args.behaviours,
        date=args.date or datetime.date.today().isoformat(),
        command=args.regenerate,
        readme_link=link,
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.md").write_text(pages.markdown, encoding="utf-8")
    (out / "matrix.html").write_text(pages.html, encoding="utf-8")
    for line in pages.summary():
        print(line)
    print(f"matrix: wrote matrix.md and matrix.html to {out}")
    if args.readme:
        text = args.readme.read_text("utf-8")
        args.readme.write_text(replace_block(text, pages.readme), encoding="utf-8")
        print(f"matrix: rewrote the behaviour table in {args.readme}")
    return EXIT_OK


def _add_spec(commands: Any) -> None:
    """The ``spec`` subcommand: SPEC.md's generated parts."""
    spec = commands.add_parser("spec", help="SPEC.md's generated parts (the profile annexes)")
    parts = spec.add_subparsers(required=True, metavar="PART")
    annexes = parts.add_parser(
        "annexes",
        help="rewrite spec/annex-PROFILE.md from reference/profiles.py and the evidence",
    )
    annexes.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    annexes.set_defaults(command=_spec_annexes)


def _spec_annexes(args: argparse.Namespace) -> int:
    """SPEC.md 0.5: one annex per profile, written beside SPEC.md; lists those that changed."""
    changed = write_annexes(Spec.load(args.spec), reference_profiles())
    for path in changed:
        print(f"wrote {path}")
    print(f"spec annexes: {len(changed)} changed")
    return EXIT_OK
