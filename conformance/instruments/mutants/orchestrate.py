"""``python -m conformance mutants``: every mutant run where it breaks first.

**Targeted mode** (the default) runs in two stages:

1. each mutant runs against only the scenarios citing a SPEC ID it declares
   (``Mutant.breaks``). A kill there decides it: "killed" (every scenario in
   that run cites one of its IDs, so the killer is its own);
2. only a mutant the targeted run did not kill runs the whole suite, in a
   subprocess of its own (``python -m conformance run --impl mutant:NAME
   --report jsonl``), and is judged on that run as in full mode.

The targeted runs share ``--jobs`` worker processes (default 2), started once
with the scenarios loaded by this process, so a mutant's run costs its few
scenarios, not an interpreter start, the imports and the loading of all 1,031
files (about 2 s, several times what its scenarios cost). A session fault
runs in the worker, on its own ``MutantEngine``; a process patch still runs
only in its own adapter process (``python -m conformance.instruments.mutants NAME``),
which the worker starts through ``mutant:NAME`` as ``conformance run`` would.

**Full mode** (``--full``, for the occasional audit) runs the whole suite
against every mutant, each in a ``conformance run`` subprocess.

**The control** is the whole suite against the unmutated reference, in both
modes and once: a scenario the reference itself fails kills nothing, and a
control failing any scenario not listed in the expected-failures file
(default ``conformance/known-engine-bugs.yaml``, the engine's known
contradictions of SPEC.md) fails the command. In targeted mode it runs in a
worker beside the targeted runs. A control over only the union of targeted
scenarios (about two thirds of the suite) would save ten seconds at most, but
would leave the reference unchecked on the rest, and a mutant escalated to
the full run needs the control of every scenario anyway.

A **profile mutant** (``Mutant.profile``, ``conformance.instruments.mutants.profile_faults``)
runs its scenarios under that profile (``--profile``); the control runs under
``documented``, so for such a mutant it only discounts scenarios that hold
under both (the reference passes every profile's scenarios, which
``toolconf run --profile`` shows).

A mutant is **killed** when some scenario fails against it and at least one
of those killers cites a SPEC ID the mutant declares it breaks. One killed
only by scenarios citing none of its IDs is reported as "killed, but not by
its own IDs" and fails the command like a survivor: its declared IDs have no
scenario that catches the fault, which is a hole in the scenarios.

The **behaviour** column says whether an own killer failed the mutant on
what it did (a behaviour mismatch, or the implementation breaking), not
only on identity or rendering (PROTO-LEVEL-1). A "no" there is not a
failure of the command, but it shows a rule whose scenarios always meet a
second rule that refuses too: give the rule a scenario where nothing else
decides.

Exit status: 0 every mutant killed by its own IDs; 1 a survivor, a mutant
killed only by other IDs, a mutant or control that could not run, or a
failing control; 2 bad usage (an unknown ``--only`` name).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

from conformance.errors import AdapterFailure
from conformance.instruments.mutants import MUTANTS, Mutant, get_mutant
from conformance.peers.registry import connect
from conformance.run.runner import Runner
from conformance.run.xfail import load_expected_failures
from conformance.suite.registry import DEFAULT_SCENARIOS
from conformance.suite.scenario import Scenario, load_scenarios
from conformance.suite.selection import cites
from conformance.wire.connector import ConnectorOptions

__all__ = [
    "MutantVerdict",
    "SuiteRun",
    "judge",
    "run_mutants",
    "run_scenarios",
    "run_suite",
    "targets",
]

EXIT_OK, EXIT_FAILED, EXIT_NOTHING = 0, 1, 5
RUN_TIMEOUT: Final = 600.0
"""Seconds one whole suite run may take before the mutant counts as not run."""
KILLING_OUTCOMES: Final = frozenset({"fail", "error", "crash", "timeout"})
_SHOWN_KILLERS: Final = 3
_PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
KNOWN_ENGINE_BUGS: Final = _PROJECT_ROOT / "conformance" / "known-engine-bugs.yaml"
TARGETED, FULL = "targeted", "full"
"""The stage a verdict was decided in, and the modes of the command."""
_OPTIONS: Final = ConnectorOptions(timeout=10.0, hello_timeout=30.0)
"""What ``conformance run`` uses by default."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Killer:
    """A scenario that did not pass against a mutant.

    ``signature`` is the ``(step, level, path)`` of each of its mismatches, so
    that a change from one failure to another counts (``judge``).
    """

    id: str
    outcome: str
    spec: tuple[str, ...]
    signature: frozenset[tuple[int | None, str, str]] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteRun:
    """One ``conformance run`` subprocess: the scenarios that did not pass, or why it broke."""

    impl: str
    failed: tuple[Killer, ...] = ()
    scenarios: int = 0
    error: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MutantVerdict:
    """What the suite did to one mutant."""

    mutant: Mutant
    killers: tuple[Killer, ...] = ()
    error: str = ""
    seconds: float = 0.0
    stage: str = FULL
    """Where it was decided: ``targeted`` (its own IDs' scenarios) or ``full`` (the suite)."""
    scenarios: int = 0
    own: tuple[Killer, ...] = field(init=False)

    def __post_init__(self) -> None:
        declared = set(self.mutant.breaks)
        own = tuple(k for k in self.killers if declared & set(k.spec))
        object.__setattr__(self, "own", own)

    @property
    def by_behaviour(self) -> bool:
        """Whether one of its own killers failed it on what it did (PROTO-LEVEL-1).

        A behaviour mismatch, or the implementation breaking (an error, a
        crash, a timeout); a mutant killed only on identity or rendering
        changed no behaviour verdict, so its rule is shown together with
        another that decides the same scenarios.
        """
        return any(
            k.outcome != "fail" or any(level == "behaviour" for _, level, _ in k.signature)
            for k in self.own
        )

    @property
    def status(self) -> str:
        if self.error:
            return "NOT RUN"
        if not self.killers:
            return "SURVIVED"
        if not self.own:
            return "killed, but not by its own IDs"
        return "killed"

    @property
    def ok(self) -> bool:
        return self.status == "killed"

    def examples(self) -> list[str]:
        """The first few killers, those citing the mutant's own IDs first."""
        others = [k for k in self.killers if k not in self.own]
        return [k.id for k in [*self.own, *others][:_SHOWN_KILLERS]]


def run_suite(impl: str, *, timeout: float = RUN_TIMEOUT, profile: str = "documented") -> SuiteRun:
    """Run the whole suite against ``impl`` under ``profile`` in a subprocess and read its
    JSON-lines report."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="toolconf-mutant-") as tmp:
        report = Path(tmp, "report.jsonl")
        argv = [sys.executable, "-m", "conformance", "run", "--impl", impl, "--no-progress"]
        argv += ["--report", f"jsonl={report}", "--profile", profile]
        path = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env={**os.environ, "PYTHONPATH": path},
            )
        except subprocess.TimeoutExpired:
            return SuiteRun(impl=impl, error=f"no result within {timeout:g} s", seconds=timeout)
        seconds = time.perf_counter() - started
        if done.returncode not in (EXIT_OK, EXIT_FAILED) or not report.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            error = f"exit status {done.returncode}: {tail[0]}".rstrip(": ")
            return SuiteRun(impl=impl, error=error, seconds=seconds)
        records = [json.loads(line) for line in report.read_text("utf-8").splitlines() if line]
    results = [r for r in records if r.get("type") == "result"]
    failed = tuple(
        Killer(
            id=r["id"],
            outcome=r["outcome"],
            spec=tuple(r.get("spec") or ()),
            signature=frozenset(
                (m.get("step"), str(m.get("level", "")), str(m.get("path", "")))
                for m in r.get("mismatches") or ()
            ),
        )
        for r in results
        if r["outcome"] in KILLING_OUTCOMES
    )
    return SuiteRun(impl=impl, failed=failed, scenarios=len(results), seconds=seconds)


def run_scenarios(
    impl: str, scenarios: Sequence[Scenario], profile: str = "documented"
) -> SuiteRun:
    """Run ``scenarios`` against ``impl`` under ``profile`` in this process, as
    ``conformance run --profile`` would.

    ``mutant:NAME`` of a process patch starts the mutant's own adapter
    process; nothing is patched here. Never raises: what broke is the error.
    """
    started = time.perf_counter()
    try:
        runner = Runner(connect(impl, _OPTIONS), profile=profile)
    except Exception as exc:  # an unknown impl: not run
        return SuiteRun(impl=impl, error=f"{type(exc).__name__}: {exc}")
    try:
        runner.start()
        results = list(runner.run_all(scenarios))
    except AdapterFailure as exc:
        error = f"cannot start {impl}: [{exc.kind}] {exc}"
        return SuiteRun(impl=impl, error=error, seconds=time.perf_counter() - started)
    except Exception as exc:  # a verdict, not a traceback, for any breakage
        error = f"{type(exc).__name__}: {exc}"
        return SuiteRun(impl=impl, error=error, seconds=time.perf_counter() - started)
    finally:
        runner.close()
    failed = tuple(
        Killer(id=r.id, outcome=str(r.outcome), spec=r.spec, signature=r.signature)
        for r in results
        if r.outcome in KILLING_OUTCOMES
    )
    seconds = time.perf_counter() - started
    return SuiteRun(impl=impl, failed=failed, scenarios=len(results), seconds=seconds)


def targets(mutant: Mutant, scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios citing one of the SPEC IDs ``mutant`` declares it breaks."""
    return [s for s in scenarios if cites(s.spec, mutant.breaks)]


def judge(mutant: Mutant, run: SuiteRun, control: SuiteRun, *, stage: str = FULL) -> MutantVerdict:
    """The verdict on ``mutant`` from its run.

    A scenario the control also failed kills only if it failed otherwise: in
    another outcome, or with other mismatches (step, level, path).
    """
    if run.error:
        return MutantVerdict(mutant=mutant, error=run.error, seconds=run.seconds, stage=stage)
    anyway = {k.id: (k.outcome, k.signature) for k in control.failed}
    killers = tuple(k for k in run.failed if anyway.get(k.id) != (k.outcome, k.signature))
    return MutantVerdict(
        mutant=mutant, killers=killers, seconds=run.seconds, stage=stage, scenarios=run.scenarios
    )


Progress = Callable[[str], None]


def _said(run: SuiteRun, stage: str, progress: Progress) -> SuiteRun:
    counted = run.error or f"{len(run.failed)} of {run.scenarios} scenarios not passing"
    progress(f"  {run.impl} ({stage}): {counted} ({run.seconds:.1f} s)")
    return run


def _profile_of(impl: str) -> str:
    """The profile a ``mutant:NAME`` runs under (the control, ``direct``: documented)."""
    name = impl.removeprefix("mutant:")
    return MUTANTS[name].profile if impl.startswith("mutant:") and name in MUTANTS else "documented"


def _full_runs(impls: Sequence[str], jobs: int, progress: Progress) -> dict[str, SuiteRun]:
    """The whole suite against each of ``impls``, a subprocess each, ``jobs`` at a time."""
    runs: dict[str, SuiteRun] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        submitted = [pool.submit(run_suite, i, profile=_profile_of(i)) for i in impls]
        for future in concurrent.futures.as_completed(submitted):
            run = _said(future.result(), FULL, progress)
            runs[run.impl] = run
    return runs


def _collect_full(
    mutants: Sequence[Mutant], jobs: int, progress: Progress
) -> tuple[SuiteRun, list[MutantVerdict]]:
    runs = _full_runs(["direct", *(f"mutant:{m.name}" for m in mutants)], jobs, progress)
    control = runs.pop("direct")
    return control, [judge(m, runs[f"mutant:{m.name}"], control) for m in mutants]


def _load_suite() -> tuple[list[Scenario], tuple[Killer, ...]]:
    """Every scenario, and a killer of the control for each file that does not load."""
    scenarios, errors = load_scenarios([DEFAULT_SCENARIOS], root=DEFAULT_SCENARIOS)
    broken = tuple(Killer(id=Path(e.path).stem, outcome="error", spec=()) for e in errors)
    return scenarios, broken


def _worker_init() -> None:
    # What run_suite gives its subprocess: the project importable, for the adapters too.
    path = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = path


def _targeted_runs(
    work: Sequence[tuple[str, list[Scenario]]], jobs: int, progress: Progress
) -> dict[str, SuiteRun]:
    """``run_scenarios`` for each (impl, scenarios) in ``jobs`` worker processes."""
    runs: dict[str, SuiteRun] = {}
    context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=max(1, jobs), mp_context=context, initializer=_worker_init
    ) as pool:
        futures = {
            pool.submit(run_scenarios, impl, chosen, _profile_of(impl)): impl
            for impl, chosen in work
        }
        for future in concurrent.futures.as_completed(futures):
            impl = futures[future]
            try:
                run = future.result()
            except Exception as exc:  # a broken worker: not run
                run = SuiteRun(impl=impl, error=f"worker failed: {type(exc).__name__}: {exc}")
            stage = FULL if impl == "direct" else TARGETED
            runs[impl] = _said(run, stage, progress)
    return runs


def _collect_targeted(
    mutants: Sequence[Mutant], jobs: int, progress: Progress
) -> tuple[SuiteRun, list[MutantVerdict]]:
    scenarios, broken = _load_suite()
    work = [("direct", scenarios), *((f"mutant:{m.name}", targets(m, scenarios)) for m in mutants)]
    runs = _targeted_runs(work, jobs, progress)
    direct = runs.pop("direct")
    control = dataclasses.replace(
        direct, failed=broken + direct.failed, scenarios=direct.scenarios + len(broken)
    )
    verdicts = {
        m.name: judge(m, runs[f"mutant:{m.name}"], control, stage=TARGETED) for m in mutants
    }
    survivors = [m for m in mutants if not verdicts[m.name].ok]
    if survivors:
        progress(f"  {len(survivors)} not killed by their own IDs' scenarios: the whole suite")
        full = _full_runs([f"mutant:{m.name}" for m in survivors], jobs, progress)
        for m in survivors:
            verdicts[m.name] = judge(m, full[f"mutant:{m.name}"], control)
    return control, [verdicts[m.name] for m in mutants]


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


_HEADER: Final = (
    "mutant",
    "result",
    "decided in",
    "failed",
    "own IDs",
    "behaviour",
    "killed by (first few)",
)


def _row(verdict: MutantVerdict) -> tuple[str, str, str, str, str, str, str]:
    return (
        verdict.mutant.name,
        f"NOT RUN: {verdict.error}" if verdict.error else verdict.status,
        f"{verdict.stage} run",
        f"{len(verdict.killers)} of {verdict.scenarios}",
        "yes" if verdict.own else "no",
        "yes" if verdict.by_behaviour else "no",
        ", ".join(verdict.examples()) or "-",
    )


def _markdown(
    control: str,
    verdicts: Sequence[MutantVerdict],
    seconds: float,
    args: argparse.Namespace,
    out: TextIO,
) -> None:
    good = sum(v.ok for v in verdicts)
    out.write("# Mutants\n\n")
    out.write(
        f"Mode: {_mode_text(args)}.\n\n"
        f"{good} of {len(verdicts)} mutants killed by a scenario citing their own SPEC IDs, "
        f"{sum(v.by_behaviour for v in verdicts)} of them at the behaviour level; "
        f"control (unmutated reference): {control}; "
        f"wall time {seconds:.1f} s with {args.jobs} job(s).\n\n"
    )
    out.write(
        "| mutant | breaks | result | decided in | failed | behaviour | killed by (first few)"
        " | fault |\n"
    )
    out.write("|---|---|---|---|---:|---|---|---|\n")
    for v in verdicts:
        name, result, stage, failed, _, behaviour, _ = _row(v)
        cells = [
            f"`{name}`",
            ", ".join(v.mutant.breaks),
            result,
            stage,
            failed,
            behaviour,
            ", ".join(f"`{k}`" for k in v.examples()) or "-",
            f"{v.mutant.description} ({v.mutant.scope})",
        ]
        out.write("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n")


def _unexpected(control: SuiteRun, expected: Collection[str]) -> list[Killer]:
    """The control's failures that no expected-failures entry explains."""
    return [k for k in control.failed if k.id not in expected]


def _control_text(control: SuiteRun, expected: Collection[str]) -> str:
    if control.error:
        return f"NOT RUN ({control.error})"
    known = len(control.failed) - len(_unexpected(control, expected))
    note = f", {known} known engine bug{'s' if known != 1 else ''}" if known else ""
    if _unexpected(control, expected):
        return f"FAILING ({len(control.failed)} of {control.scenarios} scenarios{note})"
    return f"passing ({control.scenarios} scenarios{note})"


def _mode_text(args: argparse.Namespace) -> str:
    if getattr(args, "full", False):
        return "full (the whole suite against every mutant)"
    return "targeted (each mutant against its own IDs' scenarios; the whole suite if it survives)"


def _list(mutants: Sequence[Mutant]) -> int:
    rows = [("mutant", "scope", "breaks", "fault")]
    rows += [(m.name, m.scope, ",".join(m.breaks), m.description) for m in mutants]
    print(_table(rows))
    return EXIT_OK


def run_mutants(args: argparse.Namespace) -> int:
    """The ``mutants`` command (arguments as ``conformance.cli`` defines them)."""
    chosen = [get_mutant(name) for name in args.only] if args.only else list(MUTANTS.values())
    if getattr(args, "spec_ids", None):
        chosen = [m for m in chosen if cites(m.breaks, args.spec_ids)]
        if not chosen:
            print(f"toolconf mutants: no mutant breaks {', '.join(args.spec_ids)}", file=sys.stderr)
            return EXIT_NOTHING
    if args.list:
        return _list(chosen)
    expected = load_expected_failures(args.expected_failures) if args.expected_failures else {}
    started = time.perf_counter()
    print(f"toolconf mutants: {len(chosen)} mutants and a control, {args.jobs} at a time")
    print(f"mode: {_mode_text(args)}")
    collect = _collect_full if getattr(args, "full", False) else _collect_targeted
    control, verdicts = collect(chosen, args.jobs, lambda line: print(line, flush=True))
    seconds = time.perf_counter() - started
    print("\n" + _table([_HEADER, *map(_row, verdicts)]))
    control_text = _control_text(control, expected)
    print(f"\ncontrol (unmutated reference): {control_text}")
    for k in control.failed:
        print(f"  {k.outcome} {k.id}" + (" (expected)" if k.id in expected else ""))
    if getattr(args, "report_path", None):
        with open(args.report_path, "w", encoding="utf-8") as out:
            _markdown(control_text, verdicts, seconds, args, out)
    good = sum(v.ok for v in verdicts)
    control_ok = not control.error and not _unexpected(control, expected)
    verdict = "OK" if control_ok and good == len(verdicts) else "FAILED"
    print(
        f"\n{verdict}: {good} of {len(verdicts)} mutants killed by their own SPEC IDs"
        f" ({sum(v.by_behaviour for v in verdicts)} at the behaviour level)"
        f"{'' if control_ok else '; the control is not passing'} ({seconds:.1f} s)"
    )
    return EXIT_OK if verdict == "OK" else EXIT_FAILED
