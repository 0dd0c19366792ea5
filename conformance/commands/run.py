"""``toolconf run``: select, run, summarize, report, compare with the baseline.

Each step is a function of its own; ``run_command`` calls them in order on
one ``RunSession`` (with ``--jobs N``, on N sessions at once, its results
those of a serial run). The console is stdout, or stderr when a report goes
to stdout. The closing lines say why scenarios were not applicable, one line
per why, how long the run took, and end with the verdict. A ``--shard`` run
writes, in its JSON-lines report, the whole selection's ids, which
``toolconf merge`` needs.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

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
    format_duration,
    format_table,
    level_lines,
    summarize,
)
from conformance.analysis.reports import FORMATS, RunInfo, write_report
from conformance.analysis.verdict import not_applicable_lines, verdict_line
from conformance.commands.options import ReportFormats, chosen_reports, connector_options
from conformance.commands.select import (
    Selected,
    known_ids,
    select,
    spec_provenances,
    spec_sections,
)
from conformance.errors import AdapterFailure, ImplementationUnavailable, ScenarioLoadError
from conformance.peers.registry import connect
from conformance.run.last_failed import record_run
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.session import RunSession, RunSettings
from conformance.run.xfail import load_expected_failures
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES
from conformance.wire.profiles import DEFAULT_PROFILE
from reference.version import __version__

__all__ = [
    "EXIT_FAILED",
    "EXIT_NOTHING",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "RUN_REPORTS",
    "open_output",
    "run_command",
    "run_info_of",
    "write_reports",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_NOTHING = 0, 1, 2, 3, 5
_EXTENSIONS: Final = {"junit": "xml", "jsonl": "jsonl", "markdown": "md", "html": "html"}
RUN_REPORTS: Final = ReportFormats(
    {fmt: f"toolconf-report.{_EXTENSIONS[fmt]}" for fmt in sorted(FORMATS)},
    notes={"markdown": "for a CI job summary"},
)


def run_command(args: argparse.Namespace) -> int:
    """``toolconf run``; returns the exit status."""
    reports = chosen_reports(args)
    console = sys.stderr if any(path == "-" for _, path in reports) else sys.stdout
    selected = select(args)
    if not selected.scenarios and not selected.errors:
        if selected.shard is not None and selected.order:
            print(
                f"toolconf: shard {selected.shard} holds none of the {len(selected.order)} "
                "scenarios chosen: nothing to judge",
                file=console,
            )
            return EXIT_OK
        print(f"toolconf: {selected.nothing_selected()}", file=console)
        return EXIT_NOTHING
    options = connector_options(args)
    session = RunSession(
        connect(args.impl, options), _settings(args), spare=lambda: connect(args.impl, options)
    )
    baseline = load_baseline(args.baseline) if args.baseline and args.baseline.exists() else None
    try:
        if not _start(session, args.impl):
            return EXIT_UNAVAILABLE
        _announce(session, args, selected, console)
        results, seconds = _judge(session, selected, args, console)
    except ImplementationUnavailable as exc:  # it could run, and now cannot: the run ends
        print(f"toolconf: cannot run {args.impl}: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    finally:
        session.close()  # PROTO-KILL-1: however the run ends, a SIGTERM while starting too
    provenances = spec_provenances()
    _summarize(results, provenances, console)
    status = EXIT_FAILED if any(r.bad for r in results) else EXIT_OK
    for line in _closing_lines(session, results, args) + _time_lines(session, seconds, args):
        print(line, file=console)
    stale = session.stale_expected_failures(known_ids(list(args.paths)))
    if stale:
        print(f"stale expected failures (no such scenario): {', '.join(stale)}", file=console)
        status = EXIT_FAILED
    chosen = selected.provenances or PROVENANCES
    shard = _shard_record(selected)
    for line in write_reports(
        session, results, reports, args.impl, provenances=provenances, selected=chosen, shard=shard
    ):
        print(line, file=console)
    if args.baseline:
        _compare_baseline(args, baseline, results, session, console)
    record_run(args.impl, results, started=session.started)
    print(f"\n{verdict_line(results)}", file=console)
    return status


def _settings(args: argparse.Namespace) -> RunSettings:
    expected = load_expected_failures(args.expected_failures) if args.expected_failures else {}
    return RunSettings(
        features=args.features,
        fixtures=args.fixtures,
        keep=args.keep,
        levels=args.levels,
        host_paths=args.host_paths,
        profile=args.profile,
        expected_failures=expected,
        jobs=args.jobs,
    )


def _start(session: RunSession, impl: str) -> bool:
    """Start the implementation; on failure say why (with its stderr) and return False.

    An implementation that cannot be installed or run here says so in one line.
    """
    try:
        session.start()
    except ImplementationUnavailable as exc:
        print(f"toolconf: cannot run {impl}: {exc}", file=sys.stderr)
        return False
    except AdapterFailure as exc:
        print(f"toolconf: cannot start {impl}: [{exc.kind}] {exc}", file=sys.stderr)
        if stderr := session.take_stderr().strip():
            print(stderr, file=sys.stderr)
        return False
    return True


def _announce(
    session: RunSession, args: argparse.Namespace, selected: Selected, console: TextIO
) -> None:
    hello = session.hello
    assert hello is not None  # started
    count = len(selected.scenarios)
    of = f" (shard {selected.shard} of {len(selected.order)})" if selected.shard else ""
    pace = f", {min(args.jobs, count)} sessions at once" if args.jobs > 1 and count > 1 else ""
    print(
        f"toolconf {__version__}: {hello.name} via {args.impl}, {count} scenarios{of}{pace}",
        file=console,
    )
    for line in judgement_lines(hello.unreported, hello.inferences, args.levels):
        print(line, file=console)
    for line in profile_lines(args.profile, hello.profiles):
        print(line, file=console)
    if selected.provenances:
        print(
            f"judging the scenarios whose SPEC IDs are each {' or '.join(selected.provenances)} "
            "(PROTO-PROVENANCE-1)",
            file=console,
        )


def _judge(
    session: RunSession, selected: Selected, args: argparse.Namespace, console: TextIO
) -> tuple[list[ScenarioResult], float]:
    """Every load error as a result, then each chosen scenario judged, with progress;
    and the seconds the judging took."""
    results = [load_error_result(e) for e in selected.errors]
    progress = Progress(len(selected.scenarios), console, quiet=args.no_progress)
    try:
        for result in session.judge_all(selected.scenarios, maxfail=args.maxfail):
            results.append(result)
            progress.update(result)
    finally:
        progress.finish()
    seconds = progress.elapsed
    left = len(selected.scenarios) - progress.done
    if left:
        print(
            f"stopped after {args.maxfail} scenario{'s' if args.maxfail != 1 else ''} not "
            f"passing (--maxfail {args.maxfail}): {left} not run",
            file=console,
        )
    return results, seconds


def _time_lines(session: RunSession, seconds: float, args: argparse.Namespace) -> list[str]:
    """The run's wall time, and the sessions of ``--jobs`` that did not start."""
    judged = len(session.results)
    pace = ""
    if args.jobs > 1:
        pace = f" on {session.sessions} session{'s' if session.sessions != 1 else ''} at once"
    lines = [f"time: {format_duration(seconds)} for {judged} scenarios{pace}"]
    if session.unstarted:
        count = len(session.unstarted)
        lines.append(
            f"--jobs {args.jobs}: {count} session{'s' if count != 1 else ''} did not start, "
            f"the others judged every scenario: {'; '.join(dict.fromkeys(session.unstarted))}"
        )
    return lines


def _shard_record(selected: Selected) -> dict[str, Any] | None:
    """What a shard's JSON-lines report says of it: K, N and the whole selection's ids."""
    if selected.shard is None:
        return None
    return {
        "index": selected.shard.index,
        "count": selected.shard.count,
        "order": list(selected.order),
    }


def _summarize(
    results: list[ScenarioResult], provenances: Mapping[str, str], console: TextIO
) -> None:
    """Each result worth a look, then the tables by level and area, then the level figures
    (with the behaviour figure of each provenance, SPEC ID -> provenance)."""
    bad = [r for r in results if r.bad]
    differing = [r for r in results if r.outcome is Outcome.PASS and r.mismatches]
    for result in differing + [r for r in results if r.outcome is Outcome.XFAIL] + bad:
        print("\n" + describe_result(result), file=console)
    print("\n" + format_table("level", summarize(results, lambda r: r.level)), file=console)
    print("\n" + format_table("area", summarize(results, lambda r: r.area)), file=console)
    print("\n" + "\n".join(level_lines(results, provenances)), file=console)


def _closing_lines(
    session: RunSession, results: Sequence[ScenarioResult], args: argparse.Namespace
) -> list[str]:
    """Why scenarios were not applicable, what the judgement rests on, the sandboxes kept."""
    lines = [""] if results else []
    lines += not_applicable_lines(results, args.impl)
    hello = session.hello
    if hello is not None:
        lines += judgement_lines(hello.unreported, hello.inferences, args.levels)
    if args.keep:
        lines += [f"kept {r.id}: {r.kept}" for r in results if r.kept]
    return lines


def write_reports(
    session: RunSession,
    results: list[ScenarioResult],
    reports: Sequence[tuple[str, str]],
    impl: str,
    *,
    provenances: Mapping[str, str],
    selected: Sequence[str] = PROVENANCES,
    shard: Mapping[str, Any] | None = None,
) -> list[str]:
    """Write each (format, path) report of ``results``; a line per file written, for the console.

    ``provenances``: SPEC ID -> its provenance; ``selected``: the provenances the run judged
    (PROTO-PROVENANCE-1); ``shard``: what this part of a run is (``RunInfo.shard``).
    """
    info = run_info_of(session, impl, provenances=provenances, selected=selected, shard=shard)
    lines = []
    for fmt, path in reports:
        with open_output(path) as out:
            write_report(fmt, results, info, out)
        if path != "-":
            lines.append(f"report ({fmt}): {path}")
    return lines


def run_info_of(
    session: RunSession,
    impl: str,
    *,
    provenances: Mapping[str, str],
    selected: Sequence[str] = PROVENANCES,
    shard: Mapping[str, Any] | None = None,
) -> RunInfo:
    """What the reports of ``session``'s run say of it (``write_reports``' arguments)."""
    hello = session.hello
    return RunInfo(
        impl=impl,
        implementation=hello.implementation if hello else {},
        features=session.features_used,
        started=session.started,
        unreported=sorted(hello.unreported) if hello else [],
        inferences=hello.inferences if hello else (),
        levels=session.settings.levels,
        sections=spec_sections(),
        profile=session.settings.profile,
        plays=hello.profiles if hello else (DEFAULT_PROFILE,),
        provenances=provenances,
        selected=tuple(selected),
        shard=shard,
    )


def _compare_baseline(
    args: argparse.Namespace,
    baseline: Baseline | None,
    results: list[ScenarioResult],
    session: RunSession,
    console: TextIO,
) -> None:
    """Record the baseline, or say what changed since it (and update it when asked)."""
    path: Path = args.baseline
    implementation = dict(session.hello.implementation) if session.hello else {}
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
    if args.update_baseline:
        save_baseline(path, merge_baseline(baseline, results), implementation)
        print(f"baseline updated: {path}", file=console)
    elif changes:
        print("  (use --update-baseline to record them)", file=console)


def load_error_result(error: ScenarioLoadError) -> ScenarioResult:
    """A scenario file that did not load, as an ``error`` result."""
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


def judgement_lines(
    unreported: Iterable[str], inferences: Sequence[Mapping[str, Any]], levels: Sequence[str]
) -> list[str]:
    """What the run's judgement rests on besides the scenarios: levels, unreported, inferences."""
    lines = []
    if tuple(levels) != LEVELS:
        lines.append(f"deciding levels: {', '.join(levels)} (the others are reported only)")
    if unreported:
        lines.append(
            f"not reported by the implementation: {', '.join(sorted(unreported))} "
            "(assertions on them are not observed, never failed)"
        )
    for inference in inferences:
        lines.append(
            f"inferred: {inference.get('field')} from {inference.get('from')} "
            f"through {inference.get('table')}"
        )
    return lines


def profile_lines(profile: str, plays: Sequence[str]) -> list[str]:
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
def open_output(name: str) -> Iterator[TextIO]:
    """The file ``name`` for writing, or stdout for ``-``."""
    if name == "-":
        yield sys.stdout
        return
    with open(name, "w", encoding="utf-8") as handle:
        yield handle
