"""Human-readable rendering: result details, summary tables, level figures, a progress line."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from conformance.run.results import (
    BAD_OUTCOMES,
    LevelVerdict,
    Outcome,
    ScenarioResult,
    count_outcomes,
)
from conformance.suite.checks import BEHAVIOUR, LEVELS
from conformance.suite.provenance import PROVENANCES, scenario_provenance

__all__ = [
    "COLUMNS",
    "JUDGED",
    "LevelFigure",
    "Progress",
    "describe_result",
    "format_duration",
    "format_levels",
    "format_table",
    "level_figures",
    "level_lines",
    "provenance_figures",
    "provenance_line",
    "summarize",
]

COLUMNS: Sequence[tuple[Outcome, str]] = (
    (Outcome.PASS, "pass"),
    (Outcome.FAIL, "fail"),
    (Outcome.ERROR, "error"),
    (Outcome.CRASH, "crash"),
    (Outcome.TIMEOUT, "timeout"),
    (Outcome.NOT_APPLICABLE, "n/a"),
    (Outcome.XFAIL, "xfail"),
    (Outcome.XPASS, "xpass"),
)

_STDERR_LINES = 20


def describe_result(result: ScenarioResult) -> str:
    """A multi-line account of a non-passing result: where, what, expected vs actual, stderr."""
    lines = [
        f"{result.outcome.upper()} {result.id}" + (f"  {result.title}" if result.title else "")
    ]
    if result.spec:
        lines.append(f"  spec: {', '.join(result.spec)} ({result.level})")
    if result.path:
        lines.append(f"  file: {result.path}")
    if result.reason:
        lines.append(f"  reason: {result.reason}")
    if result.levels:
        verdicts = ", ".join(f"{level} {result.verdict(level)}" for level in LEVELS)
        lines.append(f"  levels: {verdicts}")
    if result.mismatches:
        if result.where:
            lines.append(f"  at {result.where}:")
        for mismatch in result.mismatches:
            place = "final" if mismatch.step is None else f"step {mismatch.step}"
            lines.append(f"    {place} [{mismatch.level or '?'}] {mismatch}")
    if result.message and (not result.mismatches or result.base_outcome is not Outcome.FAIL):
        kind = f"[{result.kind}] " if result.kind else ""
        lines.extend("  " + line for line in (kind + result.message).splitlines())
    if result.stderr.strip() and (result.bad or result.outcome is Outcome.XFAIL):
        tail = result.stderr.strip().splitlines()[-_STDERR_LINES:]
        lines.append("  stderr (last lines):")
        lines.extend("    | " + line for line in tail)
    return "\n".join(lines)


JUDGED: frozenset[Outcome] = frozenset({Outcome.PASS, Outcome.FAIL})
"""Raw outcomes whose level verdicts count in the figures: the checks decided them."""


@dataclass(frozen=True, slots=True)
class LevelFigure:
    """One level over many scenarios: how many held, among those it observed.

    ``held`` scenarios had every observed assertion of the level hold, out of
    ``observed`` with at least one observed assertion of it; ``unobserved``
    scenarios had assertions of it, none observed.
    """

    held: int = 0
    observed: int = 0
    unobserved: int = 0

    def __str__(self) -> str:
        if not self.observed:
            return "- (0/0)"
        return f"{self.held * 100 // self.observed}% ({self.held}/{self.observed})"


def level_figures(results: Iterable[ScenarioResult]) -> dict[str, LevelFigure]:
    """Level -> its figure over ``results`` whose raw outcome is ``pass`` or ``fail``."""
    counts = {level: [0, 0, 0] for level in LEVELS}
    for result in results:
        if result.base_outcome not in JUDGED:
            continue
        for level in LEVELS:
            verdict = result.verdict(level)
            counts[level][0] += verdict is LevelVerdict.PASS
            counts[level][1] += verdict in (LevelVerdict.PASS, LevelVerdict.FAIL)
            counts[level][2] += verdict is LevelVerdict.NOT_OBSERVED
    return {level: LevelFigure(*c) for level, c in counts.items()}


def format_levels(results: Iterable[ScenarioResult]) -> str:
    """``behaviour 100% (n/m), identity 92% (...), rendering 40% (...)``."""
    return ", ".join(f"{level} {figure}" for level, figure in level_figures(results).items())


def provenance_figures(
    results: Iterable[ScenarioResult], provenances: Mapping[str, str]
) -> dict[str, LevelFigure]:
    """Provenance -> the behaviour figure of the scenarios of that provenance
    (PROTO-PROVENANCE-1); ``provenances`` maps SPEC IDs to theirs."""
    groups: dict[str, list[ScenarioResult]] = {p: [] for p in PROVENANCES}
    for result in results:
        provenance = scenario_provenance(result.spec, provenances)
        if provenance is not None:
            groups[provenance].append(result)
    return {p: level_figures(members)[BEHAVIOUR] for p, members in groups.items()}


def provenance_line(results: Iterable[ScenarioResult], provenances: Mapping[str, str]) -> str:
    """``behaviour by provenance: documented 97% (n/m), measured 71% (...), decided ...``."""
    figures = provenance_figures(results, provenances)
    return "behaviour by provenance: " + ", ".join(f"{p} {f}" for p, f in figures.items())


def level_lines(
    results: Sequence[ScenarioResult], provenances: Mapping[str, str] | None = None
) -> list[str]:
    """The per-level figures: all scenarios, then each requirement level (MUST, SHOULD...)
    apart, the behaviour figures per provenance when ``provenances`` (SPEC ID -> its
    provenance) is given, then the scenarios failing per requirement level and the levels
    not observed."""
    lines = [f"levels: {format_levels(results)}"]
    by_level: dict[str, list[ScenarioResult]] = {}
    for result in results:
        by_level.setdefault(result.level or "-", []).append(result)
    for name in sorted(by_level, key=lambda n: (_REQUIREMENT_ORDER.get(n, 9), n)):
        lines.append(f"  {name}: {format_levels(by_level[name])}")
    if provenances:
        lines.append(provenance_line(results, provenances))
    failing = [
        f"{sum(r.base_outcome is Outcome.FAIL for r in by_level[name])} {name}"
        for name in sorted(by_level, key=lambda n: (_REQUIREMENT_ORDER.get(n, 9), n))
    ]
    lines.append(f"failing scenarios: {', '.join(failing)}")
    unobserved = [
        f"{level} {count}"
        for level in LEVELS
        if (count := sum(r.levels[level].not_observed for r in results if level in r.levels))
    ]
    if unobserved:
        lines.append(f"assertions not observed: {', '.join(unobserved)}")
    return lines


_REQUIREMENT_ORDER = {"MUST": 0, "SHOULD": 1, "MAY": 2}


def summarize(
    results: Iterable[ScenarioResult], key: Callable[[ScenarioResult], str]
) -> list[tuple[str, dict[Outcome, int]]]:
    """Counts of each outcome per group (area, level, ...), groups sorted, plus a total row."""
    groups: dict[str, list[ScenarioResult]] = {}
    everything: list[ScenarioResult] = []
    for result in results:
        groups.setdefault(key(result) or "-", []).append(result)
        everything.append(result)
    rows = [(name, count_outcomes(members)) for name, members in sorted(groups.items())]
    rows.append(("total", count_outcomes(everything)))
    return rows


def format_table(
    title: str, rows: Sequence[tuple[str, dict[Outcome, int]]], *, markdown: bool = False
) -> str:
    """A table with one column per outcome that occurs, and a total column."""
    shown = [(o, label) for o, label in COLUMNS if any(counts[o] for _, counts in rows)]
    header = [title, *(label for _, label in shown), "total"]
    body = [
        [name, *(str(counts[o]) for o, _ in shown), str(sum(counts.values()))]
        for name, counts in rows
    ]
    if markdown:
        out = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
        ]
        out += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(out)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )

    return "\n".join([line(header), *(line(row) for row in body)])


def format_duration(seconds: float) -> str:
    """``3.4s``, ``42s``, ``1m21s`` or ``1h02m03s``."""
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """A one-line progress bar on a terminal; one plain line per result otherwise; or nothing.

    The bar shows the time since the run began and, from the first result
    on, an estimate of the time left: the time per scenario so far, times
    the scenarios left. Without a terminal, a ``time`` line with the same
    figures comes among the result lines every ``every`` seconds.
    """

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        tty: bool | None = None,
        quiet: bool = False,
        clock: Callable[[], float] = time.monotonic,
        every: float = 60.0,
    ) -> None:
        self.total = total
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.quiet = quiet
        self.done = 0
        self.bad = 0
        self._clock = clock
        self._began = clock()
        self._every = every
        self._told = self._began

    @property
    def elapsed(self) -> float:
        """Seconds since the progress began."""
        return self._clock() - self._began

    def timing(self) -> str:
        """``1m02s, ETA 8m15s``: the time so far and, once a result is in, the time left."""
        elapsed = self.elapsed
        if not self.done or self.done >= self.total:
            return format_duration(elapsed)
        left = elapsed / self.done * (self.total - self.done)
        return f"{format_duration(elapsed)}, ETA {format_duration(left)}"

    def update(self, result: ScenarioResult) -> None:
        """Account for one more result."""
        self.done += 1
        self.bad += result.outcome in BAD_OUTCOMES
        if self.quiet:
            return
        if not self.tty:
            self.stream.write(f"{result.outcome:<15} {result.area}/{result.id}\n")
            now = self._clock()
            if now - self._told >= self._every:
                self._told = now
                self.stream.write(f"{'time':<15} {self.done}/{self.total}, {self.timing()}\n")
            self.stream.flush()
            return
        width = max(10, min(40, shutil.get_terminal_size().columns - 80))
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        text = (
            f"\r[{bar}] {self.done}/{self.total} bad: {self.bad}  {self.timing():<20} "
            f"{result.id[:30]:<30}"
        )
        self.stream.write(text)
        self.stream.flush()

    def finish(self) -> None:
        """End the progress line."""
        if self.tty and self.done and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
