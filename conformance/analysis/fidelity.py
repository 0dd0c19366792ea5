"""Fidelity tables: how far an implementation agrees with SPEC.md, ID by ID.

From the JSON-lines report of one run, every requirement of SPEC.md gets a
status per assertion level (``behaviour``, ``identity``, ``rendering``) and
one overall status:

- ``agrees``: some scenario citing the ID ran with observed assertions of
  that level, and all of those held;
- ``disagrees``: some scenario citing it failed at that level; a crash, a
  timeout or an error of the implementation counts as a behaviour
  disagreement (it did not do what the scenario asked);
- ``not observable``: no scenario citing it could observe that level (all
  not applicable, or every assertion of the level on an unreported field).

The overall status is ``disagrees`` when any level disagrees, ``agrees``
when at least one level agrees, else ``not observable``. The Markdown page
has one table per SPEC section; ``summarize`` gives the counts the README
and closing notes quote.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from conformance.suite.spec import Requirement, Spec

__all__ = [
    "LEVELS",
    "Explained",
    "IdStatus",
    "Report",
    "explain",
    "fidelity_markdown",
    "id_statuses",
    "level_verdicts",
    "load_report",
    "merge_reports",
    "profile_line",
    "summarize",
    "write_jsonl",
]

LEVELS: Final = ("behaviour", "identity", "rendering")
AGREES: Final = "agrees"
DISAGREES: Final = "disagrees"
NOT_OBSERVABLE: Final = "not observable"
_BROKEN: Final = frozenset({"crash", "timeout", "error"})


@dataclass(frozen=True, slots=True)
class Report:
    """One JSON-lines report: its header and its result records."""

    header: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]


@dataclass(slots=True)
class IdStatus:
    """One requirement's statuses and the scenarios behind them."""

    requirement: Requirement
    section: str
    levels: dict[str, str] = field(default_factory=dict)
    scenarios: Counter[str] = field(default_factory=Counter)
    failing: dict[str, list[str]] = field(default_factory=dict)

    @property
    def overall(self) -> str:
        """``disagrees`` if any level does, ``agrees`` if any level does, else not observable."""
        values = set(self.levels.values())
        if DISAGREES in values:
            return DISAGREES
        return AGREES if AGREES in values else NOT_OBSERVABLE


def load_report(path: Path) -> Report:
    """Read a JSON-lines report written by ``toolconf run --report jsonl``."""
    header: Mapping[str, Any] = {}
    results: list[Mapping[str, Any]] = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("type") == "header":
            header = record
        elif record.get("type") == "result":
            results.append(record)
    return Report(header, results)


def merge_reports(reports: Sequence[Report]) -> Report:
    """Reports of one implementation run in parts (say, two processes on halves of the
    scenarios) as one: the first header, every result, each scenario id once (the last wins).
    """
    results: dict[str, Mapping[str, Any]] = {}
    for report in reports:
        for result in report.results:
            results[str(result.get("id"))] = result
    header = reports[0].header if reports else {}
    return Report(header, sorted(results.values(), key=lambda r: str(r.get("path") or r["id"])))


def write_jsonl(report: Report, out: TextIO) -> None:
    """A merged report as JSON lines: header, results, a footer with the outcome counts."""
    out.write(json.dumps(dict(report.header), ensure_ascii=False) + "\n")
    for result in report.results:
        out.write(json.dumps(dict(result), ensure_ascii=False) + "\n")
    counts = Counter(str(r.get("outcome")) for r in report.results)
    out.write(json.dumps({"type": "footer", "counts": dict(sorted(counts.items()))}) + "\n")


def profile_line(header: Mapping[str, Any]) -> str:
    """PROFILE-RUN-1: the profile a report judged and whether the implementation plays it.

    A report from before profiles judged ``documented`` and said nothing of what it plays.
    """
    profile = str(header.get("profile") or "documented")
    plays = header.get("plays")
    if not isinstance(plays, list):
        return f"profile judged: {profile} (the implementation did not say which it plays)"
    if profile in plays:
        return f"profile judged: {profile}, which the implementation plays: an agreement run"
    played = ", ".join(str(p) for p in plays) or "none"
    return (
        f"profile judged: {profile}; the implementation plays {played}: "
        "a measurement against another contract"
    )


def level_verdicts(result: Mapping[str, Any]) -> dict[str, str]:
    """Level -> ``pass``/``fail``/``unobserved`` for one scenario result: a crash, timeout
    or error fails behaviour, a report from before assertion levels gives its outcome to
    every level."""
    outcome = result.get("raw_outcome") or result.get("outcome")
    if outcome == "not_applicable":
        return dict.fromkeys(LEVELS, "unobserved")
    if outcome in _BROKEN:
        return {"behaviour": "fail", "identity": "unobserved", "rendering": "unobserved"}
    levels = result.get("levels")
    if not isinstance(levels, Mapping):  # a report from before assertion levels
        verdict = "pass" if outcome == "pass" else "fail"
        return dict.fromkeys(LEVELS, verdict)
    out: dict[str, str] = {}
    for level in LEVELS:
        entry = levels.get(level) or {}
        found = entry.get("verdict") if isinstance(entry, Mapping) else None
        out[level] = {"pass": "pass", "fail": "fail"}.get(str(found), "unobserved")
    return out


def id_statuses(report: Report, spec: Spec) -> list[IdStatus]:
    """Every SPEC.md requirement with its statuses under ``report``, in SPEC order."""
    sections = spec.section_labels()
    statuses = {req.id: IdStatus(requirement=req, section=sections[req.id]) for req in spec}
    seen: dict[str, dict[str, set[str]]] = {rid: {lv: set() for lv in LEVELS} for rid in statuses}
    for result in report.results:
        verdicts = level_verdicts(result)
        outcome = str(result.get("raw_outcome") or result.get("outcome"))
        for rid in result.get("spec", []):
            status = statuses.get(rid)
            if status is None:
                continue
            status.scenarios[outcome] += 1
            for level, verdict in verdicts.items():
                seen[rid][level].add(verdict)
                if verdict == "fail":
                    status.failing.setdefault(level, []).append(str(result.get("id")))
    for rid, status in statuses.items():
        for level in LEVELS:
            observed = seen[rid][level]
            if "fail" in observed:
                status.levels[level] = DISAGREES
            elif "pass" in observed:
                status.levels[level] = AGREES
            else:
                status.levels[level] = NOT_OBSERVABLE
    return list(statuses.values())


def summarize(statuses: Iterable[IdStatus]) -> dict[str, Counter[str]]:
    """``overall`` and each level -> counts of agrees / disagrees / not observable."""
    out: dict[str, Counter[str]] = {"overall": Counter(), **{lv: Counter() for lv in LEVELS}}
    for status in statuses:
        out["overall"][status.overall] += 1
        for level in LEVELS:
            out[level][status.levels[level]] += 1
    return out


def _cell(counter: Counter[str]) -> str:
    return " / ".join(str(counter[k]) for k in (AGREES, DISAGREES, NOT_OBSERVABLE))


@dataclass(frozen=True, slots=True)
class Explained:
    """Behaviour disagreements against an expected-failures file (reason per scenario id)."""

    explained: dict[str, str]
    """Scenarios failing on behaviour that the file lists, with its reason."""
    unexplained: list[str]
    """Scenarios failing on behaviour that the file does not list."""
    stale: list[str]
    """Listed scenarios that ran and held on behaviour."""


def explain(report: Report, expected: Mapping[str, str]) -> Explained:
    """Which behaviour disagreements of ``report`` the file's reasons account for."""
    explained: dict[str, str] = {}
    unexplained: list[str] = []
    stale: list[str] = []
    for result in report.results:
        rid = str(result.get("id"))
        behaviour = level_verdicts(result)["behaviour"]
        if behaviour == "fail":
            if rid in expected:
                explained[rid] = expected[rid]
            else:
                unexplained.append(rid)
        elif behaviour == "pass" and rid in expected:
            stale.append(rid)
    return Explained(explained, sorted(unexplained), sorted(stale))


def fidelity_markdown(
    report: Report,
    spec: Spec,
    *,
    command: str,
    date: str,
    expected: Mapping[str, str] | None = None,
) -> str:
    """The fidelity page: what was measured, the counts, one table per SPEC section.

    With ``expected`` (an expected-failures file), the page also says which
    behaviour disagreements its reasons account for and which nothing does.
    """
    statuses = id_statuses(report, spec)
    counts = summarize(statuses)
    implementation = report.header.get("implementation") or {}
    name = f"{implementation.get('name', '?')} {implementation.get('version', '?')}"
    lines = [
        f"# Fidelity: {name} against SPEC.md"
        + (
            f" (profile {report.header['profile']})"
            if report.header.get("profile", "documented") != "documented"
            else ""
        ),
        "",
        f"- measured: {date}, toolconf {report.header.get('toolconf', '?')}, "
        f"implementation `{report.header.get('impl', '?')}` ({name})",
        f"- regenerate: `{command}`",
        f"- {profile_line(report.header)}",
        f"- scenarios: {len(report.results)}; requirements: {len(statuses)}",
        "",
        "Each SPEC ID is marked per assertion level (SPEC.md PROTO-LEVEL-1): **agrees** (every "
        "observed assertion of the scenarios citing it held), **disagrees** (one failed; a crash "
        "or timeout is a behaviour disagreement), **not observable** (nothing citing it could be "
        "observed at that level).",
        "",
        "| | agrees / disagrees / not observable |",
        "|---|---|",
        f"| overall | {_cell(counts['overall'])} |",
        *(f"| {level} | {_cell(counts[level])} |" for level in LEVELS),
        "",
    ]
    if expected is not None:
        accounted = explain(report, expected)
        lines += [
            f"Behaviour disagreements (scenarios): {len(accounted.explained)} kept by a Decision "
            f"(the expected-failures file), {len(accounted.unexplained)} not explained by one, "
            f"{len(accounted.stale)} listed but agreeing.",
            "",
        ]
        if accounted.unexplained:
            lines += [
                "Not explained by a Decision: "
                + ", ".join(f"`{i}`" for i in accounted.unexplained),
                "",
            ]
        if accounted.stale:
            lines += ["Listed but agreeing: " + ", ".join(f"`{i}`" for i in accounted.stale), ""]
    section = None
    for status in statuses:
        if status.section != section:
            section = status.section
            lines += [
                "",
                f"## {section}",
                "",
                "| ID | level | overall | behaviour | identity | rendering | scenarios | "
                "first disagreeing scenarios |",
                "|---|---|---|---|---|---|---|---|",
            ]
        ran = ", ".join(f"{k} {v}" for k, v in sorted(status.scenarios.items())) or "none"
        failing = sorted({s for ids in status.failing.values() for s in ids})
        shown = ", ".join(f"`{s}`" for s in failing[:3]) + (" …" if len(failing) > 3 else "")
        lines.append(
            f"| {status.requirement.id} | {status.requirement.level} | **{status.overall}** | "
            + " | ".join(status.levels[level] for level in LEVELS)
            + f" | {ran} | {shown} |"
        )
    return "\n".join(lines) + "\n"
