"""The ``toolconf`` command line (also ``python -m conformance``).

Commands:

- ``run [PATHS] [--impl I] [selection] [--report FORMAT[=PATH]] ...``: run
  scenarios and report (``conformance.commands.run``);
- ``list [PATHS] [selection]``: ids, levels, SPEC IDs, titles;
- ``lint``: check the suite itself (``conformance.analysis.lint``);
- ``summary REPORT...``: saved JSON-lines reports, each on its own, then side by side;
- ``merge REPORT... [--report FORMAT[=PATH]]``: the JSON-lines reports of a run's
  shards (``run --shard K/N``) as the whole run's report (``conformance.commands.merge``);
- ``diff A.jsonl B.jsonl [--unspecified FILE]``: which scenarios changed outcome
  between two reports, ID by ID, grouped by SPEC section (``conformance.analysis.release_diff``);
- ``smoke --impl I``: hello, begin, end; say what the implementation is;
- ``mutants [--only NAME] [--spec ID] [--list] [--full] [--report markdown]``:
  every mutant against the scenarios citing the SPEC IDs it breaks, and the
  whole suite against those that survive that (``--full``: the whole suite
  against every one); fails unless each is killed by its own IDs.
- ``bench [--impl I]... [--rounds N] [--report FORMAT[=PATH]]``: what dedup and
  the token gate cost and save, for the reference and each ``--impl`` side by
  side (``conformance.instruments.bench``): JSON, Markdown and a PNG plot.
  ``--costs``: what each implementation's model receives from its tools
  (``conformance.instruments.bench.costs``), agents included; ``--from`` merges
  and renders saved ``--costs`` JSON reports.
- ``stress``, ``fidelity``, ``matrix``: attacks, agreement per SPEC ID, and
  implementations side by side.

Options mean the same in every command (``conformance.commands.options``).

Exit status: 0 all good; 1 something failed (a scenario outcome of fail,
error, crash, timeout or xpass; a stale expected failure; a lint problem; a
scenario file that does not load); 2 bad usage or an unreadable input file;
3 the implementation could not be started; 5 no scenario selected.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from conformance.analysis.fidelity import (
    fidelity_markdown,
    load_report,
    merge_reports,
    write_jsonl,
)
from conformance.analysis.lint import LintPaths, lint
from conformance.analysis.spec_lint import reference_profiles, write_annexes
from conformance.commands.merge import MERGE_REPORTS, merge_command
from conformance.commands.options import (
    ReportFormats,
    add_impl,
    add_jobs,
    add_report,
    add_selection,
    add_spec_file,
    assertion_levels,
    chosen_reports,
    connector_options,
    deprecated,
    feature_list,
    impl_help,
    spec_pattern,
)
from conformance.commands.run import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    RUN_REPORTS,
    open_output,
    run_command,
)
from conformance.commands.select import select
from conformance.commands.summary import summary_command
from conformance.errors import AdapterFailure, ConformanceError
from conformance.instruments.bench.trace import (
    AFTER_EDIT_SHARE,
    COSTS_READS,
    SEED_REREAD_SHARE,
)
from conformance.interrupts import ended_by_signals
from conformance.peers.registry import connect
from conformance.suite.checks import LEVELS
from conformance.suite.registry import (
    DEFAULT_BEHAVIOURS,
    DEFAULT_CODE,
    DEFAULT_EXCLUDED,
    DEFAULT_FEATURES,
    DEFAULT_FIXTURES,
    DEFAULT_SCENARIOS,
    DEFAULT_SPEC,
    DEFAULT_UNCITED,
    load_reasons,
)
from conformance.suite.spec import Spec
from conformance.wire.profiles import DEFAULT_PROFILE, PROFILE_NAMES
from conformance.wire.protocol import check_ok
from reference.version import __version__

__all__ = ["main"]

_EXPECTED_FAILURES_HELP = (
    "the implementation's expected failures, YAML {scenario-id: reason}; strict: a listed "
    "scenario that passes fails the run"
)
_MARKDOWN_ON_STDOUT = ReportFormats({"markdown": "-"}, always=("markdown",))


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with ended_by_signals():
            status: int = args.command(args)
    except ConformanceError as exc:
        print(f"toolconf: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolconf", description="Tool-system conformance suite.")
    parser.add_argument("--version", action="version", version=f"toolconf {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    _add_run(commands)
    _add_summary(commands)
    _add_merge(commands)
    _add_list(commands)
    _add_lint(commands)
    _add_fidelity(commands)
    _add_diff(commands)
    smoke = commands.add_parser("smoke", help="start an implementation, open and close a session")
    add_impl(smoke)
    smoke.set_defaults(command=_smoke)
    _add_mutants(commands)
    _add_bench(commands)
    _add_stress(commands)
    _add_matrix(commands)
    _add_spec(commands)
    return parser


def _add_run(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="run scenarios against an implementation")
    add_selection(run, run=True)
    add_impl(run)
    add_jobs(run)
    run.add_argument(
        "--features",
        type=feature_list,
        metavar="F,...",
        help="judge as if hello declared these features, instead of its own (--feature "
        "selects scenarios)",
    )
    run.add_argument(
        "--levels",
        type=assertion_levels,
        default=LEVELS,
        metavar="L,...",
        help="the assertion levels that decide pass or fail: behaviour, identity, rendering "
        "(default all three; the others are still evaluated and reported; --level selects "
        "by requirement level)",
    )
    run.add_argument("--expected-failures", type=Path, metavar="FILE", help=_EXPECTED_FAILURES_HELP)
    run.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default=DEFAULT_PROFILE,
        help="the behaviour profile to judge (PROFILE-RUN-1; default documented): scenarios "
        "not holding under it are not applicable, and begin asks the implementation for it",
    )
    add_report(run, RUN_REPORTS)
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
    run.set_defaults(command=run_command)


def _add_summary(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summary = commands.add_parser(
        "summary",
        help="saved JSON-lines reports (toolconf run --report jsonl), each on its own, then "
        "side by side",
    )
    summary.add_argument("reports", type=Path, nargs="+", metavar="REPORT")
    add_spec_file(summary, DEFAULT_SPEC)
    summary.set_defaults(command=summary_command)


def _add_merge(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    merge = commands.add_parser(
        "merge",
        help="the JSON-lines reports of a run's shards (run --shard K/N) as the whole run's "
        "report; refuses reports of different runs, overlapping or missing shards",
    )
    merge.add_argument(
        "reports",
        type=Path,
        nargs="+",
        metavar="REPORT",
        help="the JSON-lines reports of a run's shards (run --shard K/N --report jsonl=...)",
    )
    add_report(merge, MERGE_REPORTS, output_dir=False)
    merge.set_defaults(command=merge_command)


def _add_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser("list", help="list scenarios: id, level, SPEC IDs, title")
    add_selection(listing)
    listing.set_defaults(command=_list)


def _add_lint(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "lint", help="check scenarios, SPEC coverage, features, exclusions and code citations"
    )
    check.add_argument("--scenarios", type=Path, default=DEFAULT_SCENARIOS, metavar="DIR")
    add_spec_file(check, DEFAULT_SPEC)
    check.add_argument(
        "--features-file",
        type=Path,
        default=DEFAULT_FEATURES,
        metavar="FILE",
        help="the feature registry",
    )
    deprecated(check, "--features", dest="features_file", type=Path, instead="--features-file")
    check.add_argument("--excluded", type=Path, default=DEFAULT_EXCLUDED, metavar="FILE")
    check.add_argument(
        "--code", type=Path, default=DEFAULT_CODE, metavar="DIR", help="the engine's sources"
    )
    check.add_argument("--uncited", type=Path, default=DEFAULT_UNCITED, metavar="FILE")
    check.add_argument(
        "--strict-spec",
        action="store_true",
        help="hold every SPEC section to the evidence rules, converted or not (SPEC.md 0.2)",
    )
    check.set_defaults(command=_lint)


def _add_fidelity(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fidelity = commands.add_parser(
        "fidelity", help="per SPEC ID and level: agrees / disagrees / not observable, from a report"
    )
    fidelity.add_argument(
        "reports", type=Path, nargs="+", help="JSON-lines reports of one implementation"
    )
    add_report(
        fidelity,
        ReportFormats(
            {"markdown": "-", "jsonl": "toolconf-merged.jsonl"},
            always=("markdown",),
            notes={"jsonl": "the reports merged"},
        ),
        output_dir=False,
    )
    deprecated(fidelity, "--jsonl", dest="jsonl", instead="--report jsonl=PATH", append_as="jsonl")
    fidelity.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help=_EXPECTED_FAILURES_HELP + "; here their reasons mark the disagreements they explain",
    )
    add_spec_file(fidelity, DEFAULT_SPEC)
    fidelity.add_argument("--regenerate", default="", help="command that regenerates it")
    fidelity.set_defaults(command=_fidelity)


def _add_diff(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    add_spec_file(release_diff, DEFAULT_SPEC)
    add_report(release_diff, _MARKDOWN_ON_STDOUT, output_dir=False)
    release_diff.add_argument("--regenerate", default="", help="command that regenerates it")
    release_diff.set_defaults(command=_diff)


def _add_mutants(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mutants = commands.add_parser(
        "mutants",
        help="run each mutant where it breaks first (the scenarios citing its SPEC IDs), "
        "then the whole suite if it survives; fail unless each is killed by its own IDs",
    )
    mutants.add_argument("--only", action="append", default=[], metavar="NAME", help="repeatable")
    mutants.add_argument(
        "--spec",
        dest="spec_ids",
        action="append",
        default=[],
        type=spec_pattern,
        metavar="ID",
        help="only the mutants breaking a SPEC ID this matches (ID, prefix or glob, as in "
        "run); repeatable",
    )
    mutants.add_argument("--list", action="store_true", help="list the mutants and exit")
    mutants.add_argument(
        "--full",
        action="store_true",
        help="audit: the whole suite against every mutant, in a process each (slow)",
    )
    mutants.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    add_report(mutants, ReportFormats({"markdown": "toolconf-mutants.md"}), output_dir=False)
    mutants.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help=_EXPECTED_FAILURES_HELP + "; the implementation here is the unmutated reference "
        "(the control; default conformance/known-engine-bugs.yaml)",
    )
    mutants.set_defaults(command=_mutants)


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench", help="measure dedup and the token gate through protocol v1, side by side"
    )
    bench.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="IMPL",
        help=impl_help(None) + "; beside the reference, repeatable; LABEL=IMPL names it",
    )
    bench.add_argument(
        "--no-reference", action="store_true", help="measure only the --impl implementations"
    )
    bench.add_argument("--rounds", type=int, default=15, help="timed calls per figure (default 15)")
    bench.add_argument(
        "--reads",
        type=int,
        default=None,
        help=f"Reads in the trace (default 1000, with --costs {COSTS_READS})",
    )
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
    add_report(
        bench,
        ReportFormats(
            {
                "json": "toolconf-bench/bench.json",
                "markdown": "toolconf-bench/bench.md",
                "png": "toolconf-bench/bench.png",
            },
            always=("json", "markdown", "png"),
            notes={"json": "every figure", "png": "time per call against file size"},
        ),
    )
    bench.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per request (default 60)"
    )
    bench.add_argument(
        "--costs",
        action="store_true",
        help="measure what each implementation's model receives instead: one Read of large, "
        "minified and binary files, a re-read after an edit, the trace; reports default to "
        "toolconf-bench/costs.{json,md,png}",
    )
    bench.add_argument(
        "--from",
        dest="from_reports",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="with --costs: render these saved JSON reports (merged, a later label replacing "
        "an earlier) instead of measuring; repeatable",
    )
    bench.add_argument(
        "--tree",
        type=Path,
        metavar="DIR",
        help="with --costs: take the trace's files from DIR/reference and DIR/conformance "
        "(a copy of this project) rather than the installed packages",
    )
    bench.add_argument(
        "--regenerate",
        metavar="COMMAND",
        help="with --costs: the command that regenerates the report, quoted in it",
    )
    bench.set_defaults(command=_bench)


def _add_stress(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stress = commands.add_parser(
        "stress",
        help="attack an implementation: SIGKILL during writes, a protocol fuzzer, hostile "
        "files, permission bypasses (PROTO-STRESS-1)",
    )
    stress.add_argument(
        "--impl",
        default=None,
        metavar="IMPL",
        help=impl_help(None) + " (default: the reference adapter with this Python)",
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
    add_report(
        stress,
        ReportFormats(
            {"json": "toolconf-stress.json"}, always=("json",), notes={"json": "figures"}
        ),
        output_dir=False,
    )
    deprecated(stress, "--json", dest="json", instead="--report json=PATH", append_as="json")
    stress.add_argument("--isolation", choices=("auto", "on", "off"), default="auto")
    stress.add_argument("--pass-env", action="append", default=[], metavar="NAME")
    stress.set_defaults(command=_stress)


def _add_matrix(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``matrix`` subcommand: reports side by side, per behaviour and per SPEC section."""
    matrix = commands.add_parser(
        "matrix",
        help="implementations x behaviours (kept / partly / not kept / differs / n/a) and x SPEC "
        "sections, as Markdown and self-contained HTML, from JSON-lines reports",
    )
    matrix.add_argument("reports", type=Path, nargs="+", help="JSON-lines reports, one column each")
    add_spec_file(matrix, DEFAULT_SPEC)
    matrix.add_argument(
        "--behaviours",
        type=Path,
        default=DEFAULT_BEHAVIOURS,
        metavar="FILE",
        help="the behaviour table's data (default the shipped behaviours.yaml)",
    )
    add_report(
        matrix,
        ReportFormats(
            {"markdown": "matrix.md", "html": "matrix.html"},
            always=("markdown", "html"),
            notes={"html": "self-contained, click a cell"},
        ),
    )
    matrix.add_argument(
        "--readme",
        type=Path,
        metavar="FILE",
        help="also rewrite the behaviour table between its markers in this README",
    )
    matrix.add_argument("--date", default="", help="the date the page names (default: today)")
    matrix.add_argument("--regenerate", default="", help="the command that regenerates it")
    matrix.set_defaults(command=_matrix)


# -- the commands -----------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    selected = select(args)
    for error in selected.errors:
        print(error, file=sys.stderr)
    for s in selected.scenarios:
        print(f"{s.area}/{s.id}\t{s.level}\t{','.join(s.spec)}\t{s.title}")
    if not selected.scenarios and not selected.errors:
        print(f"toolconf: {selected.nothing_selected()}", file=sys.stderr)
        return EXIT_NOTHING
    return 1 if selected.errors else EXIT_OK


def _fidelity(args: argparse.Namespace) -> int:
    outputs = chosen_reports(args)
    report = merge_reports([load_report(path) for path in args.reports])
    started = str(report.header.get("started", ""))[:10] or "unknown date"
    command = args.regenerate or f"toolconf run --impl {report.header.get('impl', '?')}"
    if not args.regenerate and report.header.get("profile", DEFAULT_PROFILE) != DEFAULT_PROFILE:
        command += f" --profile {report.header['profile']}"  # PROFILE-RUN-1
    expected = None
    if args.expected_failures:
        expected, _, problems = load_reasons(args.expected_failures, "expected failures")
        if problems:
            raise ConformanceError("; ".join(str(p) for p in problems))
    for fmt, path in outputs:
        with open_output(path) as out:
            if fmt == "jsonl":
                write_jsonl(report, out)
                continue
            page = fidelity_markdown(
                report,
                Spec.load(args.spec_file),
                command=command,
                date=started,
                expected=expected,
            )
            out.write(page)
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    """``toolconf diff A B``: the release-diff page (``conformance.analysis.release_diff``)."""
    from conformance.analysis.release_diff import diff_markdown, load_unspecified  # noqa: PLC0415

    for path in (args.before, args.after):
        if not path.is_file():
            raise ConformanceError(f"no such report: {path}")
    unspecified = load_unspecified(args.unspecified) if args.unspecified else []
    edited = _edited_scenarios(args.edited) if args.edited else frozenset()
    for _, output in chosen_reports(args):
        page = diff_markdown(
            load_report(args.before),
            load_report(args.after),
            Spec.load(args.spec_file),
            command=args.regenerate or _diff_command(args, output),
            unspecified=unspecified,
            edited=edited,
            notes=args.note,
        )
        with open_output(output) as out:
            out.write(page)
    return EXIT_OK


def _diff_command(args: argparse.Namespace, output: str) -> str:
    """The ``diff`` command line that makes this very page (for its ``regenerate`` line)."""
    import shlex  # noqa: PLC0415

    words = ["python", "-m", "conformance", "diff", str(args.before), str(args.after)]
    if args.unspecified:
        words += ["--unspecified", str(args.unspecified)]
    if args.edited:
        words += ["--edited", args.edited]
    for note in args.note:
        words += ["--note", note]
    if output != "-":
        words += ["--report", f"markdown={output}"]
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
            spec=args.spec_file,
            features=args.features_file,
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
        return 1
    print("lint: ok")
    return EXIT_OK


def _mutants(args: argparse.Namespace) -> int:
    from conformance.instruments.mutants import orchestrate  # noqa: PLC0415  (imports the engine)

    if args.expected_failures is None and orchestrate.KNOWN_ENGINE_BUGS.is_file():
        args.expected_failures = orchestrate.KNOWN_ENGINE_BUGS
    reports = chosen_reports(args)
    args.report_path = reports[0][1] if reports else None
    return orchestrate.run_mutants(args)


def _smoke(args: argparse.Namespace) -> int:
    connector = connect(args.impl, connector_options(args))
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
        return EXIT_UNAVAILABLE
    finally:
        connector.close()  # PROTO-KILL-1: however the smoke ends
    language = hello.implementation.get("language", "?")
    print(f"smoke: ok: {hello.name} ({language}), protocol {hello.protocol}")
    print(f"features: {', '.join(sorted(hello.features)) or 'none'}")
    return EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    # Deferred: the bench modules and Pillow (the plot) cost every other command.
    from conformance.instruments.bench import report as bench_report  # noqa: PLC0415
    from conformance.instruments.bench.run import REFERENCE_LABEL, bench, reference_spec  # noqa: PLC0415

    if args.costs:
        args.report_formats = COSTS_REPORTS
    elif args.from_reports or args.regenerate or args.tree:
        print("bench: --from, --tree and --regenerate go with --costs", file=sys.stderr)
        return EXIT_USAGE
    reads = args.reads if args.reads is not None else COSTS_READS if args.costs else 1000
    outputs = chosen_reports(args)
    if args.costs and args.from_reports:
        return _costs(args, [], reads, outputs)
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
    if args.rounds < 1 or reads < 2:
        print("bench: --rounds must be at least 1 and --reads at least 2", file=sys.stderr)
        return EXIT_USAGE
    if not (0 <= args.reread_share < 1 and 0 <= args.after_edit_share <= 1):
        print(
            "bench: --reread-share must lie in [0, 1), --after-edit-share in [0, 1]",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.costs:
        return _costs(args, specs, reads, outputs)
    run = bench(
        specs,
        rounds=args.rounds,
        reads=reads,
        seed=args.seed,
        reread_share=args.reread_share,
        after_edit_share=args.after_edit_share,
        timeout=args.timeout,
    )
    markdown = bench_report.to_markdown(run)
    print(markdown)
    for fmt, path in outputs:
        if path == "-":
            continue  # the Markdown is on stdout already; JSON and PNG need a file
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if fmt == "png":
            Path(path).write_bytes(bench_report.to_png(run))
        else:
            text = bench_report.to_json(run) if fmt == "json" else markdown
            Path(path).write_text(text, encoding="utf-8")
        print(f"bench: wrote {fmt} to {path}")
    failed = [impl for impl in run.implementations if impl.failure]
    return EXIT_UNAVAILABLE if failed else EXIT_OK


COSTS_REPORTS = ReportFormats(
    {
        "json": "toolconf-bench/costs.json",
        "markdown": "toolconf-bench/costs.md",
        "png": "toolconf-bench/costs.png",
    },
    always=("json", "markdown", "png"),
    notes={"json": "every figure", "png": "tokens of one Read against file size"},
)


def _costs(
    args: argparse.Namespace,
    specs: Sequence[tuple[str, str]],
    reads: int,
    outputs: Sequence[tuple[str, str]],
) -> int:
    """``bench --costs``: measure ``specs``, or merge the ``--from`` reports, and write."""
    from conformance.instruments.bench import costs, costs_report  # noqa: PLC0415
    from conformance.instruments.bench.trace import default_tree, make_trace  # noqa: PLC0415

    if args.from_reports:
        runs = []
        for path in args.from_reports:
            try:
                runs.append(costs_report.from_json(path.read_text(encoding="utf-8")))
            except OSError as exc:
                raise ConformanceError(f"bench: cannot read {path}: {exc.strerror}") from exc
        run = costs.merged(runs)
    else:
        if args.tree is not None and not (args.tree / "reference").is_dir():
            raise ConformanceError(f"bench: {args.tree} holds no reference folder")
        trace = make_trace(
            default_tree(args.tree),
            reads=reads,
            reread_share=args.reread_share,
            after_edit_share=args.after_edit_share,
            seed=args.seed,
        )
        run = costs.costs(specs, trace, timeout=args.timeout)
    markdown = costs_report.to_markdown(run, regenerate=args.regenerate)
    print(markdown)
    for fmt, path in outputs:
        if path == "-":
            continue  # the Markdown is on stdout already
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if fmt == "png":
            Path(path).write_bytes(costs_report.to_png(run))
        else:
            text = costs_report.to_json(run) if fmt == "json" else markdown
            Path(path).write_text(text, encoding="utf-8")
        print(f"bench: wrote {fmt} to {path}")
    failed = [impl for impl in run.implementations if impl.failure]
    return EXIT_UNAVAILABLE if failed else EXIT_OK


def _stress(args: argparse.Namespace) -> int:
    from conformance.instruments.reliability.common import DEFAULT_IMPL  # noqa: PLC0415
    from conformance.instruments.reliability.stress import config_from, run_stress  # noqa: PLC0415

    outputs = chosen_reports(args)
    if any(path == "-" for _, path in outputs):
        raise ConformanceError("stress prints its summary on stdout: give --report json=FILE")
    args.impl = args.impl or DEFAULT_IMPL
    try:
        config = config_from(args, full=args.full)
    except ValueError as exc:
        print(f"stress: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return run_stress(config, sys.stdout, Path(outputs[-1][1]) if outputs else None)


def _matrix(args: argparse.Namespace) -> int:
    from conformance.analysis.matrix_pages import (  # noqa: PLC0415  (only this command)
        matrix_pages,
        replace_block,
    )

    outputs = chosen_reports(args)
    markdown = Path(next((p for f, p in outputs if f == "markdown" and p != "-"), "matrix.md"))
    anchor = args.readme.resolve().parent if args.readme else markdown.resolve().parent
    pages = matrix_pages(
        args.reports,
        spec=args.spec_file,
        behaviours=args.behaviours,
        date=args.date or datetime.date.today().isoformat(),
        command=args.regenerate,
        readme_link=os.path.relpath(markdown.resolve(), anchor),
    )
    for line in pages.summary():
        print(line)
    for fmt, path in outputs:
        page = pages.markdown if fmt == "markdown" else pages.html
        if path == "-":
            sys.stdout.write(page)
            continue
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(page, encoding="utf-8")
        print(f"matrix: wrote {fmt} to {path}")
    if args.readme:
        text = args.readme.read_text("utf-8")
        args.readme.write_text(replace_block(text, pages.readme), encoding="utf-8")
        print(f"matrix: rewrote the behaviour table in {args.readme}")
    return EXIT_OK


def _add_spec(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``spec`` subcommand: SPEC.md's generated parts."""
    spec = commands.add_parser("spec", help="SPEC.md's generated parts (the profile annexes)")
    parts = spec.add_subparsers(required=True, metavar="PART")
    annexes = parts.add_parser(
        "annexes",
        help="rewrite spec/annex-PROFILE.md from reference/profiles.py and the evidence",
    )
    add_spec_file(annexes, DEFAULT_SPEC)
    annexes.set_defaults(command=_spec_annexes)


def _spec_annexes(args: argparse.Namespace) -> int:
    """SPEC.md 0.5: one annex per profile, written beside SPEC.md; lists those that changed."""
    changed = write_annexes(Spec.load(args.spec_file), reference_profiles())
    for path in changed:
        print(f"wrote {path}")
    print(f"spec annexes: {len(changed)} changed")
    return EXIT_OK
